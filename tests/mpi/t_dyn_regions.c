/* t_dyn_regions.c - dynamic windows whose members attach regions of many sizes (win/regions.c):
 * 8 bytes, 100 bytes across a page boundary, three regions attached back to back (3000 and 5000
 * bytes, then 70000: beyond 64 KiB; an empty region attached where the third starts), and 200
 * KiB alone, attached in an order of their own, in heap memory and in one MPI_Alloc_mem block
 * (which node peers reach directly, direct.c).
 *
 * Each member works on its right neighbour's regions, by absolute address:
 *  - in fence, lock and lock_all+flush epochs: puts into each region and one over all three
 *    regions back to back, an accumulate across the first boundary between them and a
 *    get_accumulate across the second, gets of everything back; the data must be right at both
 *    ends, and between node peers every operation into MPI_Alloc_mem memory goes directly,
 *    those across boundaries included (regions of one block lie at one place in the mapping);
 *  - accesses that leave attached memory, by one byte past a region, across the gap between two
 *    regions, before the first of the three, past the last: MPI_ERR_RMA_RANGE at the origin;
 *  - the middle region of the three detached after the origin learned them: an access over
 *    all three lands nowhere (MPI_ERR_RMA_RANGE at the origin where it would have gone
 *    directly, refused by the target otherwise), one inside the first still lands, and once
 *    the region is attached again an access over all three lands again.
 * MPICH's win_dynamic_rma_flush_get -count=9216 accesses two regions back to back in one
 * operation; flexrma refused that at the origin ("not in memory attached to the window") while
 * every byte was attached. Linked with the internal library: it reads the window's statistics
 * and fr_opt. */
#include "common.h"
#include "sync_common.h"
#include "transport/transport.h"
#include "win/win.h"

#include <unistd.h>

enum { R_SMALL, R_PAGE, R_A, R_B, R_C, R_LARGE, NREG }; /* R_A, R_B, R_C: back to back */
static size_t lo_of[NREG], hi_of[NREG], arena_bytes;    /* byte offsets in the arena */
static const int attach_order[NREG] = {R_B, R_SMALL, R_LARGE, R_C, R_PAGE, R_A};

/* The accumulate and get_accumulate ranges, across A|B and B|C (unsigned ints). */
#define ACC_N 200
#define GACC_N 400
static size_t acc_at(void) { return hi_of[R_A] - ACC_N / 2 * sizeof(unsigned); }
static size_t gacc_at(void) { return hi_of[R_B] - GACC_N / 2 * sizeof(unsigned); }

static void layout(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t lo[NREG] = {16, page - 40, 2 * page + 8, 0, 0, 24 * page + 4};
    size_t len[NREG] = {8, 100, 3000, 5000, 70000, 200 * 1024};
    lo[R_B] = lo[R_A] + len[R_A];
    lo[R_C] = lo[R_B] + len[R_B];
    for (int i = 0; i < NREG; i++)
        lo_of[i] = lo[i], hi_of[i] = lo[i] + len[i];
    arena_bytes = hi_of[R_LARGE] + 64;
}

static unsigned char bv(int r, size_t off, int e) { return (unsigned char)pat(r, (int)off, e); }

static void fill(unsigned char *p, size_t lo, size_t hi, int r, int e)
{
    for (size_t o = lo; o < hi; o++)
        p[o] = bv(r, o, e);
}

typedef struct {
    MPI_Win win;
    int alloc_mem;
    unsigned char *arena;
    MPI_Aint *at;       /* every member's arena, by rank */
} dwin;

static void attach(dwin *d, int i)
{
    MPI_Win_attach(d->win, d->arena + lo_of[i], (MPI_Aint)(hi_of[i] - lo_of[i]));
}

static void dwin_make(dwin *d, int alloc_mem)
{
    d->alloc_mem = alloc_mem;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &d->win);
    MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN);
    if (alloc_mem)
        MPI_Alloc_mem((MPI_Aint)arena_bytes, MPI_INFO_NULL, &d->arena);
    else
        d->arena = xmalloc(arena_bytes);
    memset(d->arena, 0, arena_bytes);
    for (int k = 0; k < NREG; k++) {
        if (attach_order[k] == R_C) /* an empty region where C starts, which holds nothing */
            MPI_Win_attach(d->win, d->arena + lo_of[R_C], 0);
        attach(d, attach_order[k]);
    }
    MPI_Aint mine;
    MPI_Get_address(d->arena, &mine);
    d->at = xmalloc((size_t)nprocs * sizeof *d->at);
    MPI_Allgather(&mine, 1, MPI_AINT, d->at, 1, MPI_AINT, MPI_COMM_WORLD); /* after the attach */
}

static void dwin_free(dwin *d)
{
    for (int i = 0; i < NREG; i++)
        MPI_Win_detach(d->win, d->arena + lo_of[i]);
    MPI_Win_detach(d->win, d->arena + lo_of[R_C]); /* the empty one */
    MPI_Win_free(&d->win);
    if (d->alloc_mem)
        MPI_Free_mem(d->arena);
    else
        free(d->arena);
    free(d->at);
}

/* My arena gets pattern e, in a lock epoch on myself: with the progress agent (.async) the
 * others' puts that follow are written by the agent, and the lock orders my stores before them
 * where ThreadSanitizer can see it (the barrier orders them through other processes only). */
static void fill_own(dwin *d, int e)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, d->win);
    fill(d->arena, 0, arena_bytes, rank, e);
    MPI_Win_unlock(rank, d->win);
}

static uint64_t direct_ops(MPI_Win win) { return fr_win_lookup(win)->st.direct; }

/* Is the right neighbour's attached MPI_Alloc_mem memory reached directly here? */
static int right_direct(const dwin *d)
{
    return d->alloc_mem && fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct &&
           fr_win_lookup(d->win)->peers[right()].tp == &fr_tp_shm;
}

typedef enum mode { M_FENCE, M_LOCK, M_LOCK_ALL } mode;
static const char *const mode_name[] = {"fence", "lock", "lock_all+flush"};

static int open_epoch(dwin *d, mode m)
{
    if (m == M_FENCE)
        return MPI_Win_fence(0, d->win);
    if (m == M_LOCK)
        return MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    return MPI_Win_lock_all(0, d->win);
}

/* Everything issued so far is complete at the target before anything issued after. */
static int between(dwin *d, mode m)
{
    if (m == M_FENCE)
        return MPI_Win_fence(0, d->win);
    if (m == M_LOCK_ALL)
        return MPI_Win_flush(right(), d->win);
    int rc = MPI_Win_unlock(right(), d->win);
    return rc ? rc : MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
}

static int close_epoch(dwin *d, mode m)
{
    if (m == M_FENCE)
        return MPI_Win_fence(MPI_MODE_NOSUCCEED, d->win);
    if (m == M_LOCK)
        return MPI_Win_unlock(right(), d->win);
    return MPI_Win_unlock_all(d->win);
}

/* What member `target`'s arena holds after member `origin` ran run(): its own pattern e where
 * nothing is attached, the origin's pattern e + 1 in the regions, the accumulate's +1 and the
 * get_accumulate's pattern e + 2 over their ranges. */
static void image(unsigned char *img, int target, int origin, int e)
{
    fill(img, 0, arena_bytes, target, e);
    for (int i = 0; i < NREG; i++)
        fill(img, lo_of[i], hi_of[i], origin, e + 1);
    for (int k = 0; k < ACC_N; k++) {
        unsigned v;
        memcpy(&v, img + acc_at() + k * sizeof v, sizeof v);
        v++;
        memcpy(img + acc_at() + k * sizeof v, &v, sizeof v);
    }
    fill(img, gacc_at(), gacc_at() + GACC_N * sizeof(unsigned), origin, e + 2);
}

/* Do got[lo, hi) and want[lo, hi) agree? A diagnostic names the first difference. */
static int same_at(const unsigned char *got, const unsigned char *want, size_t lo, size_t hi)
{
    for (size_t o = lo; o < hi; o++)
        if (got[o] != want[o]) {
            diag("byte %zu: got 0x%02x, expected 0x%02x", o, got[o], want[o]);
            return 0;
        }
    return 1;
}

/* Part 1 (3 tests per memory and mode): in three phases of an epoch to the right neighbour,
 * puts into each region (one over A, B and C at once), then the accumulate and the
 * get_accumulate across the boundaries, then gets of every region (one over A, B and C). */
static void run(dwin *d, mode m, int e)
{
    const char *mem = d->alloc_mem ? "MPI_Alloc_mem" : "heap";
    unsigned char *src = xmalloc(arena_bytes), *got = xmalloc(arena_bytes);
    unsigned char *want = xmalloc(arena_bytes), *old = xmalloc(GACC_N * sizeof(unsigned));
    fill_own(d, e);
    fill(src, 0, arena_bytes, rank, e + 1);
    memset(got, 0, arena_bytes);
    unsigned one[ACC_N];
    for (int k = 0; k < ACC_N; k++)
        one[k] = 1;
    unsigned char *gsrc = xmalloc(GACC_N * sizeof(unsigned));
    for (size_t o = 0; o < GACC_N * sizeof(unsigned); o++)
        gsrc[o] = bv(rank, gacc_at() + o, e + 2);
    MPI_Aint t = d->at[right()];
    MPI_Barrier(MPI_COMM_WORLD); /* every arena filled before anyone writes into it */

    uint64_t d0 = direct_ops(d->win);
    int rc = open_epoch(d, m), ops = 0;
    size_t spans[][2] = {{lo_of[R_SMALL], hi_of[R_SMALL]}, {lo_of[R_PAGE], hi_of[R_PAGE]},
                         {lo_of[R_A], hi_of[R_C]}, {lo_of[R_LARGE], hi_of[R_LARGE]}};
    for (int s = 0; s < 4; s++, ops++)
        KEEP_RC(rc, MPI_Put(src + spans[s][0], (int)(spans[s][1] - spans[s][0]), MPI_BYTE,
                            right(), t + (MPI_Aint)spans[s][0], (int)(spans[s][1] - spans[s][0]),
                            MPI_BYTE, d->win));
    KEEP_RC(rc, between(d, m));
    KEEP_RC(rc, MPI_Accumulate(one, ACC_N, MPI_UNSIGNED, right(), t + (MPI_Aint)acc_at(), ACC_N,
                               MPI_UNSIGNED, MPI_SUM, d->win));
    KEEP_RC(rc, MPI_Get_accumulate(gsrc, GACC_N, MPI_UNSIGNED, old, GACC_N, MPI_UNSIGNED,
                                   right(), t + (MPI_Aint)gacc_at(), GACC_N, MPI_UNSIGNED,
                                   MPI_REPLACE, d->win));
    ops += 2;
    KEEP_RC(rc, between(d, m));
    for (int s = 0; s < 4; s++, ops++)
        KEEP_RC(rc, MPI_Get(got + spans[s][0], (int)(spans[s][1] - spans[s][0]), MPI_BYTE,
                            right(), t + (MPI_Aint)spans[s][0], (int)(spans[s][1] - spans[s][0]),
                            MPI_BYTE, d->win));
    KEEP_RC(rc, close_epoch(d, m));
    uint64_t moved = direct_ops(d->win) - d0;

    /* at the origin: the gets see the right neighbour's arena as I left it */
    image(want, right(), rank, e);
    int origin_good = rc == MPI_SUCCESS;
    for (int s = 0; s < 4 && origin_good; s++)
        origin_good = same_at(got, want, spans[s][0], spans[s][1]);
    for (size_t o = 0; o < GACC_N * sizeof(unsigned) && origin_good; o++)
        origin_good = old[o] == bv(rank, gacc_at() + o, e + 1);
    ok(origin_good, "%s, %s memory: the gets and the get_accumulate's old values are right",
       mode_name[m], mem);

    /* at the target: my arena is what my left neighbour made of it, nothing outside regions */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, d->win);
    MPI_Win_sync(d->win);
    image(want, rank, left(), e);
    int target_good = same_at(d->arena, want, 0, arena_bytes);
    MPI_Win_unlock_all(d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(target_good, "%s, %s memory: every region holds the left neighbour's data, across the "
                    "boundaries too, and nothing else changed", mode_name[m], mem);
    is_int((long long)moved, right_direct(d) ? ops : 0,
           "%s, %s memory: operations that reached the right neighbour directly", mode_name[m],
           mem);
    free(src);
    free(got);
    free(want);
    free(old);
    free(gsrc);
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Part 2 (4 tests per memory): accesses that leave attached memory. */
static void outside(dwin *d)
{
    const char *mem = d->alloc_mem ? "MPI_Alloc_mem" : "heap";
    unsigned char *src = xmalloc(arena_bytes);
    memset(src, 7, arena_bytes);
    MPI_Aint t = d->at[right()];
    struct {
        size_t lo, hi;
        const char *what;
    } bad[] = {{lo_of[R_SMALL], hi_of[R_SMALL] + 1, "one byte past a region"},
               {lo_of[R_SMALL], hi_of[R_PAGE], "across the gap between two regions"},
               {lo_of[R_A] - 1, lo_of[R_A] + 1, "from the byte before the first of three"},
               {lo_of[R_A], hi_of[R_C] + 1, "one byte past the last of three"}};
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    for (int i = 0; i < 4; i++)
        is_int(class_of(MPI_Put(src, (int)(bad[i].hi - bad[i].lo), MPI_BYTE, right(),
                                t + (MPI_Aint)bad[i].lo, (int)(bad[i].hi - bad[i].lo), MPI_BYTE,
                                d->win)),
               MPI_ERR_RMA_RANGE, "%s memory, a put %s: MPI_ERR_RMA_RANGE", mem, bad[i].what);
    MPI_Win_unlock(right(), d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
}

/* Part 3 (4 tests per memory): the middle region of the three is detached after the origin
 * learned it (part 1), then attached again. */
static void middle_detached(dwin *d)
{
    const char *mem = d->alloc_mem ? "MPI_Alloc_mem" : "heap";
    size_t lo = lo_of[R_A], hi = hi_of[R_C];
    unsigned char *src = xmalloc(arena_bytes), *want = xmalloc(arena_bytes);
    fill(src, 0, arena_bytes, rank, 41);
    fill_own(d, 40);
    MPI_Aint t = d->at[right()];
    MPI_Win_detach(d->win, d->arena + lo_of[R_B]);
    MPI_Barrier(MPI_COMM_WORLD); /* every detach is ordered before the accesses below */

    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    int over = class_of(MPI_Put(src + lo, (int)(hi - lo), MPI_BYTE, right(), t + (MPI_Aint)lo,
                                (int)(hi - lo), MPI_BYTE, d->win));
    int inside = class_of(MPI_Put(src + lo, 64, MPI_BYTE, right(), t + (MPI_Aint)lo, 64,
                                  MPI_BYTE, d->win));
    /* A fetch that travels is refused whole too, and answered with zeros (through the ring
     * between node peers: am_recv.c), so that the origin's flush completes. */
    unsigned one = 1, before = ~0u;
    int fetched = class_of(MPI_Fetch_and_op(&one, &before, MPI_UNSIGNED, right(),
                                            t + (MPI_Aint)lo_of[R_B], MPI_SUM, d->win));
    int rc = MPI_Win_unlock(right(), d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, d->win);
    MPI_Win_sync(d->win);
    fill(want, 0, arena_bytes, rank, 40);
    fill(want, lo, lo + 64, left(), 41);
    int kept = same_at(d->arena, want, 0, arena_bytes);
    MPI_Win_unlock_all(d->win);
    /* Where it would have gone directly the origin learns the detach at the call; otherwise
     * the operation travels and the target refuses it whole. */
    int want_over = right_direct(d) ? MPI_ERR_RMA_RANGE : MPI_SUCCESS;
    ok(rc == MPI_SUCCESS && over == want_over && kept,
       "%s memory, middle region detached: a put over the three regions landed nowhere (class "
       "%d, expected %d)", mem, over, want_over);
    ok(rc == MPI_SUCCESS && inside == MPI_SUCCESS && kept,
       "%s memory, middle region detached: a put inside the first region landed", mem);
    ok(rc == MPI_SUCCESS && fetched == want_over && kept &&
           before == (want_over == MPI_SUCCESS ? 0u : ~0u),
       "%s memory, middle region detached: a fetch-and-op there changed nothing and fetched %s "
       "(class %d, fetched %#x)", mem, want_over == MPI_SUCCESS ? "zeros" : "nothing", fetched,
       before);

    attach(d, R_B);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    over = MPI_Put(src + lo, (int)(hi - lo), MPI_BYTE, right(), t + (MPI_Aint)lo, (int)(hi - lo),
                   MPI_BYTE, d->win);
    rc = MPI_Win_unlock(right(), d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, d->win);
    MPI_Win_sync(d->win);
    fill(want, lo, hi, left(), 41);
    kept = same_at(d->arena, want, 0, arena_bytes);
    MPI_Win_unlock_all(d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(over == MPI_SUCCESS && rc == MPI_SUCCESS && kept,
       "%s memory, middle region attached again: a put over the three regions landed", mem);
    free(src);
    free(want);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    layout();
    tap_plan(2 * (3 * 3 + 4 + 4));
    for (int alloc_mem = 0; alloc_mem < 2; alloc_mem++) {
        dwin d;
        dwin_make(&d, alloc_mem);
        for (int m = M_FENCE; m <= M_LOCK_ALL; m++)
            run(&d, (mode)m, 10 * m + 100 * alloc_mem);
        outside(&d);
        middle_detached(&d);
        dwin_free(&d);
    }
    return test_done();
}
