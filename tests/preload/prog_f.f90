! prog_f.f90 - an unmodified Fortran MPI-2 program: Open MPI's Fortran bindings call the C
! PMPI_ functions, so this shows that flexrma's PMPI_ entry points take those calls over.
! Fence ring put, then a counter every rank increments under an exclusive lock. Prints one
! line per rank: "fortran rank R: bad B counter C" (expected: bad 0, counter = ranks).
program prog_f
  use mpi
  implicit none
  integer, parameter :: n = 8
  integer :: ierr, rank, nprocs, win, right, left, i, bad, one
  ! RMA changes these behind the compiler's back (MPI-3.1 section 17.1.17): volatile keeps it
  ! from reusing values it read before the synchronizing call.
  integer, volatile :: buf(n + 1), counter
  integer :: src(n)
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  buf = 0
  do i = 1, n
    src(i) = 100 * rank + i
  end do
  winsize = 4 * (n + 1)
  call MPI_Win_create(buf, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)

  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Put(src, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  bad = 0
  do i = 1, n
    if (buf(i) /= 100 * left + i) bad = bad + 1
  end do

  one = 1
  disp = n
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  counter = -1
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Get(counter, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_unlock(0, win, ierr)

  call MPI_Win_free(win, ierr)
  print '(A,I0,A,I0,A,I0)', 'fortran rank ', rank, ': bad ', bad, ' counter ', counter
  call MPI_Finalize(ierr)
end program prog_f
