/* The protocol client: handshake, sitting down, answering prompts, heartbeats and
 * reconnection with the session token (protocol.md 4, 5, 10). */
#ifndef OKGIN_CLIENT_H
#define OKGIN_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *endpoint;
    const char *name;
    const char *token;   /* a reserved seat's or a session's token: hello seats / resumes */
    const char *variant; /* quick-match queue when neither token nor table is given */
    const char *table;   /* named table to join */
    const char *server_key; /* the referee's CURVE public key (Z85, 40 characters), or NULL for plain TCP */
    int games;           /* games to play before leaving; 0 = until the referee stops */
    int64_t give_up_ms;  /* how long to keep reconnecting to a silent referee */
    bool verbose;
} options_t;

/* Play until done; returns the process exit status (0 on a normal end). */
int client_run(const options_t *options);

/* SIGINT and SIGTERM ask the bot to stop (client_run says bye and returns 0). */
void client_handle_signals(void);
/* Did a signal ask the bot to stop? */
bool client_stop_requested(void);

#endif
