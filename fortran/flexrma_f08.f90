! flexrma_f08.f90 - the Fortran 2008 bindings of the calls flexrma adds to MPI (flexrma.h,
! docs/specification.md section 14). Used beside the MPI library's own module:
!
!     use mpi_f08
!     use flexrma_f08
!
! The bindings follow mpi_f08's conventions: handles are mpi_f08's types (TYPE(MPI_Win), ...),
! flexrma's counter handle is TYPE(MPI_Sync), choice buffers are TYPE(*), DIMENSION(..) (and
! ASYNCHRONOUS where mpi_f08's MPI_Put and MPI_Win_create have it), displacements and sizes are
! INTEGER(KIND=MPI_ADDRESS_KIND), counter values INTEGER(KIND=MPI_COUNT_KIND), flags LOGICAL, and
! ierror is optional. Each procedure calls its C function through flexrma_f08.c, which converts
! the handles. A buffer must be contiguous (an array section with strides is refused with
! MPI_ERR_BUFFER): the library may still read or write it after the call returns.
module flexrma_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long, c_int64_t, c_intptr_t, c_ptr
  use mpi_f08, only: MPI_Win, MPI_Comm, MPI_Request, MPI_Datatype, MPI_Info, MPI_Op, &
                     MPI_ADDRESS_KIND, MPI_COUNT_KIND
  implicit none
  private

  ! TYPE(MPI_Sync), MPIX_SYNC_NULL, the sync_mode bits, the info keys, MPIX_MAX_NOTIFICATION_IDX
  ! and the version: written from flexrma.h by f08_constants at build time.
  include 'flexrma_f08_constants.inc'

  ! Made by MPI_Init: bound to the library's own variables, so they hold the C values.
  type(MPI_Datatype), bind(C, name="mpix_handle_sync_f"), protected :: MPI_Handle_sync
  integer(c_int), bind(C, name="mpix_err_invalid_notification"), protected :: &
      MPI_ERR_INVALID_NOTIFICATION

  public :: MPI_Sync, MPIX_SYNC_NULL, MPI_Handle_sync
  public :: MPI_MODE_WIN_PUT, MPI_MODE_WIN_GET, MPI_MODE_WIN_ACCUMULATE
  public :: MPIX_INFO_SYNC_REMOTE_COMPLETE, MPIX_INFO_SYNC_AUTO_RESTART
  public :: MPI_ERR_INVALID_NOTIFICATION, MPIX_MAX_NOTIFICATION_IDX
  public :: FLEXRMA_VERSION_MAJOR, FLEXRMA_VERSION_MINOR, FLEXRMA_VERSION_PATCH
  public :: MPI_Win_Sync_alloc_objects, MPI_Win_Sync_free_objects, MPI_Win_sync_ops_init, &
            MPI_Win_sync_object_init, MPIX_Win_sync_object_change_count, MPIX_Win_sync_read
  public :: MPI_Iput, MPI_Iget, MPI_Iaccumulate, MPIX_Put_signal, MPIX_Iput_signal
  public :: MPI_Win_change_comm
  public :: MPI_Win_notify_set_num, MPI_Win_notify_get_value, MPI_Win_notify_set_value, &
            MPI_Put_notify, MPI_Get_notify
  public :: MPIX_Win_create_notify, MPIX_Win_allocate_notify, MPIX_Put_notify, MPIX_Get_notify, &
            MPIX_Win_wait_notify, MPIX_Win_test_notify

  ! The C side (flexrma_f08.c): handles as their MPI_VAL, counters by reference, MPI_Aint as
  ! c_intptr_t and MPI_Count as c_int64_t (passing MPI_ADDRESS_KIND and MPI_COUNT_KIND
  ! integers to them fails to compile if the kinds ever differ).
  interface
    integer(c_int) function c_win_sync_alloc_objects(n_sync, sync_counters, win, info) &
        bind(C, name="flexrma_f08_win_sync_alloc_objects")
      import :: c_int, MPI_Sync
      integer(c_int), value :: n_sync, win, info
      type(MPI_Sync) :: sync_counters(*)
    end function

    integer(c_int) function c_win_sync_free_objects(n_sync, sync_counters, win) &
        bind(C, name="flexrma_f08_win_sync_free_objects")
      import :: c_int, MPI_Sync
      integer(c_int), value :: n_sync, win
      type(MPI_Sync) :: sync_counters(*)
    end function

    integer(c_int) function c_win_sync_ops_init(target_rank, sync_mode, sync_counter, win, info, &
        req) bind(C, name="flexrma_f08_win_sync_ops_init")
      import :: c_int, MPI_Sync
      integer(c_int), value :: target_rank, sync_mode, win, info
      type(MPI_Sync), intent(in) :: sync_counter
      integer(c_int), intent(out) :: req
    end function

    integer(c_int) function c_win_sync_object_init(sync_counter, count, win, info, req) &
        bind(C, name="flexrma_f08_win_sync_object_init")
      import :: c_int, MPI_Sync
      type(MPI_Sync), intent(in) :: sync_counter
      integer(c_int), value :: count, win, info
      integer(c_int), intent(out) :: req
    end function

    integer(c_int) function c_win_sync_object_change_count(req, delta) &
        bind(C, name="flexrma_f08_win_sync_object_change_count")
      import :: c_int
      integer(c_int), value :: req, delta
    end function

    integer(c_int) function c_win_sync_read(sync_counter, win, value) &
        bind(C, name="flexrma_f08_win_sync_read")
      import :: c_int, MPI_Sync, c_int64_t
      type(MPI_Sync), intent(in) :: sync_counter
      integer(c_int), value :: win
      integer(c_int64_t), intent(out) :: value
    end function

    integer(c_int) function c_iput(origin_addr, origin_count, origin_datatype, target_rank, &
        target_disp, target_count, target_datatype, win, request) bind(C, name="flexrma_f08_iput")
      import :: c_int, c_intptr_t
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win
      integer(c_intptr_t), value :: target_disp
      integer(c_int), intent(out) :: request
    end function

    integer(c_int) function c_iget(origin_addr, origin_count, origin_datatype, target_rank, &
        target_disp, target_count, target_datatype, win, request) bind(C, name="flexrma_f08_iget")
      import :: c_int, c_intptr_t
      type(*), dimension(..), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win
      integer(c_intptr_t), value :: target_disp
      integer(c_int), intent(out) :: request
    end function

    integer(c_int) function c_iaccumulate(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, op, win, request) &
        bind(C, name="flexrma_f08_iaccumulate")
      import :: c_int, c_intptr_t
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, op, win
      integer(c_intptr_t), value :: target_disp
      integer(c_int), intent(out) :: request
    end function

    integer(c_int) function c_put_signal(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, counter, win) &
        bind(C, name="flexrma_f08_put_signal")
      import :: c_int, c_intptr_t, MPI_Sync
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win
      integer(c_intptr_t), value :: target_disp
      type(MPI_Sync), intent(in) :: counter
    end function

    integer(c_int) function c_iput_signal(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, counter, win, request) &
        bind(C, name="flexrma_f08_iput_signal")
      import :: c_int, c_intptr_t, MPI_Sync
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win
      integer(c_intptr_t), value :: target_disp
      type(MPI_Sync), intent(in) :: counter
      integer(c_int), intent(out) :: request
    end function

    integer(c_int) function c_win_change_comm(new_comm, peer_rank, win) &
        bind(C, name="flexrma_f08_win_change_comm")
      import :: c_int
      integer(c_int), value :: new_comm, peer_rank, win
    end function

    integer(c_int) function c_win_notify_set_num(win, info, notification_num) &
        bind(C, name="flexrma_f08_win_notify_set_num")
      import :: c_int
      integer(c_int), value :: win, info, notification_num
    end function

    integer(c_int) function c_win_notify_get_value(win, notification_idx, value) &
        bind(C, name="flexrma_f08_win_notify_get_value")
      import :: c_int, c_int64_t
      integer(c_int), value :: win, notification_idx
      integer(c_int64_t), intent(out) :: value
    end function

    integer(c_int) function c_win_notify_set_value(win, notification_idx, value) &
        bind(C, name="flexrma_f08_win_notify_set_value")
      import :: c_int, c_int64_t
      integer(c_int), value :: win, notification_idx
      integer(c_int64_t), value :: value
    end function

    integer(c_int) function c_put_notify(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, notification_idx, win) &
        bind(C, name="flexrma_f08_put_notify")
      import :: c_int, c_intptr_t
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, notification_idx, win
      integer(c_intptr_t), value :: target_disp
    end function

    integer(c_int) function c_get_notify(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, notification_idx, win) &
        bind(C, name="flexrma_f08_get_notify")
      import :: c_int, c_intptr_t
      type(*), dimension(..), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, notification_idx, win
      integer(c_intptr_t), value :: target_disp
    end function

    integer(c_int) function c_win_create_notify(base, size, disp_unit, info, comm, win) &
        bind(C, name="flexrma_f08_win_create_notify")
      import :: c_int, c_intptr_t
      type(*), dimension(..), asynchronous :: base
      integer(c_intptr_t), value :: size
      integer(c_int), value :: disp_unit, info, comm
      integer(c_int), intent(out) :: win
    end function

    integer(c_int) function c_win_allocate_notify(size, disp_unit, info, comm, baseptr, win) &
        bind(C, name="flexrma_f08_win_allocate_notify")
      import :: c_int, c_ptr, c_intptr_t
      integer(c_intptr_t), value :: size
      integer(c_int), value :: disp_unit, info, comm
      type(c_ptr), intent(out) :: baseptr
      integer(c_int), intent(out) :: win
    end function

    integer(c_int) function c_mpix_put_notify(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, notification_id) &
        bind(C, name="flexrma_f08_mpix_put_notify")
      import :: c_int, c_intptr_t
      type(*), dimension(..), intent(in), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win, notification_id
      integer(c_intptr_t), value :: target_disp
    end function

    integer(c_int) function c_mpix_get_notify(origin_addr, origin_count, origin_datatype, &
        target_rank, target_disp, target_count, target_datatype, win, notification_id) &
        bind(C, name="flexrma_f08_mpix_get_notify")
      import :: c_int, c_intptr_t
      type(*), dimension(..), asynchronous :: origin_addr
      integer(c_int), value :: origin_count, origin_datatype, target_rank, target_count, &
                               target_datatype, win, notification_id
      integer(c_intptr_t), value :: target_disp
    end function

    integer(c_int) function c_win_wait_notify(win, notification_id) &
        bind(C, name="flexrma_f08_win_wait_notify")
      import :: c_int
      integer(c_int), value :: win, notification_id
    end function

    integer(c_int) function c_win_test_notify(win, notification_id, flag) &
        bind(C, name="flexrma_f08_win_test_notify")
      import :: c_int
      integer(c_int), value :: win, notification_id
      integer(c_int), intent(out) :: flag
    end function
  end interface

contains

  ! ---- synchronization counters ----

  subroutine MPI_Win_Sync_alloc_objects(n_sync, sync_counters, win, info, ierror)
    integer, intent(in) :: n_sync
    type(MPI_Sync), intent(out) :: sync_counters(*)
    type(MPI_Win), intent(in) :: win
    type(MPI_Info), intent(in) :: info
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_alloc_objects(n_sync, sync_counters, win%MPI_VAL, info%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  ! Freed entries become MPIX_SYNC_NULL.
  subroutine MPI_Win_Sync_free_objects(n_sync, sync_counters, win, ierror)
    integer, intent(in) :: n_sync
    type(MPI_Sync), intent(inout) :: sync_counters(*)
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_free_objects(n_sync, sync_counters, win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Win_sync_ops_init(target_rank, sync_mode, sync_counter, win, info, req, ierror)
    integer, intent(in) :: target_rank, sync_mode
    type(MPI_Sync), intent(in) :: sync_counter
    type(MPI_Win), intent(in) :: win
    type(MPI_Info), intent(in) :: info
    type(MPI_Request), intent(out) :: req
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_ops_init(target_rank, sync_mode, sync_counter, win%MPI_VAL, info%MPI_VAL, &
                              req%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Win_sync_object_init(sync_counter, count, win, info, req, ierror)
    type(MPI_Sync), intent(in) :: sync_counter
    integer, intent(in) :: count
    type(MPI_Win), intent(in) :: win
    type(MPI_Info), intent(in) :: info
    type(MPI_Request), intent(out) :: req
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_object_init(sync_counter, count, win%MPI_VAL, info%MPI_VAL, req%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Win_sync_object_change_count(req, delta, ierror)
    type(MPI_Request), intent(in) :: req
    integer, intent(in) :: delta
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_object_change_count(req%MPI_VAL, delta)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Win_sync_read(sync_counter, win, value, ierror)
    type(MPI_Sync), intent(in) :: sync_counter
    type(MPI_Win), intent(in) :: win
    integer(MPI_COUNT_KIND), intent(out) :: value
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_sync_read(sync_counter, win%MPI_VAL, value)
    if (present(ierror)) ierror = err
  end subroutine

  ! ---- request-returning RMA ----

  subroutine MPI_Iput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                      target_count, target_datatype, win, request, ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_iput(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, target_disp, &
                 target_count, target_datatype%MPI_VAL, win%MPI_VAL, request%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Iget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                      target_count, target_datatype, win, request, ierror)
    type(*), dimension(..), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_iget(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, target_disp, &
                 target_count, target_datatype%MPI_VAL, win%MPI_VAL, request%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Iaccumulate(origin_addr, origin_count, origin_datatype, target_rank, &
                             target_disp, target_count, target_datatype, op, win, request, ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Op), intent(in) :: op
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_iaccumulate(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                        target_disp, target_count, target_datatype%MPI_VAL, op%MPI_VAL, &
                        win%MPI_VAL, request%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Put_signal(origin_addr, origin_count, origin_datatype, target_rank, &
                             target_disp, target_count, target_datatype, counter, win, ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Sync), intent(in) :: counter
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_put_signal(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                       target_disp, target_count, target_datatype%MPI_VAL, counter, win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Iput_signal(origin_addr, origin_count, origin_datatype, target_rank, &
                              target_disp, target_count, target_datatype, counter, win, request, &
                              ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Sync), intent(in) :: counter
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_iput_signal(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                        target_disp, target_count, target_datatype%MPI_VAL, counter, &
                        win%MPI_VAL, request%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  ! ---- dynamic window membership ----

  subroutine MPI_Win_change_comm(new_comm, peer_rank, win, ierror)
    type(MPI_Comm), intent(in) :: new_comm
    integer, intent(in) :: peer_rank
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_change_comm(new_comm%MPI_VAL, peer_rank, win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  ! ---- notified RMA: the MPI Forum's draft ----

  subroutine MPI_Win_notify_set_num(win, info, notification_num, ierror)
    type(MPI_Win), intent(in) :: win
    type(MPI_Info), intent(in) :: info
    integer, intent(in) :: notification_num
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_notify_set_num(win%MPI_VAL, info%MPI_VAL, notification_num)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Win_notify_get_value(win, notification_idx, value, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: notification_idx
    integer(MPI_COUNT_KIND), intent(out) :: value
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_notify_get_value(win%MPI_VAL, notification_idx, value)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Win_notify_set_value(win, notification_idx, value, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: notification_idx
    integer(MPI_COUNT_KIND), intent(in) :: value
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_notify_set_value(win%MPI_VAL, notification_idx, value)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Put_notify(origin_addr, origin_count, origin_datatype, target_rank, &
                            target_disp, target_count, target_datatype, notification_idx, win, &
                            ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count, notification_idx
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_put_notify(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                       target_disp, target_count, target_datatype%MPI_VAL, notification_idx, &
                       win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPI_Get_notify(origin_addr, origin_count, origin_datatype, target_rank, &
                            target_disp, target_count, target_datatype, notification_idx, win, &
                            ierror)
    type(*), dimension(..), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count, notification_idx
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_get_notify(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                       target_disp, target_count, target_datatype%MPI_VAL, notification_idx, &
                       win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  ! ---- notified RMA: Open MPI's extension ----

  subroutine MPIX_Win_create_notify(base, size, disp_unit, info, comm, win, ierror)
    type(*), dimension(..), asynchronous :: base
    integer(MPI_ADDRESS_KIND), intent(in) :: size
    integer, intent(in) :: disp_unit
    type(MPI_Info), intent(in) :: info
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Win), intent(out) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_create_notify(base, size, disp_unit, info%MPI_VAL, comm%MPI_VAL, win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  ! baseptr: a C pointer, as mpi_f08's MPI_Win_allocate gives it (C_F_POINTER maps it).
  subroutine MPIX_Win_allocate_notify(size, disp_unit, info, comm, baseptr, win, ierror)
    integer(MPI_ADDRESS_KIND), intent(in) :: size
    integer, intent(in) :: disp_unit
    type(MPI_Info), intent(in) :: info
    type(MPI_Comm), intent(in) :: comm
    type(c_ptr), intent(out) :: baseptr
    type(MPI_Win), intent(out) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_allocate_notify(size, disp_unit, info%MPI_VAL, comm%MPI_VAL, baseptr, win%MPI_VAL)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Put_notify(origin_addr, origin_count, origin_datatype, target_rank, &
                             target_disp, target_count, target_datatype, win, notification_id, &
                             ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count, notification_id
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_mpix_put_notify(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                            target_disp, target_count, target_datatype%MPI_VAL, win%MPI_VAL, &
                            notification_id)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Get_notify(origin_addr, origin_count, origin_datatype, target_rank, &
                             target_disp, target_count, target_datatype, win, notification_id, &
                             ierror)
    type(*), dimension(..), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count, notification_id
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_mpix_get_notify(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                            target_disp, target_count, target_datatype%MPI_VAL, win%MPI_VAL, &
                            notification_id)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Win_wait_notify(win, notification_id, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: notification_id
    integer, optional, intent(out) :: ierror
    integer :: err
    err = c_win_wait_notify(win%MPI_VAL, notification_id)
    if (present(ierror)) ierror = err
  end subroutine

  subroutine MPIX_Win_test_notify(win, notification_id, flag, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: notification_id
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierror
    integer :: err
    integer(c_int) :: c_flag
    c_flag = 0
    err = c_win_test_notify(win%MPI_VAL, notification_id, c_flag)
    flag = c_flag /= 0
    if (present(ierror)) ierror = err
  end subroutine

end module flexrma_f08
