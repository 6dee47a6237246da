/* exec.c - issue my part of an epoch through MPI, with the synchronization its kind draws, and
 * make, change and free the window (a change epoch: MPI_Win_change_comm, exec_change).
 *
 * Every call's return code is checked (the window's error handler is MPI_ERRORS_RETURN): a
 * generated program is correct, so any error is a failure, reported with the seed. */
#include "random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context for error reports. */
static const program *cur_p;
static int cur_epoch = -1;

static void fail_call(const char *call, int rc, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr,
            "t_random: [rank %d] %s failed (exec.c:%d): %s\n"
            "t_random: program seed 0x%016llx, epoch %d; replay: t_random --replay 0x%llx\n",
            cur_p ? cur_p->rank : -1, call, line, msg,
            (unsigned long long)(cur_p ? cur_p->seed : 0), cur_epoch,
            (unsigned long long)(cur_p ? cur_p->seed : 0));
    MPI_Abort(MPI_COMM_WORLD, 3);
}
#define CHECK(call)                                                                                \
    do {                                                                                           \
        int check_rc_ = (call);                                                                    \
        if (check_rc_ != MPI_SUCCESS)                                                              \
            fail_call(#call, check_rc_, __LINE__);                                                 \
    } while (0)

/* ---- windows ---- */

/* My window over comm, of flavor fl, over new memory (a dynamic window: one region attached,
 * MPI_Alloc_mem's if allocmem), filled with the model's contents for me; MPI_ERRORS_RETURN. */
static void window_make(program *p, flavor fl, int allocmem, MPI_Comm comm)
{
    const size_t n = p->bytes_of[p->rank];
    const MPI_Aint bytes = (MPI_Aint)n;
    const int unit = p->unit_of[p->rank];
    /* The seed's second bit: created and allocated windows made with Open MPI's calls, which
     * give them notification ids 0..MPIX_MAX_NOTIFICATION_IDX (the same on every member). */
    const int mpix = (p->seed >> 1 & 1) != 0;
    p->my_fl = fl;
    p->my_allocmem = allocmem;
    p->dyn = NULL;
    switch (fl) {
    case FL_CREATE_MALLOC:
        if (posix_memalign((void **)&p->mem, 64, n))
            MPI_Abort(MPI_COMM_WORLD, 2);
        CHECK((mpix ? MPIX_Win_create_notify : MPI_Win_create)(p->mem, bytes, unit, MPI_INFO_NULL,
                                                               comm, &p->win));
        break;
    case FL_CREATE_ALLOCMEM:
        CHECK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &p->mem));
        CHECK((mpix ? MPIX_Win_create_notify : MPI_Win_create)(p->mem, bytes, unit, MPI_INFO_NULL,
                                                               comm, &p->win));
        break;
    case FL_ALLOCATE:
        CHECK((mpix ? MPIX_Win_allocate_notify : MPI_Win_allocate)(bytes, unit, MPI_INFO_NULL,
                                                                   comm, &p->mem, &p->win));
        break;
    case FL_SHARED: {
        MPI_Info info;
        MPI_Info_create(&info);
        if (p->seed & 1) /* the seed's low bit: contiguous or not */
            MPI_Info_set(info, "alloc_shared_noncontig", "true");
        CHECK(MPI_Win_allocate_shared(bytes, unit, info, comm, &p->mem, &p->win));
        MPI_Info_free(&info);
        break;
    }
    case FL_DYNAMIC: {
        CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &p->win));
        if (allocmem)
            CHECK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &p->dyn));
        else if (posix_memalign(&p->dyn, 64, n))
            MPI_Abort(MPI_COMM_WORLD, 2);
        p->mem = p->dyn;
        CHECK(MPI_Win_attach(p->win, p->dyn, bytes));
        break;
    }
    default:
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win_set_errhandler(p->win, MPI_ERRORS_RETURN);
    /* Notification counters, counted and reset by check.c: index 0 for the draft's calls
     * (VIA_NOTIFY), id 1 for Open MPI's (VIA_XNOTIFY). A window Open MPI's calls made has them
     * already; the shared and dynamic flavors, which it has no call for, and the others on
     * half the seeds get them from the draft's call. */
    if (!(mpix && (fl == FL_CREATE_MALLOC || fl == FL_CREATE_ALLOCMEM || fl == FL_ALLOCATE)))
        CHECK(MPI_Win_notify_set_num(p->win, MPI_INFO_NULL, 2));
    int self = 0; /* my rank in the window made: comm's */
    MPI_Comm_rank(comm, &self);
    /* The model's contents, stored under an exclusive lock of myself. */
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, self, 0, p->win));
    memcpy(p->mem, p->model[p->rank], n);
    CHECK(MPI_Win_unlock(self, p->win));
}

/* Free my window (collective over its members) and its memory. */
static void window_release(program *p)
{
    if (p->my_fl == FL_DYNAMIC)
        CHECK(MPI_Win_detach(p->win, p->dyn));
    CHECK(MPI_Win_free(&p->win));
    if (p->my_fl == FL_CREATE_MALLOC)
        free(p->mem);
    else if (p->my_fl == FL_CREATE_ALLOCMEM)
        MPI_Free_mem(p->mem);
    else if (p->my_fl == FL_DYNAMIC && p->my_allocmem)
        MPI_Free_mem(p->dyn);
    else if (p->my_fl == FL_DYNAMIC)
        free(p->dyn);
    p->mem = NULL;
    p->dyn = NULL;
}

static int uses_counters(const program *p)
{
    return (p->kinds & (1u << EK_COUNTER | 1u << EK_SIGNAL)) != 0;
}

/* Every world rank's region address (dynamic windows) and counter (MPIX_SYNC_NULL outside the
 * window), told after every membership change: a joiner's are new. Collective over
 * MPI_COMM_WORLD. */
static void exchange(program *p)
{
    MPI_Aint mine = 0;
    if (p->fl == FL_DYNAMIC)
        MPI_Get_address(p->dyn, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, p->base, 1, MPI_AINT, MPI_COMM_WORLD);
    if (uses_counters(p)) {
        MPI_Sync c = p->have_counter ? p->my_counter : MPIX_SYNC_NULL;
        MPI_Allgather(&c, 1, MPI_Handle_sync, p->counters, 1, MPI_Handle_sync, MPI_COMM_WORLD);
    }
}

void exec_window_create(program *p)
{
    cur_p = p;
    cur_epoch = -1;
    p->comm = MPI_COMM_WORLD;
    if (p->nmembers < p->nprocs) /* the first members (plan.c); the others over themselves */
        MPI_Comm_split(MPI_COMM_WORLD, p->wrank >= 0 ? 0 : MPI_UNDEFINED, p->wrank, &p->comm);
    window_make(p, p->fl, p->my_allocmem, p->wrank >= 0 ? p->comm : MPI_COMM_SELF);
    p->base = calloc((size_t)p->nprocs, sizeof *p->base);
    p->counters = calloc((size_t)p->nprocs, sizeof *p->counters);
    p->my_counter = MPIX_SYNC_NULL;
    p->have_counter = 0;
    if (uses_counters(p) && p->wrank >= 0) {
        CHECK(MPI_Win_Sync_alloc_objects(1, &p->my_counter, p->win, MPI_INFO_NULL));
        p->have_counter = 1;
    }
    exchange(p);
    MPI_Barrier(MPI_COMM_WORLD);
}

void exec_window_free(program *p)
{
    MPI_Barrier(MPI_COMM_WORLD); /* nobody bumps a counter being freed */
    if (p->have_counter)
        CHECK(MPI_Win_Sync_free_objects(1, &p->my_counter, p->win));
    /* Members free the window together; each process outside frees its window over itself. */
    window_release(p);
    if (p->comm != MPI_COMM_WORLD && p->comm != MPI_COMM_NULL)
        MPI_Comm_free(&p->comm);
    free(p->base);
    free(p->counters);
    for (int r = 0; r < p->nprocs; r++)
        free(p->model[r]);
    free(p->model);
    free(p->member);
    free(p->wrank_of);
    free(p->bytes_of);
    free(p->unit_of);
}

/* A change epoch (plan.c), called by every world rank: the new communicator is split from
 * MPI_COMM_WORLD, then the callers of docs/specification.md section 11 call
 * MPI_Win_change_comm: remaining members and joiners with it, leavers with MPI_COMM_NULL, all
 * with the same peer_rank; the others only keep in step. The epochs before are complete
 * everywhere (each ends with a barrier and a check under a lock), as the call requires. */
static void exec_change(program *p, epoch *e)
{
    const int me = p->rank, pos = e->new_rank[me];
    const int member = p->wrank >= 0, joiner = !member && pos >= 0, leaver = member && pos < 0;
    MPI_Comm nc;
    MPI_Comm_split(MPI_COMM_WORLD, pos >= 0 ? 0 : MPI_UNDEFINED, pos, &nc);
    if (leaver && p->have_counter) {
        /* My counter would be invalid once I leave (section 11, "Counters"), and in my window
         * over myself it is one of another window: free it while it is mine. */
        CHECK(MPI_Win_Sync_free_objects(1, &p->my_counter, p->win));
        p->have_counter = 0;
    }
    if (joiner && e->fresh[me]) {
        /* A new window over MPI_COMM_SELF instead of the kept one; model_epoch drew its
         * contents. */
        window_release(p);
        window_make(p, e->fresh_fl[me], e->fresh_allocmem[me], MPI_COMM_SELF);
    }
    if (member || joiner)
        CHECK(MPI_Win_change_comm(leaver ? MPI_COMM_NULL : nc, e->leader, p->win));
    if (joiner && uses_counters(p)) {
        CHECK(MPI_Win_Sync_alloc_objects(1, &p->my_counter, p->win, MPI_INFO_NULL));
        p->have_counter = 1;
    }
    if (p->comm != MPI_COMM_WORLD && p->comm != MPI_COMM_NULL)
        MPI_Comm_free(&p->comm);
    p->comm = nc;
    exchange(p);
}

/* ---- operations ---- */

static MPI_Datatype base_type(int esize) { return esize == 4 ? MPI_UINT32_T : MPI_UINT64_T; }

/* The datatype and count that describe layout l: n elements of the base type, or a vector or
 * indexed type (committed; freed by free_types). */
static void make_type(const layout *l, int esize, MPI_Datatype *type, int *count)
{
    MPI_Datatype base = base_type(esize);
    switch (l->kind) {
    case LAY_CONTIG:
        *type = base;
        *count = l->n;
        return;
    case LAY_VECTOR:
        MPI_Type_vector(l->count, l->blen, l->stride, base, type);
        break;
    case LAY_INDEXED:
        MPI_Type_indexed(l->nblk, l->blens, l->disp, base, type);
        break;
    }
    MPI_Type_commit(type);
    *count = 1;
}

static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_DATATYPE_NULL && *t != MPI_UINT32_T && *t != MPI_UINT64_T)
        MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

static MPI_Aint target_disp(const program *p, const op *o)
{
    if (p->fl == FL_DYNAMIC)
        return p->base[p->member[o->target]] + (MPI_Aint)o->toff;
    return (MPI_Aint)(o->toff / (size_t)p->unit_of[p->member[o->target]]);
}

static void issue(program *p, epoch *e, op *o)
{
    MPI_Win win = p->win;
    int t = o->target, tc = 0, oc = 0, rc = 0;
    MPI_Sync counter = p->counters[p->member[t]];
    MPI_Aint d = 0;
    if (o->kind <= OP_CAS) {
        d = target_disp(p, o);
        make_type(&o->tl, o->esize, &o->ttype, &tc);
        make_type(&o->ol, o->esize, &o->otype, &oc);
        if (o->kind == OP_GACC)
            make_type(&o->rl, o->esize, &o->rtype, &rc);
    }
    MPI_Op mop = model_ops[o->mop];
    switch (o->kind) {
    case OP_PUT:
        switch (o->via) {
        case VIA_PLAIN: CHECK(MPI_Put(o->obuf, oc, o->otype, t, d, tc, o->ttype, win)); break;
        case VIA_I: CHECK(MPI_Iput(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, &o->req)); break;
        case VIA_R: CHECK(MPI_Rput(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, &o->req)); break;
        case VIA_SIGNAL:
            CHECK(MPIX_Put_signal(o->obuf, oc, o->otype, t, d, tc, o->ttype, counter, win));
            break;
        case VIA_ISIGNAL:
            CHECK(MPIX_Iput_signal(o->obuf, oc, o->otype, t, d, tc, o->ttype, counter, win,
                                   &o->req));
            break;
        case VIA_NOTIFY:
            CHECK(MPI_Put_notify(o->obuf, oc, o->otype, t, d, tc, o->ttype, 0, win));
            break;
        case VIA_XNOTIFY:
            CHECK(MPIX_Put_notify(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, 1));
            break;
        }
        break;
    case OP_GET:
        switch (o->via) {
        case VIA_I: CHECK(MPI_Iget(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, &o->req)); break;
        case VIA_R: CHECK(MPI_Rget(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, &o->req)); break;
        case VIA_NOTIFY:
            CHECK(MPI_Get_notify(o->obuf, oc, o->otype, t, d, tc, o->ttype, 0, win));
            break;
        case VIA_XNOTIFY:
            CHECK(MPIX_Get_notify(o->obuf, oc, o->otype, t, d, tc, o->ttype, win, 1));
            break;
        default: CHECK(MPI_Get(o->obuf, oc, o->otype, t, d, tc, o->ttype, win)); break;
        }
        break;
    case OP_ACC:
        switch (o->via) {
        case VIA_I:
            CHECK(MPI_Iaccumulate(o->obuf, oc, o->otype, t, d, tc, o->ttype, mop, win, &o->req));
            break;
        case VIA_R:
            CHECK(MPI_Raccumulate(o->obuf, oc, o->otype, t, d, tc, o->ttype, mop, win, &o->req));
            break;
        default: CHECK(MPI_Accumulate(o->obuf, oc, o->otype, t, d, tc, o->ttype, mop, win)); break;
        }
        break;
    case OP_GACC:
        if (o->via == VIA_R)
            CHECK(MPI_Rget_accumulate(o->obuf, oc, o->otype, o->rbuf, rc, o->rtype, t, d, tc,
                                      o->ttype, mop, win, &o->req));
        else
            CHECK(MPI_Get_accumulate(o->obuf, oc, o->otype, o->rbuf, rc, o->rtype, t, d, tc,
                                     o->ttype, mop, win));
        break;
    case OP_FOP:
        CHECK(MPI_Fetch_and_op(o->obuf, o->rbuf, base_type(o->esize), t, d, mop, win));
        break;
    case OP_CAS:
        CHECK(MPI_Compare_and_swap(o->obuf, o->cbuf, o->rbuf, base_type(o->esize), t, d, win));
        break;
    case OP_FLUSH: CHECK(MPI_Win_flush(t, win)); break;
    case OP_FLUSH_LOCAL: CHECK(MPI_Win_flush_local(t, win)); break;
    case OP_FLUSH_ALL: CHECK(MPI_Win_flush_all(win)); break;
    case OP_FLUSH_LOCAL_ALL: CHECK(MPI_Win_flush_local_all(win)); break;
    case OP_WAIT: CHECK(MPI_Wait(&e->prog[p->wrank][o->waits].req, MPI_STATUS_IGNORE)); break;
    default: break;
    }
}

/* Issue my program's operations in order: all of them, or those to one target. */
static void run_ops(program *p, epoch *e, int only_target)
{
    for (int i = 0; i < e->nprog[p->wrank]; i++) {
        op *o = &e->prog[p->wrank][i];
        if (only_target < 0 || o->target == only_target)
            issue(p, e, o);
    }
}

/* Complete the requests no wait of the program completed. */
static void complete_requests(program *p, epoch *e)
{
    for (int i = 0; i < e->nprog[p->wrank]; i++) {
        op *o = &e->prog[p->wrank][i];
        if (o->req != MPI_REQUEST_NULL)
            CHECK(MPI_Wait(&o->req, MPI_STATUS_IGNORE));
    }
}

/* At the epoch's end: complete what is left, and free the datatypes. */
static void finish(program *p, epoch *e)
{
    complete_requests(p, e);
    for (int i = 0; i < e->nprog[p->wrank]; i++) {
        op *o = &e->prog[p->wrank][i];
        free_type(&o->ttype);
        free_type(&o->otype);
        free_type(&o->rtype);
    }
}

/* Who my program accesses (to[t]) and who accesses me (from[o]; writes[o]: with a put or an
 * accumulate), counting operations. */
static void peers_of(const program *p, const epoch *e, int *to, int *from, int *writes)
{
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++) {
            const op *x = &e->prog[o][i];
            if (x->kind > OP_CAS)
                continue;
            if (o == p->wrank)
                to[x->target]++;
            if (x->target == p->wrank) {
                from[o]++;
                writes[o] += x->kind != OP_GET;
            }
        }
}

/* The group of the window ranks in set (the window's group: its ranks are the members'). */
static MPI_Group group_of(const program *p, const int *set, int n)
{
    int *ranks = calloc((size_t)n, sizeof(int)), k = 0;
    for (int r = 0; r < n; r++)
        if (set[r])
            ranks[k++] = r;
    MPI_Group members, g;
    CHECK(MPI_Win_get_group(p->win, &members));
    MPI_Group_incl(members, k, ranks, &g);
    MPI_Group_free(&members);
    free(ranks);
    return g;
}

static int count_set(const int *set, int n)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        k += set[r] != 0;
    return k;
}

static int sum(const int *v, int n)
{
    int s = 0;
    for (int r = 0; r < n; r++)
        s += v[r];
    return s;
}

static void epoch_fence(program *p, epoch *e, rng *mine, const int *writes)
{
    int n = e->nprocs;
    int open = (e->noprecede ? MPI_MODE_NOPRECEDE : 0) | (rng_pct(mine, 50) ? MPI_MODE_NOSTORE : 0);
    if (sum(writes, n) == 0 && rng_pct(mine, 50))
        open |= MPI_MODE_NOPUT;
    CHECK(MPI_Win_fence(open, p->win));
    run_ops(p, e, -1);
    int close = (e->nosucceed ? MPI_MODE_NOSUCCEED : 0) | (rng_pct(mine, 50) ? MPI_MODE_NOSTORE : 0);
    CHECK(MPI_Win_fence(close, p->win));
}

static void epoch_pscw(program *p, epoch *e, rng *mine, const int *to, const int *from,
                       const int *writes)
{
    int n = e->nprocs, nocheck = e->nocheck ? MPI_MODE_NOCHECK : 0;
    MPI_Group exposure = MPI_GROUP_NULL, access = MPI_GROUP_NULL;
    if (count_set(from, n)) {
        int a = nocheck | (rng_pct(mine, 50) ? MPI_MODE_NOSTORE : 0);
        if (sum(writes, n) == 0)
            a |= MPI_MODE_NOPUT;
        exposure = group_of(p, from, n);
        CHECK(MPI_Win_post(exposure, a, p->win));
    }
    if (nocheck) /* NOCHECK: every post is made before any matching start */
        MPI_Barrier(p->comm);
    if (count_set(to, n)) {
        access = group_of(p, to, n);
        CHECK(MPI_Win_start(access, nocheck, p->win));
        run_ops(p, e, -1);
        CHECK(MPI_Win_complete(p->win));
    }
    if (exposure != MPI_GROUP_NULL) {
        if (e->use_test) {
            int done = 0;
            while (!done)
                CHECK(MPI_Win_test(p->win, &done));
        } else {
            CHECK(MPI_Win_wait(p->win));
        }
        MPI_Group_free(&exposure);
    }
    if (access != MPI_GROUP_NULL)
        MPI_Group_free(&access);
}

static void epoch_lockall(program *p, epoch *e);

/* Every target I use locked at once, shared or exclusive, in the epoch's lock order (plan.c),
 * used in program order, unlocked from a random one on. */
static void lock_multi(program *p, epoch *e, rng *mine, const int *to)
{
    int n = e->nprocs, me = p->wrank, a = e->nocheck ? MPI_MODE_NOCHECK : 0;
    for (int k = 0; k < n; k++) {
        int t = e->lock_order[k];
        if (to[t])
            CHECK(MPI_Win_lock(e->lock_type[me * n + t], t, a, p->win));
    }
    run_ops(p, e, -1);
    int start = (int)rng_below(mine, (uint64_t)n);
    for (int k = 0; k < n; k++) {
        int t = (start + k) % n;
        if (to[t])
            CHECK(MPI_Win_unlock(t, p->win));
    }
}

static void epoch_lock(program *p, epoch *e, rng *mine, const int *to)
{
    int n = e->nprocs, me = p->wrank, a = e->nocheck ? MPI_MODE_NOCHECK : 0;
    if (e->lockall_of[me]) {
        epoch_lockall(p, e);
        return;
    }
    if (e->multi) {
        lock_multi(p, e, mine, to);
        return;
    }
    int start = (int)rng_below(mine, (uint64_t)n);
    for (int k = 0; k < n; k++) {
        int t = (start + k) % n;
        if (!to[t])
            continue;
        CHECK(MPI_Win_lock(e->lock_type[me * n + t], t, a, p->win));
        run_ops(p, e, t);
        CHECK(MPI_Win_unlock(t, p->win));
    }
}

static void epoch_lockall(program *p, epoch *e)
{
    CHECK(MPI_Win_lock_all(e->nocheck ? MPI_MODE_NOCHECK : 0, p->win));
    run_ops(p, e, -1);
    CHECK(MPI_Win_unlock_all(p->win));
}

/* My sync-object request for `count` bumps, armed before or after my own operations. */
static void counted(program *p, epoch *e, int count, void (*mine)(program *, epoch *, void *),
                    void *arg)
{
    MPI_Request sreq = MPI_REQUEST_NULL;
    if (count > 0)
        CHECK(MPI_Win_sync_object_init(p->my_counter, count, p->win, MPI_INFO_NULL, &sreq));
    if (count > 0 && e->arm_first)
        CHECK(MPI_Start(&sreq));
    mine(p, e, arg);
    if (count > 0) {
        if (!e->arm_first)
            CHECK(MPI_Start(&sreq));
        CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK(MPI_Request_free(&sreq));
    }
}

static void counter_origin(program *p, epoch *e, void *arg)
{
    const int *to = arg;
    int n = e->nprocs, k = 0;
    MPI_Request *reqs = calloc((size_t)n, sizeof *reqs);
    MPI_Info info = MPI_INFO_NULL;
    if (e->remote_complete) {
        MPI_Info_create(&info);
        MPI_Info_set(info, MPIX_INFO_SYNC_REMOTE_COMPLETE, "true");
    }
    for (int t = 0; t < n; t++)
        if (to[t])
            CHECK(MPI_Win_sync_ops_init(t, MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET |
                                               MPI_MODE_WIN_ACCUMULATE,
                                        p->counters[p->member[t]], p->win, info, &reqs[k++]));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (k)
        CHECK(MPI_Startall(k, reqs));
    run_ops(p, e, -1);
    if (k)
        CHECK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < k; i++)
        CHECK(MPI_Request_free(&reqs[i]));
    free(reqs);
}

/* My signalled puts' requests complete before I wait for the bumps of others; exec_epoch's
 * finish then frees the datatypes, once. */
static void signal_origin(program *p, epoch *e, void *arg)
{
    (void)arg;
    run_ops(p, e, -1);
    complete_requests(p, e);
}

void exec_epoch(program *p, epoch *e, int index)
{
    cur_p = p;
    cur_epoch = index;
    if (e->kind == EK_CHANGE) {
        exec_change(p, e);
        return;
    }
    if (p->wrank < 0) /* outside the window: no part in this epoch */
        return;
    int n = e->nprocs;
    int *to = calloc((size_t)n, sizeof(int)), *from = calloc((size_t)n, sizeof(int));
    int *writes = calloc((size_t)n, sizeof(int));
    rng mine = {seed_mix(p->seed ^ 0x5bd1e995u, (uint64_t)index * 4096u + (uint64_t)p->rank)};
    peers_of(p, e, to, from, writes);
    switch (e->kind) {
    case EK_FENCE: epoch_fence(p, e, &mine, writes); break;
    case EK_PSCW: epoch_pscw(p, e, &mine, to, from, writes); break;
    case EK_LOCK: epoch_lock(p, e, &mine, to); break;
    case EK_LOCKALL:
        if (e->lockall_of[p->wrank])
            epoch_lockall(p, e);
        else
            lock_multi(p, e, &mine, to);
        break;
    case EK_COUNTER: counted(p, e, count_set(from, n), counter_origin, to); break;
    case EK_SIGNAL: counted(p, e, sum(from, n), signal_origin, NULL); break;
    default: break;
    }
    finish(p, e);
    free(to);
    free(from);
    free(writes);
}
