/* maps_common.h - what /proc/self/maps says of this process's memory, for the tests of windows
 * in ordinary memory (t_adopt.c, t_adopt_pinned.c). */
#ifndef FLEXRMA_TESTS_MAPS_COMMON_H
#define FLEXRMA_TESTS_MAPS_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The mapping of this process that holds addr: perms ("rw-p") and inode. */
static inline int mapping_of(const void *addr, char perms[5], unsigned long long *ino)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        unsigned long long off;
        unsigned maj, min;
        if (sscanf(line, "%lx-%lx %4s %llx %x:%x %llu", &lo, &hi, perms, &off, &maj, &min, ino) ==
                7 &&
            lo <= (uintptr_t)addr && (uintptr_t)addr < hi)
            found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

/* Is addr in private anonymous memory (not moved into a shared segment)? */
static inline int private_memory(const void *addr)
{
    char perms[5];
    unsigned long long ino;
    return mapping_of(addr, perms, &ino) && strcmp(perms, "rw-p") == 0 && ino == 0;
}

/* The mappings that overlap [lo, hi). */
static inline int mappings_over(const void *lo, const void *hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < (uintptr_t)hi && b > (uintptr_t)lo)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

#endif
