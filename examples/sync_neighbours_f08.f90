! sync_neighbours_f08.f90 - sync_neighbours.c in Fortran 2008 (use mpi_f08, use flexrma_f08): a
! 1-D halo exchange synchronized only with the synchronization counters of NEC's proposal, no
! fence, lock or barrier in the loop. Each process waits for exactly its two neighbours, and
! only once their data is in its memory.
!
! A periodic row of nprocs*N cells, N per process, smoothed by u'(i) = (u(i-1) + 2 u(i) + u(i+1))/4.
! Every process keeps its cells in u(1:N) and two ghost cells, u(0) and u(N+1); u is its window.
! Every process owns two counters:
!   halo  bumped by a neighbour once its put into my ghost cells is in my window;
!   free  bumped by a neighbour once it has used the ghost cells I put into it.
! One iteration: (after the first) wait for both neighbours' "free"; put my edge cells into their
! ghost cells under sync-ops requests on their "halo" counters; wait for my "halo" (one bump per
! neighbour); apply the stencil; signal both neighbours' "free" (sync_mode 0: no operation).
!
! Usage: mpirun -np P ./sync_neighbours_f08 [iterations]
! Rank 0 compares the result with the same stencil computed serially and prints a checksum;
! every process exits 0 if they agree, 1 otherwise.
program sync_neighbours_f08
  use mpi_f08
  use flexrma_f08
  implicit none
  integer, parameter :: N = 64, HALO = 1, FREE = 2
  integer :: rank, nprocs, left, right, iterations, it, k, nn, wrong, first, c
  integer :: nbr(2)
  character(len=16) :: arg
  double precision, asynchronous :: u(0:N + 1)
  double precision, allocatable :: row(:), expect(:)
  double precision :: sum
  type(MPI_Win) :: win
  type(MPI_Sync) :: mine(2)
  type(MPI_Sync), allocatable :: everyone(:, :)
  type(MPI_Request) :: put(2), signal_free(2), halo_filled, ghosts_free

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)
  iterations = 100
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) iterations
  end if

  u = 0
  u(1:N) = [(initial(rank * N + k - 1), k = 1, N)]
  call MPI_Win_create(u, int(8 * (N + 2), MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)

  ! My counters, and everyone's: counters travel as MPI_Handle_sync.
  allocate(everyone(2, 0:nprocs - 1))
  call MPI_Win_Sync_alloc_objects(2, mine, win, MPI_INFO_NULL)
  call MPI_Allgather(mine, 2, MPI_Handle_sync, everyone, 2, MPI_Handle_sync, MPI_COMM_WORLD)

  ! The distinct neighbours: two, or one (both sides) with two processes, or myself alone.
  nn = 1
  nbr(1) = left
  if (right /= left) then
    nn = 2
    nbr(2) = right
  end if
  do k = 1, nn
    call MPI_Win_sync_ops_init(nbr(k), MPI_MODE_WIN_PUT, everyone(HALO, nbr(k)), win, &
                               MPI_INFO_NULL, put(k))
    call MPI_Win_sync_ops_init(nbr(k), 0, everyone(FREE, nbr(k)), win, MPI_INFO_NULL, &
                               signal_free(k))
  end do
  call MPI_Win_sync_object_init(mine(HALO), nn, win, MPI_INFO_NULL, halo_filled)
  call MPI_Win_sync_object_init(mine(FREE), nn, win, MPI_INFO_NULL, ghosts_free)

  do it = 1, iterations
    if (it > 1) then
      call MPI_Start(ghosts_free)
      call MPI_Wait(ghosts_free, MPI_STATUS_IGNORE)
    end if
    call MPI_Startall(nn, put)
    call MPI_Put(u(1), 1, MPI_DOUBLE_PRECISION, left, int(N + 1, MPI_ADDRESS_KIND), 1, &
                 MPI_DOUBLE_PRECISION, win)
    call MPI_Put(u(N), 1, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, 1, &
                 MPI_DOUBLE_PRECISION, win)
    call MPI_Waitall(nn, put, MPI_STATUSES_IGNORE)
    call MPI_Start(halo_filled)
    call MPI_Wait(halo_filled, MPI_STATUS_IGNORE)
    call MPI_F_sync_reg(u)
    u(1:N) = (u(0:N - 1) + 2 * u(1:N) + u(2:N + 1)) * 0.25d0
    call MPI_Startall(nn, signal_free)
    call MPI_Waitall(nn, signal_free, MPI_STATUSES_IGNORE)
  end do
  if (iterations > 0) then ! the last signals: nothing is left in flight
    call MPI_Start(ghosts_free)
    call MPI_Wait(ghosts_free, MPI_STATUS_IGNORE)
  end if

  ! Check against the serial computation and print a checksum.
  allocate(row(0:nprocs * N - 1), expect(0:nprocs * N - 1))
  call MPI_Gather(u(1:N), N, MPI_DOUBLE_PRECISION, row, N, MPI_DOUBLE_PRECISION, 0, &
                  MPI_COMM_WORLD)
  wrong = 0
  if (rank == 0) then
    call serial(expect, nprocs * N, iterations)
    sum = 0
    first = -1
    do c = 0, nprocs * N - 1
      sum = sum + row(c) * row(c)
      if (row(c) /= expect(c)) then
        if (wrong == 0) first = c
        wrong = wrong + 1
      end if
    end do
    if (wrong == 0) then
      print '(a,i0,a,i0,a,g0.12,a)', 'sync_neighbours_f08: ', nprocs, ' ranks, ', iterations, &
            ' iterations, checksum ', sum, ', matches the serial stencil'
    else
      print '(a,i0,a,i0,a,i0,a,i0)', 'sync_neighbours_f08: ', nprocs, ' ranks, ', iterations, &
            ' iterations, ', wrong, ' WRONG cells, the first: ', first
    end if
  end if
  call MPI_Bcast(wrong, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)

  do k = 1, nn
    call MPI_Request_free(put(k))
    call MPI_Request_free(signal_free(k))
  end do
  call MPI_Request_free(halo_filled)
  call MPI_Request_free(ghosts_free)
  call MPI_Win_Sync_free_objects(2, mine, win)
  call MPI_Win_free(win)
  deallocate(everyone, row, expect) ! a main program's variables are saved: never freed at its end
  call MPI_Finalize()
  if (wrong /= 0) error stop 1

contains

  double precision function initial(cell)
    integer, intent(in) :: cell
    initial = modulo(cell * 37, 101)
  end function

  ! The same computation on the whole periodic row, on one process.
  subroutine serial(out, cells, iterations)
    integer, intent(in) :: cells, iterations
    double precision, intent(out) :: out(0:cells - 1)
    double precision :: v(0:cells + 1)
    integer :: i, step
    v(1:cells) = [(initial(i), i = 0, cells - 1)]
    do step = 1, iterations
      v(0) = v(cells)
      v(cells + 1) = v(1)
      v(1:cells) = (v(0:cells - 1) + 2 * v(1:cells) + v(2:cells + 1)) * 0.25d0
    end do
    out = v(1:cells)
  end subroutine
end program sync_neighbours_f08
