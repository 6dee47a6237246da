/* mpi_compat.c - the answers of mpi_compat.h that need the library's identity, asked once. */
#include "mpi_compat.h"

/* MPICH and its derivatives (Intel MPI, MVAPICH, Cray MPICH) name it in their version string. */
static int library_is_mpich(void)
{
    static int known = -1; /* read once; the library does not change under a process */
    if (known < 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        PMPI_Get_library_version(version, &len);
        known = strstr(version, "MPICH") != NULL;
    }
    return known;
}

int fr_mpi_reduce_aborts(MPI_Op op, MPI_Datatype type)
{
    int logical = op == MPI_LAND || op == MPI_LOR;
    int c_floating = type == MPI_FLOAT || type == MPI_DOUBLE || type == MPI_LONG_DOUBLE;
    return logical && c_floating && library_is_mpich();
}
