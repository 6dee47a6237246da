/* win_create.c - window creation and destruction, the handle map, and the calls that describe a
 * window (group, predefined attributes).
 *
 * The carrier: the handle the user receives is a real window of the underlying MPI, so that
 * every window function flexrma does not intercept (names, user attributes, error handlers,
 * MPI_Win_c2f/f2c) works unchanged. It is a zero-byte MPI_Win_allocate over MPI_COMM_SELF:
 * cheap, and available in every MPI (Debian's Open MPI 4.1 cannot MPI_Win_create over
 * MPI_COMM_SELF: its osc pt2pt component is disabled). Because the carrier describes no memory,
 * MPI_Win_get_attr answers MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR
 * and MPI_WIN_MODEL from the flexrma window.
 */
#include "alloc_mem.h"
#include "win_shared.h"
#include "sync/counters.h"
#include "sync/notify.h"
#include "transport/direct.h"
#include "progress/entry.h"
#include "progress/isend.h"
#include "core/mpi_compat.h"
#include "core/next.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "stats.h"
#include "transport/shm_state.h"
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int win_counter;

/* What each member publishes at creation. */
typedef struct member_info {
    int64_t size;
    int64_t disp_unit;
    uint64_t uid;       /* the window's identity: rank 0's draw is used */
    int64_t transport;  /* FLEXRMA_TRANSPORT: it decides which collectives creation runs */
} member_info;

static const char *const transport_name[] = {[FR_TRANSPORT_AUTO] = "auto",
                                             [FR_TRANSPORT_AM] = "am",
                                             [FR_TRANSPORT_SHM] = "shm"};

static void win_destroy(fr_win *w);

/* 64 random bits, so that counters of different windows (even of different jobs meeting
 * through MPI_Comm_connect) never look alike. */
uint64_t fr_win_draw_uid(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    }
    return v ? v : 1;
}

int fr_win_check_args(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return fr_errorf(FR_ERR_COMM, "MPI_COMM_NULL given as the window's communicator");
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return fr_errorf(FR_ERR_COMM, "windows cannot be created over an intercommunicator");
    if (size < 0)
        return fr_errorf(FR_ERR_SIZE, "window size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return fr_errorf(FR_ERR_DISP, "displacement unit %d is not positive", disp_unit);
    if (FR_MPI_NULL_BASE_REFUSED && size > 0 && base == NULL)
        return fr_errorf(FR_ERR_ARG, "window of %ld bytes at a NULL base address", (long)size);
    return MPI_SUCCESS;
}

void fr_win_bind_comm(fr_win *w, MPI_Comm comm)
{
    /* Nonblocking, and progress meanwhile: a member may still be in a flush of another window
     * that waits for this process to serve it (a get over messages), and reach this collective
     * only after. The blocking dup served nothing, and the two waited for each other forever
     * (a get and flush in a lock_all epoch beside a peer in MPI_Win_allocate, over
     * FLEXRMA_TRANSPORT=am, as between nodes). Once the dup is done every member is in this
     * collective call, so the blocking collectives that follow are safe. */
    MPI_Request dup;
    FR_CHECK_MPI(PMPI_Comm_idup(comm, &w->comm, &dup));
    fr_wait_request(&dup);
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN));
    PMPI_Comm_rank(w->comm, &w->rank);
    PMPI_Comm_size(w->comm, &w->size);
    PMPI_Comm_group(w->comm, &w->group);
    int *tag_ub, flag = 0;
    PMPI_Comm_get_attr(w->comm, MPI_TAG_UB, &tag_ub, &flag);
    w->tag_ub = flag ? *tag_ub : 32767;
    w->next_tag = FR_TAG_DATA_MIN;
}

void fr_win_peers_alloc(fr_win *w)
{
    w->peers = fr_xcalloc((size_t)w->size, sizeof *w->peers);
    for (int r = 0; r < w->size; r++) {
        fr_peer *p = &w->peers[r];
        p->held_tail = &p->held;
        fr_u64map_init(&p->types_sent);
        fr_u64map_init(&p->types_recv);
    }
}

int fr_win_transport_differs(int r, int mode_r, int mode_0)
{
    return fr_errorf(FR_ERR_ARG, "FLEXRMA_TRANSPORT differs between members (rank 0: %s, "
                                 "rank %d: %s); give every process the same value",
                     transport_name[mode_0], r, transport_name[mode_r]);
}

int fr_win_open_channel(fr_win *w)
{
    w->am_rx = w->size - 1; /* everyone else sends messages, unless fr_chan_agree counts fewer */
    int rc = fr_chan_create(w); /* node peers, rings */
    fr_transport_select(w);
    rc = fr_chan_agree(w, rc);
    if (rc == MPI_SUCCESS)
        rc = fr_direct_setup(w); /* after the channel: it maps only peers a ring reaches */
    fr_am_inbox_open(w);
    return rc;
}

/* Collective over comm. Every member learns every other member's size and unit, and (unless
 * FLEXRMA_TRANSPORT=am) the members on its node set up their packet rings (tp_shm.c). */
static int win_build(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     int flavor, fr_win **out)
{
    fr_win *w = fr_xcalloc(1, sizeof *w);
    fr_win_bind_comm(w, comm);
    w->base = base;
    w->win_size = size;
    w->disp_unit = disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = MPI_WIN_UNIFIED; /* puts land in the window itself: no copies to reconcile */
    w->hints = fr_win_hints_default();
    fr_win_hints_read(&w->hints, info);
    w->id = win_counter++;

    member_info mine = {size, disp_unit, fr_win_draw_uid(), fr_opt.transport};
    member_info *all = fr_xcalloc((size_t)w->size, sizeof *all);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                 MPI_BYTE, w->comm, &rq));
    fr_wait_request(&rq);
    fr_win_peers_alloc(w);
    for (int r = 0; r < w->size; r++) {
        fr_peer *p = &w->peers[r];
        p->size = (MPI_Aint)all[r].size;
        p->disp_unit = (int)all[r].disp_unit;
        p->member_id = (uint32_t)r; /* joiners get fresh identities (ext/dynwin) */
    }
    w->next_member_id = (uint32_t)w->size;
    w->uid = all[0].uid;
    int rc = MPI_SUCCESS;
    for (int r = 1; r < w->size && rc == MPI_SUCCESS; r++)
        if (all[r].transport != all[0].transport)
            rc = fr_win_transport_differs(r, (int)all[r].transport, (int)all[0].transport);
    free(all);
    if (rc == MPI_SUCCESS)
        rc = fr_win_open_channel(w);
    if (rc != MPI_SUCCESS) { /* every member fails alike: the decisions came from collectives */
        win_destroy(w);
        return rc;
    }

    void *carrier_base;
    FR_CHECK_MPI(FR_NEXT(Win_allocate)(0, disp_unit, info, MPI_COMM_SELF, &carrier_base,
                                        &w->handle));
    *out = w;
    return MPI_SUCCESS;
}

const char *fr_win_made_by(const fr_win *w)
{
    switch (w->attr_flavor) {
    case MPI_WIN_FLAVOR_ALLOCATE: return "MPI_Win_allocate";
    case MPI_WIN_FLAVOR_SHARED: return "MPI_Win_allocate_shared";
    case MPI_WIN_FLAVOR_DYNAMIC: return "MPI_Win_create_dynamic";
    default: return "MPI_Win_create";
    }
}

int fr_win_make(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                int flavor, fr_win **out)
{
    int rc = fr_win_check_args(base, size, disp_unit, comm);
    if (rc == MPI_SUCCESS)
        rc = win_build(base, size, disp_unit, info, comm, flavor, out);
    if (rc == MPI_SUCCESS)
        fr_win_register(*out);
    return rc;
}

FR_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          MPI_Win *win)
{
    if (!fr_active)
        return FR_NEXT(Win_create)(base, size, disp_unit, info, comm, win);
    FR_ENTER();
    fr_win *w = NULL;
    int rc = fr_win_make(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, &w);
    if (rc == MPI_SUCCESS)
        *win = w->handle;
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(comm, "MPI_Win_create", rc);
}
FR_PMPI(Win_create);

static int win_quiet(void *arg)
{
    fr_win *w = arg;
    return w->pending == 0 && w->target_pending == 0;
}

void fr_win_peers_free(fr_win *w)
{
    for (int r = 0; r < w->size; r++) {
        fr_peer *p = &w->peers[r];
        fr_opq_clear(&p->q);
        free(p->q.ops);
        fr_opq_clear(&p->cq);
        free(p->cq.ops);
        free(p->packed.buf);
        free(p->bumps);
        free(p->open_ops);
        free(p->types_drop);
        free(p->lane_last);
        fr_u64map_destroy(&p->types_sent);
        fr_am_peer_types_free(p);
        for (fr_held *h = p->held, *next; h; h = next) {
            next = h->next;
            free(h);
        }
    }
    for (int r = 0; r < w->size; r++)
        fr_regions_free(&w->peers[r].known);
    free(w->peers);
    w->peers = NULL;
}

void fr_win_close_channel(fr_win *w)
{
    fr_am_inbox_close(w);
    fr_direct_destroy(w);
    fr_chan_destroy(w);
}

static void win_destroy(fr_win *w)
{
    fr_win_close_channel(w);
    fr_adopt_release(&w->adopted); /* after the barrier of MPI_Win_free: nobody copies now */
    fr_notify_free(w);
    fr_counters_free(w);
    fr_shm_state_free(w); /* after the channel: dynwin re-creates that, never this */
    fr_req_win_gone(w);
    fr_shared_free(w); /* others' parts; the window's own memory, own_mem, goes later */
    fr_win_peers_free(w);
    fr_win_groups_free(w);
    free(w->lk_queue);
    free(w->lk_order);
    fr_regions_free(&w->attached);
    PMPI_Group_free(&w->group);
    fr_isend_release(w->comm); /* FLEXRMA_TEST_JITTER: nothing may start on a freed comm */
    PMPI_Comm_free(&w->comm);
    free(w);
}

FR_API int MPI_Win_free(MPI_Win *win)
{
    FR_WIN_ENTRY(win ? *win : MPI_WIN_NULL, FR_NEXT(Win_free)(win));
    if (fr_win_any_epoch(w))
        FR_WIN_EXIT("MPI_Win_free",
                    fr_errorf(FR_ERR_FREE_IN_EPOCH, "an access or exposure epoch is still open "
                                                    "on the window; close it before MPI_Win_free"));
    int active = fr_req_win_active(w);
    if (active)
        FR_WIN_EXIT("MPI_Win_free",
                    fr_errorf(FR_ERR_FREE_IN_EPOCH, "%d sync request(s) of this process are still "
                                                    "active on the window; complete them first",
                              active));
    /* Every member has closed its epochs before entering MPI_Win_free, so once all have entered
     * (the barrier) no more RMA can target this process; lock epochs of others on my window
     * ended when their unlock returned. Local completion of my own requests comes first. */
    fr_wait_until(win_quiet, w);
    fr_wait_barrier(w->comm);
    fr_stats_window_freed(w);
    fr_win_unregister(w);
    MPI_Win carrier = w->handle;
    fr_win_mem mem = w->own_mem; /* MPI_Win_allocate(_shared)'s: it goes with the window */
    win_destroy(w);
    int rc = fr_win_mem_free(&mem);
    FR_LEAVE();
    *win = MPI_WIN_NULL;
    FR_CHECK_MPI(FR_NEXT(Win_free)(&carrier));
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(MPI_COMM_WORLD, "MPI_Win_free", rc);
}
FR_PMPI(Win_free);

FR_API int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_get_group)(win, group));
    int rc = PMPI_Comm_group(w->comm, group);
    FR_WIN_EXIT("MPI_Win_get_group", rc);
}
FR_PMPI(Win_get_group);

FR_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_get_attr)(win, keyval, value, flag));
    void *answer = NULL;
    if (keyval == MPI_WIN_BASE)
        answer = w->base; /* the base itself, as MPI returns it */
    else if (keyval == MPI_WIN_SIZE)
        answer = &w->win_size;
    else if (keyval == MPI_WIN_DISP_UNIT)
        answer = &w->disp_unit;
    else if (keyval == MPI_WIN_CREATE_FLAVOR)
        answer = &w->attr_flavor;
    else if (keyval == MPI_WIN_MODEL)
        answer = &w->attr_model;
    else {
        FR_LEAVE();
        return FR_NEXT(Win_get_attr)(win, keyval, value, flag);
    }
    *(void **)value = answer;
    *flag = 1;
    FR_WIN_EXIT("MPI_Win_get_attr", MPI_SUCCESS);
}
FR_PMPI(Win_get_attr);
