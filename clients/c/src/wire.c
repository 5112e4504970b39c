#include "wire.h"

#include <string.h>

const msgpack_object *wire_get(const msgpack_object *map, const char *key) {
    if (map == NULL || map->type != MSGPACK_OBJECT_MAP) return NULL;
    size_t klen = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen && memcmp(k->via.str.ptr, key, klen) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

const char *wire_str(const msgpack_object *map, const char *key, size_t *len) {
    const msgpack_object *v = wire_get(map, key);
    if (v == NULL || v->type != MSGPACK_OBJECT_STR) return NULL;
    *len = v->via.str.size;
    return v->via.str.ptr;
}

const char *wire_strcpy(const msgpack_object *map, const char *key, char *buf, size_t size) {
    size_t len = 0;
    const char *s = wire_str(map, key, &len);
    if (s == NULL) len = 0;
    if (len >= size) len = size - 1;
    memcpy(buf, s ? s : "", len);
    buf[len] = '\0';
    return buf;
}

bool wire_str_is(const msgpack_object *map, const char *key, const char *want) {
    size_t len = 0;
    const char *s = wire_str(map, key, &len);
    return s != NULL && len == strlen(want) && memcmp(s, want, len) == 0;
}

int64_t wire_int(const msgpack_object *map, const char *key, int64_t fallback) {
    const msgpack_object *v = wire_get(map, key);
    if (v == NULL) return fallback;
    if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return v->via.u64 > INT64_MAX ? fallback : (int64_t)v->via.u64;
    if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) return v->via.i64;
    return fallback;
}

bool wire_bool(const msgpack_object *map, const char *key, bool fallback) {
    const msgpack_object *v = wire_get(map, key);
    return v != NULL && v->type == MSGPACK_OBJECT_BOOLEAN ? v->via.boolean : fallback;
}

int wire_card(const msgpack_object *obj) {
    if (obj == NULL || obj->type != MSGPACK_OBJECT_STR) return CARD_NONE;
    return card_parse(obj->via.str.ptr, obj->via.str.size);
}

bool wire_hand(const msgpack_object *list, hand_t *hand) {
    if (list == NULL || list->type != MSGPACK_OBJECT_ARRAY) return false;
    hand_t h = 0;
    for (uint32_t i = 0; i < list->via.array.size; i++) {
        int c = wire_card(&list->via.array.ptr[i]);
        if (c == CARD_NONE) return false;
        h |= (hand_t)1 << c;
    }
    *hand = h;
    return true;
}

bool wire_action(const msgpack_object *obj, action_t *out) {
    size_t len = 0;
    const char *kind = wire_str(obj, "kind", &len);
    if (kind == NULL) return false;
    out->kind = act_kind_parse(kind, len);
    out->card = wire_card(wire_get(obj, "card"));
    out->declare_melds = false;
    return out->kind != ACT_UNKNOWN;
}

void wire_key(msgpack_packer *pk, const char *key) {
    size_t len = strlen(key);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, key, len);
}

void wire_put_str(msgpack_packer *pk, const char *key, const char *value) {
    wire_key(pk, key);
    wire_key(pk, value); /* a str, packed the same way */
}

void wire_put_int(msgpack_packer *pk, const char *key, int64_t value) {
    wire_key(pk, key);
    msgpack_pack_int64(pk, value);
}

static void pack_card(msgpack_packer *pk, int card) {
    char text[3];
    card_format(card, text);
    msgpack_pack_str(pk, 2);
    msgpack_pack_str_body(pk, text, 2);
}

void wire_put_action(msgpack_packer *pk, const char *key, const action_t *action, hand_t kept) {
    bool has_card = action->card != CARD_NONE;
    wire_key(pk, key);
    msgpack_pack_map(pk, 1 + (has_card ? 1 : 0) + (action->declare_melds ? 1 : 0));
    wire_put_str(pk, "kind", act_kind_name(action->kind));
    if (has_card) {
        wire_key(pk, "card");
        pack_card(pk, action->card);
    }
    if (action->declare_melds) {
        arrangement_t a = best_arrangement(kept);
        wire_key(pk, "melds");
        msgpack_pack_array(pk, (size_t)a.count);
        for (int i = 0; i < a.count; i++) {
            msgpack_pack_array(pk, (size_t)hand_count(a.melds[i]));
            for (int c = 0; c < 52; c++)
                if (a.melds[i] >> c & 1) pack_card(pk, c);
        }
    }
}
