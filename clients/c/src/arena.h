/* The arena (protocol.md 19, protocol 1.6): sign in once with an account and its key, then
 * for each game seek, read the game_ready that says where to play it, play it exactly as a
 * reserved seat (client_run() with game_ready's endpoint, token and CURVE key), and read the
 * arena's game_over (the result and the rating). The arena session stays open the whole
 * time: a thread of its own keeps its heartbeats going while the game is played. */
#ifndef OKGIN_ARENA_H
#define OKGIN_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *endpoint; /* the arena ($OKGIN_ARENA) */
    const char *account;  /* $OKGIN_ACCOUNT */
    const char *key;      /* the API key, read from $OKGIN_KEY_FILE (never a command-line argument) */
    const char *variant;  /* oklahoma or box */
    const char *clock;    /* a clock preset, or NULL for the arena's default */
    const char *name;     /* for log lines */
    int verbose;
} arena_options_t;

typedef struct {
    char game[80];
    char endpoint[256];  /* the shard referee to play at */
    char token[128];     /* the reserved seat's token there: a secret, never printed */
    char server_key[41]; /* the shard's CURVE public key (Z85), "" for a plain shard */
} arena_game_t;

typedef struct {
    char game[80];
    char result[16];      /* win, loss, draw or void */
    char termination[32];
    bool rated;           /* false: no rating change (unrated or void) */
    int64_t before, after, deviation;
    bool provisional;
} arena_over_t;

typedef struct arena_session arena_session_t;

/* Read the key from the first line of `path`, a file its owner alone may read (mode 0600).
 * Returns 0, or prints why and returns 2. */
int arena_read_key(const char *path, char *key, size_t size);

/* Sign in (hello with the account and key) and wait for the welcome. Returns 0 with
 * `*out` set, or prints one line saying why not (auth failed, banned, unreachable...) and
 * returns the exit status. */
int arena_open(const arena_options_t *o, arena_session_t **out);

/* Seek one game and wait for its game_ready (a `busy` right after a game is retried for a
 * few seconds: the arena frees the players as it files the game). Returns 0 with `out`
 * filled, or prints why not and returns the exit status (130 when stopped by a signal). */
int arena_next_game(arena_session_t *s, arena_game_t *out);

/* Wait up to `wait_ms` for the arena's game_over of `game`. Returns true with `out` filled. */
bool arena_game_over(arena_session_t *s, const char *game, int64_t wait_ms, arena_over_t *out);

/* Say bye, stop the session's thread and free it. */
void arena_close(arena_session_t *s);

#endif
