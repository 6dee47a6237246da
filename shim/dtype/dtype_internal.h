/* dtype_internal.h - what the datatype files (dtype.c, dtype_wire.c, dtype_predef.c, acc.c)
 * share and nobody else needs. */
#ifndef FR_DTYPE_INTERNAL_H
#define FR_DTYPE_INTERNAL_H

#include "dtype.h"

/* Type classes of MPI-2.2 section 5.9.2: which reductions apply to a predefined type. */
enum fr_tclass {
    FR_TC_OTHER = 0,   /* no reduction but MPI_REPLACE: MPI_CHAR, MPI_WCHAR, MPI_PACKED, ... */
    FR_TC_CINT = 1,    /* C integer */
    FR_TC_FINT = 2,    /* Fortran integer */
    FR_TC_FLOAT = 3,   /* floating point */
    FR_TC_LOGICAL = 4, /* logical: MPI_LOGICAL, MPI_C_BOOL */
    FR_TC_COMPLEX = 5, /* complex */
    FR_TC_BYTE = 6,    /* byte */
    FR_TC_MULTI = 7,   /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    FR_TC_PAIR = 8,    /* MAXLOC/MINLOC pair types */
};

/* Class of predefined table entry `index` (dtype_predef.c), -1 if out of range. */
int fr_dtype_predef_class(uint64_t index);

/* Walk t's type tree (dtype_wire.c): the one predefined leaf type (*elem, or MPI_DATATYPE_NULL
 * when leaves differ), whether the typemap runs in memory order (*dense), and, when wire is not
 * NULL, its serialized form. */
int fr_dtype_walk(MPI_Datatype t, MPI_Datatype *elem, int *dense, unsigned char **wire,
                  size_t *wire_len);

#endif
