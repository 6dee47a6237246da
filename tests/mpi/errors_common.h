/* errors_common.h - checking MPI error classes, for the tests of erroneous calls (t_errors.c,
 * t_sync_errors.c, t_iops_errors.c), on top of common.h. */
#ifndef FLEXRMA_TESTS_ERRORS_COMMON_H
#define FLEXRMA_TESTS_ERRORS_COMMON_H

#include "common.h"
#include "error_names.h"

static inline const char *class_name(int cls)
{
    const char *name = class_name_or_null(cls);
    return name ? name : "another class";
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
