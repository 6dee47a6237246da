/* counter.c - MPI_Sync counters: the owner's table, the handles, MPI_Handle_sync, reading. */
#include "syncobj.h"
#include "progress/entry.h"
#include "core/next.h"
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(fr_sync_wire) == sizeof(MPI_Sync), "MPI_Sync holds an fr_sync_wire");

FR_API MPI_Datatype MPI_Handle_sync = MPI_DATATYPE_NULL;

int fr_syncobj_init(void)
{
    FR_CHECK_MPI(PMPI_Type_contiguous((int)sizeof(MPI_Sync), MPI_BYTE, &MPI_Handle_sync));
    FR_CHECK_MPI(PMPI_Type_commit(&MPI_Handle_sync));
    return MPI_SUCCESS;
}

void fr_syncobj_finalize(void)
{
    if (MPI_Handle_sync != MPI_DATATYPE_NULL)
        FR_NEXT(Type_free)(&MPI_Handle_sync);
    MPI_Handle_sync = MPI_DATATYPE_NULL;
}

static uint64_t key_of(uint32_t slot, uint32_t gen) { return (uint64_t)slot << 32 | gen; }

fr_counter *fr_counter_find(fr_win *w, uint64_t key)
{
    struct fr_counters *t = w->counters;
    uint32_t slot = (uint32_t)(key >> 32), gen = (uint32_t)key;
    if (!t || slot >= t->n || !t->c[slot].live || t->c[slot].gen != gen)
        return NULL;
    return &t->c[slot];
}

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
    ref->key = key_of(h.slot, h.gen);
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
    return fr_counter_find(w, key_of(h.slot, h.gen));
}

/* A slot for a new counter: one with a shared word while there is one (a freed one first, so
 * the table stays dense), beyond the shared table only when every word is taken. A slot's
 * generation survives its reuse: handles of its earlier counters never match again. */
static uint32_t take_slot(struct fr_counters *t)
{
    if (t->free_near.n > 0)
        return t->free_near.slot[--t->free_near.n];
    if (!fr_counter_slot_shared(t->n) && t->free_far.n > 0)
        return t->free_far.slot[--t->free_far.n];
    fr_grow(&t->c, &t->cap, t->n + 1, sizeof *t->c);
    t->c[t->n] = (fr_counter){0};
    return (uint32_t)t->n++;
}

static void put_slot(struct fr_counters *t, uint32_t slot)
{
    fr_slot_stack *s = fr_counter_slot_shared(slot) ? &t->free_near : &t->free_far;
    fr_grow(&s->slot, &s->cap, s->n + 1, sizeof *s->slot);
    s->slot[s->n++] = slot;
}

static int alloc_objects(fr_win *w, int n, MPI_Sync counters[])
{
    if (n < 0)
        return fr_errorf(FR_ERR_COUNT, "n_sync %d is negative", n);
    if (n > 0 && !counters)
        return fr_errorf(FR_ERR_ARG, "sync_counters is NULL");
    if (!w->counters)
        w->counters = fr_xcalloc(1, sizeof *w->counters);
    struct fr_counters *t = w->counters;
    for (int i = 0; i < n; i++) {
        uint32_t slot = take_slot(t);
        fr_counter *c = &t->c[slot];
        if (++c->gen == 0) /* a new generation: handles of the slot's earlier counters stop */
            c->gen = 1;    /* matching; never 0, which marks a free word (shm_counter.h) */
        c->live = 1;
        c->value = 0;
        c->head = c->tail = NULL;
        fr_counter_open(w, c, slot);
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
    struct fr_counters *t = w->counters;
    for (int i = 0; i < n; i++) {
        fr_sync_wire h;
        memcpy(&h, &counters[i], sizeof h);
        t->c[h.slot].live = 0;
        fr_counter_close(w, &t->c[h.slot]); /* node peers' bumps fail from now on */
        put_slot(t, h.slot);
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

void fr_counters_free(fr_win *w)
{
    struct fr_counters *t = w->counters;
    if (!t)
        return;
    free(t->c);
    free(t->free_near.slot);
    free(t->free_far.slot);
    free(t->watch);
    free(t);
    w->counters = NULL;
}

/* ---- the engine's side (counters.h) ---- */

int fr_counter_bump(fr_win *w, uint64_t key)
{
    fr_counter *c = fr_counter_find(w, key);
    if (!c)
        return fr_errorf(FR_ERR_COUNTER, "the counter was freed by its owner");
    c->value++;
    if (c->head)
        fr_counter_serve(w, c);
    return MPI_SUCCESS;
}

/* The value a read reports: what the armed requests leave. Bumps in the shared word are seen
 * only when looked at, so the armed requests take theirs first, as they would have had the
 * bumps come as packets. */
static uint64_t value_after_serving(fr_win *w, fr_counter *c)
{
    if (c->head)
        fr_counter_serve(w, c);
    return fr_counter_value(c);
}

int fr_counter_read(fr_win *w, uint64_t key, uint64_t *value)
{
    fr_counter *c = fr_counter_find(w, key);
    if (!c)
        return fr_errorf(FR_ERR_COUNTER, "the counter was freed by its owner");
    *value = value_after_serving(w, c);
    return MPI_SUCCESS;
}

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
        *value = (MPI_Count)value_after_serving(w, ref.mine);
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
