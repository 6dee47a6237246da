/* epochs.c - the epoch context a batch's erroneous calls run in, opened and closed by every rank
 * alike, and the valid put and get each rank makes in it: before the erroneous calls a put into
 * its slot at the right neighbour, after them a get of the slot it filled there in an earlier
 * batch. CX_NONE makes its erroneous calls outside any epoch; its valid put and get then run in
 * a fence epoch of their own. */
#include "fuzz.h"

#include <string.h>

const char *const fz_context_name[CX_COUNT] = {"none", "fence", "lock", "lock_all", "pscw", "counter"};

MPI_Group fz_left_group, fz_right_group;

static int put_src[FZ_SLOT], got[FZ_SLOT];

static int pattern(int rank, int batch, int j)
{
    return (rank + 1) * 1000003 + batch * 7919 + j * 31 + 1;
}

static int slot_index(const fz_run *r, int s, int origin)
{
    return (s * r->nprocs + origin) * FZ_SLOT;
}

void fz_epoch_open(fz_run *r)
{
    MPI_Win win = r->w->win;
    switch (r->cx) {
    case CX_FENCE:
        MPI_Win_fence(0, win);
        break;
    case CX_LOCK:
        MPI_Win_lock(r->lock_type, r->right, 0, win);
        break;
    case CX_LOCK_ALL:
        MPI_Win_lock_all(0, win);
        break;
    case CX_PSCW:
        MPI_Win_post(fz_left_group, 0, win);
        MPI_Win_start(fz_right_group, 0, win);
        break;
    case CX_COUNTER:
        MPI_Win_sync_object_init(r->w->mine, 1, win, MPI_INFO_NULL, &r->obj_active);
        MPI_Start(&r->obj_active);
        MPI_Win_sync_ops_init(r->right, MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET,
                              r->w->all[r->right], win, MPI_INFO_NULL, &r->ops_active);
        MPI_Start(&r->ops_active);
        MPI_Win_sync_object_init(r->w->busy, 1, win, MPI_INFO_NULL, &r->busy_active);
        MPI_Start(&r->busy_active);
        break;
    default:
        break;
    }
}

/* The valid put (returns its MPI return code). */
int fz_valid_put(fz_run *r)
{
    fz_win *w = r->w;
    int s = r->batch % 2;
    if (r->cx == CX_NONE)
        MPI_Win_fence(0, w->win);
    for (int j = 0; j < FZ_SLOT; j++)
        put_src[j] = pattern(r->rank, r->batch, j);
    return MPI_Put(put_src, FZ_SLOT, MPI_INT, r->right,
                   fz_disp(w, r->right, slot_index(r, s, r->rank)), FZ_SLOT, MPI_INT, w->win);
}

int fz_valid_get(fz_run *r)
{
    fz_win *w = r->w;
    int s = 1 - r->batch % 2;
    memset(got, 0xEE, sizeof got);
    return MPI_Get(got, FZ_SLOT, MPI_INT, r->right,
                   fz_disp(w, r->right, slot_index(r, s, r->rank)), FZ_SLOT, MPI_INT, w->win);
}

void fz_epoch_close(fz_run *r)
{
    MPI_Win win = r->w->win;
    switch (r->cx) {
    case CX_NONE:
    case CX_FENCE:
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        break;
    case CX_LOCK:
        MPI_Win_unlock(r->right, win);
        break;
    case CX_LOCK_ALL:
        MPI_Win_unlock_all(win);
        break;
    case CX_PSCW:
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        break;
    case CX_COUNTER: /* my operations and bump to right, then left's bump to me */
        MPI_Wait(&r->ops_active, MPI_STATUS_IGNORE);
        MPI_Wait(&r->obj_active, MPI_STATUS_IGNORE);
        MPI_Request_free(&r->ops_active);
        MPI_Request_free(&r->obj_active);
        MPI_Cancel(&r->busy_active);
        MPI_Wait(&r->busy_active, MPI_STATUS_IGNORE);
        MPI_Request_free(&r->busy_active);
        break;
    default:
        break;
    }
}

/* After the close: did the get bring what this rank put in the batch that last filled that
 * slot? Then the model takes this batch's put from the left neighbour. 1 if the data is right. */
int fz_valid_after(fz_run *r)
{
    fz_win *w = r->w;
    int s = r->batch % 2, prev = w->last[1 - s], right = 1;
    for (int j = 0; j < FZ_SLOT; j++)
        right &= got[j] == (prev < 0 ? 0 : pattern(r->rank, prev, j));
    if (!right)
        fprintf(stderr, "t_fuzz: [rank %d] seed %llu batch %d: the valid MPI_Get after the "
                        "erroneous calls brought %d, %d; expected what I put in batch %d\n",
                r->rank, (unsigned long long)r->seed, r->batch, got[0], got[1], prev);
    for (int j = 0; j < FZ_SLOT; j++)
        w->model[slot_index(r, s, r->left) + j] = pattern(r->left, r->batch, j);
    w->last[s] = r->batch;
    return right;
}
