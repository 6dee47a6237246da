/* type_hooks.c - MPI_Type_free: a datatype still used by queued RMA operations must stay alive
 * until they complete ("communication currently using this datatype completes normally"), and
 * targets that cached it may forget it. The registry (dtype.c) decides. */
#include "dtype/dtype.h"
#include "core/next.h"
#include "transport/transport.h"

FR_API int MPI_Type_free(MPI_Datatype *datatype)
{
    if (!fr_active)
        return FR_NEXT(Type_free)(datatype);
    FR_ENTER();
    uint64_t forget;
    int rc = fr_dtype_user_free(datatype, &forget);
    if (forget)
        fr_windows_forget_type(forget); /* targets that cached it may drop it */
    FR_LEAVE();
    return rc == MPI_SUCCESS ? rc : fr_comm_raise(MPI_COMM_WORLD, "MPI_Type_free", rc);
}
FR_PMPI(Type_free);
