/* counter.c - MPI_Sync handles: making and freeing counters (MPI_Win_Sync_alloc_objects,
 * MPI_Win_Sync_free_objects), checking a handle against a window, reading a counter
 * (MPIX_Win_sync_read). The counters themselves are the engine's (sync/counters.h). */
#include "syncobj.h"
#include "progress/entry.h"
#include "core/next.h"
#include "sync/sync.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(fr_sync_wire) == sizeof(MPI_Sync), "MPI_Sync holds an fr_sync_wire");

int fr_sync_resolve(fr_win *w, const MPI_Sync *s, fr_sync_ref *ref)
{
    fr_sync_wire h;
    memcpy(&h, s, sizeof h);
    if (h.magic != FR_SYNC_MAGIC)
        return fr_errorf(FR_ERR_COUNTER, h.win_uid == 0 && h.magic == 0
                                             ? "the counter is MPIX_SYNC_NULL"
                                             : "the argument is not a counter (MPI_Sync)");
    if (h.win_uid != w->uid)
        return fr_errorf(FR_ERR_COUNTER, "the counter belongs to another window");
    int owner = fr_win_rank_of_member(w, h.owner);
    if (owner < 0)
        return fr_errorf(FR_ERR_COUNTER, "the counter's owner is no longer a member of the window");
    ref->owner = owner;
    ref->key = fr_counter_key(h.slot, h.gen);
    ref->mine = NULL;
    if (owner == w->rank && !(ref->mine = fr_counter_find(w, ref->key)))
        return fr_errorf(FR_ERR_COUNTER, "the counter was freed by its owner (this process)");
    return MPI_SUCCESS;
}

/* My counter s names, or NULL; records no error. */
static fr_counter *quiet_find(fr_win *w, const MPI_Sync *s)
{
    fr_sync_wire h;
    memcpy(&h, s, sizeof h);
    if (h.magic != FR_SYNC_MAGIC || h.win_uid != w->uid || h.owner != w->peers[w->rank].member_id)
        return NULL;
    return fr_counter_find(w, fr_counter_key(h.slot, h.gen));
}

static int alloc_objects(fr_win *w, int n, MPI_Sync counters[])
{
    if (n < 0)
        return fr_errorf(FR_ERR_COUNT, "n_sync %d is negative", n);
    if (n > 0 && !counters)
        return fr_errorf(FR_ERR_ARG, "sync_counters is NULL");
    for (int i = 0; i < n; i++) {
        uint32_t slot;
        fr_counter *c = fr_counter_new(w, &slot);
        fr_sync_wire h = {.win_uid = w->uid, .owner = w->peers[w->rank].member_id, .slot = slot,
                          .gen = c->gen, .magic = FR_SYNC_MAGIC};
        memcpy(&counters[i], &h, sizeof h);
    }
    return MPI_SUCCESS;
}

static int free_objects(fr_win *w, int n, MPI_Sync counters[])
{
    if (n < 0)
        return fr_errorf(FR_ERR_COUNT, "n_sync %d is negative", n);
    if (n > 0 && !counters)
        return fr_errorf(FR_ERR_ARG, "sync_counters is NULL");
    /* Check every entry first: a failing call frees none. Checked counters are marked
     * (live == 2) to catch one listed twice, and unmarked afterwards. */
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        fr_sync_ref ref;
        if ((rc = fr_sync_resolve(w, &counters[i], &ref)))
            break;
        if (!ref.mine)
            rc = fr_errorf(FR_ERR_COUNTER, "sync_counters[%d] is owned by rank %d: only the owner "
                                           "frees a counter", i, ref.owner);
        else if (ref.mine->head)
            rc = fr_errorf(FR_ERR_COUNTER_BUSY, "sync_counters[%d] has an active sync-object "
                                                "request", i);
        else if (ref.mine->live == 2)
            rc = fr_errorf(FR_ERR_COUNTER, "sync_counters[%d] appears twice", i);
        else
            ref.mine->live = 2;
    }
    for (int i = 0; i < n; i++) {
        fr_counter *c = quiet_find(w, &counters[i]);
        if (c)
            c->live = 1;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        fr_sync_wire h;
        memcpy(&h, &counters[i], sizeof h);
        fr_counter_delete(w, h.slot);
        memset(&counters[i], 0, sizeof counters[i]); /* MPIX_SYNC_NULL */
    }
    return MPI_SUCCESS;
}

FR_API int MPI_Win_Sync_alloc_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win,
                                      MPI_Info info)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_Sync_alloc_objects"));
    FR_WIN_EXIT("MPI_Win_Sync_alloc_objects", alloc_objects(w, n_sync, sync_counters));
}
FR_PMPI(Win_Sync_alloc_objects);

FR_API int MPI_Win_Sync_free_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_Sync_free_objects"));
    FR_WIN_EXIT("MPI_Win_Sync_free_objects", free_objects(w, n_sync, sync_counters));
}
FR_PMPI(Win_Sync_free_objects);

/* ---- MPIX_Win_sync_read ---- */

typedef struct read_wait {
    fr_peer *p;
    uint64_t seq;
} read_wait;

static int read_done(void *arg)
{
    read_wait *rw = arg;
    return rw->p->reads_got >= rw->seq;
}

static int sync_read(fr_win *w, const MPI_Sync *s, MPI_Count *value)
{
    fr_sync_ref ref;
    int rc;
    if (!value)
        return fr_errorf(FR_ERR_ARG, "value is NULL");
    if ((rc = fr_sync_resolve(w, s, &ref)))
        return rc;
    if (ref.mine) {
        *value = (MPI_Count)fr_counter_read_value(w, ref.mine);
        return MPI_SUCCESS;
    }
    fr_peer *p = &w->peers[ref.owner];
    fr_pkt read = {.type = FR_PKT_COUNTER_READ, .dtype = ref.key, .seq = ++p->reads_asked};
    p->tp->notify(w, ref.owner, &read);
    read_wait rw = {p, read.seq};
    fr_wait_until(read_done, &rw);
    if (p->read_failed)
        return fr_errorf(FR_ERR_COUNTER, "the counter was freed by its owner (rank %d)", ref.owner);
    *value = (MPI_Count)p->read_value;
    return MPI_SUCCESS;
}

FR_API int MPIX_Win_sync_read(MPI_Sync sync_counter, MPI_Win win, MPI_Count *value)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Win_sync_read"));
    FR_WIN_EXIT("MPIX_Win_sync_read", sync_read(w, &sync_counter, value));
}
FR_PMPIX(Win_sync_read);
