! t_f08_constants.F90 - the constants of the module flexrma_f08 have the values of flexrma.h
! (constants_c.c gives the C values): the generated ones (sync_mode bits, info keys, limits,
! version, MPI_Sync's size and MPIX_SYNC_NULL), and the two MPI_Init makes
! (MPI_ERR_INVALID_NOTIFICATION, MPI_Handle_sync, which must also describe one MPI_Sync).
#include "tap_f08.h"
program t_f08_constants
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long, c_char, c_null_char, c_sizeof
  use mpi_f08
  use flexrma_f08
  use tap_f08
  implicit none
  interface
    integer(c_long_long) function f08c_int(name) bind(C, name="f08c_int")
      import :: c_long_long, c_char
      character(kind=c_char) :: name(*)
    end function
    integer(c_int) function f08c_err_invalid_notification() bind(C)
      import :: c_int
    end function
    integer(c_int) function f08c_handle_sync() bind(C)
      import :: c_int
    end function
    integer(c_int) function f08c_string_is(name, value) bind(C)
      import :: c_int, c_char
      character(kind=c_char) :: name(*), value(*)
    end function
    integer(c_int) function f08c_is_sync_null(s) bind(C)
      import :: c_int, MPI_Sync
      type(MPI_Sync), intent(in) :: s
    end function
  end interface
  integer :: rc, bytes
  character(len=MPI_MAX_ERROR_STRING) :: text
  type(MPI_Sync) :: s

  call MPI_Init()
  call tap_plan(16)
  IS(MPI_MODE_WIN_PUT, f08c_int("MPI_MODE_WIN_PUT" // c_null_char), "MPI_MODE_WIN_PUT")
  IS(MPI_MODE_WIN_GET, f08c_int("MPI_MODE_WIN_GET" // c_null_char), "MPI_MODE_WIN_GET")
  IS(MPI_MODE_WIN_ACCUMULATE, f08c_int("MPI_MODE_WIN_ACCUMULATE" // c_null_char), "MPI_MODE_WIN_ACCUMULATE")
  IS(MPIX_MAX_NOTIFICATION_IDX, f08c_int("MPIX_MAX_NOTIFICATION_IDX" // c_null_char), "MPIX_MAX_NOTIFICATION_IDX")
  IS(FLEXRMA_VERSION_MAJOR, f08c_int("FLEXRMA_VERSION_MAJOR" // c_null_char), "FLEXRMA_VERSION_MAJOR")
  IS(FLEXRMA_VERSION_MINOR, f08c_int("FLEXRMA_VERSION_MINOR" // c_null_char), "FLEXRMA_VERSION_MINOR")
  IS(FLEXRMA_VERSION_PATCH, f08c_int("FLEXRMA_VERSION_PATCH" // c_null_char), "FLEXRMA_VERSION_PATCH")
  IS(c_sizeof(s), f08c_int("sizeof(MPI_Sync)" // c_null_char), "TYPE(MPI_Sync) has the size of MPI_Sync")
  OK(f08c_is_sync_null(MPIX_SYNC_NULL) /= 0, "MPIX_SYNC_NULL")
  OK(f08c_string_is("MPIX_INFO_SYNC_REMOTE_COMPLETE" // c_null_char, MPIX_INFO_SYNC_REMOTE_COMPLETE // c_null_char) /= 0, "MPIX_INFO_SYNC_REMOTE_COMPLETE")
  OK(f08c_string_is("MPIX_INFO_SYNC_AUTO_RESTART" // c_null_char, MPIX_INFO_SYNC_AUTO_RESTART // c_null_char) /= 0, "MPIX_INFO_SYNC_AUTO_RESTART")

  ! Made by MPI_Init.
  IS(MPI_ERR_INVALID_NOTIFICATION, f08c_err_invalid_notification(), "MPI_ERR_INVALID_NOTIFICATION")
  OK(MPI_ERR_INVALID_NOTIFICATION /= MPI_ERR_OTHER, "MPI_ERR_INVALID_NOTIFICATION is a class of its own")
  call MPI_Error_string(MPI_ERR_INVALID_NOTIFICATION, text, rc)
  OK(index(text, "MPI_ERR_INVALID_NOTIFICATION") > 0, "and MPI_Error_string names it: " // trim(text))
  IS(MPI_Handle_sync%MPI_VAL, f08c_handle_sync(), "MPI_Handle_sync")
  call MPI_Type_size(MPI_Handle_sync, bytes)
  IS(bytes, c_sizeof(s), "MPI_Handle_sync describes one MPI_Sync")

  rc = tap_done()
  call MPI_Finalize()
  if (rc /= 0) error stop 1
end program t_f08_constants
