/* notify.c - notification latency: a ping-pong in which each side puts 8 bytes into the other's
 * window and then tells it so, against a plain point-to-point ping-pong of 8 bytes (the
 * reference of the ratio column). The rows give half a round trip.
 *
 *   pingpong    MPI_Send / MPI_Recv of the 8 bytes
 *   lock-flag   MPI-2, no fence: lock, put the data, unlock (complete at the target); lock, put
 *               a flag, unlock. The peer polls the flag under a shared lock of its own window
 *               (the separate memory model makes remote puts visible only after that).
 *   flush-get   MPI-3: inside MPI_Win_lock_all, put the data, MPI_Win_flush,
 *               put the flag, MPI_Win_flush; the peer polls its flag with MPI_Get +
 *               MPI_Win_flush on itself.
 *   flush-sync  the same, but the peer polls with a local load after MPI_Win_sync (only on a
 *               window in the unified memory model).
 * The MPI-3 variants run only where the window accepts MPI-3 calls (flexrma's windows do since
 * its MPI-3 support; an MPI that rejects them gets them skipped, and said so). Natively over
 * MPICH, flush-sync is skipped too (flush_sync_hangs).
 * Slot for a later issue: "counter", the same ping-pong with MPI_Sync counters.
 *
 * Ranks 0 and 1 play; other ranks, if any, only take part in the barriers. The flag carries the
 * step number, which only grows, so it is never reset; every received value is checked. */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DATA, FLAG }; /* window displacements, in uint64_t units */

typedef struct notify {
    int rank, peer;
    volatile uint64_t *mem; /* my window: mem[DATA], mem[FLAG] */
    uint64_t out[2];        /* origin buffers of the puts */
    MPI_Win win;
    uint64_t seq; /* the step number, the same on ranks 0 and 1 */
    int wrong;    /* wrong values received since the last check */
} notify;

typedef void (*signal_fn)(notify *x, uint64_t v);
typedef void (*await_fn)(notify *x, uint64_t v);

/* One round trip: rank 0 signals then awaits, rank 1 the other way round. */
static void round_trip(notify *x, signal_fn signal, await_fn await)
{
    if (x->rank > 1)
        return;
    uint64_t v = ++x->seq;
    if (x->rank == 0) {
        signal(x, v);
        await(x, v);
    } else {
        await(x, v);
        signal(x, v);
    }
}

static void check(notify *x, uint64_t got, uint64_t want) { x->wrong += got != want; }

static int end_count(void *p)
{
    notify *x = p;
    int wrong = x->wrong;
    x->wrong = 0;
    return wrong;
}

/* ---- pingpong ---- */
static void signal_send(notify *x, uint64_t v)
{
    MPI_Send(&v, 1, MPI_UINT64_T, x->peer, 0, MPI_COMM_WORLD);
}
static void await_recv(notify *x, uint64_t v)
{
    uint64_t got;
    MPI_Recv(&got, 1, MPI_UINT64_T, x->peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(x, got, v);
}
static void step_pingpong(void *p) { round_trip(p, signal_send, await_recv); }

/* ---- lock-flag ---- */
static void put_locked(notify *x, int what)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->peer, 0, x->win);
    MPI_Put(&x->out[what], 1, MPI_UINT64_T, x->peer, what, 1, MPI_UINT64_T, x->win);
    MPI_Win_unlock(x->peer, x->win);
}
static void signal_lock(notify *x, uint64_t v)
{
    x->out[DATA] = x->out[FLAG] = v;
    put_locked(x, DATA); /* complete at the peer before the flag is even sent */
    put_locked(x, FLAG);
}
static void await_lock(notify *x, uint64_t v)
{
    uint64_t flag, data;
    do {
        MPI_Win_lock(MPI_LOCK_SHARED, x->rank, 0, x->win);
        flag = x->mem[FLAG];
        data = x->mem[DATA];
        MPI_Win_unlock(x->rank, x->win);
    } while (flag < v);
    check(x, data, v);
}
static void step_lock_flag(void *p) { round_trip(p, signal_lock, await_lock); }

/* ---- MPI-3: flush-get, flush-sync ---- */
static void begin_mpi3(void *p) { MPI_Win_lock_all(0, ((notify *)p)->win); }
static int end_mpi3(void *p)
{
    MPI_Win_unlock_all(((notify *)p)->win);
    return end_count(p);
}
static void signal_flush(notify *x, uint64_t v)
{
    x->out[DATA] = x->out[FLAG] = v;
    MPI_Put(&x->out[DATA], 1, MPI_UINT64_T, x->peer, DATA, 1, MPI_UINT64_T, x->win);
    MPI_Win_flush(x->peer, x->win);
    MPI_Put(&x->out[FLAG], 1, MPI_UINT64_T, x->peer, FLAG, 1, MPI_UINT64_T, x->win);
    MPI_Win_flush(x->peer, x->win);
}
static uint64_t get_own(notify *x, int what)
{
    uint64_t v;
    MPI_Get(&v, 1, MPI_UINT64_T, x->rank, what, 1, MPI_UINT64_T, x->win);
    MPI_Win_flush(x->rank, x->win);
    return v;
}
static void await_get(notify *x, uint64_t v)
{
    while (get_own(x, FLAG) < v)
        ;
    check(x, get_own(x, DATA), v);
}
static void await_sync(notify *x, uint64_t v)
{
    do
        MPI_Win_sync(x->win);
    while (x->mem[FLAG] < v);
    MPI_Win_sync(x->win);
    check(x, x->mem[DATA], v);
}
static void step_flush_get(void *p) { round_trip(p, signal_flush, await_get); }
static void step_flush_sync(void *p) { round_trip(p, signal_flush, await_sync); }

/* Native MPICH 4.0 (ch4:ucx): the origin's MPI_Win_flush waits for the target to make
 * progress, and MPI_Win_sync, all the target calls while it polls, makes none: flush-sync
 * deadlocks in its first round trip. A native run skips it there, saying so, rather than losing
 * every other row (BENCH_NATIVE_FLUSH_SYNC=1 runs it). */
static int flush_sync_hangs(const bench_opts *o)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    return strcmp(o->impl, "native") == 0 && strstr(version, "MPICH") != NULL &&
           getenv("BENCH_NATIVE_FLUSH_SYNC") == NULL;
}

enum { ANY_WINDOW, MPI3_WINDOW, UNIFIED_WINDOW };
static const struct {
    bench_variant v;
    int needs;
} table[] = {
    {{"pingpong", step_pingpong, NULL, end_count}, ANY_WINDOW}, /* the reference: first */
    {{"lock-flag", step_lock_flag, NULL, end_count}, ANY_WINDOW},
    {{"flush-get", step_flush_get, begin_mpi3, end_mpi3}, MPI3_WINDOW},
    {{"flush-sync", step_flush_sync, begin_mpi3, end_mpi3}, UNIFIED_WINDOW},
};
#define NTABLE ((int)(sizeof table / sizeof table[0]))

/* What the window supports, agreed by all ranks: MPI3_WINDOW if it accepts MPI-3 calls,
 * UNIFIED_WINDOW if it is also in the unified memory model, else ANY_WINDOW. */
static int window_level(MPI_Win win)
{
    int level = ANY_WINDOW, *model, flag;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (MPI_Win_lock_all(0, win) == MPI_SUCCESS) {
        MPI_Win_unlock_all(win);
        level = MPI3_WINDOW;
        if (MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag) == MPI_SUCCESS && flag &&
            *model == MPI_WIN_UNIFIED)
            level = UNIFIED_WINDOW;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    MPI_Allreduce(MPI_IN_PLACE, &level, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return level;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "notify", "8", &o); /* --sizes is not used: always 8 bytes */
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE); /* MPI_Win_create windows only */
    if (o.size < 2)
        bench_die("needs at least 2 ranks");
    notify x = {.rank = o.rank, .peer = o.rank == 0 ? 1 : 0};
    x.mem = bench_alloc(BENCH_MEM_ALLOC_MEM, 2 * sizeof(uint64_t));
    MPI_Win_create((void *)x.mem, 2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &x.win);

    int level = window_level(x.win), nv = 0;
    bench_variant v[NTABLE];
    for (int i = 0; i < NTABLE; i++) {
        if (table[i].needs > level) {
            if (o.rank == 0)
                fprintf(stderr, "notify: %s skipped: the window %s\n", table[i].v.name,
                        level == ANY_WINDOW ? "rejects MPI-3 calls" : "is not unified");
        } else if (table[i].v.step == step_flush_sync && flush_sync_hangs(&o)) {
            if (o.rank == 0)
                fprintf(stderr, "notify: flush-sync skipped: natively MPICH's MPI_Win_sync makes "
                                "no progress for the peer's MPI_Win_flush "
                                "(BENCH_NATIVE_FLUSH_SYNC=1 runs it)\n");
        } else {
            v[nv++] = table[i].v;
        }
    }
    bench_measure(&o, v, nv, 0, &x, NULL, sizeof(uint64_t), o.iters, 2);

    MPI_Win_free(&x.win);
    bench_free(BENCH_MEM_ALLOC_MEM, (void *)x.mem);
    return bench_finish();
}
