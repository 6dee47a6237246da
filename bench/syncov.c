/* syncov.c - synchronization overhead: the time to open and close an empty epoch, as in Träff,
 * Ritzdorf and Hempel (seed 000), table 1: fence, dedicated (post/start/complete/wait) and lock,
 * with 1 and p neighbours (seed 000's exchange pattern, see bench_shift in common.h), windows in
 * MPI_Alloc_mem memory (seed 000's "global") and in malloc memory ("local").
 *
 * The reference, and the ratio's denominator, is what the same synchronization costs with
 * point-to-point messages: a zero-byte MPI_Sendrecv with each neighbour.
 *
 * A later issue adds the counter round trip (MPI_Sync counters): one step function and one row
 * in variants[]. */
#include "common.h"

#include <stdio.h>

typedef struct syncov {
    int rank;
    bench_shift nb;
    MPI_Win win;
} syncov;

/* Point-to-point synchronization with the same neighbours: the reference. */
static void step_sendrecv0(void *p)
{
    syncov *s = p;
    for (int j = 0; j < s->nb.n; j++)
        MPI_Sendrecv(NULL, 0, MPI_BYTE, s->nb.tgt[j], j, NULL, 0, MPI_BYTE, s->nb.org[j], j,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* An epoch as the ghost exchange opens and closes it. Fence ignores the neighbours (it is
 * collective over the window), which is what the seed's Fence-1 and Fence-p columns show. */
static void step_fence(void *p)
{
    syncov *s = p;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);
}

/* Dedicated: expose my window to the processes that would put into it, access my targets. */
static void step_ded(void *p)
{
    syncov *s = p;
    MPI_Win_post(s->nb.org_group, 0, s->win);
    MPI_Win_start(s->nb.tgt_group, 0, s->win);
    MPI_Win_complete(s->win);
    MPI_Win_wait(s->win);
}

/* Lock: the targets one after the other, exclusively, as in the seed. */
static void step_lock(void *p)
{
    syncov *s = p;
    for (int j = 0; j < s->nb.n; j++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, s->nb.tgt[j], 0, s->win);
        MPI_Win_unlock(s->nb.tgt[j], s->win);
    }
}

/* The point-to-point reference must stay first. Slot for a later issue: "counter" (the
 * MPI_Sync counter round trip). */
static const bench_variant variants[] = {
    {"sendrecv0", step_sendrecv0, NULL, NULL},
    {"fence", step_fence, NULL, NULL},
    {"ded", step_ded, NULL, NULL},
    {"lock", step_lock, NULL, NULL},
};

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "syncov", "0", &o); /* --sizes is not used: epochs are empty */
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE); /* MPI_Win_create windows only */
    const size_t win_bytes = 64;

    for (int m = 0; m < o.nmem; m++) {
        syncov s = {.rank = o.rank};
        void *mem = bench_alloc(o.mem[m], win_bytes);
        MPI_Win_create(mem, (MPI_Aint)win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &s.win);
        for (int k = 0; k < o.nnbrs; k++) {
            char suffix[64];
            int n = bench_nbrs(&o, k, o.mem[m], suffix, sizeof suffix);
            if (n == 0)
                continue;
            bench_shift_init(&s.nb, n);
            bench_measure(&o, variants, (int)(sizeof variants / sizeof variants[0]), 0, &s,
                          suffix, 0, o.iters, 1);
            bench_shift_free(&s.nb);
        }
        MPI_Win_free(&s.win);
        bench_free(o.mem[m], mem);
    }
    return bench_finish();
}
