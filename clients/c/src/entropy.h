/* This bot's nonce for a tournament's deals (protocol 1.5, protocol.md 5.27): 32 random
 * bytes from /dev/urandom, committed in hello as the SHA-256 of "okgin-entropy-nonce-v1",
 * a zero byte and the nonce, revealed when the referee (or gateway) sends entropy_request.
 * SHA-256 is written out (FIPS 180-4): the bot links libzmq and msgpack-c only. */
#ifndef OKGIN_ENTROPY_H
#define OKGIN_ENTROPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char nonce[65];  /* lowercase hex */
    char commit[65]; /* lowercase hex */
    bool ok;         /* false if /dev/urandom could not be read: then no nonce is sent */
} entropy_t;

void sha256(const uint8_t *data, size_t len, uint8_t out[32]);
void entropy_init(entropy_t *e);

#endif
