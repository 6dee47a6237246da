! consumer_f08.f90 - consumer.c in Fortran: a program built against an installed flexrma_f08, by
! pkg-config and by find_package(flexrma COMPONENTS Fortran) (run-install.sh). Each rank puts its
! rank into its right neighbour's window with MPI_Iput and prints "consumer: rank R ok" when its
! left neighbour's rank arrived.
program consumer_f08
  use mpi_f08
  use flexrma_f08
  implicit none
  integer :: rank, nprocs
  integer, asynchronous :: cell
  type(MPI_Win) :: win
  type(MPI_Request) :: req
  logical :: ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  cell = -1
  call MPI_Win_create(cell, 4_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  call MPI_Iput(rank, 1, MPI_INTEGER, modulo(rank + 1, nprocs), 0_MPI_ADDRESS_KIND, 1, &
                MPI_INTEGER, win, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Win_fence(0, win)
  call MPI_F_sync_reg(cell)
  ok = cell == modulo(rank - 1, nprocs)
  print '(a,i0,a)', 'consumer: rank ', rank, trim(merge(' ok   ', ' WRONG', ok))
  call MPI_Win_free(win)
  call MPI_Finalize()
  if (.not. ok) error stop 1
end program consumer_f08
