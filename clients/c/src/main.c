/* okgin-bot (C): an example bot for the okgin referee. It plays Oklahoma Gin and Gin in
 * the Box in every role with the "simple player" strategy; see ../README.md.
 *
 *   okgin-bot --connect tcp://127.0.0.1:7117 [--token T | --table NAME | --variant V]
 *             [--name NAME] [--games N] [--verbose]
 *   okgin-bot --eval      least deadwood of each hand on stdin (one hand a line)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "client.h"
#include "melds.h"

static const char USAGE[] =
    "usage: okgin-bot --connect ENDPOINT [--token TOKEN | --table NAME | --variant oklahoma|box]\n"
    "                 [--name NAME] [--games N] [--give-up-ms MS] [--verbose]\n"
    "       okgin-bot --eval\n"
    "\n"
    "  --connect ENDPOINT  the referee, e.g. tcp://127.0.0.1:7117 (or $OKGIN_ENDPOINT)\n"
    "  --token TOKEN       a reserved seat's token from the organiser (or $OKGIN_TOKEN)\n"
    "  --table NAME        join (or create) this named table\n"
    "  --variant V         otherwise: quick-match queue of this variant (default oklahoma)\n"
    "  --name NAME         display name (default c-bot)\n"
    "  --games N           games to play, then leave (default 1; 0 = until the referee stops)\n"
    "  --give-up-ms MS     stop reconnecting to a silent referee after this long (default 60000)\n"
    "  --verbose           log every move to stderr\n"
    "  --eval              print the least deadwood of each hand read from stdin\n"
    "\n"
    "At an arena (protocol 1.6): set OKGIN_ARENA (its endpoint), OKGIN_ACCOUNT and\n"
    "OKGIN_KEY_FILE (the account's key, mode 0600).\n"
    "The bot then seeks --games games of --variant and plays each where the arena says.\n";

static int eval_hands(void) {
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        hand_t hand = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            int c = card_parse(tok, strlen(tok));
            if (c == CARD_NONE) {
                fprintf(stderr, "okgin-bot: not a card: %s\n", tok);
                return 2;
            }
            hand |= (hand_t)1 << c;
        }
        arrangement_t a = best_arrangement(hand);
        printf("%d %d\n", deadwood(hand), a.deadwood);
    }
    return 0;
}

/* The arena's word on a game, one line on stderr (as the game_end line is). */
static void print_over(const char *name, const arena_over_t *r) {
    if (r->rated)
        fprintf(stderr, "okgin-bot[c %s] arena game %s: %s (%s), rating %lld -> %lld (deviation %lld%s)\n", name, r->game,
                r->result, r->termination, (long long)r->before, (long long)r->after, (long long)r->deviation,
                r->provisional ? ", provisional" : "");
    else
        fprintf(stderr, "okgin-bot[c %s] arena game %s: %s (%s), not rated\n", name, r->game, r->result, r->termination);
}

/* OKGIN_ARENA set: sign in once; for each game seek, play the game the arena names at its
 * shard exactly as a reserved seat (the token replaces --token, the shard --connect, its
 * CURVE key when it has one), then read the arena's game_over. */
static int play_at_arena(const options_t *base, const char *arena) {
    static char key[128];
    const char *account = getenv("OKGIN_ACCOUNT");
    if (account == NULL || *account == '\0' || strlen(account) > 40) {
        fprintf(stderr, "okgin-bot: OKGIN_ARENA needs OKGIN_ACCOUNT (the account's name, 1 to 40 characters)\n");
        return 2;
    }
    int status = arena_read_key(getenv("OKGIN_KEY_FILE"), key, sizeof key);
    if (status != 0) return status;
    arena_options_t ao = {
        .endpoint = arena, .account = account, .key = key, .variant = base->variant,
        .clock = NULL /* the arena's default preset */, .name = base->name, .verbose = base->verbose,
    };
    client_handle_signals();
    arena_session_t *session = NULL;
    status = arena_open(&ao, &session);
    for (int played = 0; status == 0 && (base->games == 0 || played < base->games); played++) {
        arena_game_t game;
        status = arena_next_game(session, &game);
        if (status != 0) break;
        options_t at_table = *base;
        at_table.endpoint = game.endpoint;
        at_table.token = game.token;
        at_table.server_key = game.server_key[0] ? game.server_key : NULL;
        at_table.table = NULL;
        at_table.games = 1;
        status = client_run(&at_table);
        memset(game.token, 0, sizeof game.token);
        if (status != 0 || client_stop_requested()) break;
        arena_over_t over;
        if (arena_game_over(session, game.game, 30000, &over))
            print_over(base->name, &over);
        else
            fprintf(stderr, "okgin-bot[c %s] arena game %s: no game_over from the arena\n", base->name, game.game);
    }
    arena_close(session);
    memset(key, 0, sizeof key);
    return status == 130 ? 0 : status;
}

static int usage_error(const char *what) {
    fprintf(stderr, "okgin-bot: %s\n\n%s", what, USAGE);
    return 2;
}

int main(int argc, char **argv) {
    melds_init();
    options_t o = {
        .endpoint = getenv("OKGIN_ENDPOINT"),
        .token = getenv("OKGIN_TOKEN"),
        .name = "c-bot",
        .variant = "oklahoma",
        .games = 1,
        .give_up_ms = 60000,
    };
    if (o.token && !*o.token) o.token = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--eval") == 0) return eval_hands();
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(USAGE, stdout);
            return 0;
        }
        if (strcmp(arg, "--verbose") == 0) {
            o.verbose = true;
            continue;
        }
        if (value == NULL) return usage_error("missing value or unknown option");
        i++;
        if (strcmp(arg, "--connect") == 0) o.endpoint = value;
        else if (strcmp(arg, "--token") == 0) o.token = value;
        else if (strcmp(arg, "--table") == 0) o.table = value;
        else if (strcmp(arg, "--variant") == 0) o.variant = value;
        else if (strcmp(arg, "--name") == 0) o.name = value;
        else if (strcmp(arg, "--games") == 0) o.games = atoi(value);
        else if (strcmp(arg, "--give-up-ms") == 0) o.give_up_ms = atoll(value);
        else return usage_error("unknown option");
    }
    const char *arena_env = getenv("OKGIN_ARENA");
    if (o.endpoint == NULL && (arena_env == NULL || *arena_env == '\0')) return usage_error("--connect ENDPOINT is required");
    if (strcmp(o.variant, "oklahoma") != 0 && strcmp(o.variant, "box") != 0)
        return usage_error("--variant must be oklahoma or box");
    if (o.games < 0 || o.give_up_ms <= 0) return usage_error("--games must be >= 0 and --give-up-ms > 0");
    size_t name_len = strlen(o.name);
    if (name_len == 0 || name_len > 40) return usage_error("--name must have 1 to 40 characters");
    const char *arena = getenv("OKGIN_ARENA");
    if (arena != NULL && *arena != '\0') return play_at_arena(&o, arena);
    return client_run(&o);
}
