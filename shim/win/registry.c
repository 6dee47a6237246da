/* registry.c - the live flexrma windows: the map from the handle a user holds (the carrier) to
 * its fr_win, looked up on every call, and the list the progress engine serves. */
#include "win.h"
#include "core/mpi_compat.h"

fr_win *fr_windows;
int fr_nwindows; /* stored atomically: fr_progress_needed reads it without the engine lock */
static fr_u64map win_map;  /* carrier handle -> fr_win */
static fr_win *last_found; /* a program uses one window call after call; under the engine lock */

fr_win *fr_win_lookup(MPI_Win handle)
{
    fr_win *w = last_found;
    if (w && w->handle == handle)
        return w;
    if (handle == MPI_WIN_NULL)
        return NULL;
    w = fr_u64map_get(&win_map, fr_handle_key(handle));
    if (w)
        last_found = w;
    return w;
}

void fr_win_register(fr_win *w)
{
    fr_u64map_put(&win_map, fr_handle_key(w->handle), w);
    w->prev = NULL;
    w->next = fr_windows;
    if (fr_windows)
        fr_windows->prev = w;
    fr_windows = w;
    __atomic_store_n(&fr_nwindows, fr_nwindows + 1, __ATOMIC_RELAXED);
}

void fr_win_unregister(fr_win *w)
{
    if (last_found == w)
        last_found = NULL;
    fr_u64map_del(&win_map, fr_handle_key(w->handle));
    if (w->prev)
        w->prev->next = w->next;
    else
        fr_windows = w->next;
    if (w->next)
        w->next->prev = w->prev;
    __atomic_store_n(&fr_nwindows, fr_nwindows - 1, __ATOMIC_RELAXED);
}

int fr_not_flexrma_win(MPI_Win win, const char *call)
{
    if (!fr_active)
        return MPI_ERR_WIN; /* flexrma is disabled: its error codes are not registered */
    int rc = fr_errorf(FR_ERR_WIN, "%s needs a window made by flexrma (MPI_Win_create or "
                                   "MPI_Win_allocate)%s", call,
                       win == MPI_WIN_NULL     ? " (got MPI_WIN_NULL)"
                       : fr_opt.native_flavors ? "; FLEXRMA_NATIVE_FLAVORS leaves some to the MPI"
                                                 " library"
                                               : "");
    if (win == MPI_WIN_NULL)
        return fr_comm_raise(MPI_COMM_WORLD, call, rc);
    return fr_handle_raise(win, call, rc);
}
