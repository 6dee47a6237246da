/* t_create_serves.c - a process inside a window creation serves the operations others still
 * wait for (MPI: an RMA operation completes whether or not its target calls MPI; Open MPI and
 * MPICH progress inside their own collectives).
 *
 * Every rank but 0 reads rank 0's window W in a lock_all epoch and flushes, while rank 0 is
 * already inside the next window creation (MPI_Win_create, MPI_Win_allocate,
 * MPI_Win_allocate_shared where every rank is on one node, MPI_Win_create_dynamic), which the
 * readers enter only once their flush returned. Over messages (FLEXRMA_TRANSPORT=am, as between
 * nodes) the get needs rank 0 to answer: a creation that waited in a blocking collective of the
 * library, serving nothing, never returned (the watchdog stops the test then). Each creation
 * also checks that the data read is W's. */
#include "common.h"
#include "nodes.h"

#include <unistd.h>

#define N 512 /* doubles in W */

typedef enum kind { CREATE, ALLOCATE, SHARED, DYNAMIC, NKINDS } kind;
static const char *const kind_name[NKINDS] = {"MPI_Win_create", "MPI_Win_allocate",
                                              "MPI_Win_allocate_shared",
                                              "MPI_Win_create_dynamic"};

/* The creation rank 0 is inside while the others read; then freed. */
static void create_and_free(kind k)
{
    MPI_Win w2;
    void *base = NULL, *mem = NULL;
    switch (k) {
    case CREATE:
        MPI_Alloc_mem(1024, MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, 1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
        break;
    case ALLOCATE:
        MPI_Win_allocate(1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w2);
        break;
    case SHARED:
        MPI_Win_allocate_shared(1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w2);
        break;
    default:
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
        break;
    }
    MPI_Win_free(&w2);
    if (mem)
        MPI_Free_mem(mem);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    int shared_ok = on_one_node(MPI_COMM_WORLD);
    tap_plan(NKINDS);
    double *base, *buf = xmalloc(N * sizeof *buf);
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int i = 0; i < N; i++)
        base[i] = rank * 1000.0 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    for (kind k = 0; k < NKINDS; k++) {
        if (k == SHARED && !shared_ok) {
            skip(1, "the ranks are on several nodes: no shared window");
            continue;
        }
        MPI_Win_lock_all(0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        int good = 1;
        if (rank != 0) {
            usleep(100000); /* rank 0 is inside the creation by now */
            for (int i = 0; i < N; i++)
                buf[i] = -1.0;
            MPI_Get(buf, N, MPI_DOUBLE, 0, 0, N, MPI_DOUBLE, win);
            MPI_Win_flush(0, win);
            for (int i = 0; i < N; i++)
                good &= buf[i] == (double)i;
        }
        create_and_free(k);
        MPI_Win_unlock_all(win);
        ok(good, "a get and flush to rank 0 while it is inside %s: served, right data",
           kind_name[k]);
    }
    MPI_Win_free(&win);
    free(buf);
    return test_done();
}
