/* other_flavors.c - the calls MPI defines only for windows of another flavor, on a flexrma
 * window (flavor create or allocate): MPI_Win_attach and MPI_Win_detach (dynamic windows),
 * MPI_Win_shared_query (shared windows). They fail with MPI_ERR_RMA_FLAVOR naming the call, as
 * Open MPI answers on its own create windows; on a window of the MPI library they pass through
 * untouched. */
#include "core/next.h"
#include "progress/entry.h"

static const char *made_by(const fr_win *w)
{
    return w->attr_flavor == MPI_WIN_FLAVOR_ALLOCATE ? "MPI_Win_allocate" : "MPI_Win_create";
}

#define FR_WRONG_FLAVOR(name, flavor, params, args, win_arg)                                      \
    FR_API int MPI_##name params                                                                  \
    {                                                                                             \
        FR_WIN_ENTRY(win_arg, FR_NEXT(name) args);                                                \
        FR_WIN_EXIT("MPI_" #name,                                                                 \
                    fr_errorf(FR_ERR_FLAVOR, "MPI_" #name " needs a window made by " flavor      \
                                             "; this one was made by %s", made_by(w)));           \
    }                                                                                             \
    FR_PMPI(name);

FR_WRONG_FLAVOR(Win_attach, "MPI_Win_create_dynamic", (MPI_Win win, void *base, MPI_Aint size),
                (win, base, size), win)
FR_WRONG_FLAVOR(Win_detach, "MPI_Win_create_dynamic", (MPI_Win win, const void *base),
                (win, base), win)
FR_WRONG_FLAVOR(Win_shared_query, "MPI_Win_allocate_shared",
                (MPI_Win win, int rank, MPI_Aint *size, int *du, void *bp),
                (win, rank, size, du, bp), win)
