/* prog_mpi3.c - a plain MPI-3 one-sided program for the interposition test: built against MPI
 * alone (no flexrma), run natively and with libflexrma preloaded (run-preload.sh).
 *
 * Its window comes from MPI_Win_allocate, as in the one-sided runtimes people use today. It uses
 * fence with accumulates, then lock_all epochs with put + flush, MPI_Fetch_and_op,
 * MPI_Compare_and_swap, MPI_Get_accumulate, MPI_Rput, MPI_Rget and flush_local, and an
 * exclusive lock epoch. It prints one checksum per rank of its window
 * and of the values it fetched, in rank order, and whether each equals the checksum the program
 * computes from a model of the same operations. Every fetched value is deterministic: the
 * atomics that race (the shared counter) are judged by the total only. Needs 2 to 16 ranks. */
#include "prog_check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define W 64      /* int64s per window */
#define ROUNDS 10 /* fetch-and-adds per rank on rank 0's counter */
#define NFETCH 20 /* fetched values kept per rank */

enum { ACC = 0, PUT = 8, COUNTER = 16, CAS = 17, GETACC = 24, RPUT = 40 };

static int rank, size;

static int64_t val(int r, int i) { return (int64_t)(r + 1) * 1000 + i; }

/* What rank r's window and fetched values must hold at the end. */
static void model(int r, int64_t *win, int64_t *got)
{
    int left = (r + size - 1) % size;
    memset(win, 0, W * sizeof *win);
    for (int i = 0; i < 8; i++) {
        for (int o = 0; o < size; o++)
            win[ACC + i] += (int64_t)(o + 1) * (i + 1); /* fence: accumulate from everyone */
        win[PUT + i] = val(left, i);                    /* lock_all: put from the left */
    }
    if (r == 0)
        win[COUNTER] = (int64_t)size * ROUNDS;
    win[CAS] = left + 1; /* the first compare-and-swap matched, the second did not */
    win[GETACC + left % 16] = 2 * (left + 1);
    for (int i = 0; i < 4; i++)
        win[RPUT + i] = val(left, 100 + i);
    if (!got)
        return;
    memset(got, 0, NFETCH * sizeof *got);
    got[0] = 0;     /* compare-and-swap on the right's slot: matched 0 */
    got[13] = r + 1; /* then found its own value, and did not swap */
    got[1] = 0;     /* get_accumulate twice on the right's slot: 0, then rank + 1 */
    got[2] = r + 1;
    int64_t right_win[W];
    model((r + 1) % size, right_win, NULL);
    memcpy(got + 3, right_win + PUT, 8 * sizeof *got); /* Rget of the right's put area */
    got[11] = right_win[RPUT];                          /* Get_accumulate MPI_NO_OP */
    got[12] = size * ROUNDS;                            /* MPI_Fetch_and_op MPI_NO_OP */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!prog_size_ok("prog_mpi3", rank, size)) {
        MPI_Finalize();
        return 1;
    }
    const int right = (rank + 1) % size;

    int64_t *mem, src[8], add[8], got[NFETCH], one = 1, junk;
    MPI_Win win;
    MPI_Win_allocate(W * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(got, 0, sizeof got);
    memset(mem, 0, W * sizeof *mem); /* no epoch yet: the window is ours to store into */

    /* fence: accumulate from everyone to everyone */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int i = 0; i < 8; i++)
        add[i] = (int64_t)(rank + 1) * (i + 1);
    for (int t = 0; t < size; t++)
        MPI_Accumulate(add, 8, MPI_INT64_T, t, ACC, 8, MPI_INT64_T, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* lock_all: put + flush, atomics, request-based put */
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 8; i++)
        src[i] = val(rank, i);
    MPI_Put(src, 8, MPI_INT64_T, right, PUT, 8, MPI_INT64_T, win);
    MPI_Win_flush(right, win);
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Fetch_and_op(&one, &junk, MPI_INT64_T, 0, COUNTER, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    int64_t cas_new = rank + 1, cas_cmp = 0;
    MPI_Compare_and_swap(&cas_new, &cas_cmp, &got[0], MPI_INT64_T, right, CAS, win);
    MPI_Win_flush_all(win);
    int64_t inc = rank + 1;
    MPI_Get_accumulate(&inc, 1, MPI_INT64_T, &got[1], 1, MPI_INT64_T, right, GETACC + rank % 16, 1,
                       MPI_INT64_T, MPI_SUM, win);
    MPI_Win_flush(right, win);
    MPI_Get_accumulate(&inc, 1, MPI_INT64_T, &got[2], 1, MPI_INT64_T, right, GETACC + rank % 16, 1,
                       MPI_INT64_T, MPI_SUM, win);
    int64_t rsrc[4];
    for (int i = 0; i < 4; i++)
        rsrc[i] = val(rank, 100 + i);
    MPI_Request req;
    MPI_Rput(rsrc, 4, MPI_INT64_T, right, RPUT, 4, MPI_INT64_T, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE); /* local completion: rsrc may be reused */
    MPI_Win_flush_local(right, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a compare-and-swap that does not match, in an exclusive lock epoch */
    int64_t other = 99;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Compare_and_swap(&other, &cas_cmp, &got[13], MPI_INT64_T, right, CAS, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* reads: Rget, Get_accumulate with MPI_NO_OP, Fetch_and_op with MPI_NO_OP */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Request rg[2];
    MPI_Rget(&got[3], 8, MPI_INT64_T, right, PUT, 8, MPI_INT64_T, win, &rg[0]);
    MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, &got[11], 1, MPI_INT64_T, right, RPUT, 1,
                        MPI_INT64_T, MPI_NO_OP, win, &rg[1]);
    MPI_Fetch_and_op(NULL, &got[12], MPI_INT64_T, 0, COUNTER, MPI_NO_OP, win);
    MPI_Waitall(2, rg, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    int64_t exp_win[W], exp_got[NFETCH], mine[W];
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    memcpy(mine, mem, sizeof mine);
    MPI_Win_unlock(rank, win);
    model(rank, exp_win, exp_got);
    prog_report("prog_mpi3", mine, exp_win, sizeof mine, got, exp_got, sizeof got);

    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
