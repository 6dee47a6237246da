/* windows.c - the fuzzer's windows: one of each flavor over MPI_COMM_WORLD, FZ_NW ints per rank
 * (MPI_Win_create over MPI_Alloc_mem memory with unit 4, MPI_Win_allocate with unit 1,
 * MPI_Win_create_dynamic with one attached region addressed by its address,
 * MPI_Win_allocate_shared with unit 1: the ranks of a test run on one node), each with one
 * counter per rank, one that its owner has freed and one nobody bumps. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

const char *const fz_flavor_name[FL_COUNT] = {"create", "allocate", "dynamic", "allocate_shared"};

/* Initial contents: slots zero, the bait region a pattern of the owner. */
static void fill_initial(int *p, int rank)
{
    for (int i = 0; i < FZ_NW; i++)
        p[i] = i < FZ_BAIT ? 0 : (rank + 1) * 100000 + i;
}

static void create_one(fz_win *w, fz_flavor fl, int rank, int nprocs)
{
    memset(w, 0, sizeof *w);
    w->flavor = fl;
    w->base = calloc((size_t)nprocs, sizeof(MPI_Aint));
    const MPI_Aint bytes = FZ_NW * sizeof(int);
    MPI_Aint mine = 0;
    switch (fl) {
    case FL_CREATE:
        w->unit = sizeof(int);
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->mem);
        MPI_Win_create(w->mem, bytes, w->unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        break;
    case FL_ALLOCATE:
        w->unit = 1;
        MPI_Win_allocate(bytes, w->unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win);
        break;
    case FL_SHARED:
        w->unit = 1;
        MPI_Win_allocate_shared(bytes, w->unit, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win);
        break;
    default:
        w->unit = 1;
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->mem);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->mem, bytes);
        MPI_Get_address(w->mem, &mine);
        break;
    }
    MPI_Allgather(&mine, 1, MPI_AINT, w->base, 1, MPI_AINT, MPI_COMM_WORLD);
    fz_win_errhandler_set(w->win);
    MPI_Win_notify_set_num(w->win, MPI_INFO_NULL, FZ_NOTIFY);
    fill_initial(w->mem, rank);
    memcpy(w->model, w->mem, sizeof w->model);
    w->last[0] = w->last[1] = -1;

    w->all = calloc((size_t)nprocs, sizeof(MPI_Sync));
    w->all_stale = calloc((size_t)nprocs, sizeof(MPI_Sync));
    MPI_Win_Sync_alloc_objects(1, &w->mine, w->win, MPI_INFO_NULL);
    MPI_Win_Sync_alloc_objects(1, &w->stale, w->win, MPI_INFO_NULL);
    MPI_Win_Sync_alloc_objects(1, &w->busy, w->win, MPI_INFO_NULL);
    MPI_Sync freed = w->stale;
    MPI_Win_Sync_free_objects(1, &freed, w->win); /* w->stale keeps the old value */
    MPI_Allgather(&w->mine, 1, MPI_Handle_sync, w->all, 1, MPI_Handle_sync, MPI_COMM_WORLD);
    MPI_Allgather(&w->stale, 1, MPI_Handle_sync, w->all_stale, 1, MPI_Handle_sync,
                  MPI_COMM_WORLD);
    int right = (rank + 1) % nprocs;
    MPI_Win_sync_ops_init(right, MPI_MODE_WIN_PUT, w->all[right], w->win, MPI_INFO_NULL,
                          &w->ops_req);
    MPI_Win_sync_object_init(w->mine, 1, w->win, MPI_INFO_NULL, &w->obj_req);
}

void fz_windows_create(fz_win w[FL_COUNT])
{
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int f = 0; f < FL_COUNT; f++)
        create_one(&w[f], (fz_flavor)f, rank, nprocs);
    MPI_Barrier(MPI_COMM_WORLD); /* every window initialized before anyone reaches it */
}

void fz_windows_free(fz_win w[FL_COUNT])
{
    MPI_Barrier(MPI_COMM_WORLD); /* no rank still reads a counter */
    for (int f = 0; f < FL_COUNT; f++) {
        MPI_Request_free(&w[f].ops_req);
        MPI_Request_free(&w[f].obj_req);
        MPI_Win_Sync_free_objects(1, &w[f].mine, w[f].win);
        MPI_Win_Sync_free_objects(1, &w[f].busy, w[f].win);
        if (w[f].flavor == FL_DYNAMIC)
            MPI_Win_detach(w[f].win, w[f].mem);
        MPI_Win_free(&w[f].win);
        if (w[f].flavor == FL_CREATE || w[f].flavor == FL_DYNAMIC)
            MPI_Free_mem(w[f].mem);
        free(w[f].base);
        free(w[f].all);
        free(w[f].all_stale);
    }
}

/* FNV-1a, 64 bits: any changed byte changes it. */
uint64_t fz_checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
