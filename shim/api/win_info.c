/* win_info.c - MPI_Win_get_info and MPI_Win_set_info on flexrma windows (MPI-3.1 11.2.7).
 *
 * The hints live in the flexrma window (win/hints.c), not in the carrier, whose info would
 * describe a zero-byte window of the MPI library. MPI_Win_get_info returns every key MPI
 * defines for windows with the value in use; MPI_Win_set_info changes the keys it names and
 * leaves the others, and is collective only by MPI's rules: flexrma needs no agreement, since
 * every hint it acts on changes what the calling process does as an origin. */
#include "core/next.h"
#include "progress/entry.h"

FR_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_get_info)(win, info_used));
    int rc = info_used ? fr_win_hints_info(&w->hints, info_used)
                       : fr_errorf(FR_ERR_ARG, "info_used is NULL");
    FR_WIN_EXIT("MPI_Win_get_info", rc);
}
FR_PMPI(Win_get_info);

FR_API int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_set_info)(win, info));
    fr_win_hints_read(&w->hints, info);
    FR_WIN_EXIT("MPI_Win_set_info", MPI_SUCCESS);
}
FR_PMPI(Win_set_info);
