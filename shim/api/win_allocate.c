/* win_allocate.c - MPI_Win_allocate (MPI-3.1 11.2.2): a flexrma window over memory flexrma
 * allocates itself, as MPI_Alloc_mem does: a segment node peers map (unless
 * FLEXRMA_TRANSPORT=am, or the info key alloc_shm is false), so that they reach it by direct
 * copies and hardware atomics. The window owns the memory; MPI_Win_free frees it.
 * FLEXRMA_NATIVE_FLAVORS=allocate leaves the call to the MPI library. */
#include "alloc_mem.h"
#include "core/next.h"
#include "win_create.h"

FR_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    if (!fr_active || (fr_opt.native_flavors & FR_FLAVOR_ALLOCATE))
        return FR_NEXT(Win_allocate)(size, disp_unit, info, comm, baseptr, win);
    FR_ENTER();
    void *base = NULL;
    fr_block_kind kind = FR_BLOCK_NONE;
    fr_win *w = NULL;
    int rc = MPI_SUCCESS;
    if (!baseptr || !win)
        rc = fr_errorf(FR_ERR_ARG, "%s is NULL", baseptr ? "win" : "baseptr");
    else if (size < 0)
        rc = fr_errorf(FR_ERR_SIZE, "window size %ld is negative", (long)size);
    else
        rc = fr_block_alloc(size, fr_info_bool(info, "alloc_shm", 1), &base, &kind);
    if (rc == MPI_SUCCESS)
        rc = fr_win_make(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, &w);
    if (rc == MPI_SUCCESS) {
        w->own_mem = (fr_win_mem){base, kind, NULL, 0};
        *(void **)baseptr = base;
        *win = w->handle;
    } else if (base) {
        fr_block_free(base, kind);
    }
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(comm, "MPI_Win_allocate", rc);
}
FR_PMPI(Win_allocate);
