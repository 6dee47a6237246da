/* idle.c - spin, then yield: the one idle rule of every wait (idle.h). */
#include "idle.h"

#include <sched.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spinning helps only while the peer runs on another core; past a while give the core away, or
 * with more ranks than cores every wait burns its peers' time slices. A poll that only looks at
 * shared-memory rings takes about 10 ns, one that probes MPI about 50. Counted in polls alone, a
 * wait on rings would start yielding within half a microsecond; a sched_yield costs half a
 * microsecond even when nothing else wants the core, so a wait for a peer's data message
 * (several microseconds through MPI) would then poll only every half microsecond and finish
 * late (pscw at 16 KiB, 2 ranks: 12 us instead of 7.5), and so would a wait for a counter bump
 * or an Isend/Irecv pair. So a wait also spins at least this long before its first yield. */
#define FR_SPIN_MIN_NS 3000

int fr_idle_yield_due(fr_idle *i)
{
    if (fr_opt.spin_polls == 0)
        return 1; /* FLEXRMA_SPIN_POLLS=0: yield at once, as asked */
    /* The clock is read only once the polls are spent: most waits end before, and a clock read
     * would be a tenth of a short counter step. */
    if (++i->polls < fr_opt.spin_polls)
        return 0;
    if (i->polls == fr_opt.spin_polls) {
        i->since = now_ns();
        return 0;
    }
    return now_ns() - i->since >= FR_SPIN_MIN_NS;
}

void fr_backoff(fr_idle *i)
{
    if (fr_idle_yield_due(i))
        sched_yield();
}

void fr_idle_after(fr_idle *i, int events)
{
    if (events > 0)
        fr_idle_reset(i);
    else
        fr_backoff(i);
}

