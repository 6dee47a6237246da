/* t_threads.c - a multithreaded program (MPI_THREAD_MULTIPLE) whose threads depend on each other
 * through flexrma. On every rank the main thread sits in MPI_Win_wait, exposing its window to its
 * left neighbour, while a second thread opens the access epoch to the right neighbour, puts, and
 * completes. Each rank's wait is satisfied only by its left neighbour's second thread, so a
 * waiting thread that kept the engine to itself would deadlock the whole ring (test timeout). */
#include "common.h"

#include <pthread.h>
#include <time.h>

#define ROUNDS 20

static iwin w;
static int round_no;

static void *access_thread(void *arg)
{
    /* Let the main thread reach MPI_Win_wait first. */
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    int r = right(), value = 1000 * rank + round_no;
    MPI_Group g = world_subgroup(&r, 1);
    MPI_Win_start(g, 0, w.win);
    MPI_Put(&value, 1, MPI_INT, r, 0, 1, MPI_INT, w.win);
    MPI_Win_complete(w.win);
    MPI_Group_free(&g);
    return arg;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (provided < MPI_THREAD_MULTIPLE) {
        tap_plan(1);
        skip(1, "the MPI library does not provide MPI_THREAD_MULTIPLE");
        return test_done();
    }
    tap_plan(1);
    iwin_create(&w, 1);
    int l = left(), wrong = 0;
    MPI_Group from_left = world_subgroup(&l, 1);
    for (round_no = 0; round_no < ROUNDS; round_no++) {
        pthread_t t;
        MPI_Win_post(from_left, 0, w.win);
        pthread_create(&t, NULL, access_thread, NULL);
        MPI_Win_wait(w.win);
        pthread_join(t, NULL);
        if (w.buf[0] != 1000 * l + round_no && !wrong++)
            diag("round %d: got %d, expected %d", round_no, w.buf[0], 1000 * l + round_no);
    }
    ok(wrong == 0, "%d rounds of wait in one thread, start/put/complete in another", ROUNDS);
    MPI_Group_free(&from_left);
    iwin_free(&w);
    return test_done();
}
