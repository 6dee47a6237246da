/* model.c - what every window holds after an epoch, and what every get and fetch returns.
 *
 * The blocks of an epoch are disjoint and each is used in one way (random.h), so applying the
 * origins' programs one origin after another, each in program order, gives the only outcome MPI
 * allows: a PUT block has one writer, a GET block none, an ACC1 block one origin whose
 * accumulates MPI orders, and an ACCN block's accumulates commute.
 *
 * A change epoch (plan.c) moves no data: every process keeps its memory, leavers too
 * (docs/specification.md section 11), so the model stays keyed by world rank and only the
 * membership changes (model_change), except that a joiner bringing a new window brings new
 * contents, drawn from the seed here. */
#include "random.h"

#include <stdio.h>
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

static void store(unsigned char *p, int esize, uint64_t v)
{
    if (esize == 4) {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/* What MPI defines, computed here in C on unsigned integers: the reference flexrma is checked
 * against, also where the MPI library itself is wrong (MPICH 4.0.2 compares unsigned integers as
 * signed in MPI_MIN and MPI_MAX, pmodels/mpich#6083; flexrma does not, core/mpi_compat.c). */
static uint64_t combine(int mop, uint64_t old, uint64_t in, int esize)
{
    uint64_t mask = esize == 4 ? 0xffffffffull : ~0ull;
    switch (mop) {
    case 0: return (old + in) & mask;
    case 1: return (old * in) & mask;
    case 2: return old > in ? old : in;
    case 3: return old < in ? old : in;
    case 4: return old & in;
    case 5: return old | in;
    case 6: return old ^ in;
    case 7: return in;
    default: return old; /* MPI_NO_OP */
    }
}

/* An accumulate of any kind: each target element combined with the origin's, fetched first
 * where the operation fetches. */
static void accumulate(unsigned char *win, op *o)
{
    const size_t s = (size_t)o->esize;
    for (int i = 0; i < o->tl.n; i++) {
        unsigned char *t = win + (size_t)layout_at(&o->tl, i) * s;
        uint64_t in = load(o->obuf + (size_t)layout_at(&o->ol, i) * s, o->esize);
        if (o->kind != OP_ACC)
            memcpy(o->expect + (size_t)layout_at(&o->rl, i) * s, t, s);
        store(t, o->esize, combine(o->mop, load(t, o->esize), in, o->esize));
    }
}

static void apply(program *p, op *o)
{
    unsigned char *win = p->model[p->member[o->target]] + o->toff;
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

/* The contents a joiner's new window brings in change epoch `index`. */
static void fresh_contents(const program *p, int index, int w, unsigned char *buf, size_t n)
{
    rng c = {seed_mix(p->seed ^ 0x6672657368ull, (uint64_t)index * 4096u + (uint64_t)w)};
    fill_random(&c, buf, n);
}

void model_epoch(program *p, epoch *e, int index)
{
    if (e->kind == EK_CHANGE) {
        for (int w = 0; w < p->nprocs; w++)
            if (e->fresh[w]) {
                p->bytes_of[w] = e->fresh_bytes[w];
                p->unit_of[w] = e->fresh_unit[w];
                free(p->model[w]);
                p->model[w] = malloc(p->bytes_of[w]);
                if (!p->model[w]) {
                    fprintf(stderr, "t_random: out of memory\n");
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                fresh_contents(p, index, w, p->model[w], p->bytes_of[w]);
            }
        return;
    }
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++)
            apply(p, &e->prog[o][i]);
}

void model_change(program *p, const epoch *e)
{
    for (int w = 0; w < p->nprocs; w++)
        p->wrank_of[w] = e->new_rank[w];
    memcpy(p->member, e->new_member, (size_t)e->nnew * sizeof *p->member);
    p->nmembers = e->nnew;
    p->wrank = p->wrank_of[p->rank];
}
