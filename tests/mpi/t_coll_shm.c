/* t_coll_shm.c - MPI_Barrier, MPI_Allreduce, MPI_Bcast and MPI_Reduce of node peers through
 * flexrma's shared-memory area (progress/coll_shm.c): the same results as the MPI library's,
 * barriers that wait, roots that run ahead safely, and a process in a barrier still serving RMA
 * and the library's own messages.
 *
 * Every communicator first runs FLEXRMA_COLL_SHM (fr_opt.coll_shm) barriers, after which one of
 * node peers goes through the area. Which communicators must take it is worked out from MPI
 * alone (MPI_Comm_split_type), and the area's call count says whether they did. Checked, on
 * MPI_COMM_WORLD (across hosts in the cluster stage: then through the library), the node's
 * communicator and an even/odd split:
 *  - sums of ints of 1 to 1024 elements (4096 bytes, the area's largest) and of 1025 (through
 *    the library, between calls through the area), in place and not;
 *  - MPI_MAXLOC on MPI_DOUBLE_INT (a predefined type with a hole), a strided vector type (its
 *    holes in the result untouched), and ranks that pass different datatypes of one signature;
 *  - a non-commutative operation of the program's own (2x2 matrix product), in rank order;
 *  - doubles of mixed magnitude: every rank gets the same bits;
 *  - barriers: nobody leaves before the last one, delayed, came in (the monotonic clock, one
 *    machine);
 *  - broadcasts and reductions from and to every root, in place at the root, into receivers'
 *    datatypes of the root's signature; a broadcast's root running ahead of late ranks and late
 *    reduction roots, each value still the call's;
 *  - rank 1, in a barrier or an allreduce too large for the area (the ranks meet in the area,
 *    then run the library's own), serves rank 0's lock/put/unlock on its window (the test hangs
 *    if not), and rank 0, in one, receives rank 1's 4 MiB message, sent before rank 1's call
 *    (the library's progress: a hang if the area's wait does not drive it);
 *  - 40 communicators made, used through the area and freed leave no segment behind. */
#define _GNU_SOURCE
#include "common.h"
#include "core/fr.h"
#include "node/shm_seg.h"
#include "progress/coll_shm.h"

#include <time.h>
#include <unistd.h>

#define MAXN 1025
#define BIG_INTS (1 << 20) /* 4 MiB: above every eager limit */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does comm go through the area once warmed up? From MPI alone. */
static int expect_area(MPI_Comm comm)
{
    if (fr_opt.coll_shm == 0 || fr_opt.async_progress)
        return 0;
    int size, node_size;
    MPI_Comm node;
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int all_local = node_size == size, everywhere = 0;
    MPI_Allreduce(&all_local, &everywhere, 1, MPI_INT, MPI_MIN, comm);
    return everywhere && size <= 16;
}

static void warm_up(MPI_Comm comm)
{
    for (unsigned i = 0; i <= fr_opt.coll_shm; i++)
        MPI_Barrier(comm);
}

static int all_ok(MPI_Comm comm, int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

static void sums(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    static int in[MAXN], out[MAXN], want[MAXN];
    static const int counts[] = {1, 7, 512, 1024, 1025, 3};
    int bad = 0;
    for (int round = 0; round < 4; round++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++) {
                in[i] = (me + 1) * (i + 1) + round;
                want[i] = (p * (p + 1) / 2) * (i + 1) + p * round;
            }
            if (round % 2 == 0) {
                memset(out, 0xff, sizeof out);
                MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
            } else {
                memcpy(out, in, (size_t)n * sizeof *in);
                MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
            }
            bad += !same_ints(out, want, (size_t)n);
        }
    ok(all_ok(comm, bad == 0), "%s: MPI_SUM of 1 to 1025 ints, in place and not", name);
}

/* A sum of ints of the program's own, for MPI_INT, 8 contiguous ones, or 8 every other one. */
static void int_sum(void *in_, void *inout_, int *len, MPI_Datatype *type)
{
    const int *in = in_;
    int *inout = inout_;
    int combiner, ni, na, nd;
    MPI_Type_get_envelope(*type, &ni, &na, &nd, &combiner);
    int n = combiner == MPI_COMBINER_NAMED ? *len : *len * 8;
    int stride = combiner == MPI_COMBINER_VECTOR ? 2 : 1;
    for (int i = 0; i < n; i++)
        inout[i * stride] += in[i * stride];
}

static void odd_types(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int bad = 0;

    struct {
        double v;
        int i;
    } loc[3], res[3];
    for (int k = 0; k < 3; k++) {
        loc[k].v = (double)((me * 7 + k) % p);
        loc[k].i = me;
    }
    MPI_Allreduce(loc, res, 3, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    for (int k = 0; k < 3; k++) {
        double best = -1;
        int at = -1;
        for (int r = 0; r < p; r++)
            if ((double)((r * 7 + k) % p) > best) {
                best = (double)((r * 7 + k) % p);
                at = r;
            }
        if (res[k].v != best || res[k].i != at) {
            diag("MAXLOC[%d]: got (%g, %d), expected (%g, %d)", k, res[k].v, res[k].i, best, at);
            bad++;
        }
    }

    /* 8 ints, every other one, summed by an operation of the program's own: the ones between
     * stay as they were. */
    MPI_Datatype every_other;
    MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Op op;
    MPI_Op_create(int_sum, 1, &op);
    int vin[16], vout[16];
    for (int i = 0; i < 16; i++) {
        vin[i] = me + i;
        vout[i] = -1;
    }
    MPI_Allreduce(vin, vout, 1, every_other, op, comm);
    for (int i = 0; i < 16; i++) {
        int want = i % 2 ? -1 : p * (p - 1) / 2 + p * i;
        if (vout[i] != want) {
            diag("vector[%d]: got %d, expected %d", i, vout[i], want);
            bad++;
        }
    }

    /* A predefined operation on a derived datatype: both libraries refuse it, on every rank. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = MPI_Allreduce(vin, vout, 1, every_other, MPI_SUM, comm), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    if (cls != MPI_ERR_OP) {
        diag("MPI_SUM on a vector type: error class %d, not MPI_ERR_OP", cls);
        bad++;
    }
    MPI_Type_free(&every_other);

    /* One signature, two datatypes: even ranks 8 MPI_INTs, odd ranks one contiguous(8). */
    MPI_Datatype eight;
    MPI_Type_contiguous(8, MPI_INT, &eight);
    MPI_Type_commit(&eight);
    int cin[8], cout[8];
    for (int i = 0; i < 8; i++)
        cin[i] = me * 10 + i;
    if (me % 2 == 0)
        MPI_Allreduce(cin, cout, 8, MPI_INT, op, comm);
    else
        MPI_Allreduce(cin, cout, 1, eight, op, comm);
    for (int i = 0; i < 8; i++)
        if (cout[i] != 10 * p * (p - 1) / 2 + p * i) {
            diag("mixed datatypes[%d]: got %d", i, cout[i]);
            bad++;
        }
    MPI_Type_free(&eight);
    MPI_Op_free(&op);
    ok(all_ok(comm, bad == 0),
           "%s: MAXLOC on MPI_DOUBLE_INT, vector types, datatypes differing by rank, MPI_ERR_OP", name);
}

/* 2x2 matrices of long longs mod 1000003 (a datatype of 4): a product, not commutative. */
static void matmul(void *in_, void *inout_, int *len, MPI_Datatype *type)
{
    (void)type;
    const long long *a = in_;
    long long *b = inout_;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long long c[4] = {(a[0] * b[0] + a[1] * b[2]) % 1000003, (a[0] * b[1] + a[1] * b[3]) % 1000003,
                          (a[2] * b[0] + a[3] * b[2]) % 1000003, (a[2] * b[1] + a[3] * b[3]) % 1000003};
        memcpy(b, c, sizeof c);
    }
}

static void matrix_of(int r, long long m[4])
{
    m[0] = r + 2;
    m[1] = 3 * r + 1;
    m[2] = r * r + 5;
    m[3] = 7;
}

static void ordered_op(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    MPI_Datatype matrix;
    MPI_Type_contiguous(4, MPI_LONG_LONG, &matrix);
    MPI_Type_commit(&matrix);
    long long mine[4], got[4], want[4];
    matrix_of(me, mine);
    MPI_Allreduce(mine, got, 1, matrix, op, comm);
    MPI_Type_free(&matrix);
    /* want = M0 M1 ... M(p-1) */
    matrix_of(p - 1, want);
    for (int r = p - 2; r >= 0; r--) {
        long long m[4];
        int len = 1;
        matrix_of(r, m);
        matmul(m, want, &len, NULL);
    }
    MPI_Op_free(&op);
    ok(all_ok(comm, memcmp(got, want, sizeof got) == 0),
           "%s: a non-commutative operation of the program's own, in rank order", name);
}

static void same_bits(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    double x[16], sum[16];
    for (int i = 0; i < 16; i++)
        x[i] = (me % 2 ? 1e16 : 1.0) / (i + 1) + me * 0.1;
    MPI_Allreduce(x, sum, 16, MPI_DOUBLE, MPI_SUM, comm);
    double *all = xmalloc((size_t)p * sizeof sum);
    MPI_Allgather(sum, 16, MPI_DOUBLE, all, 16, MPI_DOUBLE, comm);
    int bad = 0;
    for (int r = 0; r < p; r++)
        bad += memcmp(&all[16 * r], sum, sizeof sum) != 0;
    free(all);
    ok(all_ok(comm, bad == 0), "%s: every rank gets the same bits of a floating sum", name);
}

/* Broadcasts from every root and reductions to every root, of 1 to 1025 ints (12 fit in the
 * arrival word's line, 13 do not; 1025 go to the library), in place at the root every other
 * round; and broadcasts into receivers' datatypes of the root's signature, one with holes. */
static void roots(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    static const int counts[] = {1, 12, 13, 1024, 1025};
    static int buf[MAXN], in[MAXN], want[MAXN];
    int bad = 0;
    for (int root = 0; root < p; root++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            int n = counts[c], e = root * 10 + (int)c;
            if (me == root)
                fill_pat(buf, (size_t)n, root, e);
            else
                memset(buf, 0, (size_t)n * sizeof *buf);
            MPI_Bcast(buf, n, MPI_INT, root, comm);
            bad += !is_pat(buf, (size_t)n, root, e);
            for (int i = 0; i < n; i++) {
                in[i] = (me + 1) * (i + 1) + e;
                want[i] = (p * (p + 1) / 2) * (i + 1) + p * e;
            }
            /* In place at the root every other count; not 1024 ints at a root other than 0,
             * where MPICH 4.0.2's own MPI_Reduce crashes (reading MPI_IN_PLACE), which the
             * library's way (.async) would reach. */
            int in_place = me == root && c % 2 && (root == 0 || n < 1024);
            if (in_place)
                memcpy(buf, in, (size_t)n * sizeof *in);
            else
                memset(buf, 0xff, (size_t)n * sizeof *buf);
            MPI_Reduce(in_place ? MPI_IN_PLACE : in, buf, n, MPI_INT, MPI_SUM, root, comm);
            if (me == root)
                bad += !same_ints(buf, want, (size_t)n);
        }
    MPI_Datatype eight, every_other;
    MPI_Type_contiguous(8, MPI_INT, &eight);
    MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&eight);
    MPI_Type_commit(&every_other);
    int v[16];
    for (int i = 0; i < 16; i++)
        v[i] = me == 0 ? 100 + i : -1;
    MPI_Bcast(v, me == 0 ? 8 : 1, me == 0 ? MPI_INT : me % 2 ? eight : every_other, 0, comm);
    for (int i = 0; i < 16; i++) {
        int expect = me == 0       ? 100 + i                   /* the root's own */
                     : me % 2      ? (i < 8 ? 100 + i : -1)    /* contiguous(8) */
                     : (i % 2 ? -1 : 100 + i / 2);             /* every other int */
        if (v[i] != expect) {
            diag("broadcast into datatype of rank %d: [%d] = %d, expected %d", me, i, v[i],
                 expect);
            bad++;
        }
    }
    MPI_Type_free(&eight);
    MPI_Type_free(&every_other);
    ok(all_ok(comm, bad == 0),
       "%s: MPI_Bcast and MPI_Reduce from and to every root, 1 to 1025 ints, other datatypes",
       name);
}

/* A broadcast's root and a reduction's other ranks may run ahead: the others come late to each
 * call, and every value must still be the call's (a buffer written again before everyone read
 * it would show). */
static void run_ahead(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int bad = 0, v[13];
    for (int i = 0; i < 30; i++) {
        int n = i % 2 ? 13 : 1; /* the arrival word's line, and the large buffers */
        if (me != 0)
            usleep(200);
        for (int k = 0; k < n; k++)
            v[k] = me == 0 ? 1000 * i + k : -1;
        MPI_Bcast(v, n, MPI_INT, 0, comm);
        for (int k = 0; k < n; k++)
            bad += v[k] != 1000 * i + k;
    }
    for (int i = 0; i < 30; i++) {
        int n = i % 2 ? 13 : 1, sum[13];
        if (me == 0)
            usleep(200);
        for (int k = 0; k < n; k++)
            v[k] = i + k + me;
        MPI_Reduce(v, sum, n, MPI_INT, MPI_SUM, 0, comm);
        for (int k = 0; me == 0 && k < n; k++)
            bad += sum[k] != p * (i + k) + p * (p - 1) / 2;
    }
    if (bad)
        diag("%d values of the wrong call", bad);
    ok(all_ok(comm, bad == 0), "%s: a root running ahead of late ranks, and late roots", name);
}

/* The last rank comes late; nobody may leave before it came in. */
static void barriers_wait(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int bad = 0;
    for (int round = 0; round < 6; round++) {
        uint64_t came = 0, left;
        if (me == p - 1) {
            usleep(2000 + 1000 * (unsigned)round);
            came = now_ns();
        }
        MPI_Barrier(comm);
        left = now_ns();
        MPI_Bcast(&came, 1, MPI_UINT64_T, p - 1, comm);
        if (left < came) {
            diag("round %d: left the barrier %.1f us before the last rank came", round,
                 (double)(came - left) / 1e3);
            bad++;
        }
    }
    ok(all_ok(comm, bad == 0), "%s: a barrier waits for its last rank", name);
}

static void suite(MPI_Comm comm, const char *name)
{
    int want = expect_area(comm);
    warm_up(comm);
    uint64_t before = fr_coll_shm_calls(comm);
    sums(comm, name);
    odd_types(comm, name);
    ordered_op(comm, name);
    same_bits(comm, name);
    barriers_wait(comm, name);
    roots(comm, name);
    run_ahead(comm, name);
    int took = fr_coll_shm_calls(comm) > before;
    ok(all_ok(comm, took == want), "%s: %s the shared-memory area", name,
           want ? "went through" : "did not take");
}

/* The collective each round synchronizes with: a barrier (through the area), and an allreduce
 * too large for it (every rank meets in the area, then the library's own). */
static void sync_call(int round)
{
    if (round == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    static double in[2000], out[2000];
    MPI_Allreduce(in, out, 2000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Rank 1 in the collective serves rank 0's passive epoch; rank 0 in it receives rank 1's large
 * message sent before it. Ranks beyond 1 only take part in the collectives. */
static void progress_in_collective(void)
{
    iwin w;
    iwin_create(&w, 64);
    warm_up(MPI_COMM_WORLD);
    int src[64], bad = 0;
    for (int round = 0; round < 2; round++) {
        fill_pat(src, 64, 0, 5 + round);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
            MPI_Put(src, 64, MPI_INT, 1, 0, 64, MPI_INT, w.win);
            MPI_Win_unlock(1, w.win);
        }
        sync_call(round);
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w.win);
            bad += !is_pat(w.buf, 64, 0, 5 + round);
            MPI_Win_unlock(1, w.win);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* checked before the next round's put */
    }
    ok(all_ok(MPI_COMM_WORLD, bad == 0),
       "a rank in MPI_Barrier or a large MPI_Allreduce serves a lock/put/unlock epoch on it");

    int *big = xmalloc((size_t)BIG_INTS * sizeof *big);
    bad = 0;
    for (int round = 0; round < 2; round++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == 0)
            MPI_Irecv(big, BIG_INTS, MPI_INT, 1, 9, MPI_COMM_WORLD, &req);
        if (rank == 1) {
            fill_pat(big, BIG_INTS, 1, 9 + round);
            MPI_Send(big, BIG_INTS, MPI_INT, 0, 9, MPI_COMM_WORLD);
        }
        sync_call(round);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        bad += rank == 0 && !is_pat(big, BIG_INTS, 1, 9 + round);
    }
    free(big);
    ok(all_ok(MPI_COMM_WORLD, bad == 0),
       "a rank in MPI_Barrier or a large MPI_Allreduce receives a large message its peer sent "
       "before it");
    iwin_free(&w);
}

/* Communicators made and freed release their areas. */
static void churn(void)
{
    size_t segments = fr_seg_count();
    int bad = 0;
    for (int k = 0; k < 40; k++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        warm_up(c);
        int one = 1, n = 0;
        MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c);
        bad += n != nprocs;
        MPI_Comm_free(&c);
    }
    bad += fr_seg_count() != segments;
    ok(all_ok(MPI_COMM_WORLD, bad == 0),
           "40 communicators used through the area and freed: right sums, no segment left");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(3 * 8 + 3);
    suite(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm node, half;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    suite(node, "the node's communicator");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, nprocs - rank, &half); /* reversed order */
    suite(half, "even/odd halves, ranks reversed");
    MPI_Comm_free(&node);
    MPI_Comm_free(&half);
    progress_in_collective();
    churn();
    return test_done();
}
