/* completion.c - completion accounting at the target: each origin's operations are numbered in
 * the order they start here, and ops_done is the longest prefix of them that is complete (a
 * count would let a later small operation stand in for an earlier large one still in flight).
 * It is what the closing packets (COMPLETE, UNLOCK, FENCE_DONE, BUMP) wait for. */
#include "transport.h"

uint64_t fr_target_op_begin(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    fr_grow(&p->open_ops, &p->cap_open, p->nopen + 1, sizeof *p->open_ops);
    p->open_ops[p->nopen++] = ++p->ops_run;
    return p->ops_run;
}

void fr_target_op_done(fr_win *w, int src, fr_epoch epoch, uint64_t number)
{
    fr_peer *p = &w->peers[src];
    if (number == 0) {
        ++p->ops_run;
    } else {
        size_t i = 0;
        while (i < p->nopen && p->open_ops[i] != number)
            i++;
        if (i == p->nopen)
            fr_fatal("operation %llu of rank %d completed twice", (unsigned long long)number, src);
        for (; i + 1 < p->nopen; i++)
            p->open_ops[i] = p->open_ops[i + 1];
        p->nopen--;
    }
    p->ops_done = p->nopen ? p->open_ops[0] - 1 : p->ops_run;
    if (epoch == FR_EPOCH_FENCE)
        w->fence_done++;
    /* The prefix may have grown past what an UNLOCK or a BUMP waits for, whatever the epoch of
     * the operation that completed. */
    fr_proto.ops_done(w, src);
}
