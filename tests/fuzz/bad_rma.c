/* bad_rma.c - erroneous communication calls: MPI_Put, Get, Accumulate, Get_accumulate,
 * Fetch_and_op, Compare_and_swap, their request-based forms (MPI_Rput...), flexrma's MPI_Iput,
 * Iget, Iaccumulate and MPIX_Put_signal, Iput_signal, and the notified MPI_Put_notify,
 * MPI_Get_notify and Open MPI's MPIX_Put_notify, MPIX_Get_notify (a notification index out of
 * range: MPI_ERR_INVALID_NOTIFICATION, section 13).
 *
 * A call starts from valid arguments for the batch's epoch context (a target the epoch reaches,
 * counts, datatypes, a displacement inside the bait region, an operation that applies), then
 * exactly one of them is made wrong; the class expected is the one docs/specification.md
 * (sections 4, 7, 12.2, 12.3) gives for that argument. A few calls are valid ones to
 * MPI_PROC_NULL instead, which must succeed and do nothing. Erroneous calls read from r->src
 * and write (they must not) into r->sink. */
#include "fuzz.h"

#include <limits.h>
#include <string.h>

typedef enum {
    K_PUT, K_GET, K_ACC, K_GACC, K_FOP, K_CAS, K_RPUT, K_RGET, K_RACC, K_RGACC,
    K_IPUT, K_IGET, K_IACC, K_PSIG, K_IPSIG, K_PNOT, K_GNOT, K_XPNOT, K_XGNOT, K_KINDS
} kind;

static const struct {
    const char *name;
    unsigned counts : 1, acc : 1, fetch : 1, req : 1, passive : 1, signal : 1, get : 1, notify : 1;
} kinds[K_KINDS] = {
    [K_PUT] = {"MPI_Put", 1, 0, 0, 0, 0, 0, 0},
    [K_GET] = {"MPI_Get", 1, 0, 0, 0, 0, 0, 1},
    [K_ACC] = {"MPI_Accumulate", 1, 1, 0, 0, 0, 0, 0},
    [K_GACC] = {"MPI_Get_accumulate", 1, 1, 1, 0, 0, 0, 0},
    [K_FOP] = {"MPI_Fetch_and_op", 0, 1, 1, 0, 0, 0, 0},
    [K_CAS] = {"MPI_Compare_and_swap", 0, 0, 1, 0, 0, 0, 0},
    [K_RPUT] = {"MPI_Rput", 1, 0, 0, 1, 1, 0, 0},
    [K_RGET] = {"MPI_Rget", 1, 0, 0, 1, 1, 0, 1},
    [K_RACC] = {"MPI_Raccumulate", 1, 1, 0, 1, 1, 0, 0},
    [K_RGACC] = {"MPI_Rget_accumulate", 1, 1, 1, 1, 1, 0, 0},
    [K_IPUT] = {"MPI_Iput", 1, 0, 0, 1, 0, 0, 0},
    [K_IGET] = {"MPI_Iget", 1, 0, 0, 1, 0, 0, 1},
    [K_IACC] = {"MPI_Iaccumulate", 1, 1, 0, 1, 0, 0, 0},
    [K_PSIG] = {"MPIX_Put_signal", 1, 0, 0, 0, 0, 1, 0},
    [K_IPSIG] = {"MPIX_Iput_signal", 1, 0, 0, 1, 0, 1, 0},
    [K_PNOT] = {"MPI_Put_notify", 1, 0, 0, 0, 0, 0, 0, 1},
    [K_GNOT] = {"MPI_Get_notify", 1, 0, 0, 0, 0, 0, 1, 1},
    [K_XPNOT] = {"MPIX_Put_notify", 1, 0, 0, 0, 0, 0, 0, 1},
    [K_XGNOT] = {"MPIX_Get_notify", 1, 0, 0, 0, 0, 0, 1, 1},
};

typedef struct {
    kind k;
    void *o;
    int oc;
    MPI_Datatype ot;
    void *res;
    int rc;
    MPI_Datatype rt;
    int t;
    MPI_Aint disp;
    int tc;
    MPI_Datatype tt;
    MPI_Op op;
    MPI_Sync ctr;
    int idx; /* notification index */
    MPI_Win win;
    MPI_Request *req;
} args;

static int issue(fz_run *r, const args *a)
{
    switch (a->k) {
    case K_PUT:
        return MPI_Put(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win);
    case K_GET:
        return MPI_Get(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win);
    case K_ACC:
        return MPI_Accumulate(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->op, a->win);
    case K_GACC:
        return MPI_Get_accumulate(a->o, a->oc, a->ot, a->res, a->rc, a->rt, a->t, a->disp, a->tc,
                                  a->tt, a->op, a->win);
    case K_FOP:
        return MPI_Fetch_and_op(a->o, a->res, a->tt, a->t, a->disp, a->op, a->win);
    case K_CAS:
        return MPI_Compare_and_swap(a->o, r->cmp, a->res, a->tt, a->t, a->disp, a->win);
    case K_RPUT:
        return MPI_Rput(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->req);
    case K_RGET:
        return MPI_Rget(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->req);
    case K_RACC:
        return MPI_Raccumulate(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->op, a->win,
                               a->req);
    case K_RGACC:
        return MPI_Rget_accumulate(a->o, a->oc, a->ot, a->res, a->rc, a->rt, a->t, a->disp, a->tc,
                                   a->tt, a->op, a->win, a->req);
    case K_IPUT:
        return MPI_Iput(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->req);
    case K_IGET:
        return MPI_Iget(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->req);
    case K_IACC:
        return MPI_Iaccumulate(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->op, a->win,
                               a->req);
    case K_PSIG:
        return MPIX_Put_signal(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->ctr, a->win);
    case K_PNOT:
        return MPI_Put_notify(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->idx, a->win);
    case K_GNOT:
        return MPI_Get_notify(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->idx, a->win);
    case K_XPNOT: /* Open MPI's: the id after the window */
        return MPIX_Put_notify(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->idx);
    case K_XGNOT:
        return MPIX_Get_notify(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->win, a->idx);
    default:
        return MPIX_Iput_signal(a->o, a->oc, a->ot, a->t, a->disp, a->tc, a->tt, a->ctr, a->win,
                                a->req);
    }
}

/* Can the batch's context carry a valid call of kind k to some target? Then *t is one. */
static int valid_target(const fz_run *r, kind k, int *t)
{
    if (kinds[k].signal) { /* needs no epoch */
        *t = fz_below(&((fz_run *)r)->rng, r->nprocs);
        return 1;
    }
    switch (r->cx) {
    case CX_FENCE:
        *t = fz_below(&((fz_run *)r)->rng, r->nprocs);
        return !kinds[k].passive;
    case CX_LOCK_ALL:
        *t = fz_below(&((fz_run *)r)->rng, r->nprocs);
        return 1;
    case CX_LOCK:
        *t = r->right;
        return 1;
    case CX_PSCW:
        *t = r->right;
        return !kinds[k].passive;
    case CX_COUNTER: /* puts and gets to right are covered, accumulates not */
        *t = r->right;
        return !kinds[k].acc && !kinds[k].fetch;
    default:
        return 0;
    }
}

/* A target the context's epoch does not reach for kind k, if there is one. */
static int unreached_target(fz_run *r, kind k, int *t)
{
    if (kinds[k].signal)
        return 0;
    switch (r->cx) {
    case CX_NONE:
        *t = fz_below(&r->rng, r->nprocs);
        return 1;
    case CX_FENCE:
        *t = fz_below(&r->rng, r->nprocs);
        return kinds[k].passive; /* request-based RMA needs a passive-target epoch */
    case CX_LOCK:
        *t = r->rank; /* only right is locked */
        return 1;
    case CX_PSCW:
        *t = kinds[k].passive ? r->right : r->rank;
        return 1;
    case CX_COUNTER:
        *t = kinds[k].acc || kinds[k].fetch ? r->right : r->rank;
        return 1;
    default:
        return 0;
    }
}

/* The type of the same size built from another predefined type (accumulate's mismatch). */
static MPI_Datatype other_elem(const fz_run *r, MPI_Datatype t, int *count)
{
    if (t == MPI_INT)
        return MPI_FLOAT;
    if (t == MPI_DOUBLE)
        return MPI_LONG_LONG;
    *count *= 2; /* contig2 of ints: as many floats */
    return MPI_FLOAT;
}

static int bad_rank(fz_rng *g, int nprocs)
{
    static const int neg[] = {-1, -2, -3, -7, -1000, INT_MIN};
    const int big[] = {nprocs, nprocs + 1, nprocs + 100, INT_MAX};
    if (fz_below(g, 2)) {
        int v;
        do
            v = neg[fz_below(g, 6)];
        while (v == MPI_PROC_NULL); /* valid: the call does nothing */
        return v;
    }
    return big[fz_below(g, 4)];
}

static int neg_count(fz_rng *g)
{
    static const int v[] = {-1, -2, -17, INT_MIN};
    return v[fz_below(g, 4)];
}

static MPI_Datatype bad_type(fz_run *r, char *how, size_t n)
{
    switch (fz_below(&r->rng, 3)) {
    case 0:
        snprintf(how, n, "MPI_DATATYPE_NULL");
        return MPI_DATATYPE_NULL;
    case 1:
        snprintf(how, n, "an uncommitted vector type");
        return r->uncommitted;
    default:
        snprintf(how, n, "the handle MPI_Type_free left");
        return r->freed;
    }
}

void fz_bad_rma(fz_run *r)
{
    fz_rng *g = &r->rng;
    fz_win *w = r->w;
    kind k = (kind)fz_below(g, K_KINDS);
    args a = {.k = k, .o = kinds[k].get ? (void *)r->sink : (void *)r->src, .res = r->sink,
              .win = w->win, .op = MPI_SUM};
    MPI_Request req = MPI_REQUEST_NULL;
    a.req = kinds[k].req ? &req : NULL;
    fz_call c = {.expect = MPI_SUCCESS};
    snprintf(c.fn, sizeof c.fn, "%s", kinds[k].name);
    c.what[0] = '\0';

    /* valid base arguments */
    static const MPI_Op ops[] = {MPI_SUM, MPI_REPLACE, MPI_MAX, MPI_MIN};
    a.op = ops[fz_below(g, 4)];
    /* MPI_NO_OP only fetches, and the origin arguments are ignored (MPI-3.1 11.3.4): no
     * mutation of them then */
    int no_op = kinds[k].fetch && k != K_CAS && fz_below(g, 5) == 0;
    if (no_op)
        a.op = MPI_NO_OP;
    int single = k == K_FOP || k == K_CAS;
    int pick = fz_below(g, single ? 2 : 3);
    a.tt = pick == 0 ? MPI_INT : pick == 1 ? MPI_DOUBLE : r->contig2;
    int ints_per = pick == 0 ? 1 : 2;
    a.tc = single ? 1 : 1 + fz_below(g, 4);
    a.ot = a.rt = a.tt;
    a.oc = a.rc = a.tc;
    int span = a.tc * ints_per;
    int at = FZ_BAIT + fz_below(g, (FZ_NW - FZ_BAIT - span) / 2 + 1) * 2;
    a.t = r->right;
    int base_ok = valid_target(r, k, &a.t);
    a.ctr = w->all[a.t];
    a.idx = fz_below(g, FZ_NOTIFY);
    char how[64];

    /* one thing wrong */
    enum { RANK, OCOUNT, TCOUNT, RCOUNT, OTYPE, TTYPE, RTYPE, SIZE, RSIZE, ELEM, RELEM, CAS_TYPE,
           DISP, RANGE, OP, REQ, WIN, CTR, NOTIF, EPOCH, PROC_NULL, NMUT } m;
    for (;;) {
        m = fz_below(g, NMUT);
        int ok = base_ok;
        switch (m) {
        case TCOUNT:
            ok &= kinds[k].counts;
            break;
        case OCOUNT: case OTYPE: case SIZE:
            ok &= kinds[k].counts && !no_op;
            break;
        case RCOUNT: case RTYPE: case RSIZE: case RELEM:
            ok &= kinds[k].fetch && kinds[k].counts;
            break;
        case ELEM:
            ok &= kinds[k].acc && kinds[k].counts && !no_op;
            break;
        case CAS_TYPE:
            ok &= k == K_CAS;
            break;
        case OP:
            ok &= kinds[k].acc;
            break;
        case REQ:
            ok &= kinds[k].req;
            break;
        case CTR:
            ok &= kinds[k].signal;
            break;
        case NOTIF:
            ok &= kinds[k].notify;
            break;
        case EPOCH: {
            int t;
            if ((ok = unreached_target(r, k, &t)))
                a.t = t;
            break;
        }
        case PROC_NULL:
            ok = fz_below(g, 4) == 0; /* a few valid calls */
            break;
        default:
            break;
        }
        if (ok)
            break;
    }
    a.disp = fz_disp(w, a.t, at);
    c.target = a.t;
    switch (m) {
    case RANK:
        a.t = bad_rank(g, r->nprocs);
        c.target = -1;
        c.expect = MPI_ERR_RANK;
        snprintf(c.what, sizeof c.what, "target_rank %d (the window has %d members)", a.t,
                 r->nprocs);
        break;
    case OCOUNT:
        a.oc = neg_count(g);
        c.expect = MPI_ERR_COUNT;
        snprintf(c.what, sizeof c.what, "origin_count %d", a.oc);
        break;
    case TCOUNT:
        a.tc = neg_count(g);
        c.expect = MPI_ERR_COUNT;
        snprintf(c.what, sizeof c.what, "target_count %d", a.tc);
        break;
    case RCOUNT:
        a.rc = neg_count(g);
        c.expect = MPI_ERR_COUNT;
        snprintf(c.what, sizeof c.what, "result_count %d", a.rc);
        break;
    case OTYPE: case TTYPE: case RTYPE: {
        MPI_Datatype t = bad_type(r, how, sizeof how);
        const char *which = m == OTYPE ? "origin_datatype" : m == RTYPE ? "result_datatype"
                            : single ? "datatype" : "target_datatype";
        *(m == OTYPE ? &a.ot : m == RTYPE ? &a.rt : &a.tt) = t;
        c.expect = MPI_ERR_TYPE;
        int zero = kinds[k].counts && fz_below(g, 4) == 0; /* nothing would move */
        if (zero)
            a.oc = a.tc = a.rc = 0;
        snprintf(c.what, sizeof c.what, "%s is %s%s", which, how, zero ? ", all counts 0" : "");
        break;
    }
    case SIZE:
        a.oc += 1;
        c.expect = MPI_ERR_TYPE;
        snprintf(c.what, sizeof c.what, "origin describes %d elements, target %d (sizes differ)",
                 a.oc, a.tc);
        break;
    case RSIZE:
        a.rc += 1;
        c.expect = MPI_ERR_TYPE;
        snprintf(c.what, sizeof c.what, "result describes %d elements, target %d", a.rc, a.tc);
        break;
    case ELEM:
        a.ot = other_elem(r, a.tt, &a.oc);
        c.expect = MPI_ERR_TYPE;
        snprintf(c.what, sizeof c.what, "origin built from another predefined type than target");
        break;
    case RELEM:
        a.rt = other_elem(r, a.tt, &a.rc);
        c.expect = MPI_ERR_TYPE;
        snprintf(c.what, sizeof c.what, "result built from another predefined type than target");
        break;
    case CAS_TYPE:
        if (fz_below(g, 2)) {
            a.tt = r->contig2;
            snprintf(c.what, sizeof c.what, "datatype is derived (contiguous of 2 ints)");
        } else {
            a.tt = MPI_DOUBLE_INT;
            snprintf(c.what, sizeof c.what, "datatype is MPI_DOUBLE_INT (padded pair type)");
        }
        a.disp = fz_disp(w, a.t, FZ_BAIT);
        c.expect = MPI_ERR_TYPE;
        break;
    case DISP: {
        static const MPI_Aint neg[] = {-1, -4, -4096, LONG_MIN};
        a.disp = neg[fz_below(g, 4)];
        c.expect = MPI_ERR_DISP;
        snprintf(c.what, sizeof c.what, "target_disp %ld (negative)", (long)a.disp);
        break;
    }
    case RANGE:
        c.expect = MPI_ERR_RMA_RANGE;
        switch (fz_below(g, kinds[k].counts ? 4 : 3)) {
        case 0:
            a.disp = fz_disp(w, a.t, FZ_NW);
            snprintf(c.what, sizeof c.what, "target_disp of int %d: just past the window", FZ_NW);
            break;
        case 1:
            a.disp = fz_disp(w, a.t, FZ_NW - span + 1);
            snprintf(c.what, sizeof c.what, "%d ints from int %d: the last one past the window",
                     span, FZ_NW - span + 1);
            break;
        case 2:
            a.disp = LONG_MAX / 2 - fz_below(g, 1000);
            snprintf(c.what, sizeof c.what, "target_disp %ld (far beyond the window)",
                     (long)a.disp);
            break;
        default: /* a target type wider than the window: 3 ints 64 apart */
            a.tt = r->wide;
            a.tc = 1;
            a.ot = a.rt = MPI_INT;
            a.oc = a.rc = 3;
            a.disp = fz_disp(w, a.t, 0);
            snprintf(c.what, sizeof c.what, "target_datatype spans %d ints of a %d-int window",
                     2 * 64 + 1, FZ_NW);
            break;
        }
        break;
    case OP: {
        int v = fz_below(g, 2 + (r->nbad_op > 0));
        c.expect = MPI_ERR_OP;
        if (v == 0) {
            a.op = MPI_OP_NULL;
            snprintf(c.what, sizeof c.what, "op is MPI_OP_NULL");
        } else if (v == 1) {
            a.op = r->user_op;
            snprintf(c.what, sizeof c.what, "op is a user-defined operation");
        } else {
            int i = fz_below(g, r->nbad_op);
            a.op = r->bad_op[i];
            a.ot = a.rt = a.tt = r->bad_op_type[i];
            a.oc = a.rc = a.tc = 1;
            a.disp = fz_disp(w, a.t, FZ_BAIT);
            snprintf(c.what, sizeof c.what, "op pair #%d the MPI library refuses to reduce", i);
        }
        break;
    }
    case REQ:
        a.req = NULL;
        c.expect = MPI_ERR_ARG;
        snprintf(c.what, sizeof c.what, "request is NULL");
        break;
    case WIN:
        a.win = MPI_WIN_NULL;
        c.expect = MPI_ERR_WIN;
        snprintf(c.what, sizeof c.what, "win is MPI_WIN_NULL");
        break;
    case CTR: {
        c.expect = MPI_ERR_ARG;
        int v = fz_below(g, 4);
        if (v == 0) {
            a.ctr = MPIX_SYNC_NULL;
            snprintf(c.what, sizeof c.what, "counter is MPIX_SYNC_NULL");
        } else if (v == 1) {
            a.ctr = r->other->all[a.t];
            snprintf(c.what, sizeof c.what, "counter of the target on another window");
        } else if (v == 2) {
            int o = (a.t + 1 + fz_below(g, r->nprocs - 1)) % r->nprocs;
            a.ctr = w->all[o];
            snprintf(c.what, sizeof c.what, "counter owned by rank %d, not the target", o);
        } else {
            a.t = c.target = r->rank;
            a.disp = fz_disp(w, a.t, at);
            a.ctr = w->stale;
            snprintf(c.what, sizeof c.what, "my own counter, freed, to myself");
        }
        break;
    }
    case NOTIF: {
        const int bad[] = {-1, -2, FZ_NOTIFY, FZ_NOTIFY + 1, MPIX_MAX_NOTIFICATION_IDX + 1,
                           INT_MAX, INT_MIN};
        a.idx = bad[fz_below(g, 7)];
        c.expect = MPI_ERR_INVALID_NOTIFICATION;
        snprintf(c.what, sizeof c.what, "notification index %d (the target has %d)", a.idx,
                 FZ_NOTIFY);
        break;
    }
    case EPOCH:
        c.expect = MPI_ERR_RMA_SYNC;
        snprintf(c.what, sizeof c.what, "to rank %d, which the %s context's epoch does not reach",
                 a.t, fz_context_name[r->cx]);
        break;
    default: /* PROC_NULL */
        a.t = MPI_PROC_NULL;
        c.target = -1;
        snprintf(c.what, sizeof c.what, "nothing: a valid call to MPI_PROC_NULL");
        break;
    }

    if (no_op) {
        size_t n = strlen(c.what);
        snprintf(c.what + n, sizeof c.what - n, " (op MPI_NO_OP)");
    }
    unsigned char sink_before[sizeof r->sink];
    memcpy(sink_before, r->sink, sizeof sink_before);
    int rc = issue(r, &a);
    int untouched = memcmp(sink_before, r->sink, sizeof sink_before) == 0;
    if (c.expect != MPI_SUCCESS) {
        untouched &= req == MPI_REQUEST_NULL; /* no request was made */
    } else if (kinds[k].req && rc == MPI_SUCCESS) {
        /* MPI_PROC_NULL: the request is complete already */
        int flag = 0;
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        untouched &= flag && req == MPI_REQUEST_NULL;
        if (!flag)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    fz_check(r, &c, rc, untouched);
}
