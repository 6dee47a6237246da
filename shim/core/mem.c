/* mem.c - allocation that never returns NULL, and the end of the job on an invariant violation. */
#include "fr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
