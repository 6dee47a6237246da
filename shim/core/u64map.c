/* u64map.c - open addressing with linear probing; keys 0 and UINT64_MAX are reserved. */
#include "u64map.h"
#include "fr.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    /* Fibonacci hashing spreads pointer keys, whose low bits are alignment zeros. */
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

void fr_u64map_init(fr_u64map *m) { memset(m, 0, sizeof *m); }

void fr_u64map_destroy(fr_u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void *fr_u64map_get(const fr_u64map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (m->keys[i] == 0)
            return NULL;
    }
}

static void rehash(fr_u64map *m, size_t cap)
{
    fr_u64map old = *m;
    m->keys = fr_xcalloc(cap, sizeof *m->keys);
    m->vals = fr_xcalloc(cap, sizeof *m->vals);
    m->cap = cap;
    m->used = m->filled = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i] != 0 && old.keys[i] != FR_U64MAP_TOMB)
            fr_u64map_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
}

void fr_u64map_put(fr_u64map *m, uint64_t key, void *val)
{
    if ((m->filled + 1) * 4 >= m->cap * 3) /* keep the load under 3/4 */
        rehash(m, m->cap ? (m->used * 2 >= m->cap ? m->cap * 2 : m->cap) : 16);
    size_t tomb = SIZE_MAX;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return;
        }
        if (m->keys[i] == FR_U64MAP_TOMB && tomb == SIZE_MAX)
            tomb = i;
        if (m->keys[i] == 0) {
            if (tomb != SIZE_MAX)
                i = tomb;
            else
                m->filled++;
            m->keys[i] = key;
            m->vals[i] = val;
            m->used++;
            return;
        }
    }
}

void *fr_u64map_del(fr_u64map *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            void *v = m->vals[i];
            m->keys[i] = FR_U64MAP_TOMB;
            m->vals[i] = NULL;
            m->used--;
            return v;
        }
        if (m->keys[i] == 0)
            return NULL;
    }
}

void fr_u64map_each(const fr_u64map *m, void (*fn)(uint64_t, void *, void *), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != 0 && m->keys[i] != FR_U64MAP_TOMB)
            fn(m->keys[i], m->vals[i], arg);
}
