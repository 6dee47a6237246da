/* t_empty_members.c - members of a window whose memory is empty (size 0) are still reached
 * through their shared state page: locking them (MPI_Win_lock, and MPI_Win_lock_all, which
 * locks every member) and closing those epochs need nothing of them.
 *
 * On the node's communicator rank 0 exposes NINTS ints, the others nothing, in an
 * MPI_Win_allocate and an MPI_Win_create window. While the others stay out of MPI (they watch a
 * word of an MPI_Win_allocate_shared window with plain loads, sleeping between looks), rank 0
 * runs EPOCHS lock_all epochs (a put and a get on itself, a get of 0 bytes from each other
 * member) and EPOCHS shared and exclusive lock epochs on each other member, then raises the
 * word. Had any of these waited for a member's progress (a lock request by packet), the word
 * would never be raised: the others give up after LIMIT_S seconds and report it; rank 0 never
 * returns then and the test's timeout ends it. The data rank 0 put and got is checked, and a
 * fence epoch afterwards checks that every member can still reach rank 0's memory.
 * Only where node peers reach each other directly (not FLEXRMA_TRANSPORT=am or
 * FLEXRMA_DIRECT=0, not across simulated nodes): elsewhere the requests travel as messages and
 * the targets must serve them, as MPI allows. Linked with the internal library for fr_opt. */
#include "outside_common.h"

#define NINTS 64
#define EPOCHS 2000
#define LIMIT_S 60

static void run(MPI_Comm node, int nrank, int nsize, int allocate, volatile int *word, int phase)
{
    const char *kind = allocate ? "MPI_Win_allocate" : "MPI_Win_create";
    MPI_Aint bytes = nrank == 0 ? NINTS * (MPI_Aint)sizeof(int) : 0;
    int *base = NULL;
    MPI_Win win;
    if (allocate) {
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, node, &base, &win);
    } else {
        base = nrank == 0 ? xmalloc((size_t)bytes) : NULL;
        MPI_Win_create(base, bytes, sizeof(int), MPI_INFO_NULL, node, &win);
    }
    if (nrank == 0)
        memset(base, 0, (size_t)bytes);
    MPI_Barrier(node);
    if (nrank == 0) {
        int src[NINTS], got[NINTS], bad = 0;
        for (int e = 0; e < EPOCHS; e++) {
            int slot = e % NINTS;
            src[slot] = e + 1;
            MPI_Win_lock_all(0, win);
            MPI_Put(&src[slot], 1, MPI_INT, 0, slot, 1, MPI_INT, win);
            MPI_Win_flush(0, win);
            MPI_Get(&got[slot], 1, MPI_INT, 0, slot, 1, MPI_INT, win);
            for (int t = 1; t < nsize; t++)
                MPI_Get(got, 0, MPI_INT, t, 0, 0, MPI_INT, win);
            MPI_Win_unlock_all(win);
            bad += got[slot] != e + 1;
            for (int t = 1; t < nsize; t++) {
                MPI_Win_lock(e % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win);
                MPI_Win_unlock(t, win);
            }
        }
        ok(bad == 0, "%s: %d lock_all epochs put and got rank 0's own ints (%d wrong)", kind,
           EPOCHS, bad);
        __atomic_store_n(word, phase, __ATOMIC_RELEASE);
    } else {
        ok(outside_watch(word, phase, LIMIT_S), "%s: rank 0's lock_all and lock epochs on this empty member "
                               "ended while it stayed out of MPI (within %d s)", kind, LIMIT_S);
    }
    /* Everyone reaches rank 0's memory: each member adds its rank + 1 to int 0. */
    int one = nrank + 1;
    MPI_Win_fence(0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (nrank == 0) {
        int want = 0;
        for (int e = 0; e < EPOCHS; e++)
            if (e % NINTS == 0)
                want = e + 1; /* the last put into int 0 */
        want += nsize * (nsize + 1) / 2;
        ok(base[0] == want, "%s: after a fence every member's accumulate reached rank 0 "
                            "(%d, want %d)", kind, base[0], want);
    } else {
        ok(1, "%s: accumulated into rank 0", kind);
    }
    MPI_Win_free(&win);
    if (!allocate)
        free(base);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    int nrank, nsize;
    MPI_Comm node = outside_node(&nrank, &nsize);
    tap_plan(4);
    if (!outside_direct(node, nsize)) {
        skip(4, "node peers are not reached directly here (messages need the targets' "
                "progress)");
        MPI_Comm_free(&node);
        return test_done();
    }
    MPI_Win wordwin;
    int *word = outside_word(node, nrank, &wordwin);
    run(node, nrank, nsize, 1, word, 1);
    run(node, nrank, nsize, 0, word, 2);
    MPI_Win_free(&wordwin);
    MPI_Comm_free(&node);
    return test_done();
}
