/* mpi3_reject.c - MPI-3 RMA calls on a flexrma window fail with a clear error naming the call
 * (class MPI_ERR_UNSUPPORTED_OPERATION); on a native window they pass through untouched.
 * flexrma windows implement the MPI-2 chapter; these calls would need MPI-3 semantics (unified
 * memory model, flush, atomics) flexrma does not provide on them. */
#include "progress/entry.h"
#include "core/next.h"

#define FR_REJECT(name, params, args, win_arg)                                                    \
    FR_API int MPI_##name params                                                                  \
    {                                                                                             \
        FR_WIN_ENTRY(win_arg, FR_NEXT(name) args);                                                \
        FR_WIN_EXIT("MPI_" #name,                                                                 \
                    fr_errorf(FR_ERR_MPI3, "MPI_" #name " is an MPI-3 call; flexrma windows "     \
                                           "implement MPI-2 one-sided communication"));           \
    }                                                                                             \
    FR_PMPI(name);

#define ORIGIN const void *oa, int oc, MPI_Datatype ot
#define TARGET int tr, MPI_Aint td, int tc, MPI_Datatype tt
#define RESULT void *ra, int rc_, MPI_Datatype rt

FR_REJECT(Win_attach, (MPI_Win win, void *base, MPI_Aint size), (win, base, size), win)
FR_REJECT(Win_detach, (MPI_Win win, const void *base), (win, base), win)
FR_REJECT(Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *du, void *bp),
          (win, rank, size, du, bp), win)
FR_REJECT(Rput, (ORIGIN, TARGET, MPI_Win win, MPI_Request *r), (oa, oc, ot, tr, td, tc, tt, win, r),
          win)
FR_REJECT(Rget, (void *oa, int oc, MPI_Datatype ot, TARGET, MPI_Win win, MPI_Request *r),
          (oa, oc, ot, tr, td, tc, tt, win, r), win)
FR_REJECT(Raccumulate, (ORIGIN, TARGET, MPI_Op op, MPI_Win win, MPI_Request *r),
          (oa, oc, ot, tr, td, tc, tt, op, win, r), win)
FR_REJECT(Rget_accumulate, (ORIGIN, RESULT, TARGET, MPI_Op op, MPI_Win win, MPI_Request *r),
          (oa, oc, ot, ra, rc_, rt, tr, td, tc, tt, op, win, r), win)
