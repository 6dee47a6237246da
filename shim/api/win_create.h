/* win_create.h - the steps of window creation and destruction, shared with membership changes
 * (ext/dynwin), which rebuild a live window in place. */
#ifndef FR_WIN_CREATE_H
#define FR_WIN_CREATE_H

#include "win/win.h"

/* Collective over comm: a flexrma window of the given flavor (MPI_WIN_FLAVOR_*) over
 * [base, base + size), registered; errors as MPI_Win_create's, raised by the caller. */
int fr_win_make(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                int flavor, fr_win **out);
/* The local checks of window creation (communicator, size, unit, base): MPI_SUCCESS or the
 * error to raise on comm. */
int fr_win_check_args(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm);
/* The call that made w ("MPI_Win_create", ...), for messages. */
const char *fr_win_made_by(const fr_win *w);
uint64_t fr_win_draw_uid(void);
/* w->comm: a private duplicate of comm with MPI_ERRORS_RETURN; rank, size, group, data tags.
 * The first collective of window creation: it serves others (progress) until every member of
 * comm has entered it. */
void fr_win_bind_comm(fr_win *w, MPI_Comm comm);
/* w->peers for w->size members, empty protocol state; the caller fills size, unit, identity. */
void fr_win_peers_alloc(fr_win *w);
void fr_win_peers_free(fr_win *w);
/* Collective over w->comm: the packet channel, every member's transport and single-copy access
 * (fr_chan_create, fr_transport_select, fr_chan_agree, fr_direct_setup); the window's result. */
int fr_win_open_channel(fr_win *w);
/* Undo fr_win_open_channel (MPI_Win_free, a membership change). */
void fr_win_close_channel(fr_win *w);
/* The error for a member r whose FLEXRMA_TRANSPORT (mode_r) is not rank 0's (mode_0). */
int fr_win_transport_differs(int r, int mode_r, int mode_0);

#endif
