/* f08_constants.c - writes flexrma_f08_constants.inc, the constants of flexrma.h as Fortran
 * declarations, for the module flexrma_f08 (flexrma_f08.f90 includes it). Run at build time:
 * the values are the C compiler's own reading of the header, so the Fortran ones cannot drift
 * from them. The constants whose values MPI_Init makes (MPI_Handle_sync,
 * MPI_ERR_INVALID_NOTIFICATION) are not here: the module binds those to the library's variables.
 *
 * Usage: f08_constants OUTPUT */
#include <flexrma.h>
#include <stdio.h>

#define INT_CONST(f, name) fprintf(f, "  integer, parameter :: %s = %d\n", #name, (int)(name))
#define STRING_CONST(f, name) \
    fprintf(f, "  character(len=*), parameter :: %s = \"%s\"\n", #name, name)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: f08_constants OUTPUT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "! flexrma_f08_constants.inc - written by f08_constants from flexrma.h at build "
               "time; do not edit.\n");
    INT_CONST(f, FLEXRMA_VERSION_MAJOR);
    INT_CONST(f, FLEXRMA_VERSION_MINOR);
    INT_CONST(f, FLEXRMA_VERSION_PATCH);
    /* MPI_Sync: the C struct's words, so that the Fortran type has its layout (arrays of it
     * pass to C as they are, and travel as MPI_Handle_sync); and MPIX_SYNC_NULL's words. */
    const MPI_Sync null = MPIX_SYNC_NULL;
    const int words = (int)(sizeof null.mpix_opaque_ / sizeof null.mpix_opaque_[0]);
    if (sizeof(MPI_Sync) != sizeof null.mpix_opaque_) {
        fprintf(stderr, "f08_constants: MPI_Sync has padding or members besides mpix_opaque_\n");
        return 1;
    }
    fprintf(f, "  type, bind(C) :: MPI_Sync\n"
               "    integer(c_long_long) :: MPIX_OPAQUE(%d)\n"
               "  end type MPI_Sync\n", words);
    fprintf(f, "  type(MPI_Sync), parameter :: MPIX_SYNC_NULL = MPI_Sync([");
    for (int i = 0; i < words; i++)
        fprintf(f, "%s%lld_c_long_long", i ? ", " : "", (long long)null.mpix_opaque_[i]);
    fprintf(f, "])\n");
    INT_CONST(f, MPI_MODE_WIN_PUT);
    INT_CONST(f, MPI_MODE_WIN_GET);
    INT_CONST(f, MPI_MODE_WIN_ACCUMULATE);
    STRING_CONST(f, MPIX_INFO_SYNC_REMOTE_COMPLETE);
    STRING_CONST(f, MPIX_INFO_SYNC_AUTO_RESTART);
    INT_CONST(f, MPIX_MAX_NOTIFICATION_IDX);
    if (fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
