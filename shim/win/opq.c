/* opq.c - the per-target queue of operations waiting for the closing synchronization. */
#include "win.h"

void fr_opq_push(fr_opq *q, const fr_op *op)
{
    fr_grow(&q->ops, &q->cap, q->n + 1, sizeof *q->ops);
    q->ops[q->n++] = *op;
    fr_dtype_retain(op->origin_dt);
    fr_dtype_retain(op->target_dt);
    if (op->result_dt)
        fr_dtype_retain(op->result_dt);
}

void fr_op_release(fr_op *op)
{
    fr_dtype_release(op->origin_dt);
    fr_dtype_release(op->target_dt);
    if (op->result_dt)
        fr_dtype_release(op->result_dt);
    op->origin_dt = op->target_dt = op->result_dt = NULL;
}

void fr_opq_clear(fr_opq *q)
{
    for (size_t i = 0; i < q->n; i++)
        fr_op_release(&q->ops[i]);
    q->n = 0;
}
