/* win_shared.c - MPI_Win_allocate_shared and MPI_Win_shared_query (MPI-3.1 11.2.3): a flexrma
 * window over one segment of the node, which every member maps, so that each can load and store
 * the others' parts directly.
 *
 * The first member allocates the segment for all (node/shm_seg.h), the others map it
 * (node/shm_map.h); member r's part starts where r - 1's ends (contiguous, as MPI's default
 * asks), or on the next page with the info key alloc_shared_noncontig=true. Every member then
 * reaches the others' parts by plain copies (fr_direct_adopt_mapped) like any mapped window.
 * The window owns the segment (the first member) or its mapping (the others); MPI_Win_free
 * releases them. FLEXRMA_NATIVE_FLAVORS=shared leaves the call to the MPI library. */
#include "alloc_mem.h"
#include "core/next.h"
#include "node/shm_map.h"
#include "progress/entry.h"
#include "transport/direct.h"
#include "win_create.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

/* Where member r's part starts in the segment. */
static MPI_Aint part_offset(const fr_win *w, int r)
{
    MPI_Aint off = 0, align = w->shared_noncontig ? (MPI_Aint)sysconf(_SC_PAGESIZE) : 1;
    for (int i = 0; i < r; i++)
        off = (off + w->peers[i].size + align - 1) / align * align;
    return off;
}

/* What the first member tells the others about the segment. */
typedef struct segment_info {
    int64_t rc;   /* MPI_SUCCESS, or why there is no segment */
    int64_t pid;
    fr_seg_ref ref;
} segment_info;

/* Collective over comm: the segment of `total` bytes, made by comm's rank 0 and mapped by every
 * other member; *mem is what this process keeps of it. The verdict is everyone's: a member that
 * cannot map it makes every member fail. */
static int share_segment(MPI_Comm comm, MPI_Aint total, fr_win_mem *mem)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    segment_info seg = {MPI_SUCCESS, getpid(), {0}};
    if (rank == 0 && total > 0) {
        seg.rc = fr_seg_alloc((size_t)total, &mem->addr);
        if (seg.rc == MPI_SUCCESS) {
            mem->kind = FR_BLOCK_SEG;
            fr_seg_lookup(mem->addr, 0, &seg.ref);
        }
    }
    FR_CHECK_MPI(FR_NEXT(Bcast)(&seg, (int)sizeof seg, MPI_BYTE, 0, comm));
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
    FR_CHECK_MPI(FR_NEXT(Allreduce)(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm));
    if (rank == 0 && total > 0)
        fr_seg_unlink_name(mem->addr); /* every member has mapped it, or given up */
    if (first_failed == INT_MAX)
        return MPI_SUCCESS;
    fr_win_mem_free(mem);
    return fr_errorf(FR_ERR_SHARED, "member %d cannot map the first member's segment (it may "
                                    "be on another node)", first_failed);
}

/* Every member of comm is on this process's node. Collective. */
static int one_node(MPI_Comm comm)
{
    MPI_Comm node;
    int size, node_size, all = 0;
    PMPI_Comm_size(comm, &size);
    FR_CHECK_MPI(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PMPI_Comm_size(node, &node_size);
    PMPI_Comm_free(&node);
    int mine = node_size == size;
    FR_CHECK_MPI(FR_NEXT(Allreduce)(&mine, &all, 1, MPI_INT, MPI_LAND, comm));
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
    MPI_Aint *sizes = fr_xcalloc((size_t)n, sizeof *sizes);
    FR_CHECK_MPI(FR_NEXT(Allgather)(&size, 1, MPI_AINT, sizes, 1, MPI_AINT, comm));
    int noncontig = fr_info_bool(info, "alloc_shared_noncontig", 0);
    MPI_Aint align = noncontig ? (MPI_Aint)sysconf(_SC_PAGESIZE) : 1, total = 0, mine_at = 0;
    for (int r = 0; r < n; r++) {
        if (r == rank)
            mine_at = total;
        total = (total + sizes[r] + align - 1) / align * align;
    }
    free(sizes);

    fr_win_mem mem = {NULL, FR_BLOCK_NONE, NULL, 0};
    fr_win *w = NULL;
    if (!one_node(comm))
        rc = fr_errorf(FR_ERR_SHARED, "the communicator spans more than one node");
    if (rc == MPI_SUCCESS)
        rc = share_segment(comm, total, &mem);
    char *base = mem.addr ? (char *)mem.addr + mine_at : NULL;
    if (rc == MPI_SUCCESS)
        rc = fr_win_make(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, &w);
    if (rc == MPI_SUCCESS) {
        w->own_mem = mem;
        w->shared_base = mem.addr;
        w->shared_noncontig = noncontig;
        char **parts = fr_xcalloc((size_t)n, sizeof *parts);
        for (int r = 0; r < n && w->shared_base; r++)
            parts[r] = w->shared_base + part_offset(w, r);
        fr_direct_adopt_mapped(w, parts);
        free(parts);
        *(void **)baseptr = base;
        *win = w->handle;
    } else {
        fr_win_mem_free(&mem);
    }
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(comm, "MPI_Win_allocate_shared", rc);
}
FR_PMPI(Win_allocate_shared);

FR_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                void *baseptr)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_shared_query)(win, rank, size, disp_unit, baseptr));
    if (w->attr_flavor != MPI_WIN_FLAVOR_SHARED)
        FR_WIN_EXIT("MPI_Win_shared_query",
                    fr_errorf(FR_ERR_FLAVOR, "MPI_Win_shared_query needs a window made by "
                                             "MPI_Win_allocate_shared; this one was made by %s",
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
    if (r == MPI_PROC_NULL) /* the first member with memory; if none, rank 0 (size 0) */
        for (r = 0; r < w->size - 1 && w->peers[r].size == 0; r++)
            ;
    *size = w->peers[r].size;
    *disp_unit = w->peers[r].disp_unit;
    *(void **)baseptr = w->shared_base ? w->shared_base + part_offset(w, r) : NULL;
    FR_WIN_EXIT("MPI_Win_shared_query", MPI_SUCCESS);
}
FR_PMPI(Win_shared_query);
