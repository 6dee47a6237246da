/* t_entry_poll.c - the progress pass every few window calls (progress/entry.h, fr_entry_poll)
 * runs only when nothing polled for a while (two checks).
 *  1. Epochs whose waits poll pay no such pass: EPOCHS PSCW epochs with the neighbours on a ring
 *     run fewer than EPOCHS / 10 of them. A pass every fourth call, as before, was one per epoch;
 *     inside MPI_Win_start it gave the core away before the epoch's data was sent (the MPI
 *     library yields when its progress finds nothing, with more ranks than cores), and PSCW over
 *     the message transport took 2.5 times as long on 4 ranks and 2 cores.
 *  2. A process that only makes calls that never wait still serves the others: rank 0 locks and
 *     unlocks itself (granted at once, nothing to wait for) until it sees, in its window, the
 *     value rank 1 put there in an exclusive lock epoch, whose request only rank 0's progress
 *     can take in (exclusive: the put never lands while rank 0 reads).
 * Node peers exchange packets (fr_opt.direct off: with a mapped window the origins would copy
 * and close epochs themselves, and the target's waits would have nothing to poll).
 * Linked with the internal library: it reads fr_entry_passes and sets fr_opt. */
#include "common.h"
#include "progress/progress.h"

#define EPOCHS 400
#define SECONDS 30.0 /* check 2 gives up after this long (ctest's limit is 120 s) */
#define MARK 4242

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2);
    fr_opt.direct = 0;
    int *mem;
    MPI_Alloc_mem(4 * sizeof *mem, MPI_INFO_NULL, &mem);
    memset(mem, 0, 4 * sizeof *mem);
    MPI_Win win;
    MPI_Win_create(mem, 4 * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, nbrs;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int nbr[2] = {right(), left()};
    MPI_Group_incl(world, nbr[0] == nbr[1] ? 1 : 2, nbr, &nbrs);

    /* 1 */
    unsigned before = fr_entry_passes;
    for (int e = 0; e < EPOCHS; e++) {
        MPI_Win_post(nbrs, 0, win);
        MPI_Win_start(nbrs, 0, win);
        MPI_Put(&e, 1, MPI_INT, right(), 0, 1, MPI_INT, win);
        MPI_Put(&e, 1, MPI_INT, left(), 1, 1, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    }
    unsigned extra = fr_entry_passes - before;
    ok(extra < EPOCHS / 10 && mem[0] == EPOCHS - 1 && mem[1] == EPOCHS - 1,
       "%d PSCW epochs: %u passes besides the waits' (fewer than %d); last puts %d and %d",
       EPOCHS, extra, EPOCHS / 10, mem[0], mem[1]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2 */
    int seen = 0;
    if (rank == 0) {
        double t0 = MPI_Wtime();
        long rounds = 0;
        while (!seen && MPI_Wtime() - t0 < SECONDS) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            seen = mem[2] == MARK; /* loads in a lock epoch on my own window */
            MPI_Win_unlock(0, win);
            rounds++;
        }
        ok(seen, "rank 0, locking only itself, served rank 1's lock epoch (%ld rounds)", rounds);
    } else if (rank == 1) {
        int v = MARK;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        ok(1, "rank 1's lock epoch on rank 0 ended");
    } else {
        ok(1, "rank %d takes no part in check 2", rank);
    }
    MPI_Group_free(&nbrs);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    return test_done();
}
