/* The arena (protocol.md 19, protocol 1.6): sign in with an account and its key, seek one
 * game, and read the game_ready that says where to play it. The game itself is then played
 * exactly as a reserved seat: client_run() with game_ready's endpoint and token. */
#ifndef OKGIN_ARENA_H
#define OKGIN_ARENA_H

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
    char endpoint[256]; /* the shard referee to play at */
    char token[128];    /* the reserved seat's token there: a secret, never printed */
} arena_game_t;

/* Read the key from the first line of `path`, a file its owner alone may read (mode 0600).
 * Returns 0, or prints why and returns 2. */
int arena_read_key(const char *path, char *key, size_t size);

/* Sign in, seek, wait for game_ready (heartbeats meanwhile), say bye. Returns 0 with `out`
 * filled, or prints one line saying why (auth failed, banned, cooldown, unreachable...)
 * and returns the exit status (1). */
int arena_find_game(const arena_options_t *o, arena_game_t *out);

#endif
