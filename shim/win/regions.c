/* regions.c - the memory attached to a dynamic window (MPI_Win_attach), as a table of
 * non-overlapping [base, base + size) regions sorted by base: the target's own table, which
 * every operation is checked against before it touches memory, and each origin's cached copy of
 * a target's table (fr_peer.known). Few regions per process: a sorted array, binary search. The
 * entries' other fields (how node peers reach a region directly) are direct.c's. A range is
 * attached when regions attached back to back hold it, one or several. */
#include "win.h"

#include <stdlib.h>
#include <string.h>

/* Index of the first region whose base is above addr. */
static int after(const fr_regions *t, uint64_t addr)
{
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->r[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fr_regions_add(fr_regions *t, const fr_region *r)
{
    uint64_t base = r->base, end = r->base + r->size;
    int i = after(t, base);
    if ((i > 0 && t->r[i - 1].base + t->r[i - 1].size > base) ||
        (i < t->n && t->r[i].base < end))
        return fr_errorf(FR_ERR_ATTACH, "[%p, %p) overlaps memory already attached to the window",
                         (void *)(uintptr_t)base, (void *)(uintptr_t)end);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->r = fr_xrealloc(t->r, (size_t)t->cap * sizeof *t->r);
    }
    memmove(t->r + i + 1, t->r + i, (size_t)(t->n - i) * sizeof *t->r);
    t->r[i] = *r;
    t->n++;
    t->changes++;
    return MPI_SUCCESS;
}

int fr_regions_remove(fr_regions *t, uint64_t base, fr_region *gone)
{
    int i = after(t, base) - 1;
    if (i < 0 || t->r[i].base != base)
        return fr_errorf(FR_ERR_ATTACH, "no memory attached to the window starts at %p",
                         (void *)(uintptr_t)base);
    *gone = t->r[i];
    memmove(t->r + i, t->r + i + 1, (size_t)(t->n - i - 1) * sizeof *t->r);
    t->n--;
    t->changes++;
    return MPI_SUCCESS;
}

/* Index of the region that holds addr, -1 if none does. (An empty region lies at most at the
 * end of the one before it, never inside it, so the last region from addr down decides.) */
static int holding(const fr_regions *t, uint64_t addr)
{
    int i = after(t, addr) - 1;
    return i >= 0 && addr - t->r[i].base < t->r[i].size ? i : -1;
}

int fr_regions_span(const fr_regions *t, uint64_t lo, uint64_t hi, int *last)
{
    int first = holding(t, lo);
    if (first < 0)
        return -1;
    /* MPI asks only that the memory accessed be attached: an access may run on from one region
     * into the next one attached right behind it (MPICH's win_dynamic_rma_flush_get does). */
    int i = first;
    uint64_t end = t->r[i].base + t->r[i].size;
    while (end < hi) {
        int k = i + 1;
        while (k < t->n && t->r[k].size == 0) /* empty regions hold nothing */
            k++;
        if (k == t->n || t->r[k].base != end)
            return -1;
        i = k;
        end += t->r[i].size;
    }
    *last = i;
    return first;
}

int fr_regions_cover(const fr_regions *t, uint64_t lo, uint64_t hi)
{
    int last;
    return fr_regions_span(t, lo, hi, &last) >= 0;
}

void fr_regions_set(fr_regions *t, const fr_region *r, int n)
{
    if (n > t->cap) {
        t->cap = n;
        t->r = fr_xrealloc(t->r, (size_t)n * sizeof *t->r);
    }
    if (n > 0)
        memcpy(t->r, r, (size_t)n * sizeof *r);
    t->n = n;
    t->changes++;
}

void fr_regions_free(fr_regions *t)
{
    free(t->r);
    *t = (fr_regions){0};
}
