/* error_names.h - the names of MPI's error classes, for test output (the error tests in mpi/,
 * the fuzzer in fuzz/). Every class a test expects is here. */
#ifndef FLEXRMA_TESTS_ERROR_NAMES_H
#define FLEXRMA_TESTS_ERROR_NAMES_H

#include <mpi.h>
#include <stddef.h>

static const struct {
    int cls;
    const char *name;
} class_names[] = {
    {MPI_SUCCESS, "MPI_SUCCESS"}, {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC"},
    {MPI_ERR_RANK, "MPI_ERR_RANK"}, {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT"}, {MPI_ERR_TYPE, "MPI_ERR_TYPE"}, {MPI_ERR_OP, "MPI_ERR_OP"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT"}, {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE"},
    {MPI_ERR_BASE, "MPI_ERR_BASE"}, {MPI_ERR_DISP, "MPI_ERR_DISP"}, {MPI_ERR_SIZE, "MPI_ERR_SIZE"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"}, {MPI_ERR_COMM, "MPI_ERR_COMM"}, {MPI_ERR_GROUP, "MPI_ERR_GROUP"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"}, {MPI_ERR_WIN, "MPI_ERR_WIN"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"}, {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR"}, {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH"},
};

/* cls's name, or NULL for a class not in the table. */
static inline const char *class_name_or_null(int cls)
{
    for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++)
        if (class_names[i].cls == cls)
            return class_names[i].name;
    return NULL;
}

#endif
