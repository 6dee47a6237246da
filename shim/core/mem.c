/* mem.c - allocation that never returns NULL, copies of window data, and the end of the job on
 * an invariant violation. */
#include "fr.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*at_fatal)(void);

void fr_on_fatal(void (*cleanup)(void)) { at_fatal = cleanup; }

void *fr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fr_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *fr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fr_fatal("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *fr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        fr_fatal("out of memory reallocating %zu bytes", n);
    return q;
}

void fr_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 8, bytes;
    while (n < need)
        if (fr_mul_size(n, 2, &n))
            fr_fatal("array of %zu elements overflows", need);
    if (fr_mul_size(n, elem, &bytes))
        fr_fatal("array of %zu x %zu bytes overflows", n, elem);
    *(void **)pp = fr_xrealloc(*(void **)pp, bytes);
    *cap = n;
}

/* glibc's memcpy leaves `rep movsb` for a vector loop from rep_movsb_stop_threshold on, which on
 * AMD processors is the L2 cache's size (1 MiB on the EPYC here; 512 KiB on older ones): a 1 MiB
 * put took 21.1 us against 17.9 for `rep movsb`, what Open MPI's puts reach through the kernel's
 * copy, and 18.2 in pieces of 256 KiB (4 MiB: 80.7 / 77.4; 64 MiB: 3226 / 2785). Pieces keep
 * every size on the path that its smaller copies take anyway. Overlapping ranges (a process's
 * own window into itself) go whole through memmove. */
#define COPY_PIECE ((size_t)256 << 10)

void fr_copy_bytes(void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (n <= COPY_PIECE || (d < s + n && s < d + n)) {
        memmove(dst, src, n);
        return;
    }
    for (size_t off = 0; off < n; off += COPY_PIECE)
        memcpy((char *)dst + off, (const char *)src + off,
               n - off < COPY_PIECE ? n - off : COPY_PIECE);
}

void fr_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "flexrma: fatal: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    if (at_fatal)
        at_fatal(); /* the abort may kill us before MPI_Finalize would have cleaned up */
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}
