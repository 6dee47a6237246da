/* idle.c - spin, then yield or sleep: the one idle rule of every wait (idle.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "idle.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

uint64_t fr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A wait that has idled this long waits for something slow (a peer computing, a barrier behind
 * a long phase): from then on it sleeps between polls. Linux keeps a task that yields runnable
 * and gives it its share of the core, so with more ranks than cores, waiters that only yield take
 * half the machine from the ranks that work; and the load balancer, which counts runnable tasks,
 * may leave two working ranks on one core while the waiters fill the other, so that every
 * exchange between the two costs a time slice (t_lock's token pair over MPICH with 4 ranks on 2
 * cores: 0.7 s, at times over 100 s). A sleeping waiter leaves its core idle, and the balancer
 * moves a working rank there. A wait this long loses at most a few percent to the sleep. */
#define FR_SLEEP_AFTER_NS 1000000
#define FR_SLEEP_NS 50000

/* When a wait that found nothing gives its core away. A yield helps only when what the wait
 * needs may be runnable on this very core: a peer rank, when the node runs more ranks than it has
 * cores, or another thread of this process inside MPI (the progress agent, or the program's own
 * under MPI_THREAD_MULTIPLE: fr_engine_locking). Otherwise the peer runs on a core of its own, and
 * a yield only hands this core to whatever else runs there: with other work on the node, for a
 * whole time slice (Linux's EEVDF scheduler pushes a yielding task's deadline back by one), after
 * which the peer's answer, long there, is noticed. NWChem's SCF at 2 ranks with two busy loops
 * beside, on the 2 cores: 45-50 s with yields, 3.8-4.2 s without, 3.8-4.4 natively (Open MPI
 * spins). Such a wait spins, then sleeps once it has idled FR_SLEEP_AFTER_NS. */

/* Where yields help, a wait still spins at least this long before its first one. A poll that only
 * looks at shared-memory rings takes about 10 ns, one that probes MPI about 50. Counted in polls
 * alone, a wait on rings would start yielding within half a microsecond; a sched_yield costs half
 * a microsecond even when nothing else wants the core, so a wait for a peer's data message
 * (several microseconds through MPI) would then poll only every half microsecond and finish late
 * (pscw at 16 KiB, 2 ranks: 12 us instead of 7.5), and so would a wait for a counter bump or an
 * Isend/Irecv pair. */
#define FR_SPIN_MIN_NS 3000

/* ... none on a node that runs more ranks than it has cores: then the peer a wait spins for is
 * most likely waiting for this very core, and the spin is the time it does not run (ghost, 4
 * ranks on 2 cores, shared memory, Open MPI: fence 20-22 us a step with the spin, 16-19
 * without; PSCW 20-22 and 14-15; counter 10-11 and 7-7.5; over MPICH PSCW 23-25 and 16-20,
 * counter 11-13 and 8-10). Only for waits on flexrma's own work: a hooked
 * wait on the application's messages alone (fr_idle.app) keeps the floor, so a program's own
 * messages wait as they did. (Measured, it is a cautious choice, no more: ghost's Isend/Irecv
 * over MPICH at 4 ranks took 23-28 us before, 27-37 after, with this exception or without.)
 * Set by fr_idle_setup(): how long a wait idles before it gives the core away, for flexrma's
 * own waits and for the application's. */
static uint64_t give_way_ns = FR_SPIN_MIN_NS, app_give_way_ns = FR_SPIN_MIN_NS;

/* Past the spin, the clock is read on one idle poll in this many (fr_idle_yield_due). */
#define FR_CLOCK_EVERY 8

int fr_node_oversubscribed(void)
{
    /* The launcher's count of this node's ranks: Open MPI, then MPICH's Hydra. */
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!v)
        v = getenv("MPI_LOCALNRANKS");
    long ranks = v ? strtol(v, NULL, 10) : 0;
    /* The cores: online ones, or those the process may run on when that is more than one (a
     * process bound to one core does not say how many the node's ranks have between them). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1 &&
        CPU_COUNT(&set) < cores)
        cores = CPU_COUNT(&set);
    return ranks > 0 && cores > 0 && ranks > cores;
}

void fr_idle_setup(void)
{
    if (fr_node_oversubscribed()) {
        give_way_ns = 0;
        app_give_way_ns = FR_SPIN_MIN_NS;
    } else if (fr_engine_locking) {
        give_way_ns = app_give_way_ns = FR_SPIN_MIN_NS;
    } else {
        give_way_ns = app_give_way_ns = FR_SLEEP_AFTER_NS; /* never a yield: a sleep */
    }
}

int fr_idle_yield_due(fr_idle *i)
{
    if (fr_opt.spin_polls == 0)
        return 1; /* FLEXRMA_SPIN_POLLS=0: yield at once, as asked */
    /* The clock is read only once the polls are spent: most waits end before, and a clock read
     * would be a tenth of a short counter step. */
    if (++i->polls < fr_opt.spin_polls)
        return 0;
    if (i->polls == fr_opt.spin_polls) {
        i->since = fr_now_ns();
        return 0;
    }
    /* Then only every FR_CLOCK_EVERY-th poll: a clock read (some 25 ns here) costs as much as a
     * look at the rings, so on every poll it doubled the polling period of a long wait; the
     * limits it checks are microseconds. */
    if ((i->polls - fr_opt.spin_polls) % FR_CLOCK_EVERY)
        return 0;
    i->idle_ns = fr_now_ns() - i->since;
    return i->idle_ns >= (i->app ? app_give_way_ns : give_way_ns);
}

void fr_idle_give_way(fr_idle *i)
{
    if (i->idle_ns < FR_SLEEP_AFTER_NS) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, FR_SLEEP_NS};
    nanosleep(&ts, NULL);
}

void fr_backoff(fr_idle *i)
{
    if (fr_idle_yield_due(i))
        fr_idle_give_way(i);
}

void fr_idle_after(fr_idle *i, int events)
{
    if (events > 0)
        fr_idle_reset(i);
    else
        fr_backoff(i);
}

