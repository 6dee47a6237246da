! t_f08_iops.F90 - request-returning RMA from Fortran (flexrma_f08): MPI_Iput of a vector, of a
! rank-2 array and of a scalar into the right neighbour, MPI_Iget of them back, MPI_Iaccumulate,
! all in one lock_all epoch, each request's completion meaning the data is at the target; and an
! array section with strides refused with MPI_ERR_BUFFER through ierror (MPI_ERRORS_RETURN).
#include "tap_f08.h"
program t_f08_iops
  use mpi_f08
  use flexrma_f08
  use tap_f08
  implicit none
  integer, parameter :: N = 16
  integer :: rank, nprocs, left, right, rc, cls
  double precision, asynchronous :: buf(N)
  double precision, asynchronous :: vec(4), mat(2, 3), scalar, addend, back(4), stride(8)
  type(MPI_Win) :: win
  type(MPI_Request) :: req(3)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call tap_plan(9)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)
  buf = 0
  call MPI_Win_create(buf, int(N * 8, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_lock_all(0, win)

  ! Into the right neighbour: vec at 0..3, mat at 4..9, scalar at 10; plus rank+1 added at 11.
  vec = [1, 2, 3, 4] + 10d0 * rank
  mat = reshape([5, 6, 7, 8, 9, 10], [2, 3]) + 10d0 * rank
  scalar = 11 + 10d0 * rank
  call MPI_Iput(vec, 4, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, 4, &
                MPI_DOUBLE_PRECISION, win, req(1), rc)
  IS(rc, MPI_SUCCESS, "MPI_Iput of a vector")
  call MPI_Iput(mat, 6, MPI_DOUBLE_PRECISION, right, 4_MPI_ADDRESS_KIND, 6, &
                MPI_DOUBLE_PRECISION, win, req(2))
  call MPI_Iput(scalar, 1, MPI_DOUBLE_PRECISION, right, 10_MPI_ADDRESS_KIND, 1, &
                MPI_DOUBLE_PRECISION, win, req(3))
  call MPI_Waitall(3, req, MPI_STATUSES_IGNORE)
  addend = rank + 1
  call MPI_Iaccumulate(addend, 1, MPI_DOUBLE_PRECISION, right, 11_MPI_ADDRESS_KIND, 1, &
                       MPI_DOUBLE_PRECISION, MPI_SUM, win, req(1), rc)
  IS(rc, MPI_SUCCESS, "MPI_Iaccumulate")
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_Barrier(MPI_COMM_WORLD) ! every request completed: the data is at every target

  call MPI_Win_sync(win)
  call MPI_F_sync_reg(buf)
  OK(all(buf(1:4) == [1, 2, 3, 4] + 10d0 * left), "MPI_Iput's vector is at the target")
  OK(all(buf(5:10) == [5, 6, 7, 8, 9, 10] + 10d0 * left), "MPI_Iput's rank-2 array, in order")
  OK(buf(11) == 11 + 10d0 * left, "MPI_Iput's scalar")
  OK(buf(12) == left + 1, "MPI_Iaccumulate's sum")

  ! Back from the right neighbour: what I put there.
  back = -1
  call MPI_Iget(back, 4, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, 4, &
                MPI_DOUBLE_PRECISION, win, req(1), rc)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_F_sync_reg(back)
  OK(rc == MPI_SUCCESS .and. all(back == vec), "MPI_Iget reads back what I put")

  ! A section with strides cannot be passed as one block: refused, the request null. (Aimed at
  ! cells nobody checks, so that a put let through shows only here.)
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  stride = 0
  call MPI_Iput(stride(1:8:2), 4, MPI_DOUBLE_PRECISION, right, 12_MPI_ADDRESS_KIND, 4, &
                MPI_DOUBLE_PRECISION, win, req(1), rc)
  cls = -1
  if (rc /= MPI_SUCCESS) call MPI_Error_class(rc, cls)
  IS(cls, MPI_ERR_BUFFER, "MPI_Iput of a strided section: MPI_ERR_BUFFER")
  OK(req(1) == MPI_REQUEST_NULL, "and no request")

  call MPI_Win_unlock_all(win)
  call MPI_Win_free(win)
  rc = tap_done()
  call MPI_Finalize()
  if (rc /= 0) error stop 1
end program t_f08_iops
