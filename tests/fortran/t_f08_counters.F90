! t_f08_counters.F90 - the synchronization counters from Fortran (flexrma_f08): every rank puts
! into its right neighbour under a sync-ops request and waits for its left neighbour's bump with a
! sync-object request, three rounds; then put-with-signal, read with MPIX_Win_sync_read,
! consumed by a sync-object request whose count MPIX_Win_sync_object_change_count lowers; and
! MPI_Win_Sync_free_objects leaves MPIX_SYNC_NULL behind.
#include "tap_f08.h"
program t_f08_counters
  use mpi_f08
  use flexrma_f08
  use tap_f08
  implicit none
  integer, parameter :: ROUNDS = 3
  integer :: rank, nprocs, left, right, it, rc
  logical :: is_null
  integer, asynchronous :: buf(4)
  integer :: val
  integer(MPI_COUNT_KIND) :: held
  type(MPI_Win) :: win
  type(MPI_Sync) :: mine(1)
  type(MPI_Sync), allocatable :: everyone(:)
  type(MPI_Request) :: put_req, got_req, sig_req
  integer(MPI_ADDRESS_KIND) :: disp

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call tap_plan(ROUNDS + 10)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)
  buf = -1
  call MPI_Win_create(buf, int(size(buf) * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, &
                      MPI_COMM_WORLD, win)

  ! My counter, and everyone's: counters travel as MPI_Handle_sync.
  allocate(everyone(0:nprocs - 1))
  call MPI_Win_Sync_alloc_objects(1, mine, win, MPI_INFO_NULL, rc)
  IS(rc, MPI_SUCCESS, "MPI_Win_Sync_alloc_objects")
  call MPI_Allgather(mine, 1, MPI_Handle_sync, everyone, 1, MPI_Handle_sync, MPI_COMM_WORLD)
  OK(any(everyone(rank)%MPIX_OPAQUE /= MPIX_SYNC_NULL%MPIX_OPAQUE), "my counter is not MPIX_SYNC_NULL")

  call MPI_Win_sync_ops_init(right, MPI_MODE_WIN_PUT, everyone(right), win, MPI_INFO_NULL, put_req)
  call MPI_Win_sync_object_init(mine(1), 1, win, MPI_INFO_NULL, got_req)
  disp = 0
  do it = 1, ROUNDS
    val = 100 * rank + it
    call MPI_Start(put_req)
    call MPI_Put(val, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
    call MPI_Wait(put_req, MPI_STATUS_IGNORE)
    call MPI_Start(got_req)
    call MPI_Wait(got_req, MPI_STATUS_IGNORE)
    call MPI_F_sync_reg(buf)
    IS(buf(1), 100 * left + it, "round's value from the left neighbour, after its bump")
    call MPI_Barrier(MPI_COMM_WORLD) ! before the left neighbour overwrites it
  end do
  call MPI_Request_free(put_req)
  call MPI_Request_free(got_req)

  ! Put-with-signal: the data is there before the bump can be seen.
  val = 1000 + rank
  disp = 1
  call MPIX_Put_signal(val, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, everyone(right), win, rc)
  IS(rc, MPI_SUCCESS, "MPIX_Put_signal")
  held = 0
  do while (held == 0)
    call MPIX_Win_sync_read(mine(1), win, held)
  end do
  call MPI_F_sync_reg(buf)
  IS(held, 1, "MPIX_Win_sync_read sees the one bump")
  IS(buf(2), 1000 + left, "the signalled put's data is there once its bump is")
  call MPI_Barrier(MPI_COMM_WORLD) ! every rank has read 1 before the next bump

  ! MPIX_Iput_signal completes once the bump is applied: after the barrier it is held twice.
  val = 2000 + rank
  disp = 2
  call MPIX_Iput_signal(val, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, everyone(right), win, &
                        sig_req)
  call MPI_Wait(sig_req, MPI_STATUS_IGNORE)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPIX_Win_sync_read(mine(1), win, held)
  call MPI_F_sync_reg(buf)
  IS(held, 2, "MPIX_Iput_signal's bump is applied when its request completes")
  IS(buf(3), 2000 + left, "MPIX_Iput_signal's data")

  ! A sync-object request for 3, lowered to 2 once started, consumes both bumps.
  call MPI_Win_sync_object_init(mine(1), 3, win, MPI_INFO_NULL, got_req)
  call MPI_Start(got_req)
  call MPIX_Win_sync_object_change_count(got_req, -1, rc)
  IS(rc, MPI_SUCCESS, "MPIX_Win_sync_object_change_count")
  call MPI_Wait(got_req, MPI_STATUS_IGNORE)
  call MPIX_Win_sync_read(mine(1), win, held)
  IS(held, 0, "the request consumed exactly the two bumps")
  call MPI_Request_free(got_req)

  call MPI_Barrier(MPI_COMM_WORLD) ! nobody still uses my counter
  call MPI_Win_Sync_free_objects(1, mine, win, rc)
  is_null = all(mine(1)%MPIX_OPAQUE == MPIX_SYNC_NULL%MPIX_OPAQUE)
  OK(rc == MPI_SUCCESS .and. is_null, "MPI_Win_Sync_free_objects leaves MPIX_SYNC_NULL")

  call MPI_Win_free(win)
  deallocate(everyone) ! a main program's variables are saved: never freed at its end
  rc = tap_done()
  call MPI_Finalize()
  if (rc /= 0) error stop 1
end program t_f08_counters
