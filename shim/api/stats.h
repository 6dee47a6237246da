/* stats.h - FLEXRMA_STATS=1: what flexrma did, per window, printed at MPI_Finalize. It is how a
 * user (and the interposition test) sees that flexrma, not the MPI library, handled the calls. */
#ifndef FR_STATS_H
#define FR_STATS_H

#include "win/win.h"

void fr_stats_window_freed(const fr_win *w); /* keep w's totals for the final report */
void fr_stats_print(void);                   /* at MPI_Finalize: freed and live windows */

#endif
