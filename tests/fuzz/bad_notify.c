/* bad_notify.c - erroneous calls on the notification counters (docs/specification.md section
 * 13): the draft's MPI_Win_notify_get_value and MPI_Win_notify_set_value, Open MPI's
 * MPIX_Win_wait_notify and MPIX_Win_test_notify. An index or id outside the caller's counters
 * (each rank has FZ_NOTIFY on every window; for Open MPI's calls also beyond
 * MPIX_MAX_NOTIFICATION_IDX): MPI_ERR_INVALID_NOTIFICATION; a NULL output or a negative value:
 * MPI_ERR_ARG; MPI_WIN_NULL: MPI_ERR_WIN. The outputs must stay as they were, and so must every
 * counter's value (nothing notifies these counters: the erroneous notified operations of
 * bad_rma.c count nothing, its valid ones aim at MPI_PROC_NULL). */
#include "fuzz.h"

#include <limits.h>

/* An index that none of the caller's counters has, with Open MPI's bound among them. */
static int bad_index(fz_rng *g)
{
    const int bad[] = {-1, -2, FZ_NOTIFY, FZ_NOTIFY + 1, MPIX_MAX_NOTIFICATION_IDX + 1,
                       INT_MAX, INT_MIN};
    return bad[fz_below(g, (int)(sizeof bad / sizeof bad[0]))];
}

/* 1 if each of my counters on win still holds 0. */
static int counters_zero(MPI_Win win)
{
    for (int i = 0; i < FZ_NOTIFY; i++) {
        MPI_Count v = -1;
        if (MPI_Win_notify_get_value(win, i, &v) != MPI_SUCCESS || v != 0)
            return 0;
    }
    return 1;
}

void fz_bad_notify(fz_run *r)
{
    fz_rng *g = &r->rng;
    MPI_Win win = r->w->win;
    fz_call c = {.target = -1, .expect = MPI_ERR_INVALID_NOTIFICATION};
    int idx = fz_below(g, FZ_NOTIFY), rc, untouched = 1;
    /* one thing wrong: the index (0), the output or value (1), the window (2) */
    int m = fz_below(g, 5) == 0 ? 2 : fz_below(g, 2);
    if (m == 0) {
        idx = bad_index(g);
        snprintf(c.what, sizeof c.what, "notification index %d (the caller has %d)", idx,
                 FZ_NOTIFY);
    } else if (m == 2) {
        win = MPI_WIN_NULL;
        c.expect = MPI_ERR_WIN;
        snprintf(c.what, sizeof c.what, "win is MPI_WIN_NULL");
    }

    switch (fz_below(g, 4)) {
    case 0: { /* MPI_Win_notify_get_value */
        MPI_Count value = -77, *out = &value;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_notify_get_value");
        if (m == 1) {
            out = NULL;
            c.expect = MPI_ERR_ARG;
            snprintf(c.what, sizeof c.what, "value is NULL");
        }
        rc = MPI_Win_notify_get_value(win, idx, out);
        untouched = value == -77;
        break;
    }
    case 1: { /* MPI_Win_notify_set_value */
        MPI_Count value = 5;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_notify_set_value");
        if (m == 1) {
            const MPI_Count neg[] = {-1, -1000000007LL};
            value = neg[fz_below(g, 2)];
            c.expect = MPI_ERR_ARG;
            snprintf(c.what, sizeof c.what, "value %lld", (long long)value);
        }
        rc = MPI_Win_notify_set_value(win, idx, value);
        break;
    }
    case 2: /* MPIX_Win_wait_notify: no output; the window has no other wrong argument */
        snprintf(c.fn, sizeof c.fn, "MPIX_Win_wait_notify");
        if (m == 1) {
            idx = bad_index(g);
            c.expect = MPI_ERR_INVALID_NOTIFICATION;
            snprintf(c.what, sizeof c.what, "notification id %d (the caller has %d)", idx,
                     FZ_NOTIFY);
        }
        rc = MPIX_Win_wait_notify(win, idx);
        break;
    default: { /* MPIX_Win_test_notify */
        int flag = -77, *out = &flag;
        snprintf(c.fn, sizeof c.fn, "MPIX_Win_test_notify");
        if (m == 1) {
            out = NULL;
            c.expect = MPI_ERR_ARG;
            snprintf(c.what, sizeof c.what, "flag is NULL");
        }
        rc = MPIX_Win_test_notify(win, idx, out);
        untouched = flag == -77;
        break;
    }
    }
    untouched &= counters_zero(r->w->win);
    fz_check(r, &c, rc, untouched);
}
