/* flexrma_f08.c - the C side of the Fortran 2008 module flexrma_f08 (flexrma_f08.f90): one
 * function per call flexrma adds, which the module's procedures reach through BIND(C)
 * interfaces. Each converts the Fortran handles (MPI_Fint, the MPI_VAL of mpi_f08's handle
 * types) with the MPI library's own MPI_X_f2c/c2f, and calls the C function, which raises its
 * errors through the window's (or communicator's) error handler as from C. A handle the call
 * returns is the null handle after an error.
 *
 * Choice buffers arrive as C descriptors (ISO_Fortran_binding.h: the module declares them
 * TYPE(*), DIMENSION(..), as MPICH's mpi_f08 does). A contiguous buffer is passed on as its base
 * address. A non-contiguous one (an array section with strides) is refused with MPI_ERR_BUFFER
 * through the error handler: an RMA operation may complete after the call returns, so the copy
 * the compiler would make for a contiguous dummy argument could be gone by then (Open MPI's
 * mpi_f08, MPI_SUBARRAYS_SUPPORTED false, leaves that case to the user; MPICH's builds a
 * datatype from the strides, which flexrma_f08 does not yet do).
 *
 * Nothing here is exported: the module's procedures, in the same library, are its only callers. */
#include <ISO_Fortran_binding.h>
#include <flexrma.h>
#include <mpi.h>

/* Whether the array a descriptor describes occupies one block of memory in array element order
 * (a scalar, rank 0, does; so does an assumed-size array, whose last extent is -1). */
static int f08_contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t stride = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        CFI_index_t n = d->dim[i].extent;
        if (n == 0)
            return 1; /* no element: nothing to be out of place */
        if (n > 1 && d->dim[i].sm != stride)
            return 0;
        if (n < 0)
            return i == d->rank - 1;
        stride *= n;
    }
    return 1;
}

/* The buffer's base address into *addr, or MPI_ERR_BUFFER raised on win. */
static int f08_win_buffer(const CFI_cdesc_t *d, MPI_Win win, void **addr)
{
    if (!f08_contiguous(d)) {
        MPI_Win_call_errhandler(win, MPI_ERR_BUFFER);
        return MPI_ERR_BUFFER;
    }
    *addr = d->base_addr;
    return MPI_SUCCESS;
}

/* ---- synchronization counters ---- */

int flexrma_f08_win_sync_alloc_objects(int n_sync, MPI_Sync *sync_counters, MPI_Fint win,
                                               MPI_Fint info)
{
    return MPI_Win_Sync_alloc_objects(n_sync, sync_counters, MPI_Win_f2c(win), MPI_Info_f2c(info));
}

int flexrma_f08_win_sync_free_objects(int n_sync, MPI_Sync *sync_counters, MPI_Fint win)
{
    return MPI_Win_Sync_free_objects(n_sync, sync_counters, MPI_Win_f2c(win));
}

int flexrma_f08_win_sync_ops_init(int target_rank, int sync_mode,
                                          const MPI_Sync *sync_counter, MPI_Fint win,
                                          MPI_Fint info, MPI_Fint *req)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Win_sync_ops_init(target_rank, sync_mode, *sync_counter, MPI_Win_f2c(win),
                                    MPI_Info_f2c(info), &r);
    *req = MPI_Request_c2f(r);
    return err;
}

int flexrma_f08_win_sync_object_init(const MPI_Sync *sync_counter, int count,
                                             MPI_Fint win, MPI_Fint info, MPI_Fint *req)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int err = MPI_Win_sync_object_init(*sync_counter, count, MPI_Win_f2c(win),
                                       MPI_Info_f2c(info), &r);
    *req = MPI_Request_c2f(r);
    return err;
}

int flexrma_f08_win_sync_object_change_count(MPI_Fint req, int delta)
{
    return MPIX_Win_sync_object_change_count(MPI_Request_f2c(req), delta);
}

int flexrma_f08_win_sync_read(const MPI_Sync *sync_counter, MPI_Fint win,
                                      MPI_Count *value)
{
    return MPIX_Win_sync_read(*sync_counter, MPI_Win_f2c(win), value);
}

/* ---- request-returning RMA ---- */

int flexrma_f08_iput(const CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_datatype,
                             int target_rank, MPI_Aint target_disp, int target_count,
                             MPI_Fint target_datatype, MPI_Fint win, MPI_Fint *request)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    MPI_Request r = MPI_REQUEST_NULL;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPI_Iput(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank, target_disp,
                       target_count, MPI_Type_f2c(target_datatype), w, &r);
    *request = MPI_Request_c2f(r);
    return err;
}

int flexrma_f08_iget(CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_datatype,
                             int target_rank, MPI_Aint target_disp, int target_count,
                             MPI_Fint target_datatype, MPI_Fint win, MPI_Fint *request)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    MPI_Request r = MPI_REQUEST_NULL;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPI_Iget(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank, target_disp,
                       target_count, MPI_Type_f2c(target_datatype), w, &r);
    *request = MPI_Request_c2f(r);
    return err;
}

int flexrma_f08_iaccumulate(const CFI_cdesc_t *origin, int origin_count,
                                    MPI_Fint origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Fint target_datatype, MPI_Fint op, MPI_Fint win,
                                    MPI_Fint *request)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    MPI_Request r = MPI_REQUEST_NULL;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPI_Iaccumulate(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                              target_disp, target_count, MPI_Type_f2c(target_datatype),
                              MPI_Op_f2c(op), w, &r);
    *request = MPI_Request_c2f(r);
    return err;
}

int flexrma_f08_put_signal(const CFI_cdesc_t *origin, int origin_count,
                                   MPI_Fint origin_datatype, int target_rank, MPI_Aint target_disp,
                                   int target_count, MPI_Fint target_datatype,
                                   const MPI_Sync *counter, MPI_Fint win)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPIX_Put_signal(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                              target_disp, target_count, MPI_Type_f2c(target_datatype), *counter,
                              w);
    return err;
}

int flexrma_f08_iput_signal(const CFI_cdesc_t *origin, int origin_count,
                                    MPI_Fint origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Fint target_datatype, const MPI_Sync *counter,
                                    MPI_Fint win, MPI_Fint *request)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    MPI_Request r = MPI_REQUEST_NULL;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPIX_Iput_signal(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                               target_disp, target_count, MPI_Type_f2c(target_datatype), *counter,
                               w, &r);
    *request = MPI_Request_c2f(r);
    return err;
}

/* ---- dynamic window membership ---- */

/* A joiner's handle stays its handle: the joined window (flexrma.h). */
int flexrma_f08_win_change_comm(MPI_Fint new_comm, int peer_rank, MPI_Fint win)
{
    return MPI_Win_change_comm(MPI_Comm_f2c(new_comm), peer_rank, MPI_Win_f2c(win));
}

/* ---- notified RMA: the MPI Forum's draft ---- */

int flexrma_f08_win_notify_set_num(MPI_Fint win, MPI_Fint info, int notification_num)
{
    return MPI_Win_notify_set_num(MPI_Win_f2c(win), MPI_Info_f2c(info), notification_num);
}

int flexrma_f08_win_notify_get_value(MPI_Fint win, int notification_idx, MPI_Count *value)
{
    return MPI_Win_notify_get_value(MPI_Win_f2c(win), notification_idx, value);
}

int flexrma_f08_win_notify_set_value(MPI_Fint win, int notification_idx, MPI_Count value)
{
    return MPI_Win_notify_set_value(MPI_Win_f2c(win), notification_idx, value);
}

int flexrma_f08_put_notify(const CFI_cdesc_t *origin, int origin_count,
                                   MPI_Fint origin_datatype, int target_rank, MPI_Aint target_disp,
                                   int target_count, MPI_Fint target_datatype,
                                   int notification_idx, MPI_Fint win)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPI_Put_notify(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                             target_disp, target_count, MPI_Type_f2c(target_datatype),
                             notification_idx, w);
    return err;
}

int flexrma_f08_get_notify(CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_datatype,
                                   int target_rank, MPI_Aint target_disp, int target_count,
                                   MPI_Fint target_datatype, int notification_idx, MPI_Fint win)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPI_Get_notify(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                             target_disp, target_count, MPI_Type_f2c(target_datatype),
                             notification_idx, w);
    return err;
}

/* ---- notified RMA: Open MPI's extension ---- */

int flexrma_f08_win_create_notify(CFI_cdesc_t *base, MPI_Aint size, int disp_unit,
                                          MPI_Fint info, MPI_Fint comm, MPI_Fint *win)
{
    MPI_Comm c = MPI_Comm_f2c(comm);
    MPI_Win w = MPI_WIN_NULL;
    int err;
    if (!f08_contiguous(base)) { /* no window yet: the communicator's handler */
        MPI_Comm_call_errhandler(c, MPI_ERR_BUFFER);
        err = MPI_ERR_BUFFER;
    } else {
        err = MPIX_Win_create_notify(base->base_addr, size, disp_unit, MPI_Info_f2c(info), c, &w);
    }
    *win = MPI_Win_c2f(w);
    return err;
}

/* baseptr: the module's TYPE(C_PTR), as mpi_f08's MPI_Win_allocate gives it. */
int flexrma_f08_win_allocate_notify(MPI_Aint size, int disp_unit, MPI_Fint info,
                                            MPI_Fint comm, void **baseptr, MPI_Fint *win)
{
    MPI_Win w = MPI_WIN_NULL;
    int err = MPIX_Win_allocate_notify(size, disp_unit, MPI_Info_f2c(info), MPI_Comm_f2c(comm),
                                       baseptr, &w);
    *win = MPI_Win_c2f(w);
    return err;
}

int flexrma_f08_mpix_put_notify(const CFI_cdesc_t *origin, int origin_count,
                                        MPI_Fint origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Fint target_datatype, MPI_Fint win,
                                        int notification_id)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPIX_Put_notify(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                              target_disp, target_count, MPI_Type_f2c(target_datatype), w,
                              notification_id);
    return err;
}

int flexrma_f08_mpix_get_notify(CFI_cdesc_t *origin, int origin_count,
                                        MPI_Fint origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Fint target_datatype, MPI_Fint win,
                                        int notification_id)
{
    MPI_Win w = MPI_Win_f2c(win);
    void *addr;
    int err = f08_win_buffer(origin, w, &addr);
    if (err == MPI_SUCCESS)
        err = MPIX_Get_notify(addr, origin_count, MPI_Type_f2c(origin_datatype), target_rank,
                              target_disp, target_count, MPI_Type_f2c(target_datatype), w,
                              notification_id);
    return err;
}

int flexrma_f08_win_wait_notify(MPI_Fint win, int notification_id)
{
    return MPIX_Win_wait_notify(MPI_Win_f2c(win), notification_id);
}

int flexrma_f08_win_test_notify(MPI_Fint win, int notification_id, int *flag)
{
    return MPIX_Win_test_notify(MPI_Win_f2c(win), notification_id, flag);
}
