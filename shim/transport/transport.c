/* transport.c - the one place where the transport of each target is chosen.
 *
 * Per target: itself (self), a node peer whose incoming ring this process could attach to, or
 * in a window that attaches on first use will attach to (shm, unless FLEXRMA_TRANSPORT=am, in
 * which case fr_chan_create made no rings), anyone else (am).
 * A pair keeps its transport for the window's life: batches from one origin must arrive in
 * order, and a ring and a message would not keep it between them. */
#include "transport.h"

fr_protocol fr_proto;

void fr_transport_select(fr_win *w)
{
    for (int r = 0; r < w->size; r++) {
        const fr_transport *tp = &fr_tp_am;
        if (r == w->rank)
            tp = &fr_tp_self;
        else if (w->peers[r].chan && fr_opt.transport != FR_TRANSPORT_AM)
            tp = &fr_tp_shm;
        w->peers[r].tp = tp;
    }
}
