/* t_flush_replies.c - a reply stands for the acknowledgement a flush would ask for, and only
 * where it may (am_send.c, replies_cover; sync_flush.c).
 *
 * A get's data or a fetch-and-op's value leaves the target once the operation is done there, so
 * when every earlier operation to that target is known complete, the reply proves completion
 * and MPI_Win_flush needs no acknowledgement: a fetch-and-op and its flush are one round trip.
 * An operation without a reply before it (a put, whose packet or data the target may not have
 * run yet) still needs the acknowledgement. Rank 0, in a shared lock on rank 1, counts the
 * acknowledgements it asks for (fr_peer.acks_asked):
 *  - fetch-and-op, flush: none; gets and fetch-and-ops in a row, flush: none;
 *  - a put (inline, 64 B), then a fetch-and-op, flush: one; a large put (its data in a message
 *    of its own), then a fetch-and-op, flush: one;
 *  - afterwards rank 1 finds every put and the counter's value in its window.
 * The window travels by packets: fr_opt.direct is turned off before it is made (copies into a
 * mapped window are complete at once and never counted). Other ranks only take part in the
 * collectives. Linked with the internal library: it reads fr_win and sets fr_opt. */
#include "common.h"
#include "win/win.h"

#include <string.h>

#define BIG 16384 /* int64s of the large put: 128 KiB, above FLEXRMA_EAGER_MAX */
#define SMALL 8
#define COUNTER 0 /* the window: the counter, then SMALL, then BIG int64s */

static uint64_t asked(MPI_Win win) { return fr_win_lookup(win)->peers[1].acks_asked; }

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5);
    fr_opt.direct = 0;
    const MPI_Aint n = 1 + SMALL + BIG;
    int64_t *mem;
    MPI_Alloc_mem(n * (MPI_Aint)sizeof *mem, MPI_INFO_NULL, &mem);
    memset(mem, 0, (size_t)n * sizeof *mem);
    MPI_Win win;
    MPI_Win_create(mem, n * (MPI_Aint)sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    int64_t *src = malloc((size_t)BIG * sizeof *src);
    for (int i = 0; i < BIG; i++)
        src[i] = 1000 + i;
    uint64_t extra[4] = {0};
    if (rank == 0) {
        int64_t one = 1, before = 0, got[SMALL];
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        uint64_t a = asked(win);
        MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 1, COUNTER, MPI_SUM, win);
        MPI_Win_flush(1, win);
        extra[0] = asked(win) - a;
        a = asked(win);
        MPI_Get(got, SMALL, MPI_INT64_T, 1, 1, SMALL, MPI_INT64_T, win);
        MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 1, COUNTER, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 1, COUNTER, MPI_SUM, win);
        MPI_Win_flush(1, win);
        extra[1] = asked(win) - a;
        a = asked(win);
        MPI_Put(src, SMALL, MPI_INT64_T, 1, 1, SMALL, MPI_INT64_T, win);
        MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 1, COUNTER, MPI_SUM, win);
        MPI_Win_flush(1, win);
        extra[2] = asked(win) - a;
        a = asked(win);
        MPI_Put(src, BIG, MPI_INT64_T, 1, 1 + SMALL, BIG, MPI_INT64_T, win);
        MPI_Fetch_and_op(&one, &before, MPI_INT64_T, 1, COUNTER, MPI_SUM, win);
        MPI_Win_flush(1, win);
        extra[3] = asked(win) - a;
        MPI_Win_unlock(1, win);
    }
    MPI_Bcast(extra, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    is_int((int)extra[0], 0, "fetch-and-op, flush: no acknowledgement asked (the reply stands)");
    is_int((int)extra[1], 0, "a get and two fetch-and-ops, flush: no acknowledgement asked");
    is_int((int)extra[2], 1, "a put (64 B, in the packet), a fetch-and-op, flush: one asked");
    is_int((int)extra[3], 1, "a put (128 KiB, its own message), a fetch-and-op, flush: one asked");
    MPI_Barrier(MPI_COMM_WORLD);
    int right_data = 1;
    if (rank == 1) {
        /* Read under a lock of my own window, as MPI asks: with the progress agent (.async) the
         * data was stored by the agent thread, and nothing else orders that store before this
         * read (ThreadSanitizer said so once the fetches' answers stopped being MPI messages). */
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Win_sync(win);
        right_data = mem[COUNTER] == 5;
        for (int i = 0; i < SMALL; i++)
            right_data &= mem[1 + i] == src[i];
        for (int i = 0; i < BIG; i++)
            right_data &= mem[1 + SMALL + i] == src[i];
        MPI_Win_unlock(1, win);
    }
    MPI_Bcast(&right_data, 1, MPI_INT, 1, MPI_COMM_WORLD);
    ok(right_data, "the puts and the counter are in rank 1's window");
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(src);
    return test_done();
}
