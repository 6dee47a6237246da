/* test_shm_map.c - mapping segments and cross-memory attach (shm_map.c) within one process,
 * which is its own "peer": what tests/mpi/t_shm_map.c does between ranks, here with the paths
 * that are hard to reach there (the name fallback, a wrong inode, iovec lists longer than one
 * system call takes, bad addresses). Run with mpirun -np 1. */
#include "node/shm_map.h"
#include "tap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#define MAP_CHECKS 7
static void test_map(void)
{
    fr_peer_proc *pp = NULL, *again = NULL;
    int rc = fr_peer_proc_open(getpid(), &pp);
    ok(rc == MPI_SUCCESS && pp && pp->pid == getpid(), "peer record of this process opened");
    fr_peer_proc_open(getpid(), &again);
    ok(again == pp && pp->refs == 2, "a second open shares the record");

    char *seg = NULL;
    fr_seg_ref ref;
    fr_seg_alloc(3 * 4096 + 5, (void **)&seg);
    fr_seg_lookup(seg + 100, 8, &ref);
    strcpy(seg + 100, "abcdefg");
    char *view = NULL, *view2 = NULL;
    rc = fr_seg_map_remote(pp, &ref, (void **)&view);
    ok(rc == MPI_SUCCESS && view && view != seg && strcmp(view + ref.offset, "abcdefg") == 0,
       "segment mapped a second time; the data is there");
    view[ref.offset] = 'X';
    ok(seg[100] == 'X', "a write through the mapping shows in the owner's view");
    fr_seg_map_remote(pp, &ref, (void **)&view2);
    ok(view2 == view && fr_seg_remote_count(pp) == 1, "mapped once per segment");

    /* the name fallback: the descriptor cannot be taken, the name still opens it */
    fr_seg_ref by_name = ref;
    by_name.fd = -1;
    by_name.serial = ref.serial + 1000;
    rc = fr_seg_map_remote(pp, &by_name, (void **)&view2);
    is_int(err_class(rc), MPI_ERR_OTHER, "neither descriptor nor name: refused with ERR_OTHER");
    fr_seg_ref wrong = ref;
    wrong.serial = ref.serial + 2000;
    wrong.ino = ref.ino + 1;
    is_int(err_class(fr_seg_map_remote(pp, &wrong, (void **)&view2)), MPI_ERR_OTHER,
           "a descriptor that is another file is refused");

    fr_seg_unmap_remote(pp, ref.serial);
    fr_seg_unmap_remote(pp, ref.serial);
    fr_peer_proc_release(again);
    fr_peer_proc_release(pp);
    fr_seg_free(seg);
}

#define NAMED_CHECKS 2
static void test_named(void)
{
    fr_seg_backend native = fr_seg_backend_get();
    if (fr_seg_backend_force(FR_SEG_NAMED) != MPI_SUCCESS) {
        skip(NAMED_CHECKS, "named backend cannot be forced");
        return;
    }
    fr_peer_proc *pp = NULL;
    fr_peer_proc_open(getpid(), &pp);
    char *seg = NULL, *view = NULL;
    fr_seg_ref ref;
    fr_seg_alloc(4096, (void **)&seg);
    fr_seg_lookup(seg, 1, &ref);
    seg[0] = 42;
    ref.fd = -1; /* as if the descriptor could not be taken: open by name */
    int rc = fr_seg_map_remote(pp, &ref, (void **)&view);
    ok(rc == MPI_SUCCESS && view && view[0] == 42, "named segment mapped by its name");
    fr_seg_unlink_name(seg);
    fr_seg_lookup(seg, 1, &ref);
    view[1] = 43;
    ok(seg[1] == 43 && !ref.named, "the mapping outlives the name");
    fr_peer_proc_release(pp); /* unmaps what is left */
    fr_seg_free(seg);
    fr_seg_backend_force(native);
}

#define CMA_CHECKS 8
static void test_cma(void)
{
    pid_t me = getpid();
    fr_cma_probe probe;
    fr_cma_probe_self(&probe);
    ok(probe.token != 0 && fr_cma_usable(me, &probe), "cross-memory attach to self works");
    fr_cma_probe bad = probe;
    bad.token ^= 1;
    ok(!fr_cma_usable(me, &bad), "a wrong token says unusable");
    bad = probe;
    bad.addr = 8;
    ok(!fr_cma_usable(me, &bad), "an unreadable address says unusable");

    /* scatter/gather: 3000 single bytes, more than IOV_MAX in one list */
    enum { N = 3000 };
    char *src = malloc(2 * N), *dst = calloc(1, N);
    struct iovec *riov = malloc(N * sizeof *riov), liov = {dst, N};
    for (int i = 0; i < 2 * N; i++)
        src[i] = (char)(i * 7 + 1);
    for (int i = 0; i < N; i++)
        riov[i] = (struct iovec){src + 2 * i, 1};
    int good = 1;
    ok(fr_cma_read(me, &liov, 1, riov, N) == MPI_SUCCESS, "read of %d remote pieces", N);
    for (int i = 0; i < N; i++)
        good &= dst[i] == src[2 * i];
    ok(good, "every piece arrived in order");

    memset(dst, 0x5a, N);
    ok(fr_cma_write(me, &liov, 1, riov, N) == MPI_SUCCESS && src[0] == 0x5a &&
           src[2 * (N - 1)] == 0x5a && src[1] == (char)8,
       "write to %d remote pieces (the gaps untouched)", N);

    struct iovec shortl = {dst, 10}, far[2] = {{src, 5}, {(void *)8, 5}};
    is_int(err_class(fr_cma_read(me, &shortl, 1, far, 1)), MPI_ERR_ARG,
           "lists of different totals: ERR_ARG");
    is_int(err_class(fr_cma_read(me, &shortl, 1, far, 2)), MPI_ERR_OTHER,
           "a bad remote address after a good one: ERR_OTHER");
    free(src);
    free(dst);
    free(riov);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tap_plan(MAP_CHECKS + NAMED_CHECKS + CMA_CHECKS);
    test_map();
    test_named();
    test_cma();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
