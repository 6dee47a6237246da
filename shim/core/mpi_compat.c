/* mpi_compat.c - the answers of mpi_compat.h that need the library's identity, asked once. */
#include "mpi_compat.h"
#include "next.h"

#include <stdint.h>

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

/* Elements of unsigned integer types, compared as such; memcpy: inout may be a window's bytes
 * at any offset. */
#define MIN_MAX(T)                                                                                \
    do {                                                                                          \
        for (int i = 0; i < n; i++) {                                                             \
            T a, b;                                                                               \
            memcpy(&a, (const char *)in + (size_t)i * sizeof(T), sizeof(T));                      \
            memcpy(&b, (char *)inout + (size_t)i * sizeof(T), sizeof(T));                         \
            if (max ? a > b : a < b)                                                              \
                memcpy((char *)inout + (size_t)i * sizeof(T), &a, sizeof(T));                     \
        }                                                                                         \
        return MPI_SUCCESS;                                                                       \
    } while (0)

int fr_mpi_reduce_local(const void *in, void *inout, int n, MPI_Datatype type, MPI_Op op)
{
    if (op == MPI_MIN || op == MPI_MAX) {
        const int max = op == MPI_MAX;
        if (type == MPI_UNSIGNED_CHAR || type == MPI_UINT8_T)
            MIN_MAX(uint8_t);
        if (type == MPI_UNSIGNED_SHORT || type == MPI_UINT16_T)
            MIN_MAX(uint16_t);
        if (type == MPI_UNSIGNED || type == MPI_UINT32_T)
            MIN_MAX(uint32_t);
        if (type == MPI_UINT64_T || type == MPI_UNSIGNED_LONG_LONG)
            MIN_MAX(uint64_t);
        if (type == MPI_UNSIGNED_LONG)
            MIN_MAX(unsigned long);
    }
    return PMPI_Reduce_local(in, inout, n, type, op);
}

int fr_mpi_pack_view(const void *buf, MPI_Datatype type, const void **base, MPI_Datatype *view)
{
    *base = buf;
    *view = type;
    if (buf != MPI_BOTTOM || !library_is_mpich())
        return MPI_SUCCESS;
    MPI_Aint first, span;
    int rc = PMPI_Type_get_true_extent(type, &first, &span);
    if (rc != MPI_SUCCESS || first == 0)
        return rc; /* nothing at address 0 to shift to: let the library answer */
    int one = 1;
    MPI_Aint shift = -first;
    rc = PMPI_Type_create_struct(1, &one, &shift, &type, view);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(view)) != MPI_SUCCESS)
        FR_NEXT(Type_free)(view);
    if (rc != MPI_SUCCESS) {
        *view = type;
        return rc;
    }
    *base = (const void *)first;
    return MPI_SUCCESS;
}

void fr_mpi_pack_view_free(MPI_Datatype type, MPI_Datatype *view)
{
    if (*view != type) /* the library's own: flexrma's MPI_Type_free never saw this type */
        FR_NEXT(Type_free)(view);
}
