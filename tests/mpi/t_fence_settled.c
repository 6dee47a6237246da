/* t_fence_settled.c - the next fence epoch opens at the target's close (direct.c,
 * fence_settled), unless something of the epoch before could still land in the target's
 * window.
 *
 * Each part makes an epoch whose last write into the target's window is still landing after
 * the target's close, and, in the next epoch, a direct copy (mapped, or cross-memory attach)
 * that would overtake it if the origin took that close for permission:
 *  - quiet: the origin's own strided puts into a window it cannot map travel in the ring, and
 *    the target, late into the fence, unpacks them after its close; the origin's get of the
 *    next epoch must read what they wrote;
 *  - settled: the target's own strided get from a window it cannot map brings its answer, a
 *    short message sent in the origin's fence, into the target's window; the origin's put of
 *    the next epoch must land after it;
 *  - third member (3 ranks): rank 2's puts into rank 1 travel, as in `quiet`; rank 0, which
 *    sent rank 1 nothing, gets from it in the next epoch and must read rank 2's data;
 *  - settled, get to a later member (3 ranks): as `settled`, rank 1's get going to rank 2,
 *    which it issues in its fence after its close to rank 0 would have gone in member order.
 * Rank 1 is the target of every part. Rounds repeat each race; each part also checks by the
 * window's statistics that the copy of the next epoch was direct (a get copied, or asked
 * through the ring, which a take-back reads directly), so the race is the one meant.
 * Linked with the internal library: it reads fr_win and sets fr_opt. */
#include "direct_common.h"
#include "transport/transport.h"

#include <unistd.h>

#define N 2048 /* ints in a strided transfer: 8 KiB, inside the synchronization message
                  (FLEXRMA_EAGER_MAX), which the target unpacks when it reads it */
#define PUTS 8 /* strided puts an epoch: the target has that much to unpack after its close */
#define LATE_US 200 /* the target's delay before the fence: the origin's messages wait unread */
#define LAST (2 * (N - 1)) /* its last element: the last one unpacked */
#define GETN 64 /* ints in the strided get: its answer, a short message, is sent before the
                     origin receives it */
#define GETLAST (2 * (GETN - 1))
#define ROUNDS 100

static int direct_on; /* node peers are reached directly in this run */

static uint64_t direct_ops(MPI_Win win) { return fr_win_lookup(win)->st.direct; }

/* Every other int, n of them. */
static MPI_Datatype strided(int n)
{
    MPI_Datatype t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* An origin's strided put to rank 1 travels; rank 0's get of its last element in the next
 * epoch is copied (cross-memory attach) and must read that put's value. putter: 0, or 2 for
 * the third-member part. */
static void race_put_then_get(int putter, const char *what)
{
    MPI_Win win;
    int *base = direct_window(0, 2 * N, &win);
    MPI_Datatype every_other = strided(N);
    int *src = xmalloc(N * sizeof *src);
    int bad = 0, got = 0;
    uint64_t copied = 0;
    MPI_Win_fence(0, win);
    for (int r = 1; r <= ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            src[i] = r;
        for (int k = 0; k < PUTS && rank == putter; k++)
            MPI_Put(src, N, MPI_INT, 1, 0, 1, every_other, win);
        if (rank == 1)
            usleep(LATE_US);
        MPI_Win_fence(0, win);
        uint64_t d0 = direct_gets_read(win);
        if (rank == 0)
            MPI_Get(&got, 1, MPI_INT, 1, LAST, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        copied = direct_gets_read(win) - d0;
        if (rank == 0 && got != r && bad++ == 0)
            diag("%s: round %d: the get read %d", what, r, got);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0) {
        is_int(bad, 0, "%s: every get read the put of the epoch before", what);
        is_int((long long)copied, direct_on, "%s: the gets were copied or asked", what);
    } else {
        ok(1, "%s (checked at rank 0)", what);
        ok(1, "%s: copies (checked at rank 0)", what);
    }
    MPI_Type_free(&every_other);
    free(src);
    direct_window_free(0, &win, base);
}

/* Rank 1's strided get from the answerer (rank 0, or 2 for the later-member part), which it
 * cannot map, brings its result into rank 1's mapped window, strided too; rank 0's put of the
 * next epoch to its last element there must land after it. The answerer answers the get (a
 * message) in its fence and may leave the fence before rank 1 has received the answer. */
static void race_get_then_put(int answerer, const char *what)
{
    MPI_Win win;
    int *base = direct_window(rank == 1, 2 * N, &win);
    MPI_Datatype every_other = strided(GETN);
    int bad = 0, neg = 0;
    uint64_t copied = 0;
    MPI_Win_fence(0, win);
    for (int r = 1; r <= ROUNDS; r++) {
        if (rank == answerer) /* what rank 1 fetches: its own stores, before the fence */
            for (int i = 0; i < GETN; i++)
                base[2 * i] = r;
        MPI_Win_fence(0, win);
        if (rank == 1)
            MPI_Get(base, 1, every_other, answerer, 0, 1, every_other, win);
        if (rank == answerer)
            usleep(LATE_US);
        MPI_Win_fence(0, win);
        neg = -r;
        uint64_t d0 = direct_ops(win);
        if (rank == 0)
            MPI_Put(&neg, 1, MPI_INT, 1, GETLAST, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        copied = direct_ops(win) - d0;
        if (rank == 1 && (base[GETLAST] != -r || base[0] != r) && bad++ == 0)
            diag("%s: round %d: the last element holds %d, the first %d", what, r,
                 base[GETLAST], base[0]);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 1) {
        is_int(bad, 0, "%s: every put landed after the get of the epoch before", what);
        ok(1, "%s: copies (checked at rank 0)", what);
    } else if (rank == 0) {
        ok(1, "%s (checked at rank 1)", what);
        is_int((long long)copied, direct_on, "%s: the puts were copied", what);
    } else {
        ok(1, "%s (checked at rank 1)", what);
        ok(1, "%s: copies (checked at rank 0)", what);
    }
    MPI_Type_free(&every_other);
    direct_window_free(rank == 1, &win, base);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    direct_on = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct;
    tap_plan(8);
    race_put_then_get(0, "quiet");
    race_get_then_put(0, "settled");
    if (nprocs >= 3) {
        race_put_then_get(2, "third member");
        race_get_then_put(2, "settled, get to a later member");
    } else {
        for (int i = 0; i < 4; i++)
            ok(1, "parts of three members: needs 3 ranks");
    }
    return test_done();
}
