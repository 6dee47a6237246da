/* test_shm_lock.c - the fair reader-writer ticket lock of shm_lock.h in one process: the order
 * of entry (a queued exclusive request blocks later shared ones; a run of shared requests holds
 * the lock together), and four threads taking it shared and exclusive 4000 times each while
 * checking that an exclusive holder is always alone. Run with mpirun -np 1. */
#include "node/shm_lock.h"
#include "tap.h"

#include <mpi.h>

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

static void test_order(void)
{
    fr_lockword l = {0};
    AO_t s0 = fr_lockword_take(&l), x1 = fr_lockword_take(&l), s2 = fr_lockword_take(&l),
         s3 = fr_lockword_take(&l);
    ok(fr_lockword_enter(&l, s0, 0), "a shared request enters a free lock");
    ok(!fr_lockword_enter(&l, x1, 1), "an exclusive request waits for the shared holder");
    ok(!fr_lockword_enter(&l, s2, 0), "a shared request behind a queued exclusive one waits");
    fr_lockword_release(&l, s0, 0);
    ok(fr_lockword_enter(&l, x1, 1), "the exclusive request enters when the holder leaves");
    ok(!fr_lockword_enter(&l, s2, 0), "the shared request still waits for the exclusive holder");
    fr_lockword_release(&l, x1, 1);
    ok(fr_lockword_enter(&l, s2, 0), "then it enters");
    ok(fr_lockword_enter(&l, s3, 0), "and the next shared request enters with it");
    AO_t x4 = fr_lockword_take(&l);
    fr_lockword_release(&l, s3, 0);
    ok(!fr_lockword_enter(&l, x4, 1), "an exclusive request waits for every shared holder");
    fr_lockword_release(&l, s2, 0);
    ok(fr_lockword_enter(&l, x4, 1), "and enters once the last one left");
    fr_lockword_release(&l, x4, 1);
    AO_t s5 = fr_lockword_take(&l);
    ok(fr_lockword_enter(&l, s5, 0), "the lock is free again");
    fr_lockword_release(&l, s5, 0);
}

#define THREADS 4
#define ROUNDS 4000

static fr_lockword shared_lock;
static volatile AO_t writers, readers, violations;
static long plain_counter; /* changed only under the exclusive lock, without atomics */

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        int excl = (seed >> 16) % 3 == 0;
        AO_t t = fr_lockword_take(&shared_lock);
        while (!fr_lockword_enter(&shared_lock, t, excl))
            sched_yield();
        if (excl) {
            if (AO_fetch_and_add1(&writers) != 0 || AO_load(&readers) != 0)
                AO_fetch_and_add1(&violations);
            plain_counter++;
            AO_fetch_and_sub1(&writers);
        } else {
            AO_fetch_and_add1(&readers);
            if (AO_load(&writers) != 0)
                AO_fetch_and_add1(&violations);
            AO_fetch_and_sub1(&readers);
        }
        fr_lockword_release(&shared_lock, t, excl);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[THREADS];
    long expect = 0;
    for (int k = 0; k < THREADS; k++) { /* the exclusive rounds each thread will draw */
        unsigned seed = (unsigned)k + 1;
        for (int i = 0; i < ROUNDS; i++) {
            seed = seed * 1103515245u + 12345u;
            expect += (seed >> 16) % 3 == 0;
        }
    }
    for (int k = 0; k < THREADS; k++)
        pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)(k + 1));
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    is_int((long long)violations, 0, "no holder ever met an exclusive holder");
    is_int(plain_counter, expect, "no update under the exclusive lock was lost");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_plan(12);
    test_order();
    test_threads();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
