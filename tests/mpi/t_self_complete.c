/* t_self_complete.c - operations whose target is the calling process complete at the call,
 * results included (docs/specification.md, section 4, "Buffers"): on every window flavor, over
 * MPI_COMM_WORLD and over MPI_COMM_SELF, in every epoch kind where the caller's window is open
 * to it then (fence, PSCW after its own post, lock shared, exclusive and MPI_MODE_NOCHECK,
 * lock_all with and without MPI_MODE_NOCHECK, and a counter epoch), the program may overwrite,
 * free and reuse its origin, result and compare buffers right after the call, before the
 * closing synchronization, as on an MPI that completes operations on its own process at once
 * (Open MPI). mpi4py 3.1.4's test_rma does: MPI_Compare_and_swap on a window over
 * MPI_COMM_SELF in a fence epoch, its result buffer from MPI_Alloc_mem freed before the closing
 * fence (flexrma wrote the result at the fence into the unmapped segment and crashed).
 *
 * Every operation kind (put, get, accumulate, get_accumulate, fetch_and_op, compare_and_swap,
 * MPI_Rput/Rget/Raccumulate/Rget_accumulate where MPI allows them, MPI_Iput/Iget/Iaccumulate),
 * with predefined and derived datatypes. After each call: a fetched result is checked at once;
 * every buffer is overwritten and freed (MPI_Free_mem or free), and a new buffer of the same
 * size and kind (mostly the same address) is filled with a sentinel that must be intact after
 * the closing call; a request must be complete at its first MPI_Test. After the closing call:
 * the window holds what a model says.
 *
 * Also (MPI semantics kept): an access epoch to oneself started before its post keeps its
 * operations queued until it may reach the window (MPI allows that), and an accumulate issued
 * once the post came does not overtake them; fetch-and-add tickets and accumulate sums on one
 * rank's window from every rank, that rank's own at the call, stay atomic per element. */
#include "common.h"
#include "flexrma.h"

#define N 64          /* ints in each rank's window */
#define ITER 2000     /* fetch-and-adds per rank, part 3 */
#define ACCN 256      /* ints an accumulate of part 3 covers */

enum flavor { F_CREATE_ALLOC, F_CREATE_MALLOC, F_ALLOCATE, F_SHARED, F_DYNAMIC, F_N };
static const char *const flavor_name[] = {"create (MPI_Alloc_mem)", "create (malloc)",
                                          "allocate", "allocate_shared", "dynamic"};
enum epoch { E_FENCE, E_PSCW, E_LOCK_EXCL, E_LOCK_SHARED, E_LOCK_NOCHECK, E_LOCK_ALL,
             E_LOCK_ALL_NOCHECK, E_COUNTER, E_N };
static const char *const epoch_name[] = {"fence", "pscw", "lock exclusive", "lock shared",
                                         "lock nocheck", "lock_all", "lock_all nocheck",
                                         "counter"};
#define TESTS_PER_ROUND 4

/* ---- the window ---- */

typedef struct {
    MPI_Win win;
    int *mem;          /* my window's N ints */
    void *own;         /* what to free: MPI_Alloc_mem'd, malloc'd, or NULL (the window's) */
    enum flavor f;
    int me;            /* my rank in the window */
    MPI_Aint base;     /* dynamic: the address of mem (displacements are addresses) */
} swin;

static void swin_open(swin *s, enum flavor f, MPI_Comm comm)
{
    MPI_Aint bytes = N * sizeof(int);
    s->f = f;
    s->own = NULL;
    s->base = 0;
    switch (f) {
    case F_CREATE_ALLOC:
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &s->mem);
        s->own = s->mem;
        MPI_Win_create(s->mem, bytes, sizeof(int), MPI_INFO_NULL, comm, &s->win);
        break;
    case F_CREATE_MALLOC:
        s->mem = xmalloc((size_t)bytes);
        s->own = s->mem;
        MPI_Win_create(s->mem, bytes, sizeof(int), MPI_INFO_NULL, comm, &s->win);
        break;
    case F_ALLOCATE:
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, &s->mem, &s->win);
        break;
    case F_SHARED:
        MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, comm, &s->mem, &s->win);
        break;
    case F_DYNAMIC:
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &s->mem);
        s->own = s->mem;
        MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &s->win);
        MPI_Win_attach(s->win, s->mem, bytes);
        MPI_Get_address(s->mem, &s->base);
        break;
    default:
        abort();
    }
    MPI_Comm_rank(comm, &s->me);
}

static void swin_close(swin *s)
{
    if (s->f == F_DYNAMIC)
        MPI_Win_detach(s->win, s->mem);
    MPI_Win_free(&s->win);
    if (s->f == F_CREATE_MALLOC)
        free(s->own);
    else if (s->own)
        MPI_Free_mem(s->own);
}

/* The displacement of element i of my window. */
static MPI_Aint at(const swin *s, int i)
{
    return s->f == F_DYNAMIC ? s->base + (MPI_Aint)i * (MPI_Aint)sizeof(int) : i;
}

/* ---- buffers the program drops right after the call ---- */

enum bkind { B_ALLOC, B_MALLOC };
static int fails;     /* failures of the current group of checks */

static int *bnew(enum bkind k, int n)
{
    int *b;
    if (k == B_ALLOC)
        MPI_Alloc_mem((MPI_Aint)n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &b);
    else
        b = xmalloc((size_t)n * sizeof(int));
    return b;
}

static void bfree(enum bkind k, int *b)
{
    if (k == B_ALLOC)
        MPI_Free_mem(b);
    else
        free(b);
}

/* Buffers filled with a sentinel where dropped ones were: a write that lands after the call in
 * a dropped buffer, reused by now, shows in them. */
#define MAX_SENTINELS 64
static struct sentinel {
    int *b;
    int n;
    enum bkind k;
} sentinels[MAX_SENTINELS];
static int nsentinels;
static const int SENTINEL = 0x5e47e1;

/* Overwrite b (the program may), free it, and put a sentinel buffer of the same kind and size
 * in its place. */
static void drop(enum bkind k, int *b, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = -777;
    bfree(k, b);
    if (nsentinels == MAX_SENTINELS)
        abort();
    struct sentinel *s = &sentinels[nsentinels++];
    *s = (struct sentinel){bnew(k, n), n, k};
    for (int i = 0; i < n; i++)
        s->b[i] = SENTINEL;
}

/* Are all sentinels intact? Frees them. */
static int sentinels_intact(void)
{
    int bad = 0;
    for (int j = 0; j < nsentinels; j++) {
        struct sentinel *s = &sentinels[j];
        for (int i = 0; i < s->n; i++)
            if (s->b[i] != SENTINEL && !bad++)
                diag("a buffer reused after a drop holds %d at [%d], not the sentinel", s->b[i],
                     i);
        bfree(s->k, s->b);
    }
    nsentinels = 0;
    return !bad;
}

/* The n fetched ints at got are exp, checked right after the call. */
static void check_now(const int *got, const int *exp, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != exp[i]) {
            if (!fails++)
                diag("%s: right after the call [%d] holds %d, expected %d", what, i, got[i],
                     exp[i]);
            return;
        }
}

/* A request of an operation to myself is complete at its first test. */
static int req_fails;
static void req_done_now(MPI_Request *r, const char *what)
{
    int flag = 0;
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    if (!flag) {
        if (!req_fails++)
            diag("%s: its request is not complete at the first MPI_Test", what);
        MPI_Wait(r, MPI_STATUS_IGNORE); /* before its buffers go */
    }
}

/* ---- one round: an epoch on one window, every operation to myself ---- */

static MPI_Datatype vec2;  /* 4 ints, every other one: vector(4, 1, 2) */
static MPI_Datatype vec2x; /* 8 ints, every other one */

static void open_epoch(swin *s, enum epoch e, MPI_Sync *counter, MPI_Request *ops)
{
    MPI_Group g;
    switch (e) {
    case E_FENCE:
        MPI_Win_fence(0, s->win);
        break;
    case E_PSCW:
        MPI_Comm_group(MPI_COMM_SELF, &g);
        MPI_Win_post(g, 0, s->win);
        MPI_Win_start(g, 0, s->win);
        MPI_Group_free(&g);
        break;
    case E_LOCK_EXCL:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, s->me, 0, s->win);
        break;
    case E_LOCK_SHARED:
        MPI_Win_lock(MPI_LOCK_SHARED, s->me, 0, s->win);
        break;
    case E_LOCK_NOCHECK:
        MPI_Win_lock(MPI_LOCK_SHARED, s->me, MPI_MODE_NOCHECK, s->win);
        break;
    case E_LOCK_ALL:
        MPI_Win_lock_all(0, s->win);
        break;
    case E_LOCK_ALL_NOCHECK:
        MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
        break;
    case E_COUNTER:
        MPI_Win_Sync_alloc_objects(1, counter, s->win, MPI_INFO_NULL);
        MPI_Win_sync_ops_init(s->me, MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET |
                              MPI_MODE_WIN_ACCUMULATE, *counter, s->win, MPI_INFO_NULL, ops);
        MPI_Start(ops);
        break;
    default:
        abort();
    }
}

static void close_epoch(swin *s, enum epoch e, MPI_Sync *counter, MPI_Request *ops)
{
    switch (e) {
    case E_FENCE:
        MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);
        break;
    case E_PSCW:
        MPI_Win_complete(s->win);
        MPI_Win_wait(s->win);
        break;
    case E_LOCK_EXCL:
    case E_LOCK_SHARED:
    case E_LOCK_NOCHECK:
        MPI_Win_unlock(s->me, s->win);
        break;
    case E_LOCK_ALL:
    case E_LOCK_ALL_NOCHECK:
        MPI_Win_unlock_all(s->win);
        break;
    case E_COUNTER:
        MPI_Wait(ops, MPI_STATUS_IGNORE);
        MPI_Request_free(ops);
        MPI_Win_Sync_free_objects(1, counter, s->win);
        break;
    default:
        abort();
    }
}

static int passive(enum epoch e) { return e >= E_LOCK_EXCL; } /* and counter, for MPI_R* */

/* 4 tests. */
static void round_of(enum flavor f, MPI_Comm comm, enum epoch e)
{
    swin s;
    int model[N], win_after[N];
    char what[160];
    swin_open(&s, f, comm);
    for (int i = 0; i < N; i++)
        s.mem[i] = model[i] = 1000 + i;
    MPI_Barrier(comm); /* (a shared window's memory is every member's) */
    snprintf(what, sizeof what, "%s over %s, %s", flavor_name[f],
             comm == MPI_COMM_SELF ? "MPI_COMM_SELF" : "MPI_COMM_WORLD", epoch_name[e]);
    fails = req_fails = 0;
    MPI_Sync counter;
    MPI_Request ops = MPI_REQUEST_NULL, r;
    MPI_Win win = s.win;
    int me = s.me;
    open_epoch(&s, e, &counter, &ops);

    /* put: [0, 8) from MPI_Alloc_mem */
    int *o = bnew(B_ALLOC, 8);
    for (int i = 0; i < 8; i++)
        o[i] = model[i] = 10 + i;
    MPI_Put(o, 8, MPI_INT, me, at(&s, 0), 8, MPI_INT, win);
    drop(B_ALLOC, o, 8);
    /* put: every other int of a malloc'd buffer into [8, 16) */
    o = bnew(B_MALLOC, 16);
    for (int i = 0; i < 16; i++)
        o[i] = 20 + i;
    for (int i = 0; i < 8; i++)
        model[8 + i] = 20 + 2 * i;
    MPI_Put(o, 1, vec2x, me, at(&s, 8), 8, MPI_INT, win);
    drop(B_MALLOC, o, 16);
    /* get: [0, 8) into MPI_Alloc_mem */
    int *res = bnew(B_ALLOC, 8);
    MPI_Get(res, 8, MPI_INT, me, at(&s, 0), 8, MPI_INT, win);
    check_now(res, model, 8, "MPI_Get");
    drop(B_ALLOC, res, 8);
    /* get: every other int of [8, 16), a derived target type, into malloc'd memory */
    res = bnew(B_MALLOC, 4);
    MPI_Get(res, 4, MPI_INT, me, at(&s, 8), 1, vec2, win);
    int exp[4] = {model[8], model[10], model[12], model[14]};
    check_now(res, exp, 4, "MPI_Get, vector target");
    drop(B_MALLOC, res, 4);
    /* accumulate: SUM into [16, 20) from MPI_Alloc_mem */
    o = bnew(B_ALLOC, 4);
    for (int i = 0; i < 4; i++) {
        o[i] = 100 * (i + 1);
        model[16 + i] += o[i];
    }
    MPI_Accumulate(o, 4, MPI_INT, me, at(&s, 16), 4, MPI_INT, MPI_SUM, win);
    drop(B_ALLOC, o, 4);
    /* accumulate: REPLACE into 20, 22, 24, 26 (derived target type) from malloc'd memory */
    o = bnew(B_MALLOC, 4);
    for (int i = 0; i < 4; i++)
        o[i] = model[20 + 2 * i] = -5 - i;
    MPI_Accumulate(o, 4, MPI_INT, me, at(&s, 20), 1, vec2, MPI_REPLACE, win);
    drop(B_MALLOC, o, 4);
    /* get_accumulate: SUM into [16, 20), origin and result from MPI_Alloc_mem */
    o = bnew(B_ALLOC, 4);
    res = bnew(B_ALLOC, 4);
    for (int i = 0; i < 4; i++)
        o[i] = 7 * (i + 1);
    MPI_Get_accumulate(o, 4, MPI_INT, res, 4, MPI_INT, me, at(&s, 16), 4, MPI_INT, MPI_SUM,
                       win);
    check_now(res, &model[16], 4, "MPI_Get_accumulate");
    for (int i = 0; i < 4; i++)
        model[16 + i] += o[i];
    drop(B_ALLOC, o, 4);
    drop(B_ALLOC, res, 4);
    /* get_accumulate: NO_OP on every other int of [20, 28) into malloc'd memory */
    res = bnew(B_MALLOC, 4);
    MPI_Get_accumulate(NULL, 0, MPI_INT, res, 4, MPI_INT, me, at(&s, 20), 1, vec2, MPI_NO_OP,
                       win);
    int exp2[4] = {model[20], model[22], model[24], model[26]};
    check_now(res, exp2, 4, "MPI_Get_accumulate, MPI_NO_OP");
    drop(B_MALLOC, res, 4);
    /* fetch_and_op: SUM at 28 */
    int one = 3;
    res = bnew(B_ALLOC, 1);
    MPI_Fetch_and_op(&one, res, MPI_INT, me, at(&s, 28), MPI_SUM, win);
    check_now(res, &model[28], 1, "MPI_Fetch_and_op");
    model[28] += one;
    drop(B_ALLOC, res, 1);
    /* compare_and_swap at 29, comparand matching (mpi4py's case: every buffer from
     * MPI_Alloc_mem, freed before the closing call), and at 30, not matching */
    for (int k = 0; k < 2; k++) {
        int *nw = bnew(B_ALLOC, 1), *cmp = bnew(B_ALLOC, 1);
        res = bnew(B_ALLOC, 1);
        *nw = 4242 + k;
        *cmp = k == 0 ? model[29] : model[30] + 1;
        MPI_Compare_and_swap(nw, cmp, res, MPI_INT, me, at(&s, 29 + k), win);
        check_now(res, &model[29 + k], 1, "MPI_Compare_and_swap");
        if (k == 0)
            model[29] = *nw;
        drop(B_ALLOC, nw, 1);
        drop(B_ALLOC, cmp, 1);
        drop(B_ALLOC, res, 1);
    }
    /* accumulates to one element in program order */
    int v5 = 5, v7 = 7;
    MPI_Accumulate(&v5, 1, MPI_INT, me, at(&s, 31), 1, MPI_INT, MPI_REPLACE, win);
    v5 = -1;
    MPI_Accumulate(&v7, 1, MPI_INT, me, at(&s, 31), 1, MPI_INT, MPI_SUM, win);
    v7 = -1;
    model[31] = 12;

    /* MPI_Iput, MPI_Iget, MPI_Iaccumulate (every epoch) */
    o = bnew(B_ALLOC, 4);
    for (int i = 0; i < 4; i++)
        o[i] = model[32 + i] = 300 + i;
    MPI_Iput(o, 4, MPI_INT, me, at(&s, 32), 4, MPI_INT, win, &r);
    req_done_now(&r, "MPI_Iput");
    drop(B_ALLOC, o, 4);
    res = bnew(B_MALLOC, 4);
    MPI_Iget(res, 4, MPI_INT, me, at(&s, 32), 4, MPI_INT, win, &r);
    req_done_now(&r, "MPI_Iget");
    check_now(res, &model[32], 4, "MPI_Iget");
    drop(B_MALLOC, res, 4);
    o = bnew(B_ALLOC, 4);
    for (int i = 0; i < 4; i++) {
        o[i] = i + 1;
        model[36 + i] += o[i];
    }
    MPI_Iaccumulate(o, 4, MPI_INT, me, at(&s, 36), 4, MPI_INT, MPI_SUM, win, &r);
    req_done_now(&r, "MPI_Iaccumulate");
    drop(B_ALLOC, o, 4);

    /* MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate (passive and counter epochs) */
    if (passive(e)) {
        o = bnew(B_ALLOC, 4);
        for (int i = 0; i < 4; i++)
            o[i] = model[40 + i] = 400 + i;
        MPI_Rput(o, 4, MPI_INT, me, at(&s, 40), 4, MPI_INT, win, &r);
        req_done_now(&r, "MPI_Rput");
        drop(B_ALLOC, o, 4);
        res = bnew(B_ALLOC, 4);
        MPI_Rget(res, 4, MPI_INT, me, at(&s, 40), 4, MPI_INT, win, &r);
        req_done_now(&r, "MPI_Rget");
        check_now(res, &model[40], 4, "MPI_Rget");
        drop(B_ALLOC, res, 4);
        o = bnew(B_MALLOC, 8);
        for (int i = 0; i < 8; i++)
            o[i] = 2 * i + 1;
        for (int i = 0; i < 4; i++)
            model[44 + i] += 2 * (2 * i) + 1;
        MPI_Raccumulate(o, 1, vec2, me, at(&s, 44), 4, MPI_INT, MPI_SUM, win, &r);
        req_done_now(&r, "MPI_Raccumulate");
        drop(B_MALLOC, o, 8);
        o = bnew(B_ALLOC, 4);
        res = bnew(B_ALLOC, 4);
        for (int i = 0; i < 4; i++)
            o[i] = -(i + 1);
        MPI_Rget_accumulate(o, 4, MPI_INT, res, 4, MPI_INT, me, at(&s, 44), 4, MPI_INT, MPI_SUM,
                            win, &r);
        req_done_now(&r, "MPI_Rget_accumulate");
        check_now(res, &model[44], 4, "MPI_Rget_accumulate");
        for (int i = 0; i < 4; i++)
            model[44 + i] += o[i];
        drop(B_ALLOC, o, 4);
        drop(B_ALLOC, res, 4);
    }

    close_epoch(&s, e, &counter, &ops);
    memcpy(win_after, s.mem, sizeof win_after);
    ok(fails == 0, "%s: fetched results there right after each call", what);
    ok(req_fails == 0, "%s: requests complete at the call", what);
    ok(same_ints(win_after, model, N), "%s: the window holds every operation's effect after the "
       "closing call", what);
    ok(sentinels_intact(), "%s: nothing written into buffers dropped after the call", what);
    MPI_Barrier(comm);
    swin_close(&s);
}

/* ---- an access epoch to myself started before my post ---- */

/* 4 tests: MPI_Win_start(me) before MPI_Win_post(me): the put, accumulate and get issued then
 * stay queued (the window is not open to them yet; MPI lets complete finish them, so their
 * buffers are kept); the first operation after the post runs them first, in order, then itself
 * (an accumulate that overtook the queued one would leave 5, not 12). Then an access epoch
 * started before the post it matches, while the exposure epoch before is still open (MPI
 * matches a process's k-th start that includes itself with its k-th post that includes itself),
 * after a complete that came before its post or after its post. flexrma's start never waits for
 * the post (specification, section 5); an MPI whose MPI_Win_start blocks would hang here. */
static void start_before_post(enum flavor f)
{
    swin s;
    MPI_Group g;
    char what[96];
    swin_open(&s, f, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        s.mem[i] = 1000 + i;
    snprintf(what, sizeof what, "%s, start before post", flavor_name[f]);
    MPI_Comm_group(MPI_COMM_SELF, &g);
    MPI_Win_start(g, 0, s.win);
    int *o = bnew(B_ALLOC, 8), *res = bnew(B_ALLOC, 8), v5 = 5, v7 = 7, got31 = 0;
    for (int i = 0; i < 8; i++) {
        o[i] = 50 + i;
        res[i] = -1;
    }
    MPI_Put(o, 8, MPI_INT, s.me, at(&s, 0), 8, MPI_INT, s.win);
    MPI_Accumulate(&v5, 1, MPI_INT, s.me, at(&s, 31), 1, MPI_INT, MPI_REPLACE, s.win);
    MPI_Get(res, 8, MPI_INT, s.me, at(&s, 0), 8, MPI_INT, s.win);
    MPI_Win_post(g, 0, s.win);
    MPI_Accumulate(&v7, 1, MPI_INT, s.me, at(&s, 31), 1, MPI_INT, MPI_SUM, s.win);
    MPI_Get(&got31, 1, MPI_INT, s.me, at(&s, 31), 1, MPI_INT, s.win);
    fails = 0;
    check_now(&got31, (int[]){12}, 1, "the accumulates to element 31");
    check_now(res, o, 8, "the get queued before the post");
    ok(fails == 0, "%s: operations queued before the post run, in order, at the first call "
       "after it", what);
    MPI_Win_complete(s.win);
    MPI_Win_wait(s.win);
    int exp[N];
    for (int i = 0; i < N; i++)
        exp[i] = 1000 + i;
    memcpy(exp, o, 8 * sizeof(int));
    exp[31] = 12;
    ok(same_ints(s.mem, exp, N), "%s: the window after complete and wait", what);
    /* My second access epoch, started while my first exposure epoch is still open: its put
     * must wait for my second post. Between MPI_Win_wait and that post my window is mine to
     * load, and still holds the first epoch's data. */
    MPI_Win_post(g, 0, s.win);
    MPI_Win_start(g, 0, s.win);
    MPI_Put(&v7, 1, MPI_INT, s.me, at(&s, 40), 1, MPI_INT, s.win);
    MPI_Win_complete(s.win);
    MPI_Win_start(g, 0, s.win);
    int v9 = 9;
    MPI_Put(&v9, 1, MPI_INT, s.me, at(&s, 40), 1, MPI_INT, s.win);
    MPI_Win_wait(s.win);
    int between = s.mem[40];
    MPI_Win_post(g, 0, s.win);
    MPI_Win_complete(s.win);
    MPI_Win_wait(s.win);
    ok(between == 7 && s.mem[40] == 9, "%s: a second access epoch reaches my window only after "
       "my second post (element 40: %d between the epochs, %d after; expected 7, 9)", what,
       between, s.mem[40]);
    /* The same when the first access epoch completed before its post: that post is not the
     * second epoch's either. */
    MPI_Win_start(g, 0, s.win);
    MPI_Put(&v7, 1, MPI_INT, s.me, at(&s, 41), 1, MPI_INT, s.win);
    MPI_Win_complete(s.win);
    MPI_Win_post(g, 0, s.win);
    MPI_Win_start(g, 0, s.win);
    MPI_Put(&v9, 1, MPI_INT, s.me, at(&s, 41), 1, MPI_INT, s.win);
    MPI_Win_wait(s.win);
    between = s.mem[41];
    MPI_Win_post(g, 0, s.win);
    MPI_Win_complete(s.win);
    MPI_Win_wait(s.win);
    ok(between == 7 && s.mem[41] == 9, "%s: ... also after an access epoch completed before its "
       "post (element 41: %d between the epochs, %d after; expected 7, 9)", what, between,
       s.mem[41]);
    bfree(B_ALLOC, o);
    bfree(B_ALLOC, res);
    MPI_Group_free(&g);
    MPI_Barrier(MPI_COMM_WORLD);
    swin_close(&s);
}

/* ---- atomicity against other processes ---- */

/* 2 tests: every rank fetch-and-adds 1 to rank 0's counter ITER times, and every 10th time
 * adds 1 to each of ACCN ints there, in one fence or lock_all epoch; rank 0's own complete at
 * the call, the others' at the same time (node peers combine into the window themselves):
 * each ticket 0 .. nprocs * ITER - 1 is fetched once, and every int ends at nprocs * ITER / 10. */
static void atomic_round(enum epoch e)
{
    MPI_Win win;
    int *mem, tickets[ITER], one = 1, *ones = xmalloc(ACCN * sizeof(int));
    MPI_Win_allocate((1 + ACCN) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    memset(mem, 0, (1 + ACCN) * sizeof(int));
    for (int i = 0; i < ACCN; i++)
        ones[i] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (e == E_FENCE)
        MPI_Win_fence(0, win);
    else
        MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank in the epoch: they combine at the same time */
    for (int i = 0; i < ITER; i++) {
        MPI_Fetch_and_op(&one, &tickets[i], MPI_INT, 0, 0, MPI_SUM, win);
        if (i % 10 == 0)
            MPI_Accumulate(ones, ACCN, MPI_INT, 0, 1, ACCN, MPI_INT, MPI_SUM, win);
    }
    if (e == E_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    else
        MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    int total = ITER * nprocs, bad = 0;
    int *all = rank == 0 ? xmalloc((size_t)total * sizeof(int)) : NULL;
    MPI_Gather(tickets, ITER, MPI_INT, all, ITER, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)total, 1);
        for (int i = 0; i < total; i++)
            if ((all[i] < 0 || all[i] >= total || seen[all[i]]++) && !bad++)
                diag("ticket %d fetched twice or out of range", all[i]);
        free(seen);
        free(all);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    is_int(bad, 0, "%s: fetch-and-add tickets on rank 0, its own at the call, each once",
           epoch_name[e]);
    bad = 0;
    if (rank == 0)
        for (int i = 1; i <= ACCN; i++)
            if (mem[i] != nprocs * (ITER / 10) && !bad++)
                diag("element %d holds %d, expected %d", i, mem[i], nprocs * (ITER / 10));
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    is_int(bad, 0, "%s: accumulate sums on rank 0, its own at the call", epoch_name[e]);
    MPI_Win_free(&win);
    free(ones);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(F_N * 2 * E_N * TESTS_PER_ROUND + F_N * 4 + 2 * 2);
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec2);
    MPI_Type_commit(&vec2);
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec2x);
    MPI_Type_commit(&vec2x);
    for (int c = 0; c < 2; c++)
        for (int f = 0; f < F_N; f++)
            for (int e = 0; e < E_N; e++)
                round_of((enum flavor)f, c ? MPI_COMM_SELF : MPI_COMM_WORLD, (enum epoch)e);
    for (int f = 0; f < F_N; f++)
        start_before_post((enum flavor)f);
    atomic_round(E_FENCE);
    atomic_round(E_LOCK_ALL);
    MPI_Type_free(&vec2);
    MPI_Type_free(&vec2x);
    return test_done();
}
