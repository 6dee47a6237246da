/* win_dynamic.c - MPI_Win_create_dynamic, MPI_Win_attach and MPI_Win_detach (MPI-3.1 11.2.4): a
 * flexrma window without memory, to which each member attaches regions of its own memory at any
 * time; origins address a target's memory by absolute address (MPI_Get_address), displacement
 * unit 1.
 *
 * Attach and detach are local: they change this member's region table (win/regions.c), which
 * the target checks every operation against before touching memory (transport/am_recv.c,
 * local.c), and which origins learn when they need it (transport/regions_fetch.c). A region
 * inside one of this member's shared segments (MPI_Alloc_mem memory) is also published in a
 * slot of its state page, for node peers that map the segment and copy into it directly until
 * the detach empties the slot (transport/direct.c); operations on other regions travel as
 * packets or messages. On a window of another flavor, MPI_Win_attach and MPI_Win_detach fail with MPI_ERR_RMA_FLAVOR, as Open
 * MPI answers on its own windows. FLEXRMA_NATIVE_FLAVORS=dynamic leaves the window to the MPI
 * library. */
#include "core/next.h"
#include "progress/entry.h"
#include "transport/direct.h"
#include "win_create.h"

FR_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    if (!fr_active || (fr_opt.native_flavors & FR_FLAVOR_DYNAMIC))
        return FR_NEXT(Win_create_dynamic)(info, comm, win);
    FR_ENTER();
    fr_win *w = NULL;
    int rc = win ? fr_win_make(NULL, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, &w)
                 : fr_errorf(FR_ERR_ARG, "win is NULL");
    if (rc == MPI_SUCCESS)
        *win = w->handle;
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(comm, "MPI_Win_create_dynamic", rc);
}
FR_PMPI(Win_create_dynamic);

static int not_dynamic(const fr_win *w, const char *call)
{
    return fr_errorf(FR_ERR_FLAVOR, "%s needs a window made by MPI_Win_create_dynamic; this one "
                                    "was made by %s", call, fr_win_made_by(w));
}

FR_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_attach)(win, base, size));
    int rc = MPI_SUCCESS;
    if (w->attr_flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = not_dynamic(w, "MPI_Win_attach");
    else if (size < 0)
        rc = fr_errorf(FR_ERR_SIZE, "attaching %ld bytes", (long)size);
    else if (size > 0 && !base)
        rc = fr_errorf(FR_ERR_ARG, "attaching %ld bytes at a NULL address", (long)size);
    else { /* even 0 bytes: MPI_Win_detach of it must work */
        fr_region r = {.base = (uint64_t)(uintptr_t)base, .size = (uint64_t)size};
        fr_direct_region_attached(w, &r);
        rc = fr_regions_add(&w->attached, &r);
        if (rc != MPI_SUCCESS)
            fr_direct_region_detached(w, &r);
    }
    FR_WIN_EXIT("MPI_Win_attach", rc);
}
FR_PMPI(Win_attach);

FR_API int MPI_Win_detach(MPI_Win win, const void *base)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_detach)(win, base));
    fr_region gone;
    int rc = w->attr_flavor != MPI_WIN_FLAVOR_DYNAMIC
                 ? not_dynamic(w, "MPI_Win_detach")
                 : fr_regions_remove(&w->attached, (uint64_t)(uintptr_t)base, &gone);
    if (rc == MPI_SUCCESS)
        fr_direct_region_detached(w, &gone);
    FR_WIN_EXIT("MPI_Win_detach", rc);
}
FR_PMPI(Win_detach);
