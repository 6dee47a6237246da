/* acc_shared.c - combining accumulate operands into window memory that other processes may
 * combine into at the same moment (a window its node peers map, direct.c).
 *
 * MPI asks for atomicity per element (MPI-3.1 section 11.7.1), and accumulates to different
 * parts of one window should not wait for each other. The window is cut into stripes of
 * FR_ACC_STRIPE_BYTES; the owner's shared state page holds FR_ACC_STRIPES reader-writer lock
 * words (the fair ticket lock of shm_lock.h, as for passive target), stripe s using word s mod
 * FR_ACC_STRIPES. Each batch of target elements (acc.c) is cut into
 * groups that lie in one stripe, and each group is combined one of two ways:
 *  - a few elements (at most FR_ACC_ATOMIC_MAX) of a type without padding of 1, 2, 4 or 8 bytes,
 *    each aligned to its size: the word is held shared, and each element takes one hardware
 *    atomic of libatomic_ops: a store for MPI_REPLACE, a fetch-and-add for MPI_SUM on 4- and
 *    8-byte integers, else a compare-and-swap of the value MPI_Reduce_local computed from a
 *    snapshot (an element another process changed meanwhile is combined again, until its
 *    compare-and-swap holds). Any number of such groups combine into a stripe at once;
 *  - anything else (many elements, 16-byte types, pairs with padding, unaligned elements): the
 *    word is held exclusively and the group is combined with one MPI_Reduce_local, in place or
 *    through a gathered copy: per element, a hardware atomic costs more than the whole
 *    vectorized reduction (a 256 KiB accumulate would take 100 times as long).
 * Either way no other combiner touches the element meanwhile in a conflicting way, so each
 * element is updated atomically against every other accumulate, whoever applies it. A fetching
 * accumulate (MPI_Get_accumulate, MPI_Fetch_and_op) takes each element's value before in the
 * same step: the value its compare-and-swap replaced or its fetch-and-add returned, or, holding
 * the stripe, a copy taken before combining; MPI_Compare_and_swap is one compare-and-swap, or a
 * comparison holding the stripe.
 *
 * Memory ordering: an element's atomic needs no barrier of its own: whoever then learns that the
 * accumulate is complete learns it through a release store that follows it (the ring packet, the
 * completed[] slot or the lock word, direct.c). A stripe word orders its holders as the
 * passive-target lock does (shm_lock.h): an exclusive holder's updates come before the next
 * holder's accesses.
 */
#include "acc_internal.h"
#include "core/idle.h"
#include "node/shm_lock.h"

#include <string.h>

/* The libatomic_ops functions of one width. Values pass as bytes: an element is a bit pattern
 * here (a float's too); MPI_Reduce_local does the arithmetic. */
typedef struct awidth {
    void (*load)(volatile void *p, void *out);
    void (*store)(volatile void *p, const void *v);
    int (*cas)(volatile void *p, const void *old, const void *val);
    void (*add)(volatile void *p, const void *v, void *before); /* before: NULL, or the old value */
} awidth;

#define AWIDTH(N, T, AO)                                                                       \
    static void load##N(volatile void *p, void *out)                                          \
    {                                                                                          \
        T x = AO##load((volatile T *)p);                                                       \
        memcpy(out, &x, sizeof x);                                                             \
    }                                                                                          \
    static void store##N(volatile void *p, const void *v)                                     \
    {                                                                                          \
        T x;                                                                                   \
        memcpy(&x, v, sizeof x);                                                               \
        AO##store((volatile T *)p, x);                                                         \
    }                                                                                          \
    static int cas##N(volatile void *p, const void *old, const void *val)                     \
    {                                                                                          \
        T o, v;                                                                                \
        memcpy(&o, old, sizeof o);                                                             \
        memcpy(&v, val, sizeof v);                                                             \
        return AO##compare_and_swap((volatile T *)p, o, v);                                    \
    }                                                                                          \
    static void add##N(volatile void *p, const void *v, void *before)                         \
    {                                                                                          \
        T x;                                                                                   \
        memcpy(&x, v, sizeof x);                                                               \
        x = AO##fetch_and_add((volatile T *)p, x);                                             \
        if (before)                                                                            \
            memcpy(before, &x, sizeof x);                                                      \
    }                                                                                          \
    static const awidth width##N = {load##N, store##N, cas##N, add##N};

#if defined(AO_HAVE_char_compare_and_swap) && defined(AO_HAVE_char_fetch_and_add) &&          \
    defined(AO_HAVE_char_load) && defined(AO_HAVE_char_store)
AWIDTH(1, unsigned char, AO_char_)
#define WIDTH1 &width1
#else
#define WIDTH1 NULL
#endif
#if defined(AO_HAVE_short_compare_and_swap) && defined(AO_HAVE_short_fetch_and_add) &&        \
    defined(AO_HAVE_short_load) && defined(AO_HAVE_short_store)
AWIDTH(2, unsigned short, AO_short_)
#define WIDTH2 &width2
#else
#define WIDTH2 NULL
#endif
#if defined(AO_HAVE_int_compare_and_swap) && defined(AO_HAVE_int_fetch_and_add) &&            \
    defined(AO_HAVE_int_load) && defined(AO_HAVE_int_store)
AWIDTH(4, unsigned, AO_int_)
#define WIDTH4 &width4
#else
#define WIDTH4 NULL
#endif
#if defined(AO_HAVE_compare_and_swap) && defined(AO_HAVE_fetch_and_add) &&                    \
    defined(AO_HAVE_load) && defined(AO_HAVE_store)
AWIDTH(8, AO_t, AO_)
#define WIDTH8 &width8
#else
#define WIDTH8 NULL
#endif

static const awidth *width_ops(size_t w)
{
    switch (w) {
    case 1:
        return sizeof(unsigned char) == 1 ? WIDTH1 : NULL;
    case 2:
        return sizeof(unsigned short) == 2 ? WIDTH2 : NULL;
    case 4:
        return sizeof(unsigned) == 4 ? WIDTH4 : NULL;
    case 8:
        return sizeof(AO_t) == 8 ? WIDTH8 : NULL;
    default:
        return NULL;
    }
}

size_t fr_acc_atomic_width(const fr_dtype *e)
{
    return e->contiguous && width_ops((size_t)e->size) ? (size_t)e->size : 0;
}

/* ---- with hardware atomics ---- */

/* One element whose compare-and-swap lost to another process: read, combine, try again. The
 * value it replaced goes to *before (if not NULL). MPI_REPLACE: the new value is *in itself. */
static int combine_one(const acc_run *a, const awidth *aw, size_t w, char *at, const void *in,
                       void *before)
{
    union {
        AO_t word; /* aligns the bytes for MPI_Reduce_local */
        unsigned char b[sizeof(AO_t) < 8 ? 8 : sizeof(AO_t)];
    } cur, res;
    do {
        aw->load(at, cur.b);
        memcpy(res.b, a->op == MPI_REPLACE ? in : cur.b, w);
        int rc = a->op == MPI_REPLACE ? MPI_SUCCESS : fr_acc_reduce_local(a, in, res.b, 1);
        if (rc != MPI_SUCCESS)
            return rc;
    } while (!aw->cas(at, cur.b, res.b));
    if (before)
        memcpy(before, cur.b, w);
    return MPI_SUCCESS;
}

/* At most FR_ACC_ATOMIC_MAX elements, aligned. vout: NULL, or where their values before go. */
static int atomic_piece(acc_run *a, const awidth *aw, size_t w, const acc_piece *p,
                        const unsigned char *vin, unsigned char *vout)
{
    char *at = p->at;
    if (a->op == MPI_NO_OP) { /* a fetch alone: an atomic load each */
        for (size_t k = 0; k < p->n; k++)
            aw->load(at + k * w, vout + k * w);
        return MPI_SUCCESS;
    }
    if (a->op == MPI_REPLACE) { /* a swap when the old value is wanted, else a store */
        int rc = MPI_SUCCESS;
        for (size_t k = 0; k < p->n && rc == MPI_SUCCESS; k++)
            if (vout)
                rc = combine_one(a, aw, w, at + k * w, vin + k * w, vout + k * w);
            else
                aw->store(at + k * w, vin + k * w);
        return rc;
    }
    if (a->int_sum) { /* two's complement: one addition for signed and unsigned alike */
        for (size_t k = 0; k < p->n; k++)
            aw->add(at + k * w, vin + k * w, vout ? vout + k * w : NULL);
        return MPI_SUCCESS;
    }
    union {
        AO_t word; /* aligns the bytes for MPI_Reduce_local */
        unsigned char b[FR_ACC_ATOMIC_MAX * 8];
    } snap, out;
    unsigned char *cur = snap.b, *res = out.b;
    for (size_t k = 0; k < p->n; k++)
        aw->load(at + k * w, cur + k * w);
    memcpy(res, cur, p->n * w);
    int rc = fr_acc_reduce_local(a, vin, res, p->n);
    for (size_t k = 0; k < p->n && rc == MPI_SUCCESS; k++) {
        if (aw->cas(at + k * w, cur + k * w, res + k * w)) {
            if (vout)
                memcpy(vout + k * w, cur + k * w, w);
        } else {
            rc = combine_one(a, aw, w, at + k * w, vin + k * w, vout ? vout + k * w : NULL);
        }
    }
    return rc;
}

/* ---- the stripe words: the passive-target lock's fair reader-writer discipline (shm_lock.h) */

static AO_t stripe_enter(fr_lockword *l, int exclusive)
{
    fr_idle idle = {0};
    AO_t ticket = fr_lockword_take(l);
    while (!fr_lockword_enter(l, ticket, exclusive)) /* acquire, see shm_lock.h */
        fr_backoff(&idle);
    return ticket;
}

/* ---- one group: elements in one stripe ---- */

static int atomic_able(const acc_run *a, const acc_piece *g, size_t ng, size_t n, int fetch)
{
    if (!a->atomic || n > FR_ACC_ATOMIC_MAX)
        return 0;
    /* An element that takes a compare-and-swap of a value MPI_Reduce_local computed (any op but
     * an integer MPI_SUM, a fetch-less MPI_REPLACE or MPI_NO_OP) costs a reduction of its own
     * when another process got there first, and one atomic each: from two such elements on,
     * holding the stripe (three atomics, one reduction) is cheaper (OSU's 8-byte MPI_CHAR
     * accumulate: 0.17 us with atomics, Open MPI 0.10). */
    int plain = a->int_sum || a->op == MPI_NO_OP || (a->op == MPI_REPLACE && !fetch);
    if (n > 1 && !plain)
        return 0;
    for (size_t i = 0; i < ng; i++)
        if ((uintptr_t)g[i].at % (size_t)a->e->size != 0)
            return 0;
    return 1;
}

static int run_group(acc_run *a, size_t stripe, const acc_piece *g, size_t ng, size_t n,
                     const unsigned char *vin, unsigned char *vout)
{
    fr_lockword *word = &a->share->stripes[stripe % FR_ACC_STRIPES];
    size_t w = (size_t)a->e->size;
    int rc = MPI_SUCCESS, exclusive = !atomic_able(a, g, ng, n, vout != NULL);
    AO_t ticket = stripe_enter(word, exclusive);
    if (exclusive) {
        if (vout)
            rc = fr_acc_gather(a, g, ng, vout);
        if (rc == MPI_SUCCESS)
            rc = fr_acc_reduce(a, vin, g, ng, n);
        a->share->locked += n;
    } else {
        for (size_t i = 0; i < ng && rc == MPI_SUCCESS; i++)
            rc = atomic_piece(a, width_ops(w), w, &g[i], vin ? vin + g[i].k0 * w : NULL,
                              vout ? vout + g[i].k0 * w : NULL);
        a->share->atomic += n;
    }
    fr_lockword_release(word, ticket, exclusive); /* release, see shm_lock.h */
    return rc;
}

/* ---- one run over several stripes ---- */

/* A batch that is one run of more elements than atomics take, over several stripes: its stripes'
 * words are all taken, exclusively, in ascending word order, and the run is combined with one
 * MPI_Reduce_local (its values before read first), instead of one reduction per stripe (64 KiB
 * of MPI_CHAR: 16 batches of 4 KiB, each a lock, a reduction and the wait for its stores before
 * the release; 1.9 us against Open MPI's 1.0). Nobody waits in a circle: whoever holds several
 * words took them in that order, and a group in one stripe holds one word at a time. */
static int run_whole(acc_run *a, const acc_piece *p, const unsigned char *vin,
                     unsigned char *vout)
{
    size_t off = (size_t)(p->at - a->share->base);
    size_t first = off / FR_ACC_STRIPE_BYTES;
    size_t last = (off + p->n * (size_t)a->e->extent - 1) / FR_ACC_STRIPE_BYTES;
    size_t words = last - first + 1 < FR_ACC_STRIPES ? last - first + 1 : FR_ACC_STRIPES;
    unsigned char held[FR_ACC_STRIPES] = {0};
    AO_t ticket[FR_ACC_STRIPES];
    for (size_t k = 0; k < words; k++)
        held[(first + k) % FR_ACC_STRIPES] = 1;
    for (size_t s = 0; s < FR_ACC_STRIPES; s++)
        if (held[s])
            ticket[s] = stripe_enter(&a->share->stripes[s], 1);
    int rc = vout ? fr_acc_gather(a, p, 1, vout) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = fr_acc_reduce(a, vin, p, 1, p->n);
    a->share->locked += p->n;
    for (size_t s = 0; s < FR_ACC_STRIPES; s++)
        if (held[s])
            fr_lockword_release(&a->share->stripes[s], ticket[s], 1); /* release */
    return rc;
}

int fr_acc_shared(acc_run *a, const unsigned char *vin, unsigned char *vout)
{
    size_t ext = (size_t)a->e->extent, n = 0, stripe = 0;
    acc_pieces *g = &a->group;
    int rc = MPI_SUCCESS;
    if (a->pieces.n == 1) {
        const acc_piece *p = fr_acc_pieces(&a->pieces);
        return fr_acc_shared_run(a, p->at, p->n, vin, vout);
    }
    /* cut the batch's pieces where a stripe ends; a group gathers what lies in one stripe */
    g->n = 0;
    for (size_t i = 0; i < a->pieces.n && rc == MPI_SUCCESS; i++) {
        const acc_piece *p = &fr_acc_pieces(&a->pieces)[i];
        for (size_t k = 0, m; k < p->n && rc == MPI_SUCCESS; k += m) {
            char *at = p->at + k * ext;
            size_t off = (size_t)(at - a->share->base);
            size_t s = off / FR_ACC_STRIPE_BYTES;
            size_t left = (s + 1) * FR_ACC_STRIPE_BYTES - off; /* an element belongs to the */
            m = (left + ext - 1) / ext;                       /* stripe of its first byte */
            if (m > p->n - k)
                m = p->n - k;
            if (g->n > 0 && s != stripe) {
                rc = run_group(a, stripe, fr_acc_pieces(g), g->n, n, vin, vout);
                if (vin)
                    vin += n * ext;
                if (vout)
                    vout += n * ext;
                g->n = n = 0;
            }
            stripe = s;
            fr_acc_pieces_add(g, (acc_piece){at, m, n});
            n += m;
        }
    }
    if (rc == MPI_SUCCESS && g->n > 0)
        rc = run_group(a, stripe, fr_acc_pieces(g), g->n, n, vin, vout);
    return rc;
}

int fr_acc_shared_run(acc_run *a, char *at, size_t n, const unsigned char *vin,
                      unsigned char *vout)
{
    size_t off = (size_t)(at - a->share->base);
    acc_piece p = {at, n, 0};
    if ((n > FR_ACC_ATOMIC_MAX || !a->atomic) &&
        off / FR_ACC_STRIPE_BYTES != (off + n * (size_t)a->e->extent - 1) / FR_ACC_STRIPE_BYTES)
        return run_whole(a, &p, vin, vout);
    return run_group(a, off / FR_ACC_STRIPE_BYTES, &p, 1, n, vin, vout);
}

int fr_acc_shared_cas(fr_acc_share *share, void *target, const fr_dtype *e, const void *origin,
                      const void *compare, void *result)
{
    size_t w = (size_t)e->size;
    size_t stripe = (size_t)((const char *)target - share->base) / FR_ACC_STRIPE_BYTES;
    fr_lockword *word = &share->stripes[stripe % FR_ACC_STRIPES];
    const awidth *aw = fr_acc_atomic_width(e) ? width_ops(w) : NULL;
    int exclusive = !aw || (uintptr_t)target % w != 0;
    AO_t ticket = stripe_enter(word, exclusive);
    if (exclusive) {
        memcpy(result, target, w);
        if (memcmp(result, compare, w) == 0)
            memcpy(target, origin, w);
        share->locked++;
    } else {
        /* Linearized at the load that finds a different value, or at the swap that holds. */
        for (;;) {
            aw->load(target, result);
            if (memcmp(result, compare, w) != 0 || aw->cas(target, result, origin))
                break;
        }
        share->atomic++;
    }
    fr_lockword_release(word, ticket, exclusive);
    return MPI_SUCCESS;
}
