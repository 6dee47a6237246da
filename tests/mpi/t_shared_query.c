/* t_shared_query.c - MPI_Win_shared_query on windows of MPI_Win_allocate and MPI_Win_create
 * (MPI-4.1 allows it there): each member's memory that this process can load and store, with
 * its size and unit, and size 0 and a NULL base for any other member's.
 *
 * A node peer's window is answered when this process maps all of it (transport/direct.c):
 * MPI_Win_allocate memory and MPI_Alloc_mem memory under MPI_Win_create (segments), and an
 * MPI_Win_create window of whole pages in ordinary memory (adopted in place); not memory of
 * MPI_Win_allocate with alloc_shm=false, nor a window whose end pages are shared with other
 * data (only its whole pages are mapped), nor anything of a member on another node
 * (FLEXRMA_TEST_NODES), nor anything at all under FLEXRMA_TRANSPORT=am or FLEXRMA_DIRECT=0. The
 * caller's own window is always answered. For each kind of window, the answers must match that,
 * the memory answered must hold the member's data (loads) and take stores that the member sees,
 * and MPI_PROC_NULL names the first member with memory here. A dynamic window is MPI_ERR_RMA_FLAVOR
 * (MPI-4.1 names the three other flavors). Rank 1 has an empty window when there are more than
 * two ranks; every member has a unit of its own. Linked with the internal library: it reads
 * fr_opt and which members are node peers. */
#include "common.h"
#include "transport/transport.h"
#include "win/win.h"

#include <unistd.h>

typedef enum kind { K_ALLOCATE, K_ALLOCATE_HEAP, K_CREATE_ALLOC_MEM, K_CREATE_PAGES,
                    K_CREATE_UNALIGNED, K_COUNT } kind;
static const char *const kind_name[] = {"MPI_Win_allocate", "MPI_Win_allocate, alloc_shm=false",
                                        "MPI_Win_create over MPI_Alloc_mem memory",
                                        "MPI_Win_create over whole pages",
                                        "MPI_Win_create over part pages"};

static size_t page;
#define MARK 64 /* bytes each member stores into its right neighbour's window, at 64 * rank */

static MPI_Aint bytes_of(int r) { return r == 1 && nprocs > 2 ? 0 : (MPI_Aint)(2 * page); }
static int unit_of(int r) { return r + 1; }
static unsigned char bv(int r, size_t off, int e) { return (unsigned char)pat(r, (int)off, e); }

typedef struct {
    kind k;
    MPI_Win win;
    unsigned char *base; /* my window */
    void *block;         /* what to free */
} qwin;

static void qwin_make(qwin *q, kind k)
{
    MPI_Aint bytes = bytes_of(rank);
    q->k = k;
    q->block = NULL;
    if (k == K_ALLOCATE || k == K_ALLOCATE_HEAP) {
        MPI_Info info = MPI_INFO_NULL;
        if (k == K_ALLOCATE_HEAP) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "alloc_shm", "false");
        }
        MPI_Win_allocate(bytes, unit_of(rank), info, MPI_COMM_WORLD, &q->base, &q->win);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    } else {
        if (k == K_CREATE_ALLOC_MEM)
            MPI_Alloc_mem(3 * (MPI_Aint)page, MPI_INFO_NULL, &q->block);
        else if (posix_memalign(&q->block, page, 3 * page) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        memset(q->block, 0, 3 * page);
        q->base = (unsigned char *)q->block + (k == K_CREATE_UNALIGNED ? 8 : 0);
        MPI_Win_create(q->base, bytes, unit_of(rank), MPI_INFO_NULL, MPI_COMM_WORLD, &q->win);
    }
    MPI_Win_set_errhandler(q->win, MPI_ERRORS_RETURN);
}

static void qwin_free(qwin *q)
{
    MPI_Win_free(&q->win);
    if (q->k == K_CREATE_ALLOC_MEM)
        MPI_Free_mem(q->block);
    else
        free(q->block);
}

/* Should this process load and store member r's window of kind k? */
static int reachable(const qwin *q, int r)
{
    if (r == rank)
        return 1;
    int mapped = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct &&
                 fr_win_lookup(q->win)->peers[r].tp == &fr_tp_shm && bytes_of(r) > 0;
    switch (q->k) {
    case K_ALLOCATE:
    case K_CREATE_ALLOC_MEM: return mapped;
    case K_CREATE_PAGES: return mapped && fr_adopt_enabled(NULL);
    default: return 0;
    }
}

/* Part 1 (5 tests per kind): the answers for me and for the others, loads and stores through
 * them, MPI_PROC_NULL. */
static void query(qwin *q, int e)
{
    const char *name = kind_name[q->k];
    unsigned char *at[16] = {0};
    MPI_Aint size;
    int unit, rc = MPI_SUCCESS, answers = 1, expected = 0;
    for (int r = 0; r < nprocs; r++) {
        void *p = NULL;
        rc |= MPI_Win_shared_query(q->win, r, &size, &unit, &p);
        at[r] = p;
        int reach = reachable(q, r);
        expected += reach && r != rank;
        if (r == rank)
            continue;
        if (reach)
            answers &= p != NULL && size == bytes_of(r) && unit == unit_of(r);
        else
            answers &= p == NULL && size == 0 && unit == unit_of(r);
    }
    MPI_Aint my_size;
    int my_unit;
    rc |= MPI_Win_shared_query(q->win, rank, &my_size, &my_unit, &at[rank]);
    ok(rc == MPI_SUCCESS && at[rank] == q->base && my_size == bytes_of(rank) &&
           my_unit == unit_of(rank), "%s: my own window, size and unit", name);
    ok(rc == MPI_SUCCESS && answers, "%s: every other member's size and unit, its memory where "
                                     "I map all of it (%d members)", name, expected);

    /* loads of every member's data, then stores into my right neighbour's window */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, q->win);
    for (MPI_Aint o = 0; o < bytes_of(rank); o++)
        q->base[o] = bv(rank, (size_t)o, e);
    MPI_Win_sync(q->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(q->win);
    int loads = 1;
    for (int r = 0; r < nprocs; r++)
        for (MPI_Aint o = 0; at[r] && r != rank && o < bytes_of(r); o++)
            loads &= at[r][o] == bv(r, (size_t)o, e);
    MPI_Barrier(MPI_COMM_WORLD);
    int stored = at[right()] != NULL && right() != rank && bytes_of(right()) > 0, by_left = 0;
    for (int o = 0; stored && o < MARK; o++)
        at[right()][MARK * rank + o] = bv(rank, (size_t)o, e + 1);
    MPI_Win_sync(q->win);
    MPI_Sendrecv(&stored, 1, MPI_INT, right(), 5, &by_left, 1, MPI_INT, left(), 5,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(q->win);
    int seen = 1;
    for (int o = 0; by_left && o < MARK; o++)
        seen &= q->base[MARK * left() + o] == bv(left(), (size_t)o, e + 1);
    MPI_Win_unlock_all(q->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(loads, "%s: loads of every member's memory answered see its data", name);
    ok(seen, "%s: my left neighbour's stores through the answer are in my window (%s)", name,
       by_left ? "it stored" : "it had no answer");

    int first = -1;
    for (int r = 0; r < nprocs && first < 0; r++)
        if (bytes_of(r) > 0 && reachable(q, r))
            first = r;
    void *p = &rc;
    rc = MPI_Win_shared_query(q->win, MPI_PROC_NULL, &size, &unit, &p);
    if (first >= 0)
        ok(rc == MPI_SUCCESS && p == at[first] && size == bytes_of(first) &&
               unit == unit_of(first),
           "%s: MPI_PROC_NULL names the first member with memory here (rank %d)", name, first);
    else
        ok(rc == MPI_SUCCESS && p == NULL && size == 0,
           "%s: MPI_PROC_NULL with no memory here: size 0, NULL", name);
}

/* Part 2 (1 test): not on a dynamic window; the outputs stay as they were. */
static void dynamic(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint size = -1;
    int unit = -1, cls = MPI_SUCCESS;
    void *p = &win;
    int rc = MPI_Win_shared_query(win, rank, &size, &unit, &p);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    ok(cls == MPI_ERR_RMA_FLAVOR && size == -1 && unit == -1 && p == &win,
       "MPI_Win_create_dynamic: MPI_ERR_RMA_FLAVOR, nothing written");
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    test_max_ranks(16);
    page = (size_t)sysconf(_SC_PAGESIZE);
    tap_plan(K_COUNT * 5 + 1);
    for (int k = 0; k < K_COUNT; k++) {
        qwin q;
        qwin_make(&q, (kind)k);
        query(&q, 10 * k);
        qwin_free(&q);
    }
    dynamic();
    return test_done();
}
