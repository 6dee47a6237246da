/* win_shared.c - MPI_Win_allocate_shared and MPI_Win_shared_query (MPI-3.1 11.2.3): a flexrma
 * window over memory of the node that every member maps, so that each can load and store the
 * others' parts directly.
 *
 * The first member allocates the segment for all (node/shm_seg.h), the others map it
 * (node/shm_map.h); member r's part starts where r - 1's ends (contiguous, as MPI's default
 * asks), or on the next page with the info key alloc_shared_noncontig=true. Every member then
 * reaches the others' parts by plain copies (fr_direct_adopt_mapped) like any mapped window.
 * The window owns the segment (the first member) or its mapping (the others); MPI_Win_free
 * releases them. After MPI_Win_change_comm (ext/dynwin) a joiner's part lies in a segment of its
 * own, which the others map (fr_shared_map): each member's part stays where it was, so the parts
 * are no longer contiguous, and the window then also holds mappings of other members' segments
 * (fr_shared.maps). FLEXRMA_NATIVE_FLAVORS=shared leaves the call to the MPI library. */
#include "alloc_mem.h"
#include "core/next.h"
#include "node/node_comm.h"
#include "node/shm_map.h"
#include "progress/entry.h"
#include "transport/direct.h"
#include "win_create.h"
#include "win_shared.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

struct fr_shared {
    fr_shared_where mine;
    int noncontig;    /* made with alloc_shared_noncontig: an empty part has no address */
    int n;
    char **part;      /* by window rank: the member's part at its address here (NULL: none) */
    fr_win_mem *maps; /* by window rank: the mapping of its segment this window took, if any */
};

static fr_shared *shared_new(int n)
{
    fr_shared *s = fr_xcalloc(1, sizeof *s);
    s->n = n;
    s->part = fr_xcalloc((size_t)n, sizeof *s->part);
    s->maps = fr_xcalloc((size_t)n, sizeof *s->maps);
    return s;
}

void fr_shared_drop(fr_shared *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->n; r++)
        fr_win_mem_free(&s->maps[r]);
    free(s->maps);
    free(s->part);
    free(s);
}

void fr_shared_free(fr_win *w)
{
    fr_shared_drop(w->shared);
    w->shared = NULL;
}

void fr_shared_where_mine(const fr_win *w, fr_shared_where *out)
{
    *out = w->shared->mine;
}

int fr_shared_map(const fr_win *w, const fr_shared_where *all, int n, int me, fr_shared **out)
{
    const fr_shared_where *mine = &all[me];
    fr_shared *s = shared_new(n);
    s->mine = *mine;
    s->noncontig = w->shared->noncontig;
    int rc = MPI_SUCCESS;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        const fr_shared_where *at = &all[r];
        if (r == me)
            s->part[r] = w->base;
        else if (!at->pid) /* no memory anywhere in its window */
            s->part[r] = NULL;
        else if (mine->pid == at->pid && mine->seg.serial == at->seg.serial)
            s->part[r] = (char *)w->own_mem.addr + at->offset; /* in my own segment */
        else {
            fr_win_mem *m = &s->maps[r];
            rc = fr_peer_proc_open((pid_t)at->pid, &m->owner);
            if (rc == MPI_SUCCESS)
                rc = fr_seg_map_remote(m->owner, &at->seg, &m->addr);
            if (rc == MPI_SUCCESS) {
                m->kind = FR_BLOCK_MAPPED;
                m->serial = at->seg.serial;
                s->part[r] = (char *)m->addr + at->offset;
            } else if (m->owner) {
                fr_peer_proc_release(m->owner);
                m->owner = NULL;
            }
        }
    }
    if (rc != MPI_SUCCESS) {
        fr_shared_drop(s);
        return fr_errorf(FR_ERR_SHARED, "cannot map the memory of another member: %s",
                         fr_error_detail());
    }
    *out = s;
    return MPI_SUCCESS;
}

void fr_shared_adopt(fr_win *w, fr_shared *s)
{
    fr_shared_free(w);
    w->shared = s;
    fr_direct_adopt_mapped(w, s->part);
}

/* What the first member tells the others about the segment. */
typedef struct segment_info {
    int64_t rc;   /* MPI_SUCCESS, or why there is no segment */
    int64_t pid;  /* 0: no segment (every member's size is 0) */
    fr_seg_ref ref;
} segment_info;

/* Collective over comm: the segment of `total` bytes, made by comm's rank 0 and mapped by every
 * other member; *mem is what this process keeps of it, *where where the segment is (pid 0:
 * none, for total 0). The verdict is everyone's: a member that cannot map it makes every member
 * fail. */
static int share_segment(MPI_Comm comm, MPI_Aint total, fr_win_mem *mem, fr_shared_where *where)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    segment_info seg = {MPI_SUCCESS, total > 0 ? getpid() : 0, {0}};
    if (rank == 0 && total > 0) {
        seg.rc = fr_seg_alloc((size_t)total, &mem->addr);
        if (seg.rc == MPI_SUCCESS) {
            mem->kind = FR_BLOCK_SEG;
            fr_seg_no_spare(mem->addr); /* the others keep it if this process leaves */
            fr_seg_lookup(mem->addr, 0, &seg.ref);
        }
    }
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Ibcast(&seg, (int)sizeof seg, MPI_BYTE, 0, comm, &rq));
    fr_wait_request(&rq);
    *where = (fr_shared_where){.pid = seg.pid, .seg = seg.ref};
    if (seg.rc != MPI_SUCCESS)
        return fr_errorf(FR_ERR_SHARED, "the first member could not allocate a segment of %ld "
                                        "bytes", (long)total);
    int rc = MPI_SUCCESS;
    if (rank != 0 && total > 0) {
        rc = fr_peer_proc_open((pid_t)seg.pid, &mem->owner);
        if (rc == MPI_SUCCESS)
            rc = fr_seg_map_remote(mem->owner, &seg.ref, &mem->addr);
        if (rc == MPI_SUCCESS) {
            mem->kind = FR_BLOCK_MAPPED;
            mem->serial = seg.ref.serial;
        } else if (mem->owner) {
            fr_peer_proc_release(mem->owner);
            mem->owner = NULL;
        }
    }
    int first_failed, mine = rc == MPI_SUCCESS ? INT_MAX : rank;
    FR_CHECK_MPI(PMPI_Iallreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm, &rq));
    fr_wait_request(&rq);
    if (rank == 0 && total > 0)
        fr_seg_unlink_name(mem->addr); /* every member has mapped it, or given up */
    if (first_failed == INT_MAX)
        return MPI_SUCCESS;
    fr_win_mem_free(mem);
    return fr_errorf(FR_ERR_SHARED, "member %d cannot map the first member's segment (it may "
                                    "be on another node)", first_failed);
}

int fr_shared_one_node(MPI_Comm comm)
{
    MPI_Group node;
    int size, node_size, all = 0;
    PMPI_Comm_size(comm, &size);
    fr_node_group(comm, &node);
    PMPI_Group_size(node, &node_size);
    PMPI_Group_free(&node);
    int mine = node_size == size;
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm, &rq));
    fr_wait_request(&rq);
    return all;
}

FR_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                   void *baseptr, MPI_Win *win)
{
    if (!fr_active || (fr_opt.native_flavors & FR_FLAVOR_SHARED))
        return FR_NEXT(Win_allocate_shared)(size, disp_unit, info, comm, baseptr, win);
    FR_ENTER();
    int rc = fr_win_check_args(NULL, 0, disp_unit, comm);
    if (rc == MPI_SUCCESS && (!baseptr || !win))
        rc = fr_errorf(FR_ERR_ARG, "%s is NULL", baseptr ? "win" : "baseptr");
    else if (rc == MPI_SUCCESS && size < 0)
        rc = fr_errorf(FR_ERR_SIZE, "window size %ld is negative", (long)size);
    if (rc != MPI_SUCCESS) {
        FR_LEAVE();
        return fr_comm_raise(comm, "MPI_Win_allocate_shared", rc);
    }

    int n, rank;
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &rank);
    fr_wait_barrier(comm); /* every member is in this call before its collectives (win_create.h) */
    MPI_Aint *sizes = fr_xcalloc((size_t)n, sizeof *sizes);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&size, 1, MPI_AINT, sizes, 1, MPI_AINT, comm, &rq));
    fr_wait_request(&rq);
    int noncontig = fr_info_bool(info, "alloc_shared_noncontig", 0);
    MPI_Aint align = noncontig ? (MPI_Aint)sysconf(_SC_PAGESIZE) : 1, total = 0, mine_at = 0;
    for (int r = 0; r < n; r++) {
        if (r == rank)
            mine_at = total;
        total = (total + sizes[r] + align - 1) / align * align;
    }
    free(sizes);

    fr_win_mem mem = {NULL, FR_BLOCK_NONE, NULL, 0};
    fr_shared_where where = {0};
    fr_win *w = NULL;
    if (!fr_shared_one_node(comm))
        rc = fr_errorf(FR_ERR_SHARED, "the communicator spans more than one node");
    if (rc == MPI_SUCCESS)
        rc = share_segment(comm, total, &mem, &where);
    /* An empty part of a contiguous window has the address where the next part starts (MPI:
     * contiguous across ranks, so programs count addresses from it; Open MPI answers so); in a
     * non-contiguous one it has none, NULL, as both libraries answer. */
    char *base = mem.addr && (!noncontig || size > 0) ? (char *)mem.addr + mine_at : NULL;
    if (rc == MPI_SUCCESS)
        rc = fr_win_make(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, &w);
    if (rc == MPI_SUCCESS) {
        w->own_mem = mem;
        fr_shared *sh = shared_new(n);
        where.offset = mine_at;
        sh->mine = where;
        sh->noncontig = noncontig;
        MPI_Aint off = 0;
        for (int r = 0; r < n; r++) {
            if (mem.addr && (!noncontig || w->peers[r].size > 0))
                sh->part[r] = (char *)mem.addr + off;
            off = (off + w->peers[r].size + align - 1) / align * align;
        }
        fr_shared_adopt(w, sh);
        *(void **)baseptr = base;
        *win = w->handle;
    } else {
        fr_win_mem_free(&mem);
    }
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(comm, "MPI_Win_allocate_shared", rc);
}
FR_PMPI(Win_allocate_shared);

/* Member r's memory where this process loads and stores it, *size its bytes (0: none here).
 * Shared windows: its part. Others (MPI-4.1 allows the call on them): my own window, or a node
 * peer's window that this process maps whole (direct.c); else nothing. */
static char *member_at(fr_win *w, int r, MPI_Aint *size)
{
    if (w->attr_flavor == MPI_WIN_FLAVOR_SHARED) {
        *size = w->peers[r].size;
        return *size == 0 && w->shared->noncontig ? NULL : w->shared->part[r];
    }
    if (r == w->rank) {
        *size = w->win_size;
        return w->base;
    }
    char *at = w->peers[r].size > 0 ? fr_direct_window_at(w, r) : NULL;
    *size = at ? w->peers[r].size : 0;
    return at;
}

FR_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                void *baseptr)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_shared_query)(win, rank, size, disp_unit, baseptr));
    if (w->attr_flavor == MPI_WIN_FLAVOR_DYNAMIC) /* MPI-4.1 names the other three flavors */
        FR_WIN_EXIT("MPI_Win_shared_query",
                    fr_errorf(FR_ERR_FLAVOR, "MPI_Win_shared_query needs a window made by "
                                             "MPI_Win_allocate_shared, MPI_Win_allocate or "
                                             "MPI_Win_create; this one was made by %s",
                              fr_win_made_by(w)));
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        FR_WIN_EXIT("MPI_Win_shared_query",
                    fr_errorf(FR_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                              w->size));
    if (!size || !disp_unit || !baseptr)
        FR_WIN_EXIT("MPI_Win_shared_query",
                    fr_errorf(FR_ERR_ARG, "%s is NULL",
                              !size ? "size" : !disp_unit ? "disp_unit" : "baseptr"));
    int r = rank;
    MPI_Aint bytes = 0;
    char *at = NULL;
    if (r == MPI_PROC_NULL) { /* the first member with memory here; if none, rank 0's answer */
        for (r = 0; r < w->size; r++)
            if (w->peers[r].size > 0 && (at = member_at(w, r, &bytes)) && bytes > 0)
                break;
        if (r == w->size)
            r = 0, at = member_at(w, 0, &bytes);
    } else {
        at = member_at(w, r, &bytes);
    }
    *size = bytes;
    *disp_unit = w->peers[r].disp_unit;
    *(void **)baseptr = at;
    FR_WIN_EXIT("MPI_Win_shared_query", MPI_SUCCESS);
}
FR_PMPI(Win_shared_query);
