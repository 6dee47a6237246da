/* check.c - compare my window and my operations' results with the model after an epoch.
 *
 * A difference is reported with what reproduces it (the program's seed and the epoch), the first
 * wrong byte, and the operations of the epoch that touched that byte, so that the report alone
 * often names the path at fault. Every process checks its own window memory after every epoch,
 * also outside the window: a leaver's kept memory must hold what it held when it left. */
#include "random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n, size_t *count)
{
    size_t first = n;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i] && (*count)++ == 0)
            first = i;
    return first;
}

static const char *via_name(op_via v)
{
    static const char *const names[] = {"", " (I)", " (R)", " (signal)", " (I signal)",
                                        " (notify)", " (MPIX notify)"};
    return names[v];
}

static void describe(const program *p, const op *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s of %d x %d B from rank %d to rank %d at byte %zu (target %s, "
                       "origin %s%s%s)",
             op_name[o->kind], via_name(o->via), o->tl.n, o->esize, o->origin, o->target, o->toff,
             o->tl.kind == LAY_CONTIG ? "contiguous" : o->tl.kind == LAY_VECTOR ? "vector" : "indexed",
             o->ol.kind == LAY_CONTIG ? "contiguous" : o->ol.kind == LAY_VECTOR ? "vector" : "indexed",
             o->kind == OP_ACC || o->kind == OP_GACC || o->kind == OP_FOP ? ", " : "",
             o->kind == OP_ACC || o->kind == OP_GACC || o->kind == OP_FOP ? model_op_names[o->mop]
                                                                        : "");
    (void)p;
}

/* Does operation o touch byte `at` of its target's window? */
static int touches(const op *o, size_t at)
{
    if (o->kind > OP_CAS || at < o->toff)
        return 0;
    for (int i = 0; i < o->tl.n; i++) {
        size_t b = o->toff + (size_t)layout_at(&o->tl, i) * (size_t)o->esize;
        if (at >= b && at < b + (size_t)o->esize)
            return 1;
    }
    return 0;
}

static void header(const program *p, const epoch *e, int index, const char *what)
{
    fprintf(stderr,
            "t_random: [rank %d] MISMATCH in %s: program seed 0x%016llx (%s window, %zu B per "
            "rank, disp_unit %d (mine: %zu B, disp_unit %d), %d ranks, %d in the window, I am "
            "window rank %d), epoch %d of %d (%s)\n"
            "t_random: replay: t_random --replay 0x%llx (on %d ranks, same FLEXRMA_ "
            "variables)\n",
            p->rank, what, (unsigned long long)p->seed, flavor_name[p->fl], p->bytes, p->disp_unit,
            p->bytes_of[p->rank], p->unit_of[p->rank], p->nprocs, p->nmembers, p->wrank, index,
            p->nepochs, epoch_name[e->kind], (unsigned long long)p->seed, p->nprocs);
}

static int check_window(const program *p, const epoch *e, int index)
{
    size_t count;
    const unsigned char *exp = p->model[p->rank];
    size_t at = first_diff(p->mem, exp, p->bytes_of[p->rank], &count);
    if (!count)
        return 0;
    header(p, e, index, "my window");
    fprintf(stderr, "t_random: [rank %d] %zu bytes differ; the first, byte %zu: got 0x%02x, "
                    "expected 0x%02x\n",
            p->rank, count, at, p->mem[at], exp[at]);
    int shown = 0;
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++) {
            const op *x = &e->prog[o][i];
            if (x->target == p->wrank && touches(x, at) && shown++ < 8) {
                char d[256];
                describe(p, x, d, sizeof d);
                fprintf(stderr, "t_random: [rank %d]   touched by: rank %d's operation %d: %s, "
                                "block %d (%s)\n",
                        p->rank, o, i, d, x->block, block_name[e->blocks[x->block].use]);
            }
        }
    if (e->kind == EK_CHANGE)
        fprintf(stderr, "t_random: [rank %d]   a membership change, which leaves every process's "
                        "memory as it was (a joiner's new window: as it brought it)\n",
                p->rank);
    else if (!shown)
        fprintf(stderr, "t_random: [rank %d]   no operation of this epoch touched it\n", p->rank);
    return 1;
}

static int check_results(const program *p, const epoch *e, int index)
{
    int bad = 0;
    if (p->wrank < 0 || e->kind == EK_CHANGE) /* no operations of mine */
        return 0;
    for (int i = 0; i < e->nprog[p->wrank]; i++) {
        const op *x = &e->prog[p->wrank][i];
        if (!x->expect)
            continue;
        const unsigned char *got = x->kind == OP_GET ? x->obuf : x->rbuf;
        size_t n = x->kind == OP_GET ? x->obytes : x->rbytes, count;
        size_t at = first_diff(got, x->expect, n, &count);
        if (!count)
            continue;
        if (!bad++)
            header(p, e, index, "a result");
        char d[256];
        describe(p, x, d, sizeof d);
        fprintf(stderr, "t_random: [rank %d] operation %d, %s: %zu of %zu result bytes differ; "
                        "the first, byte %zu: got 0x%02x, expected 0x%02x\n",
                p->rank, i, d, count, n, at, got[at], x->expect[at]);
    }
    return bad != 0;
}

/* The notified operations of the epoch issued `via`, aimed at me. */
static MPI_Count notified(const program *p, const epoch *e, op_via via)
{
    MPI_Count n = 0;
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++)
            n += e->prog[o][i].via == via && e->prog[o][i].target == p->wrank &&
                 e->prog[o][i].kind <= OP_GET;
    return n;
}

/* My notification counters hold one notification per notified operation of the epoch aimed at
 * me, every one of them complete here by now (the barrier after the epoch): index 0 the draft's
 * (read, then reset), id 1 Open MPI's (taken one by one with MPIX_Win_wait_notify, after which
 * MPIX_Win_test_notify must find none left). */
static int check_notify(const program *p, const epoch *e, int index)
{
    if (p->wrank < 0 || e->kind == EK_CHANGE)
        return 0;
    MPI_Count want = notified(p, e, VIA_NOTIFY), got = -1;
    MPI_Win_notify_get_value(p->win, 0, &got);
    MPI_Win_notify_set_value(p->win, 0, 0);
    MPI_Count xwant = notified(p, e, VIA_XNOTIFY), xgot = -1;
    int left = 1;
    MPI_Win_notify_get_value(p->win, 1, &xgot);
    if (xgot == xwant) {
        for (MPI_Count k = 0; k < xwant; k++)
            MPIX_Win_wait_notify(p->win, 1);
        MPIX_Win_test_notify(p->win, 1, &left);
    }
    MPI_Win_notify_set_value(p->win, 1, 0);
    if (got == want && xgot == xwant && !left)
        return 0;
    header(p, e, index, "my notification counters");
    if (got != want)
        fprintf(stderr, "t_random: [rank %d] notification counter 0 holds %lld, expected %lld "
                        "(the notified puts and gets aimed at me in this epoch)\n",
                p->rank, (long long)got, (long long)want);
    if (xgot != xwant)
        fprintf(stderr, "t_random: [rank %d] notification id 1 holds %lld, expected %lld (the "
                        "MPIX_Put_notify and MPIX_Get_notify calls aimed at me in this epoch)\n",
                p->rank, (long long)xgot, (long long)xwant);
    else if (left)
        fprintf(stderr, "t_random: [rank %d] MPIX_Win_test_notify found a notification on id 1 "
                        "after %lld MPIX_Win_wait_notify calls took the %lld expected\n",
                p->rank, (long long)xwant, (long long)xwant);
    return 1;
}

int check_epoch(const program *p, const epoch *e, int index)
{
    /* Under a lock of myself: every epoch has ended everywhere (a barrier before this call), and
     * the lock makes the window's public and private copies agree. Outside the window my window
     * is over myself alone: I am its rank 0. */
    int self = p->wrank >= 0 ? p->wrank : 0;
    MPI_Win_lock(MPI_LOCK_SHARED, self, 0, p->win);
    int bad = check_window(p, e, index);
    MPI_Win_unlock(self, p->win);
    bad |= check_results(p, e, index);
    bad |= check_notify(p, e, index);
    return bad;
}
