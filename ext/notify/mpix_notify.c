/* mpix_notify.c - Open MPI's notified RMA extension (Bull/Atos, mpiext "notified_rma"), source
 * compatible under its MPIX_ names: MPIX_Win_create_notify, MPIX_Win_allocate_notify,
 * MPIX_Put_notify, MPIX_Get_notify (the notification id after the window),
 * MPIX_Win_wait_notify, MPIX_Win_test_notify (docs/specification.md, section 13.3).
 *
 * The same notification counters as the draft's calls (sync/notify.c): a window made by
 * MPIX_Win_create_notify or MPIX_Win_allocate_notify has MPIX_MAX_NOTIFICATION_IDX + 1 of them
 * per member, as if MPI_Win_notify_set_num followed the creation. Waiting for an id takes one
 * notification of it, so an id can be reused for the next communication. What Open MPI documents
 * for a window made without notifications (a put is a plain put, a wait returns at once) holds
 * here too; the draft's calls raise MPI_ERR_INVALID_NOTIFICATION there instead. */
#include "flexrma.h"
#include "api/rma_notify.h"
#include "api/rma_ops.h"
#include "core/next.h"
#include "progress/entry.h"
#include "sync/notify.h"

#define NOTIFY_IDS (MPIX_MAX_NOTIFICATION_IDX + 1)

/* The window just made gets its counters (collective like the creation). */
static int with_counters(MPI_Win win, const char *call)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, call));
    FR_WIN_EXIT(call, fr_notify_set_num(w, NOTIFY_IDS));
}

FR_API int MPIX_Win_create_notify(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                                  MPI_Comm comm, MPI_Win *win)
{
    int rc = MPI_Win_create(base, size, disp_unit, info, comm, win);
    return rc != MPI_SUCCESS ? rc : with_counters(*win, "MPIX_Win_create_notify");
}
FR_PMPIX(Win_create_notify);

FR_API int MPIX_Win_allocate_notify(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    int rc = MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    return rc != MPI_SUCCESS ? rc : with_counters(*win, "MPIX_Win_allocate_notify");
}
FR_PMPIX(Win_allocate_notify);

static int check_id(int id)
{
    if (id < 0 || id > MPIX_MAX_NOTIFICATION_IDX)
        return fr_errorf(FR_ERR_NOTIFICATION, "notification id %d is outside [0, %d]", id,
                         MPIX_MAX_NOTIFICATION_IDX);
    return MPI_SUCCESS;
}

FR_API int MPIX_Put_notify(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Win win,
                           int notification_id)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Put_notify"));
    FR_WIN_EXIT("MPIX_Put_notify", fr_rma_notified(w, FR_OP_PUT, origin_addr, origin_count,
                                                   origin_datatype, target_rank, target_disp,
                                                   target_count, target_datatype,
                                                   notification_id, 1));
}
FR_PMPIX(Put_notify);

FR_API int MPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Win win, int notification_id)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Get_notify"));
    FR_WIN_EXIT("MPIX_Get_notify", fr_rma_notified(w, FR_OP_GET, origin_addr, origin_count,
                                                   origin_datatype, target_rank, target_disp,
                                                   target_count, target_datatype,
                                                   notification_id, 1));
}
FR_PMPIX(Get_notify);

FR_API int MPIX_Win_wait_notify(MPI_Win win, int notification_id)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Win_wait_notify"));
    int rc = check_id(notification_id);
    if (rc == MPI_SUCCESS && fr_notify_count(w) > 0)
        rc = fr_notify_wait(w, notification_id);
    FR_WIN_EXIT("MPIX_Win_wait_notify", rc);
}
FR_PMPIX(Win_wait_notify);

FR_API int MPIX_Win_test_notify(MPI_Win win, int notification_id, int *flag)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Win_test_notify"));
    int rc = check_id(notification_id);
    if (rc == MPI_SUCCESS && !flag)
        rc = fr_errorf(FR_ERR_ARG, "flag is NULL");
    int got = 1; /* a window without notifications: as if it had arrived */
    if (rc == MPI_SUCCESS && fr_notify_count(w) > 0)
        rc = fr_notify_take(w, notification_id, &got);
    if (rc == MPI_SUCCESS)
        *flag = got;
    FR_WIN_EXIT("MPIX_Win_test_notify", rc);
}
FR_PMPIX(Win_test_notify);
