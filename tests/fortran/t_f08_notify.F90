! t_f08_notify.F90 - notified RMA from Fortran (flexrma_f08). The Forum draft's calls: every rank
! puts into its right neighbour with MPI_Put_notify and polls MPI_Win_notify_get_value for its
! left neighbour's notification, resets it with set_value, and reads back with MPI_Get_notify.
! Open MPI's extension: MPIX_Win_allocate_notify and MPIX_Win_create_notify windows,
! MPIX_Put_notify/MPIX_Get_notify, MPIX_Win_wait_notify and MPIX_Win_test_notify. And a bad index
! giving the class MPI_ERR_INVALID_NOTIFICATION through ierror (MPI_ERRORS_RETURN).
#include "tap_f08.h"
program t_f08_notify
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  use flexrma_f08
  use tap_f08
  implicit none
  integer, parameter :: DATA_IDX = 1, GET_IDX = 0, ID = 7
  integer :: rank, nprocs, left, right, rc, cls, val, got
  integer, asynchronous :: buf(4), created(2)
  integer, pointer, asynchronous :: mem(:)
  integer(MPI_COUNT_KIND) :: value
  logical :: flag
  type(MPI_Win) :: win, xwin, cwin
  type(c_ptr) :: baseptr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call tap_plan(15)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)

  ! ---- the draft's calls ----
  buf = -1
  call MPI_Win_create(buf, int(size(buf) * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, &
                      MPI_COMM_WORLD, win)
  call MPI_Win_notify_set_num(win, MPI_INFO_NULL, 2, rc)
  IS(rc, MPI_SUCCESS, "MPI_Win_notify_set_num")
  call MPI_Win_lock_all(0, win)
  val = 10 + rank
  call MPI_Put_notify(val, 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, DATA_IDX, &
                      win, rc)
  IS(rc, MPI_SUCCESS, "MPI_Put_notify")
  value = 0
  do while (value == 0)
    call MPI_Win_notify_get_value(win, DATA_IDX, value)
  end do
  call MPI_F_sync_reg(buf)
  IS(value, 1, "MPI_Win_notify_get_value counts the left neighbour's put")
  IS(buf(1), 10 + left, "its data is there once it is counted")
  call MPI_Win_notify_set_value(win, DATA_IDX, 0_MPI_COUNT_KIND, rc)
  call MPI_Win_notify_get_value(win, DATA_IDX, value)
  OK(rc == MPI_SUCCESS .and. value == 0, "MPI_Win_notify_set_value resets it")
  call MPI_Win_flush(right, win)
  call MPI_Barrier(MPI_COMM_WORLD)

  ! Read back what I put, notifying the right neighbour's counter GET_IDX.
  got = -1
  call MPI_Get_notify(got, 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, GET_IDX, &
                      win, rc)
  call MPI_Win_flush(right, win)
  IS(got, 10 + rank, "MPI_Get_notify reads what I put")
  value = 0
  do while (value == 0)
    call MPI_Win_notify_get_value(win, GET_IDX, value)
  end do
  IS(value, 1, "and the target counts it")

  ! A bad index: the error comes back through ierror.
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  call MPI_Win_notify_get_value(win, 2, value, rc)
  cls = -1
  if (rc /= MPI_SUCCESS) call MPI_Error_class(rc, cls)
  IS(cls, MPI_ERR_INVALID_NOTIFICATION, "get_value of index 2 of 2: MPI_ERR_INVALID_NOTIFICATION")
  call MPI_Put_notify(val, 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, -1, win, rc)
  cls = -1
  if (rc /= MPI_SUCCESS) call MPI_Error_class(rc, cls)
  IS(cls, MPI_ERR_INVALID_NOTIFICATION, "MPI_Put_notify to index -1: MPI_ERR_INVALID_NOTIFICATION")
  call MPI_Win_unlock_all(win)
  call MPI_Win_free(win)

  ! ---- Open MPI's extension ----
  call MPIX_Win_allocate_notify(int(4 * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &
                                baseptr, xwin, rc)
  IS(rc, MPI_SUCCESS, "MPIX_Win_allocate_notify")
  call c_f_pointer(baseptr, mem, [4])
  mem = -1
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock_all(0, xwin)
  call MPIX_Put_notify(val, 1, MPI_INTEGER, right, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, xwin, ID)
  call MPIX_Win_wait_notify(xwin, ID, rc)
  call MPI_F_sync_reg(mem)
  OK(rc == MPI_SUCCESS .and. mem(2) == 10 + left, "MPIX_Win_wait_notify, then the put's data")
  call MPIX_Win_test_notify(xwin, ID, flag, rc)
  OK(rc == MPI_SUCCESS .and. .not. flag, "MPIX_Win_test_notify: the one notification was taken")
  call MPI_Win_flush(right, xwin)
  call MPI_Barrier(MPI_COMM_WORLD)
  got = -1
  call MPIX_Get_notify(got, 1, MPI_INTEGER, right, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, xwin, ID + 1)
  call MPI_Win_flush(right, xwin)
  flag = .false.
  do while (.not. flag)
    call MPIX_Win_test_notify(xwin, ID + 1, flag)
  end do
  OK(got == 10 + rank, "MPIX_Get_notify reads what I put; its target is notified")
  call MPI_Win_set_errhandler(xwin, MPI_ERRORS_RETURN)
  call MPIX_Win_wait_notify(xwin, MPIX_MAX_NOTIFICATION_IDX + 1, rc)
  cls = -1
  if (rc /= MPI_SUCCESS) call MPI_Error_class(rc, cls)
  IS(cls, MPI_ERR_INVALID_NOTIFICATION, "MPIX_Win_wait_notify beyond MPIX_MAX_NOTIFICATION_IDX")
  call MPI_Win_unlock_all(xwin)
  call MPI_Win_free(xwin)

  created = -1
  call MPIX_Win_create_notify(created, int(2 * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, &
                              MPI_COMM_WORLD, cwin)
  call MPI_Win_lock_all(0, cwin)
  call MPIX_Put_notify(val, 1, MPI_INTEGER, right, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, cwin, 0)
  call MPIX_Win_wait_notify(cwin, 0)
  call MPI_F_sync_reg(created)
  IS(created(2), 10 + left, "MPIX_Win_create_notify's window over a Fortran array")
  call MPI_Win_unlock_all(cwin)
  call MPI_Win_free(cwin)

  rc = tap_done()
  call MPI_Finalize()
  if (rc /= 0) error stop 1
end program t_f08_notify
