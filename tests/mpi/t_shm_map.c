/* t_shm_map.c - node peers reach each other's memory without messages (shm_seg.c, shm_map.c).
 *
 * 1. Segments: every rank MPI_Alloc_mem's a buffer (a segment unless FLEXRMA_TRANSPORT=am, where
 *    the test takes one from fr_seg_alloc itself), fills it, and publishes (pid, segment
 *    reference of an interior address) by MPI_Allgather. Every rank maps every other rank's
 *    segment and checks its content, maps it again (same address, one mapping), writes into its
 *    right neighbour's buffer through the mapping, and after a barrier finds its own buffer
 *    written by its left neighbour.
 * 2. Reuse: a freed small segment is a spare, and the next allocation of its size gets it back
 *    (same address and serial, zero-filled); a peer that mapped it kept the mapping idle and
 *    maps the reused segment at the same address, seeing the new data; a reference that names
 *    the same serial with another inode never gets that idle mapping (a process that had the
 *    pid before).
 * 3. Cross-memory attach: the same with a malloc'ed buffer, reached by process_vm_readv/writev;
 *    the write scatters through one iovec per element.
 * Linked with the internal library (see tests/unit/CMakeLists.txt): it calls fr_* directly. */
#include "common.h"
#include "node/shm_map.h"

#include <unistd.h>

#define N 4099 /* ints: the buffer spans several pages and ends mid-page */
#define OFF 16 /* the published region starts this many ints into the buffer */

typedef struct info {
    int64_t pid;
    fr_seg_ref seg; /* of buf + OFF */
    fr_cma_probe probe;
    uint64_t heap;  /* address of the malloc'ed buffer */
} info;

static int *buf, *heap, from_seg;
static info *all;

static int region_is(const int *got, int r, int e)
{
    int *exp = xmalloc((N - OFF) * sizeof *exp);
    for (int i = 0; i < N - OFF; i++)
        exp[i] = pat(r, i, e);
    int same = same_ints(got, exp, N - OFF);
    free(exp);
    return same;
}

static void publish(void)
{
    if (fr_opt.transport == FR_TRANSPORT_AM) {
        diag("FLEXRMA_TRANSPORT=am: MPI_Alloc_mem gives ordinary memory; using fr_seg_alloc");
        from_seg = fr_seg_alloc(N * sizeof *buf, (void **)&buf) == MPI_SUCCESS;
    } else {
        MPI_Alloc_mem(N * sizeof *buf, MPI_INFO_NULL, &buf);
    }
    heap = xmalloc(N * sizeof *heap);
    for (int i = 0; i < N - OFF; i++) {
        buf[OFF + i] = pat(rank, i, 0);
        heap[OFF + i] = pat(rank, i, 2);
    }
    info mine = {.pid = getpid(), .heap = (uint64_t)(uintptr_t)heap};
    ok(fr_seg_lookup(buf + OFF, (N - OFF) * sizeof *buf, &mine.seg) &&
           mine.seg.offset == OFF * sizeof *buf,
       "own buffer found in a segment at offset %zu", OFF * sizeof *buf);
    fr_cma_probe_self(&mine.probe);
    all = xmalloc(nprocs * sizeof *all);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
}

/* 2 + 3 * (nprocs - 1) checks */
static void test_segments(void)
{
    fr_peer_proc **pp = xmalloc(nprocs * sizeof *pp);
    char **view = xmalloc(nprocs * sizeof *view);
    for (int r = 0; r < nprocs; r++) {
        if (r == rank)
            continue;
        pp[r] = NULL;
        view[r] = NULL;
        int rc = fr_peer_proc_open((pid_t)all[r].pid, &pp[r]);
        if (rc == MPI_SUCCESS)
            rc = fr_seg_map_remote(pp[r], &all[r].seg, (void **)&view[r]);
        if (!ok(rc == MPI_SUCCESS, "rank %d's segment mapped", r)) {
            diag("%s", fr_error_detail());
            skip(2, "not mapped");
            continue;
        }
        ok(region_is((int *)(view[r] + all[r].seg.offset), r, 0), "rank %d's data read", r);
        char *again = NULL;
        fr_seg_map_remote(pp[r], &all[r].seg, (void **)&again);
        ok(again == view[r] && fr_seg_remote_count(pp[r]) == 1, "rank %d's segment mapped once",
           r);
        fr_seg_unmap_remote(pp[r], all[r].seg.serial);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has read before anyone writes */
    if (view[right()]) {
        int *dst = (int *)(view[right()] + all[right()].seg.offset);
        for (int i = 0; i < N - OFF; i++)
            dst[i] = pat(rank, i, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the neighbours' stores are done */
    ok(region_is(buf + OFF, left(), 1), "own buffer written by rank %d through its mapping",
       left());
    ok(buf[0] == 0 && buf[OFF - 1] == 0, "the ints before the region are untouched");
    for (int r = 0; r < nprocs; r++)
        if (r != rank && pp[r]) {
            fr_seg_unmap_remote(pp[r], all[r].seg.serial);
            fr_peer_proc_release(pp[r]);
        }
    free(pp);
    free(view);
}

/* 2 + 2 * (nprocs - 1) checks */
static void test_reuse(void)
{
    const size_t n = 3 * (size_t)sysconf(_SC_PAGESIZE) / sizeof(int);
    if (fr_seg_backend_get() != FR_SEG_MEMFD) {
        skip(2 + 2 * (nprocs - 1), "spares need the memfd backend");
        return;
    }
    int *seg = NULL, *again = NULL;
    fr_seg_ref mine, mine2, *refs = xmalloc(nprocs * sizeof *refs);
    fr_seg_alloc(n * sizeof *seg, (void **)&seg);
    for (size_t i = 0; i < n; i++)
        seg[i] = pat(rank, (int)i, 4);
    fr_seg_lookup(seg, 0, &mine);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, refs, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    fr_peer_proc **pp = xmalloc(nprocs * sizeof *pp);
    char **view = xmalloc(nprocs * sizeof *view);
    for (int r = 0; r < nprocs; r++) {
        view[r] = NULL;
        if (r != rank && fr_peer_proc_open((pid_t)all[r].pid, &pp[r]) == MPI_SUCCESS &&
            fr_seg_map_remote(pp[r], &refs[r], (void **)&view[r]) == MPI_SUCCESS)
            fr_seg_unmap_remote(pp[r], refs[r].serial); /* idle now, still mapped */
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every peer mapped and let go of my segment */
    fr_seg_free(seg);
    fr_seg_alloc(n * sizeof *again, (void **)&again);
    fr_seg_lookup(again, 0, &mine2);
    ok(again == seg && mine2.serial == mine.serial, "a freed segment comes back for its size");
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++)
        nonzero += again[i] != 0;
    ok(nonzero == 0, "zero-filled (%zu ints were not)", nonzero);
    for (size_t i = 0; i < n; i++)
        again[i] = pat(rank, (int)i, 5);
    MPI_Allgather(&mine2, sizeof mine2, MPI_BYTE, refs, sizeof mine2, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < nprocs; r++) {
        if (r == rank)
            continue;
        char *v2 = NULL;
        int rc = view[r] ? fr_seg_map_remote(pp[r], &refs[r], (void **)&v2) : -1;
        int same = rc == MPI_SUCCESS && v2 == view[r], right_data = same;
        for (size_t i = 0; same && i < n; i++)
            right_data &= ((int *)v2)[i] == pat(r, (int)i, 5);
        ok(same && right_data, "rank %d's reused segment: the idle mapping, with the new data", r);
        if (rc == MPI_SUCCESS)
            fr_seg_unmap_remote(pp[r], refs[r].serial);
        fr_seg_ref other = refs[r];
        other.ino++;
        void *v3 = NULL;
        rc = view[r] ? fr_seg_map_remote(pp[r], &other, &v3) : MPI_SUCCESS;
        ok(rc != MPI_SUCCESS, "the same serial with another inode is refused, not the idle mapping");
        if (view[r])
            fr_peer_proc_release(pp[r]);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody maps it any more */
    fr_seg_free(again);
    free(view);
    free(pp);
    free(refs);
}

/* 3 checks */
static void test_cma(void)
{
    const info *nb = &all[right()];
    pid_t pid = (pid_t)nb->pid;
    int usable = fr_cma_usable(pid, &nb->probe);
    if (!ok(usable, "cross-memory attach to rank %d", right()))
        diag("%s", fr_error_detail());

    int *got = xmalloc((N - OFF) * sizeof *got);
    struct iovec l = {got, (N - OFF) * sizeof *got};
    struct iovec r = {(int *)(uintptr_t)nb->heap + OFF, (N - OFF) * sizeof *got};
    int rc = usable ? fr_cma_read(pid, &l, 1, &r, 1) : -1;
    ok(rc == MPI_SUCCESS && region_is(got, right(), 2), "rank %d's heap read", right());

    MPI_Barrier(MPI_COMM_WORLD); /* everyone has read before anyone writes */
    /* one element per remote iovec, as a derived datatype would give */
    struct iovec *riov = xmalloc((N - OFF) * sizeof *riov);
    for (int i = 0; i < N - OFF; i++) {
        got[i] = pat(rank, i, 3);
        riov[i].iov_base = (int *)(uintptr_t)nb->heap + OFF + i;
        riov[i].iov_len = sizeof(int);
    }
    rc = usable ? fr_cma_write(pid, &l, 1, riov, N - OFF) : -1;
    if (rc != MPI_SUCCESS && usable)
        diag("%s", fr_error_detail());
    MPI_Barrier(MPI_COMM_WORLD); /* the neighbours' writes are done */
    ok(region_is(heap + OFF, left(), 3), "own heap written by rank %d", left());
    free(riov);
    free(got);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tap_plan(1 + 2 + 3 * (nprocs - 1) + 2 + 2 * (nprocs - 1) + 3);
    publish();
    test_segments();
    test_reuse();
    test_cma();
    if (from_seg)
        fr_seg_free(buf);
    else
        MPI_Free_mem(buf);
    free(heap);
    free(all);
    return test_done();
}
