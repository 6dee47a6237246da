/* errors_common.h - checking MPI error classes, for the tests of erroneous calls (t_errors.c,
 * t_sync_errors.c, t_iops_errors.c), on top of common.h. */
#ifndef FLEXRMA_TESTS_ERRORS_COMMON_H
#define FLEXRMA_TESTS_ERRORS_COMMON_H

#include "common.h"

/* Names for the test output: every class a test expects is here. */
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
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR"}, {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED"},
};

static inline const char *class_name(int cls)
{
    for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++)
        if (class_names[i].cls == cls)
            return class_names[i].name;
    return "another class";
}

/* One error code per class seen by error_class(), for errors_named(). */
static int codes[64], ncodes;

/* The error class of rc (MPI_SUCCESS for MPI_SUCCESS). Keeps the first code of each class. */
static inline int error_class(int rc)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    if (rc != MPI_SUCCESS && ncodes < 64) {
        int seen = 0;
        for (int i = 0; i < ncodes; i++) {
            int c;
            MPI_Error_class(codes[i], &c);
            seen |= c == got;
        }
        if (!seen)
            codes[ncodes++] = rc;
    }
    return got;
}

/* rc is of error class cls (1 test). */
#define expect(cls, what, call) expect_at(__FILE__, __LINE__, (call), (cls), (what))
static inline int expect_at(const char *file, int line, int rc, int cls, const char *what)
{
    int got = error_class(rc);
    int pass = tap_is_int_at(file, line, got, cls, "%s: %s", what, class_name(cls));
    if (!pass)
        diag("got %s", class_name(got));
    return pass;
}

/* How many of the codes kept by error_class() have an error string naming flexrma; a diagnostic
 * for each other one. */
static inline int errors_named(void)
{
    int named = 0;
    for (int i = 0; i < ncodes; i++) {
        char s[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(codes[i], s, &len);
        if (len > 0 && strstr(s, "flexrma"))
            named++;
        else
            diag("error string of code %d: \"%s\"", codes[i], s);
    }
    return named;
}

#endif
