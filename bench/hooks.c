/* hooks.c - what flexrma costs a program's other MPI calls (issue 21, item 4).
 *
 * flexrma hooks MPI's waits (MPI_Wait*, MPI_Test*, MPI_Recv, ...: shim/progress) so that a target
 * serves RMA while its application blocks in them. This program times an application's own
 * small messages through those hooks: an 8-byte exchange with the other rank (MPI_Irecv,
 * MPI_Isend, MPI_Waitall of both) and a ping-pong (MPI_Send, MPI_Recv), with no window and with
 * a window alive on which no RMA is in flight.
 *
 * Each step runs twice, interleaved repetition by repetition: through the MPI_Waitall/MPI_Recv
 * the program links (flexrma's hook when flexrma is preloaded), and through the MPI library's
 * own PMPI_Waitall/PMPI_Recv, found in the library that defines MPI_Isend (dlopen of that
 * library, dlsym in it: past any interposer). The second is the reference of the ratio column,
 * so under flexrma the ratio is the hooks' cost in the same process, the same run and the same
 * machine load; natively both are the library's and the ratio is 1 (a check of the method).
 * bench/run also runs the program natively, so the rows compare across runs too.
 *
 * The same for the blocking collectives flexrma hooks (they serve RMA too, whenever flexrma is
 * active, windows or not): MPI_Allreduce of the size's doubles (MPI_SUM, at least one) and
 * MPI_Barrier, over MPI_COMM_WORLD, every rank taking part.
 *
 * Variants (rows "VARIANT/nowin", "VARIANT/win", and "VARIANT/win/allocate" with --flavor
 * allocate): exchange-lib and exchange, timed together, exchange's ratio against exchange-lib;
 * then pingpong-lib and pingpong (one step = one round trip), pingpong's ratio against
 * pingpong-lib; allreduce-lib and allreduce; barrier-lib and barrier. Needs 2 ranks or more;
 * ranks 0 and 1 exchange, the others only take part in the window, the collectives and the
 * timing loop. */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef struct hooks {
    int rank, size, peer; /* peer: the other of ranks 0 and 1; -1 on other ranks */
    unsigned long long seq, calls; /* calls: collectives, which every rank makes */
    unsigned char *sbuf, *rbuf;
    size_t bytes;
    int wrong;
} hooks;

static int (*lib_waitall)(int, MPI_Request[], MPI_Status[]);
static int (*lib_recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
static int (*lib_allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static int (*lib_barrier)(MPI_Comm);

/* The MPI library's own functions: looked up in the library that defines MPI_Isend (flexrma
 * does not define it), so a preloaded flexrma is passed by. */
static void find_library(void)
{
    Dl_info info;
    if (!dladdr((void *)&PMPI_Isend, &info) || !info.dli_fname)
        bench_die("cannot tell which library defines PMPI_Isend");
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        bench_die("dlopen(%s): %s", info.dli_fname, dlerror());
    lib_waitall = (int (*)(int, MPI_Request[], MPI_Status[]))dlsym(h, "PMPI_Waitall");
    lib_recv = (int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))dlsym(
        h, "PMPI_Recv");
    lib_allreduce = (int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))dlsym(
        h, "PMPI_Allreduce");
    lib_barrier = (int (*)(MPI_Comm))dlsym(h, "PMPI_Barrier");
    if (!lib_waitall || !lib_recv || !lib_allreduce || !lib_barrier)
        bench_die("no PMPI_Waitall, PMPI_Recv, PMPI_Allreduce or PMPI_Barrier in %s",
                  info.dli_fname);
}

static void check(hooks *h, unsigned long long want)
{
    h->wrong += bench_stamp_wrong(h->rbuf, h->bytes, want) != 0;
}

static void exchange(hooks *h, int (*waitall)(int, MPI_Request[], MPI_Status[]))
{
    if (h->peer < 0)
        return;
    MPI_Request req[2];
    h->seq++;
    bench_stamp(h->sbuf, h->bytes, h->seq * 2 + (unsigned)h->rank);
    MPI_Irecv(h->rbuf, (int)h->bytes, MPI_BYTE, h->peer, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(h->sbuf, (int)h->bytes, MPI_BYTE, h->peer, 0, MPI_COMM_WORLD, &req[1]);
    waitall(2, req, MPI_STATUSES_IGNORE);
    check(h, h->seq * 2 + (unsigned)h->peer);
}

static void step_exchange_lib(void *p) { exchange(p, lib_waitall); }
static void step_exchange(void *p) { exchange(p, MPI_Waitall); }

/* Rank 0 sends, rank 1 receives and sends back: one round trip per step. */
static void pingpong(hooks *h, int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm,
                                           MPI_Status *))
{
    if (h->peer < 0)
        return;
    h->seq++;
    if (h->rank == 0) {
        bench_stamp(h->sbuf, h->bytes, h->seq);
        MPI_Send(h->sbuf, (int)h->bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        recv(h->rbuf, (int)h->bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(h, h->seq + 1000000000ull);
    } else {
        recv(h->rbuf, (int)h->bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(h, h->seq);
        bench_stamp(h->sbuf, h->bytes, h->seq + 1000000000ull);
        MPI_Send(h->sbuf, (int)h->bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
}

static void step_pingpong_lib(void *p) { pingpong(p, lib_recv); }
static void step_pingpong(void *p) { pingpong(p, MPI_Recv); }

/* Every rank adds calls + rank to the first and last of the doubles. */
static void allreduce(hooks *h,
                      int (*reduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))
{
    size_t n = h->bytes / sizeof(double);
    double *in = (double *)h->sbuf, *out = (double *)h->rbuf;
    h->calls++;
    in[0] = in[n - 1] = (double)(h->calls + (unsigned)h->rank);
    out[0] = out[n - 1] = -1;
    reduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double want = (double)h->calls * h->size + (double)h->size * (h->size - 1) / 2;
    h->wrong += out[0] != want || out[n - 1] != want;
}

static void step_allreduce_lib(void *p) { allreduce(p, lib_allreduce); }
static void step_allreduce(void *p) { allreduce(p, MPI_Allreduce); }
static void step_barrier_lib(void *p) { (void)p; lib_barrier(MPI_COMM_WORLD); }
static void step_barrier(void *p) { (void)p; MPI_Barrier(MPI_COMM_WORLD); }

static int end_check(void *p)
{
    hooks *h = p;
    int w = h->wrong;
    h->wrong = 0;
    return w;
}

/* Two pairs, each timed on its own: the library's own wait (the reference), then the hooked
 * one. */
static const bench_variant variants[] = {
    {"exchange-lib", step_exchange_lib, NULL, end_check},
    {"exchange", step_exchange, NULL, end_check},
    {"pingpong-lib", step_pingpong_lib, NULL, end_check},
    {"pingpong", step_pingpong, NULL, end_check},
    {"allreduce-lib", step_allreduce_lib, NULL, end_check},
    {"allreduce", step_allreduce, NULL, end_check},
    {"barrier-lib", step_barrier_lib, NULL, end_check},
    {"barrier", step_barrier, NULL, end_check},
};

static void measure(const bench_opts *o, hooks *h, const char *suffix, size_t bytes, int iters)
{
    for (size_t k = 0; k < sizeof variants / sizeof *variants; k += 2) /* pairs, one at a time */
        bench_measure(o, &variants[k], 2, 0, h, suffix, bytes, iters, 1);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "hooks", "8", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE | 1u << BENCH_FLAVOR_ALLOCATE);
    if (o.size < 2)
        bench_die("hooks needs at least 2 ranks");
    find_library();

    for (int s = 0; s < o.nsizes; s++) {
        size_t bytes = o.sizes[s] < 8 ? 8 : o.sizes[s];
        hooks h = {.rank = o.rank, .size = o.size, .peer = o.rank < 2 ? 1 - o.rank : -1,
                   .bytes = bytes};
        h.sbuf = bench_alloc(BENCH_MEM_MALLOC, bytes);
        h.rbuf = bench_alloc(BENCH_MEM_MALLOC, bytes);
        int iters = bench_iters(&o, bytes);
        /* No window: flexrma's hooks pass straight to the library. */
        measure(&o, &h, "nowin", bytes, iters);
        /* A window alive, no RMA in flight: the hooks' everyday case in an RMA program. */
        for (int f = 0; f < o.nflavor; f++) {
            bench_win w;
            bench_win_make(&w, o.flavor[f], 64);
            measure(&o, &h, o.flavor[f] == BENCH_FLAVOR_CREATE ? "win" : "win/allocate", bytes,
                    iters);
            bench_win_free(&w);
        }
        bench_free(BENCH_MEM_MALLOC, h.sbuf);
        bench_free(BENCH_MEM_MALLOC, h.rbuf);
    }
    return bench_finish();
}
