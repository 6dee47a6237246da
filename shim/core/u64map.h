/* u64map.h - a small open-addressing hash map from non-zero 64-bit keys to pointers.
 * Used for handle -> object lookups (windows, allocations) and per-peer datatype sets, where the
 * lookup sits on the path of every MPI call and must cost a few nanoseconds. */
#ifndef FR_U64MAP_H
#define FR_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct fr_u64map {
    uint64_t *keys; /* 0 = empty slot, FR_U64MAP_TOMB = deleted */
    void **vals;
    size_t cap;     /* power of two, or 0 before first insert */
    size_t used;    /* live entries */
    size_t filled;  /* live entries + tombstones */
} fr_u64map;

#define FR_U64MAP_TOMB UINT64_MAX

void fr_u64map_init(fr_u64map *m);
void fr_u64map_destroy(fr_u64map *m);
void *fr_u64map_get(const fr_u64map *m, uint64_t key);       /* NULL if absent */
void fr_u64map_put(fr_u64map *m, uint64_t key, void *val);   /* insert or replace; val != NULL */
void *fr_u64map_del(fr_u64map *m, uint64_t key);             /* returns the removed value */
/* Visit every entry; fn may not modify the map. */
void fr_u64map_each(const fr_u64map *m, void (*fn)(uint64_t key, void *val, void *arg), void *arg);

static inline uint64_t fr_key_ptr(const void *p) { return (uint64_t)(uintptr_t)p; }

#endif
