/* other_flavors.c - the calls MPI defines only for windows of another flavor, on a flexrma
 * window (flavor create, allocate or shared): MPI_Win_attach and MPI_Win_detach (dynamic
 * windows). They fail with MPI_ERR_RMA_FLAVOR naming the call, as Open MPI answers on its own
 * windows of those flavors; on a window of the MPI library they pass through untouched.
 * (MPI_Win_shared_query on a window not shared: win_shared.c.) */
#include "core/next.h"
#include "progress/entry.h"
#include "win_create.h"

#define FR_WRONG_FLAVOR(name, flavor, params, args, win_arg)                                      \
    FR_API int MPI_##name params                                                                  \
    {                                                                                             \
        FR_WIN_ENTRY(win_arg, FR_NEXT(name) args);                                                \
        FR_WIN_EXIT("MPI_" #name,                                                                 \
                    fr_errorf(FR_ERR_FLAVOR, "MPI_" #name " needs a window made by " flavor      \
                                             "; this one was made by %s", fr_win_made_by(w)));           \
    }                                                                                             \
    FR_PMPI(name);

FR_WRONG_FLAVOR(Win_attach, "MPI_Win_create_dynamic", (MPI_Win win, void *base, MPI_Aint size),
                (win, base, size), win)
FR_WRONG_FLAVOR(Win_detach, "MPI_Win_create_dynamic", (MPI_Win win, const void *base),
                (win, base), win)
