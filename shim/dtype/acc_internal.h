/* acc_internal.h - what acc.c (walking an accumulate's target elements in batches) and
 * acc_shared.c (combining them where other processes may combine at the same time) share. */
#ifndef FR_ACC_INTERNAL_H
#define FR_ACC_INTERNAL_H

#include "acc.h"

#include <stdint.h>

/* Consecutive target elements: n elements of the element type from at, one extent apart; their
 * origin operands are elements k0 .. k0 + n - 1 of the batch. */
typedef struct acc_piece {
    char *at;
    size_t n;
    size_t k0;
} acc_piece;

/* A list of pieces: a few in place, more on the heap (only scattered layouts need many). */
typedef struct acc_pieces {
    acc_piece *heap;        /* NULL: the list is `few` */
    size_t n, cap;
    acc_piece few[4];
} acc_pieces;
static inline acc_piece *fr_acc_pieces(acc_pieces *l) { return l->heap ? l->heap : l->few; }
void fr_acc_pieces_add(acc_pieces *l, acc_piece x);
void fr_acc_pieces_free(acc_pieces *l);

/* One application of an accumulate. */
typedef struct acc_run {
    const fr_dtype *e;      /* the element type */
    MPI_Op op;
    int int_sum;            /* MPI_SUM on an integer type: fetch-and-add does it */
    int atomic;             /* e fits one hardware atomic (fr_acc_atomic_width) */
    size_t align;           /* alignment MPI_Reduce_local may assume for an array of e */
    fr_acc_share *share;    /* NULL: nobody else combines into this memory */
    char *target;           /* the target buffer address (element displacements start there) */
    const unsigned char *packed; /* origin operands, packed; NULL for MPI_NO_OP */
    unsigned char *fetch;   /* NULL, or where the values before go, packed (Get_accumulate) */
    /* the batch being collected */
    size_t chunk;           /* elements per batch */
    acc_pieces pieces;
    size_t nelems, first;   /* first: packed index of the batch's first element */
    unsigned char *in, *io, *old; /* scratch arrays of chunk elements of e, made on demand */
    acc_pieces group;       /* acc_shared.c: the pieces of one stripe */
} acc_run;

/* Is p aligned as MPI_Reduce_local may assume for the run's elements? (a->align is a power of
 * two: a mask, not a division, which was a sixth of an accumulate's setup.) */
static inline int fr_acc_aligned(const acc_run *a, const void *p)
{
    return ((uintptr_t)p & (a->align - 1)) == 0;
}

/* A scratch array of a->chunk elements of e in *p, allocated on first use. */
unsigned char *fr_acc_scratch(const acc_run *a, unsigned char **p);
/* inout[i] = in[i] op inout[i] for n elements of e (aligned arrays): MPI_Reduce_local. */
int fr_acc_reduce_local(const acc_run *a, const void *in, void *inout, size_t n);
/* Combine the operands vin (an aligned array of e, in batch order) into the pieces, nobody else
 * combining into them meanwhile: one MPI_Reduce_local in place when that is possible, else
 * through a gathered copy. MPI_NO_OP: nothing. */
int fr_acc_reduce(acc_run *a, const void *vin, const acc_piece *p, size_t np, size_t n);
/* Copy the pieces' current values into vout (an array of e in batch order). */
int fr_acc_gather(const acc_run *a, const acc_piece *p, size_t np, unsigned char *vout);

/* Bytes of one hardware atomic that combines an element of e (1, 2, 4 or 8: its size, when it
 * has no padding and the platform has a compare-and-swap that wide), or 0. */
size_t fr_acc_atomic_width(const fr_dtype *e);
/* Combine the batch (a->pieces, operands vin), others combining into the same memory meanwhile
 * (a->share): stripe by stripe, with hardware atomics or holding the stripe. vout: NULL, or an
 * array of e in batch order that receives each element's value from just before. */
int fr_acc_shared(acc_run *a, const unsigned char *vin, unsigned char *vout);
/* The same for the n consecutive elements at `at` (a->share set; a->chunk at least n), operands
 * vin, their values before to vout: no batch. */
int fr_acc_shared_run(acc_run *a, char *at, size_t n, const unsigned char *vin,
                      unsigned char *vout);
/* fr_acc_cas where others combine into the same memory. */
int fr_acc_shared_cas(fr_acc_share *share, void *target, const fr_dtype *e, const void *origin,
                      const void *compare, void *result);

#endif
