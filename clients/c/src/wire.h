/* Reading and writing protocol messages: one msgpack map per ZeroMQ frame (protocol.md 2-3).
 *
 * Reading works on msgpack-c's object tree: look a key up, read it as a string, an
 * integer or a card, with a default when it is missing or of another type (receivers
 * ignore what they do not know, protocol.md 14). Writing goes through a packer into a
 * growable buffer that becomes the frame. */
#ifndef OKGIN_WIRE_H
#define OKGIN_WIRE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "strategy.h"

/* The value under `key` in a map, or NULL (also when `map` is not a map). */
const msgpack_object *wire_get(const msgpack_object *map, const char *key);
/* A string value: pointer (not NUL-terminated) and length; NULL if absent or not a str. */
const char *wire_str(const msgpack_object *map, const char *key, size_t *len);
/* Copy a string value into buf (NUL-terminated, truncated); "" if absent. */
const char *wire_strcpy(const msgpack_object *map, const char *key, char *buf, size_t size);
bool wire_str_is(const msgpack_object *map, const char *key, const char *want);
int64_t wire_int(const msgpack_object *map, const char *key, int64_t fallback);
bool wire_bool(const msgpack_object *map, const char *key, bool fallback);
/* A card value; CARD_NONE if absent, nil or not a card. */
int wire_card(const msgpack_object *obj);
/* The cards of a list value as a hand mask; false if it is not a list of cards. */
bool wire_hand(const msgpack_object *list, hand_t *hand);
/* An Action map (kind, card); false if it is not one. */
bool wire_action(const msgpack_object *obj, action_t *out);

/* Writing: str key then value. */
void wire_key(msgpack_packer *pk, const char *key);
void wire_put_str(msgpack_packer *pk, const char *key, const char *value);
void wire_put_int(msgpack_packer *pk, const char *key, int64_t value);
/* The Action as a map; melds (the best arrangement of `kept`) when declare_melds. */
void wire_put_action(msgpack_packer *pk, const char *key, const action_t *action, hand_t kept);

#endif
