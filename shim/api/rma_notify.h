/* rma_notify.h - an RMA operation with a counter bump behind it: the one core of notified RMA
 * (MPI_Put_notify, MPI_Get_notify: rma_notify.c; MPIX_Put_notify...: ext/notify) and of
 * MPIX_Put_signal (ext/iops). */
#ifndef FR_RMA_NOTIFY_H
#define FR_RMA_NOTIFY_H

#include "win/win.h"

/* How the bump went. */
typedef struct fr_bumped {
    int applied;      /* an atomic in the owner's shared word: nothing to acknowledge */
    int applied_rc;   /* ... its result (an error if the owner freed the counter) */
    uint64_t ack_seq; /* a BUMP packet that asked for this acknowledgement (want_ack), or 0 */
} fr_bumped;

/* Issue op (prepared by fr_rma_prepare; op->bytes may be 0, op->epoch set, op->req set for a
 * request) to target like any operation of its epoch, then everything of mine to target in that
 * epoch (or in counter epochs, for a counter epoch's op) at once, and behind it a bump of target's counter `key`, which the target applies only once op
 * (and everything of mine to it before) is complete there: an atomic when target is a settled
 * node peer, else a BUMP packet in the same batch, acknowledged when want_ack. In a lock epoch
 * whose lock may not be requested yet (an earlier lock of mine is not granted), waits for it.
 * target must be a member (not MPI_PROC_NULL). */
int fr_rma_bumped(fr_win *w, int target, fr_op *op, uint64_t key, int want_ack, fr_bumped *out);

/* A notified put or get (kind FR_OP_PUT or FR_OP_GET) to target's counter idx: checked like
 * MPI_Put, in its epoch, then fr_rma_bumped. ompi: Open MPI's MPIX_ calls, whose ids are
 * checked against MPIX_MAX_NOTIFICATION_IDX and which, on a window without notification
 * counters at the caller, are the plain operation (ext/notify). */
int fr_rma_notified(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                    int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, int idx,
                    int ompi);

#endif
