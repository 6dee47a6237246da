/* transport.c - the one place where the transport of each target is chosen. */
#include "transport.h"

void fr_transport_select(fr_win *w)
{
    for (int r = 0; r < w->size; r++)
        w->peers[r].tp = r == w->rank ? &fr_tp_self : &fr_tp_am;
}
