/* notify.c - notification counters (notify.h; docs/specification.md, section 13).
 *
 * The counters are the engine's (counters.h): a notified operation is the operation plus a bump
 * of the target's counter, which the target applies only once the operation is complete there
 * (sync_counter.c), or which a settled node peer adds to the counter's shared word after its
 * copy (counter_bump.c). Nobody consumes these counters with sync-object requests, so their
 * bumps only grow; the owner reads value = bumps - base, and setting a value moves the base,
 * never the counter, so a bump landing concurrently is counted either before or after the set,
 * never lost.
 *
 * Memory ordering: the bumps are read with acquire (fr_counter_value: the word's load; packet
 * bumps were applied by this very process after the data), so the data of every notification a
 * read counts is visible to the reader's loads that follow. */
#include "notify.h"
#include "counters.h"
#include "progress/progress.h"
#include "sync.h"

#include <stdlib.h>

int fr_notify_count(const fr_win *w) { return w->notify ? w->notify->num : 0; }

static uint64_t bumps(fr_win *w, const fr_notify *n, int idx)
{
    return fr_counter_value(&w->counters->c[n->slot[idx]]);
}

/* Counters of mine for every index; base[] already holds what they start from. */
static void make_counters(fr_win *w, fr_notify *n)
{
    for (int i = 0; i < n->num; i++)
        fr_counter_new(w, &n->slot[i]);
}

static void drop_counters(fr_win *w, fr_notify *n)
{
    for (int i = 0; i < n->num; i++)
        fr_counter_delete(w, n->slot[i]);
}

static void free_table(fr_notify *n)
{
    if (!n)
        return;
    free(n->slot);
    free(n->base);
    free(n->peer_num);
    free(n->peer_at);
    free(n->key);
    free(n);
}

/* Every member's number of counters and their keys, over w->comm (collective). */
static int exchange(fr_win *w)
{
    fr_notify *n = w->notify;
    int mine = n ? n->num : 0;
    int *num = fr_xcalloc((size_t)w->size, sizeof *num);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, 1, MPI_INT, num, 1, MPI_INT, w->comm, &rq));
    fr_wait_request(&rq);
    size_t total = 0;
    for (int r = 0; r < w->size; r++)
        total += (size_t)num[r];
    if (total == 0) { /* nobody has any: no table */
        free(num);
        free_table(n);
        w->notify = NULL;
        return MPI_SUCCESS;
    }
    if (!n)
        n = w->notify = fr_xcalloc(1, sizeof *n);
    free(n->peer_num);
    free(n->peer_at);
    free(n->key);
    n->peer_num = num;
    n->peer_at = fr_xcalloc((size_t)w->size, sizeof *n->peer_at);
    n->key = fr_xcalloc(total, sizeof *n->key);
    int *displ = fr_xcalloc((size_t)w->size, sizeof *displ);
    for (int r = 1; r < w->size; r++) {
        n->peer_at[r] = n->peer_at[r - 1] + (size_t)num[r - 1];
        displ[r] = (int)n->peer_at[r];
    }
    uint64_t *keys = fr_xcalloc((size_t)mine + 1, sizeof *keys);
    for (int i = 0; i < mine; i++)
        keys[i] = fr_counter_key(n->slot[i], w->counters->c[n->slot[i]].gen);
    FR_CHECK_MPI(PMPI_Iallgatherv(keys, mine, MPI_UINT64_T, n->key, num, displ, MPI_UINT64_T,
                                  w->comm, &rq));
    fr_wait_request(&rq);
    free(keys);
    free(displ);
    return MPI_SUCCESS;
}

int fr_notify_set_num(fr_win *w, int num)
{
    int rc = MPI_SUCCESS;
    if (num < 0)
        rc = fr_errorf(FR_ERR_ARG, "the number of notifications %d is negative", num);
    else if (fr_win_any_epoch(w))
        rc = fr_errorf(FR_ERR_EPOCH_NESTED, "an access or exposure epoch is open on the window; "
                                            "MPI_Win_notify_set_num needs every epoch closed");
    /* Agree first: an error anywhere fails the call everywhere before anything changes. */
    int mine[2] = {rc ? -1 : num, fr_notify_count(w)};
    int *all = fr_xcalloc(2 * (size_t)w->size, sizeof *all);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(mine, 2, MPI_INT, all, 2, MPI_INT, w->comm, &rq));
    fr_wait_request(&rq);
    int bad = -1, had = 0;
    for (int r = 0; r < w->size; r++) {
        if (all[2 * r] < 0 && bad < 0)
            bad = r;
        had |= all[2 * r + 1] > 0;
    }
    free(all);
    if (bad >= 0)
        return rc ? rc
                  : fr_errorf(FR_ERR_ARG, "rank %d of the window passed a negative number or has "
                                          "an epoch open; nothing changed", bad);
    /* Notifications still travelling to counters about to go must land first (else the owner
     * would drop them and say so on stderr). */
    if (had)
        fr_win_drain(w);
    fr_notify *n = w->notify;
    if (n) {
        drop_counters(w, n);
        free(n->slot);
        free(n->base);
        n->slot = NULL;
        n->base = NULL;
        n->num = 0;
    }
    if (num > 0) {
        if (!n)
            n = w->notify = fr_xcalloc(1, sizeof *n);
        n->num = num;
        n->slot = fr_xcalloc((size_t)num, sizeof *n->slot);
        n->base = fr_xcalloc((size_t)num, sizeof *n->base);
        make_counters(w, n);
    }
    return exchange(w);
}

int fr_notify_key_known(const fr_win *w, int target, int idx, uint64_t *key)
{
    const fr_notify *n = w->notify;
    if (!n || (unsigned)target >= (unsigned)w->size || idx < 0 || idx >= n->peer_num[target])
        return 0;
    *key = n->key[n->peer_at[target] + (size_t)idx];
    return 1;
}

int fr_notify_key(fr_win *w, int target, int idx, uint64_t *key)
{
    if (fr_notify_key_known(w, target, idx, key))
        return MPI_SUCCESS;
    const fr_notify *n = w->notify;
    int num = n ? n->peer_num[target] : 0;
    if (num == 0)
        return fr_errorf(FR_ERR_NOTIFICATION, "target rank %d has no notification counters on the "
                                              "window (MPI_Win_notify_set_num)", target);
    return fr_errorf(FR_ERR_NOTIFICATION, "notification index %d is out of range [0, %d) of "
                                          "target rank %d", idx, num, target);
}

static int check_mine(fr_win *w, int idx)
{
    int num = fr_notify_count(w);
    if (num == 0)
        return fr_errorf(FR_ERR_NOTIFICATION, "this process has no notification counters on the "
                                              "window (MPI_Win_notify_set_num)");
    if (idx < 0 || idx >= num)
        return fr_errorf(FR_ERR_NOTIFICATION, "notification index %d is out of range [0, %d)", idx,
                         num);
    return MPI_SUCCESS;
}

static MPI_Count value_of(fr_win *w, int idx)
{
    return (MPI_Count)(bumps(w, w->notify, idx) - w->notify->base[idx]);
}

unsigned fr_notify_poll_yields;

/* A target that only polls spins in its own loop, not in a wait of flexrma's, so nothing gives
 * the core away: with more ranks than cores the rank it waits for may need this very core, and
 * gets it only when the scheduler's time slice ends (4 ranks on 2 cores: 40 ms a notified halo
 * exchange instead of 40 us). So successive polls that find the same counter at the same value
 * and no progress events count as one wait's idle polls (core/idle.h), and give the core away
 * when such a wait would: first spinning, then yielding (engine unlocked, as fr_wait_until). */
static void poll_idle(fr_win *w, int idx, int events, MPI_Count v)
{
    fr_notify *n = w->notify;
    if (events > 0 || idx != n->poll_idx || v != n->poll_value) {
        n->poll_idx = idx;
        n->poll_value = v;
        fr_idle_reset(&n->poll);
        return;
    }
    if (!fr_idle_yield_due(&n->poll))
        return;
    fr_notify_poll_yields++;
    FR_LEAVE();
    fr_idle_give_way(&n->poll);
    FR_ENTER();
}

int fr_notify_get(fr_win *w, int idx, MPI_Count *value)
{
    int rc = check_mine(w, idx);
    if (rc)
        return rc;
    if (!value)
        return fr_errorf(FR_ERR_ARG, "value is NULL");
    int events = fr_progress(); /* a target that only polls must see its counter rise */
    MPI_Count v = value_of(w, idx);
    poll_idle(w, idx, events, v);
    *value = v;
    return MPI_SUCCESS;
}

int fr_notify_set(fr_win *w, int idx, MPI_Count value)
{
    int rc = check_mine(w, idx);
    if (rc)
        return rc;
    if (value < 0)
        return fr_errorf(FR_ERR_ARG, "notification value %lld is negative", (long long)value);
    w->notify->base[idx] = bumps(w, w->notify, idx) - (uint64_t)value;
    return MPI_SUCCESS;
}

int fr_notify_take(fr_win *w, int idx, int *flag)
{
    int rc = check_mine(w, idx);
    if (rc)
        return rc;
    int events = fr_progress();
    MPI_Count v = value_of(w, idx);
    *flag = v > 0;
    if (*flag)
        w->notify->base[idx]++;
    else
        poll_idle(w, idx, events, v);
    return MPI_SUCCESS;
}

typedef struct one_of {
    fr_win *w;
    int idx;
} one_of;

static int arrived(void *arg)
{
    one_of *o = arg;
    return value_of(o->w, o->idx) > 0;
}

int fr_notify_wait(fr_win *w, int idx)
{
    int rc = check_mine(w, idx);
    if (rc)
        return rc;
    one_of o = {w, idx};
    fr_wait_until(arrived, &o);
    w->notify->base[idx]++;
    return MPI_SUCCESS;
}

void fr_notify_free(fr_win *w)
{
    free_table(w->notify); /* the counters go with the window's table (fr_counters_free) */
    w->notify = NULL;
}

void fr_notify_keep(fr_win *w)
{
    fr_notify *n = w->notify;
    if (!n || n->num == 0 || !w->counters)
        return;
    /* The new counters start at 0 bumps: a base of -value keeps every value. */
    for (int i = 0; i < n->num; i++)
        n->base[i] = n->base[i] - bumps(w, n, i);
    n->slot[0] = UINT32_MAX; /* to be made again (fr_notify_rebind) */
}

int fr_notify_rebind(fr_win *w)
{
    fr_notify *n = w->notify;
    if (n && n->num > 0 && n->slot[0] == UINT32_MAX)
        make_counters(w, n);
    return exchange(w);
}
