! tap_f08.f90 - TAP output for the Fortran tests, through the C helper every MPI test uses
! (tests/tap.c, via tap_f.c): every rank records its results, tap_done (collective) prints them
! as one stream on rank 0. Call sites: the OK and IS macros of tap_f08.h.
module tap_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_long_long, c_char, c_null_char
  implicit none
  private
  public :: tap_plan, tap_ok_at, tap_is_at, tap_diag, tap_done

  interface
    subroutine tap_f_plan(n) bind(C, name="tap_f_plan")
      import :: c_int
      integer(c_int), value :: n
    end subroutine
    subroutine tap_f_ok(cond, desc, file, line) bind(C, name="tap_f_ok")
      import :: c_int, c_char
      integer(c_int), value :: cond, line
      character(kind=c_char) :: desc(*), file(*)
    end subroutine
    subroutine tap_f_is(got, expected, desc, file, line) bind(C, name="tap_f_is")
      import :: c_int, c_long_long, c_char
      integer(c_long_long), value :: got, expected
      character(kind=c_char) :: desc(*), file(*)
      integer(c_int), value :: line
    end subroutine
    subroutine tap_f_diag(msg) bind(C, name="tap_f_diag")
      import :: c_char
      character(kind=c_char) :: msg(*)
    end subroutine
    integer(c_int) function tap_f_done() bind(C, name="tap_f_done")
      import :: c_int
    end function
  end interface

contains

  subroutine tap_plan(n)
    integer, intent(in) :: n
    call tap_f_plan(n)
  end subroutine

  subroutine tap_ok_at(cond, desc, file, line)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: desc, file
    integer, intent(in) :: line
    call tap_f_ok(merge(1, 0, cond), desc // c_null_char, file // c_null_char, line)
  end subroutine

  subroutine tap_is_at(got, expected, desc, file, line)
    integer(c_long_long), intent(in) :: got, expected
    character(len=*), intent(in) :: desc, file
    integer, intent(in) :: line
    call tap_f_is(got, expected, desc // c_null_char, file // c_null_char, line)
  end subroutine

  subroutine tap_diag(msg)
    character(len=*), intent(in) :: msg
    call tap_f_diag(msg // c_null_char)
  end subroutine

  ! 0 when every rank passed everything (collective over MPI_COMM_WORLD).
  integer function tap_done()
    tap_done = tap_f_done()
  end function
end module tap_f08
