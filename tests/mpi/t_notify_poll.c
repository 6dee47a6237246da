/* t_notify_poll.c - a target that only polls its notification counters makes progress in every
 * poll (docs/specification.md 13.1, "Reading, waiting and progress"): MPI_Win_notify_get_value
 * and MPIX_Win_test_notify each run a progress pass of their own.
 *
 * Without it the poll would still progress, only later: the entry points' pass every few calls
 * (progress/entry.h, fr_entry_poll) steps in when no pass ran for a while, so no result, only
 * the latency, would show the difference. What shows it without a clock is who ran the passes:
 * fr_entry_passes counts those of the entry points, which run only when nothing else did. POLLS
 * calls of each in a row must need fewer than POLLS / 20 of them (with the calls' own pass:
 * none; without: one every eighth call). Then the real case, over whichever transport the test
 * runs on: a notified put from the left neighbour arrives while the target does nothing but
 * poll (20 s at most, then the test fails instead of hanging), with its data. Last, a poll
 * loop that finds nothing gives the core away in the end, as flexrma's own waits do (with more
 * ranks than cores the rank it waits for may need it): fr_notify_poll_yields must rise within
 * 20 s of polling (it does after a few thousand polls; without, never).
 * Linked with the internal library: it reads fr_entry_passes and fr_notify_poll_yields. */
#include "common.h"
#include "flexrma.h"
#include "progress/progress.h"
#include "sync/notify.h"

#define POLLS 400
#define ID 3     /* any notification id of an MPIX_Win_create_notify window */
#define MARK 5150

/* Poll with MPI_Win_notify_get_value alone until the counter reaches want (20 s at most). */
static MPI_Count poll_value(MPI_Win win, MPI_Count want)
{
    MPI_Count v = -1;
    double until = MPI_Wtime() + 20;
    do
        MPI_Win_notify_get_value(win, ID, &v);
    while (v < want && MPI_Wtime() < until);
    return v;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(4);
    int *mem;
    MPI_Alloc_mem(sizeof *mem, MPI_INFO_NULL, &mem);
    *mem = 0;
    MPI_Win win;
    MPIX_Win_create_notify(mem, sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Count v = 0, most = 0;
    unsigned before = fr_entry_passes;
    for (int i = 0; i < POLLS; i++) {
        MPI_Win_notify_get_value(win, ID, &v);
        most = v > most ? v : most;
    }
    unsigned extra = fr_entry_passes - before;
    ok(extra < POLLS / 20 && most == 0,
       "%d MPI_Win_notify_get_value calls: %u passes of the entry points (fewer than %d); "
       "value %lld (nothing notified)", POLLS, extra, POLLS / 20, (long long)most);

    int flag = 0, any = 0;
    before = fr_entry_passes;
    for (int i = 0; i < POLLS; i++) {
        MPIX_Win_test_notify(win, ID, &flag);
        any |= flag;
    }
    extra = fr_entry_passes - before;
    ok(extra < POLLS / 20 && !any,
       "%d MPIX_Win_test_notify calls: %u passes of the entry points (fewer than %d); "
       "flag %d (nothing notified)", POLLS, extra, POLLS / 20, any);
    MPI_Barrier(MPI_COMM_WORLD);

    int mark = MARK + left();
    MPI_Win_lock_all(0, win);
    MPI_Put_notify(&(int){MARK + rank}, 1, MPI_INT, right(), 0, 1, MPI_INT, ID, win);
    v = poll_value(win, 1);
    int got = *mem; /* flexrma's windows are unified; a counted value orders the loads */
    MPI_Win_unlock_all(win);
    ok(v == 1 && got == mark,
       "a target that only polls MPI_Win_notify_get_value sees its left neighbour's notified put "
       "(value %lld, want 1) with its data (%d, want %d)", (long long)v, got, mark);

    unsigned yields = fr_notify_poll_yields;
    long polls = 0;
    double until = MPI_Wtime() + 20;
    while (fr_notify_poll_yields == yields && MPI_Wtime() < until) {
        MPI_Win_notify_get_value(win, ID, &v);
        polls++;
    }
    ok(fr_notify_poll_yields > yields,
       "polls that find nothing give the core away: %u yields after %ld polls",
       fr_notify_poll_yields - yields, polls);

    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    return test_done();
}
