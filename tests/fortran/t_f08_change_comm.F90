! t_f08_change_comm.F90 - MPI_Win_change_comm from Fortran (flexrma_f08): the last rank leaves a
! window over MPI_COMM_WORLD, keeping a window over itself alone; the others go on with a fence
! epoch in which each puts its rank into its right neighbour among them.
#include "tap_f08.h"
program t_f08_change_comm
  use mpi_f08
  use flexrma_f08
  use tap_f08
  implicit none
  integer :: rank, nprocs, rc, color, members, me, right, left
  integer, asynchronous :: buf(1)
  type(MPI_Win) :: win
  type(MPI_Comm) :: stay
  type(MPI_Group) :: group

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (rank == nprocs - 1) then
    call tap_plan(2) ! the leaver
  else
    call tap_plan(3)
  end if
  buf = -1
  call MPI_Win_create(buf, 4_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)

  color = 0
  if (rank == nprocs - 1) color = MPI_UNDEFINED
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, stay) ! MPI_COMM_NULL for the leaver
  call MPI_Win_change_comm(stay, 0, win, rc)
  IS(rc, MPI_SUCCESS, "MPI_Win_change_comm")
  call MPI_Win_get_group(win, group)
  call MPI_Group_size(group, members)
  call MPI_Group_free(group)

  if (rank == nprocs - 1) then
    IS(members, 1, "the leaver keeps a window over itself alone")
  else
    IS(members, nprocs - 1, "the window's group is the remaining members")
    call MPI_Comm_rank(stay, me)
    right = modulo(me + 1, members)
    left = modulo(me - 1, members)
    call MPI_Win_fence(0, win)
    call MPI_Put(me, 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call MPI_F_sync_reg(buf)
    IS(buf(1), left, "a put among the remaining members, by their new ranks")
    call MPI_Comm_free(stay)
  end if
  call MPI_Win_free(win)
  rc = tap_done()
  call MPI_Finalize()
  if (rc /= 0) error stop 1
end program t_f08_change_comm
