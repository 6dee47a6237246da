/* t_held.c - an origin many PSCW epochs ahead of its target (am_recv.c, fr_am_replay_held).
 *
 * MPI_Win_complete needs no post, so an origin may close EPOCHS access epochs to a target before
 * the target posts once. Their packets reach the target early and wait there, set aside, until
 * the matching post; each post then runs one epoch's packets. Checked:
 *  - every epoch's put lands in its own slot, in order, once the target has posted for it;
 *  - the target set each packet aside at most once (fr_win.st.held at most the packets sent):
 *    a replay that held the remaining list again at every post costs the square of the epochs.
 * Rank 0 is the origin, rank 1 the target, any other rank only takes part in the collectives.
 * The window travels by packets: fr_opt.direct is turned off before it is made (a mapped window
 * would take the puts as copies and close the epochs in the target's state page).
 * Linked with the internal library: it reads fr_win and sets fr_opt. */
#include "common.h"
#include "win/win.h"

#define EPOCHS 300
/* What an epoch sends the target: the put, and the COMPLETE that closes it. */
#define PACKETS_PER_EPOCH 2

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2);
    fr_opt.direct = 0;
    int64_t *mem;
    MPI_Alloc_mem(EPOCHS * sizeof *mem, MPI_INFO_NULL, &mem);
    for (int k = 0; k < EPOCHS; k++)
        mem[k] = -1;
    MPI_Win win;
    MPI_Win_create(mem, EPOCHS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, other;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int peer = rank == 0 ? 1 : 0;
    MPI_Group_incl(world, rank <= 1 ? 1 : 0, &peer, &other);
    int token = 0;
    if (rank == 0) {
        for (int k = 0; k < EPOCHS; k++) {
            int64_t v = k;
            MPI_Win_start(other, 0, win);
            MPI_Put(&v, 1, MPI_INT64_T, 1, k, 1, MPI_INT64_T, win);
            MPI_Win_complete(win);
        }
        MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        /* Polls the transport while it waits: the early epochs' packets arrive meanwhile. */
        MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < EPOCHS; k++) {
            MPI_Win_post(other, 0, win);
            MPI_Win_wait(win);
        }
    }
    int wrong = 0;
    if (rank == 1)
        for (int k = 0; k < EPOCHS; k++)
            wrong += mem[k] != k;
    ok(wrong == 0, "the %d epochs' puts all landed (%d slots wrong)", EPOCHS,
       wrong);
    uint64_t held = fr_win_lookup(win)->st.held;
    ok(held <= (uint64_t)EPOCHS * PACKETS_PER_EPOCH,
       "%llu packets set aside, at most the %d sent", (unsigned long long)held,
       rank == 1 ? EPOCHS * PACKETS_PER_EPOCH : 0);
    MPI_Win_free(&win);
    MPI_Group_free(&other);
    MPI_Group_free(&world);
    MPI_Free_mem(mem);
    return test_done();
}
