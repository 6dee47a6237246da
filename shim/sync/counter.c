/* counter.c - the counters this process owns: the table of each window (slots and their
 * generations), the bumps that arrive as packets, the requests armed on each counter, and
 * MPI_Handle_sync, the datatype that carries a counter's name (ext/syncobj makes the names).
 *
 * An armed request joins its counter's queue; bumps accumulate in the counter whether or not
 * anybody is armed, and the head of the queue completes, consuming exactly its count, as soon as
 * the counter holds that many. Serving the queue strictly in arming order keeps a request with
 * a small count from starving one armed earlier with a large count. */
#include "counters.h"
#include "core/next.h"

#include <stdlib.h>

FR_API MPI_Datatype MPI_Handle_sync = MPI_DATATYPE_NULL;
FR_API MPI_Fint mpix_handle_sync_f = 0;

int fr_counters_init(void)
{
    FR_CHECK_MPI(PMPI_Type_contiguous((int)sizeof(MPI_Sync), MPI_BYTE, &MPI_Handle_sync));
    FR_CHECK_MPI(PMPI_Type_commit(&MPI_Handle_sync));
    mpix_handle_sync_f = MPI_Type_c2f(MPI_Handle_sync);
    return MPI_SUCCESS;
}

void fr_counters_finalize(void)
{
    if (MPI_Handle_sync != MPI_DATATYPE_NULL)
        FR_NEXT(Type_free)(&MPI_Handle_sync);
    MPI_Handle_sync = MPI_DATATYPE_NULL;
    mpix_handle_sync_f = 0;
}

fr_counter *fr_counter_find(fr_win *w, uint64_t key)
{
    struct fr_counters *t = w->counters;
    uint32_t slot = fr_counter_key_slot(key), gen = fr_counter_key_gen(key);
    if (!t || slot >= t->n || !t->c[slot].live || t->c[slot].gen != gen)
        return NULL;
    return &t->c[slot];
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

fr_counter *fr_counter_new(fr_win *w, uint32_t *slot)
{
    if (!w->counters)
        w->counters = fr_xcalloc(1, sizeof *w->counters);
    struct fr_counters *t = w->counters;
    *slot = take_slot(t);
    fr_counter *c = &t->c[*slot];
    if (++c->gen == 0) /* a new generation: handles of the slot's earlier counters stop */
        c->gen = 1;    /* matching; never 0, which marks a free word (shm_counter.h) */
    c->live = 1;
    c->value = 0;
    c->head = c->tail = NULL;
    fr_counter_open(w, c, *slot);
    return c;
}

void fr_counter_delete(fr_win *w, uint32_t slot)
{
    struct fr_counters *t = w->counters;
    t->c[slot].live = 0;
    fr_counter_close(w, &t->c[slot]); /* node peers' bumps fail from now on */
    put_slot(t, slot);
}

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

/* Bumps in the shared word are seen only when looked at, so the armed requests take theirs
 * first, as they would have had the bumps come as packets. */
uint64_t fr_counter_read_value(fr_win *w, fr_counter *c)
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
    *value = fr_counter_read_value(w, c);
    return MPI_SUCCESS;
}

/* ---- the requests armed on a counter ---- */

void fr_counter_arm(fr_win *w, fr_counter *c, fr_counter_waiter *so)
{
    so->armed = 1;
    so->next = NULL;
    if (c->tail)
        c->tail->next = so;
    else
        c->head = so;
    c->tail = so;
    fr_counter_serve(w, c);
}

void fr_counter_serve(fr_win *w, fr_counter *c)
{
    fr_counter_waiter *so;
    while ((so = c->head) && fr_counter_value(c) >= (uint64_t)so->count) {
        fr_counter_take(c, (uint64_t)so->count);
        fr_counter_unqueue(c, so);
        fr_req_complete(&so->req, MPI_SUCCESS); /* may release so (detached) */
    }
    fr_counter_watch(w, c);
}

void fr_counter_unqueue(fr_counter *c, fr_counter_waiter *so)
{
    fr_counter_waiter **at = &c->head, *prev = NULL;
    while (*at && *at != so) {
        prev = *at;
        at = &(*at)->next;
    }
    if (!*at)
        return;
    *at = so->next;
    if (c->tail == so)
        c->tail = prev;
    so->next = NULL;
    so->armed = 0;
}
