/* flexrma.h - public interface of flexrma, a PMPI shim that implements MPI one-sided
 * communication and the proposed MPI-3 synchronization extensions over an existing MPI.
 *
 * Programs written against plain MPI-2 need nothing from this header: preload libflexrma or
 * link it before libmpi. Include it to use the extensions:
 *  - synchronization counters (NEC's proposal for MPI-3): MPI_Sync, MPI_Handle_sync,
 *    MPI_Win_Sync_alloc_objects/free_objects, MPI_Win_sync_ops_init, MPI_Win_sync_object_init;
 *  - request-returning RMA: MPI_Iput, MPI_Iget, MPI_Iaccumulate, MPIX_Put_signal;
 *  - dynamic window membership: MPI_Win_change_comm;
 *  - notified RMA: the MPI Forum's draft (MPI_Put_notify, MPI_Get_notify,
 *    MPI_Win_notify_set_num/get_value/set_value, MPI_ERR_INVALID_NOTIFICATION), and Open MPI's
 *    extension under its MPIX_ names (MPIX_Win_create_notify ... MPIX_Win_test_notify);
 * with the proposal's names and argument orders, so code written against the slides compiles
 * unchanged. flexrma's own additions carry the MPIX_ prefix. docs/specification.md holds the
 * semantics. Every function is also defined as PMPI_<name>, as an MPI library does. */
#ifndef FLEXRMA_H
#define FLEXRMA_H

#include <mpi.h>

#define FLEXRMA_VERSION_MAJOR 0
#define FLEXRMA_VERSION_MINOR 2
#define FLEXRMA_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---- synchronization counters ---- */

/* A counter owned by one member of a window. A value: copy it, send it to other members with
 * MPI_Handle_sync, use it there on the same window. */
typedef struct MPI_Sync {
    unsigned long long mpix_opaque_[3];
} MPI_Sync;

/* The datatype of one MPI_Sync; valid between MPI_Init and MPI_Finalize. */
extern MPI_Datatype MPI_Handle_sync;
/* Its Fortran handle (MPI_Type_c2f), set at the same time: the Fortran module flexrma_f08 binds
 * its MPI_Handle_sync to this variable. */
extern MPI_Fint mpix_handle_sync_f;

/* A counter that refers to nothing; MPI_Win_Sync_free_objects stores it into freed entries. */
#define MPIX_SYNC_NULL ((MPI_Sync){{0, 0, 0}})

/* sync_mode bits of MPI_Win_sync_ops_init, OR-able; 0 means "no operations, just signal". */
#define MPI_MODE_WIN_PUT 1
#define MPI_MODE_WIN_GET 2
#define MPI_MODE_WIN_ACCUMULATE 4

/* Info keys (value "true" or "false"):
 * MPIX_INFO_SYNC_REMOTE_COMPLETE, on MPI_Win_sync_ops_init: MPI_Wait/MPI_Test complete the
 *   request only once its bump has been applied at the target.
 * MPIX_INFO_SYNC_AUTO_RESTART, on either init call: a completion reported by a test or wait
 *   function starts the request again at once, as if MPI_Start followed. */
#define MPIX_INFO_SYNC_REMOTE_COMPLETE "mpix_sync_remote_complete"
#define MPIX_INFO_SYNC_AUTO_RESTART "mpix_sync_auto_restart"

int MPI_Win_Sync_alloc_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win, MPI_Info info);
int MPI_Win_Sync_free_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win);
int MPI_Win_sync_ops_init(int target_rank, int sync_mode, MPI_Sync sync_counter, MPI_Win win,
                          MPI_Info info, MPI_Request *req);
int MPI_Win_sync_object_init(MPI_Sync sync_counter, int count, MPI_Win win, MPI_Info info,
                             MPI_Request *req);

/* Add delta (positive or negative) to the count a sync-object request waits for; the new count
 * must not be negative. On an active request it takes effect at once (it may complete it). */
int MPIX_Win_sync_object_change_count(MPI_Request req, int delta);
/* The bumps the counter holds that no sync-object request has consumed yet. Any member of the
 * window may read any counter (a round trip to the owner when it is another process). */
int MPIX_Win_sync_read(MPI_Sync sync_counter, MPI_Win win, MPI_Count *value);

int PMPI_Win_Sync_alloc_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win, MPI_Info info);
int PMPI_Win_Sync_free_objects(int n_sync, MPI_Sync sync_counters[], MPI_Win win);
int PMPI_Win_sync_ops_init(int target_rank, int sync_mode, MPI_Sync sync_counter, MPI_Win win,
                           MPI_Info info, MPI_Request *req);
int PMPI_Win_sync_object_init(MPI_Sync sync_counter, int count, MPI_Win win, MPI_Info info,
                              MPI_Request *req);
int PMPIX_Win_sync_object_change_count(MPI_Request req, int delta);
int PMPIX_Win_sync_read(MPI_Sync sync_counter, MPI_Win win, MPI_Count *value);

/* ---- request-returning RMA ---- */

/* The request completes when the operation is complete at the origin and at the target. */
int MPI_Iput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request *request);
int MPI_Iget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request);
int MPI_Iaccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request);
/* One put whose data is visible at the target before the bump of `counter` there can be
 * observed. Needs no epoch. */
int MPIX_Put_signal(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Sync counter, MPI_Win win);
int MPIX_Iput_signal(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Sync counter, MPI_Win win,
                     MPI_Request *request);

int PMPI_Iput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request);
int PMPI_Iget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request);
int PMPI_Iaccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request);
int PMPIX_Put_signal(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Sync counter, MPI_Win win);
int PMPIX_Iput_signal(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, int target_count,
                      MPI_Datatype target_datatype, MPI_Sync counter, MPI_Win win,
                      MPI_Request *request);

/* ---- dynamic window membership ---- */

/* Processes join and leave a window while it lives. Collective over every current member of
 * win and every joining process. new_comm holds exactly the members after the change (the
 * remaining members and the joiners; window ranks afterwards are new_comm ranks); a leaving
 * member passes MPI_COMM_NULL and keeps a window over itself alone. A joiner passes a window it
 * created over MPI_COMM_SELF with the memory it contributes; afterwards that handle is the
 * joined window. peer_rank: the rank in new_comm of a current member (the same on every caller).
 * Every epoch must be closed, as for MPI_Win_free; the fence epoch is closed afterwards. */
int MPI_Win_change_comm(MPI_Comm new_comm, int peer_rank, MPI_Win win);
int PMPI_Win_change_comm(MPI_Comm new_comm, int peer_rank, MPI_Win win);

/* ---- notified RMA: the MPI Forum's draft (mpi-issues #59, as Intel MPI ships it) ---- */

/* Each member of a window owns notification counters 0..num-1 (MPI_Win_notify_set_num,
 * collective); MPI_Put_notify/MPI_Get_notify increment the target's counter notification_idx
 * once the put's data is visible there / the get has read its data. */
int MPI_Win_notify_set_num(MPI_Win win, MPI_Info info, int notification_num);
int MPI_Win_notify_get_value(MPI_Win win, int notification_idx, MPI_Count *value);
int MPI_Win_notify_set_value(MPI_Win win, int notification_idx, MPI_Count value);
int MPI_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, int notification_idx, MPI_Win win);
int MPI_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, int notification_idx, MPI_Win win);
int PMPI_Win_notify_set_num(MPI_Win win, MPI_Info info, int notification_num);
int PMPI_Win_notify_get_value(MPI_Win win, int notification_idx, MPI_Count *value);
int PMPI_Win_notify_set_value(MPI_Win win, int notification_idx, MPI_Count value);
int PMPI_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, int notification_idx, MPI_Win win);
int PMPI_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, int notification_idx, MPI_Win win);

/* The error class of a wrong notification index or a window without notification counters:
 * made by MPI_Init (MPI_Add_error_class), MPI_ERR_OTHER before. A macro, so that programs
 * testing #ifdef MPI_ERR_INVALID_NOTIFICATION (Intel's samples) find the draft's API. */
extern int mpix_err_invalid_notification;
#define MPI_ERR_INVALID_NOTIFICATION mpix_err_invalid_notification

/* ---- notified RMA: Open MPI's extension (mpiext notified_rma), source compatible ---- */

/* Programs test this before using the calls below (Open MPI's <mpi-ext.h> defines it). */
#ifndef OMPI_HAVE_MPI_EXT_NOTIFIED_RMA
#define OMPI_HAVE_MPI_EXT_NOTIFIED_RMA 1
#endif
/* Notification ids run from 0 to this, inclusive (Open MPI: its mpi_max_notification_idx). */
#define MPIX_MAX_NOTIFICATION_IDX 1023

int MPIX_Win_create_notify(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           MPI_Win *win);
int MPIX_Win_allocate_notify(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win);
int MPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_id);
int MPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_id);
/* Wait for (test for) one notification with this id, and take it. */
int MPIX_Win_wait_notify(MPI_Win win, int notification_id);
int MPIX_Win_test_notify(MPI_Win win, int notification_id, int *flag);
int PMPIX_Win_create_notify(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            MPI_Win *win);
int PMPIX_Win_allocate_notify(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                              void *baseptr, MPI_Win *win);
int PMPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win, int notification_id);
int PMPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win, int notification_id);
int PMPIX_Win_wait_notify(MPI_Win win, int notification_id);
int PMPIX_Win_test_notify(MPI_Win win, int notification_id, int *flag);

#ifdef __cplusplus
}
#endif

#endif
