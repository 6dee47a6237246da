/* model.c - what every window holds after an epoch, and what every get and fetch returns.
 *
 * The blocks of an epoch are disjoint and each is used in one way (random.h), so applying the
 * origins' programs one origin after another, each in program order, gives the only outcome MPI
 * allows: a PUT block has one writer, a GET block none, an ACC1 block one origin whose
 * accumulates MPI orders, and an ACCN block's accumulates commute. */
#include "random.h"

#include <stdlib.h>
#include <string.h>

/* The first seven are commutative and associative (ACCN blocks draw from them); MPI_REPLACE and
 * MPI_NO_OP are not; MPI_NO_OP is last (fetching operations only). */
const MPI_Op model_ops[] = {MPI_SUM,  MPI_PROD, MPI_MAX,     MPI_MIN,  MPI_BAND,
                            MPI_BOR,  MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
const char *const model_op_names[] = {"MPI_SUM",  "MPI_PROD", "MPI_MAX",     "MPI_MIN",  "MPI_BAND",
                                      "MPI_BOR",  "MPI_BXOR", "MPI_REPLACE", "MPI_NO_OP"};
int model_op_count(void) { return (int)(sizeof model_ops / sizeof *model_ops); }

static uint64_t load(const unsigned char *p, int esize)
{
    if (esize == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* An accumulate of any kind: the target's elements combined with the origin's, fetched first
 * where the operation fetches. The combining is the MPI library's own (MPI_Reduce_local), as
 * flexrma's is (dtype/acc.c): MPICH 4.0.2 compares unsigned integers as signed in MPI_MIN and
 * MPI_MAX (pmodels/mpich#6083), and with flexrma preloaded a program must get what the library
 * alone would give it. */
static void accumulate(unsigned char *win, op *o)
{
    const size_t s = (size_t)o->esize, n = (size_t)o->tl.n;
    unsigned char *old = malloc(n * s), *in = malloc(n * s);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *t = win + (size_t)layout_at(&o->tl, (int)i) * s;
        memcpy(old + i * s, t, s);
        memcpy(in + i * s, o->obuf + (size_t)layout_at(&o->ol, (int)i) * s, s);
        if (o->kind != OP_ACC)
            memcpy(o->expect + (size_t)layout_at(&o->rl, (int)i) * s, t, s);
    }
    if (model_ops[o->mop] == MPI_REPLACE)
        memcpy(old, in, n * s);
    else if (model_ops[o->mop] != MPI_NO_OP) /* MPI_Reduce_local knows neither of those two */
        MPI_Reduce_local(in, old, (int)n, o->esize == 4 ? MPI_UINT32_T : MPI_UINT64_T,
                         model_ops[o->mop]);
    for (size_t i = 0; i < n; i++)
        memcpy(win + (size_t)layout_at(&o->tl, (int)i) * s, old + i * s, s);
    free(old);
    free(in);
}

static void apply(program *p, op *o)
{
    unsigned char *win = p->model[o->target] + o->toff;
    const size_t s = (size_t)o->esize;
    switch (o->kind) {
    case OP_PUT:
        for (int i = 0; i < o->tl.n; i++)
            memcpy(win + (size_t)layout_at(&o->tl, i) * s, o->obuf + (size_t)layout_at(&o->ol, i) * s,
                   s);
        break;
    case OP_GET:
        for (int i = 0; i < o->tl.n; i++)
            memcpy(o->expect + (size_t)layout_at(&o->ol, i) * s, win + (size_t)layout_at(&o->tl, i) * s,
                   s);
        break;
    case OP_ACC:
    case OP_GACC:
    case OP_FOP:
        accumulate(win, o);
        break;
    case OP_CAS:
        memcpy(o->expect, win, s);
        if (load(win, o->esize) == load(o->cbuf, o->esize))
            memcpy(win, o->obuf, s);
        break;
    default:
        break;
    }
}

void model_epoch(program *p, epoch *e)
{
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++)
            apply(p, &e->prog[o][i]);
}
