/* errors.c - flexrma's error codes and how they are raised.
 *
 * Every flexrma error is an MPI error code in a standard class (errors.def), so a program that
 * checks MPI_Error_class() sees MPI_ERR_RMA_SYNC etc. The detail of one occurrence ("target rank 7
 * out of range [0,4)") cannot be a registered string, so it is kept per thread and printed just
 * before a fatal error handler aborts the job. */
#include "fr.h"
#include "next.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const struct {
    int mpi_class;
    const char *text;
} err_table[FR_ERR__COUNT] = {
#define FR_ERROR(name, mpi_class, text) [name] = {mpi_class, text},
#include "errors.def"
#undef FR_ERROR
};

static int err_code[FR_ERR__COUNT];  /* MPI error code registered for each fr_err */
static int err_class[FR_ERR__COUNT]; /* ... and its class (flexrma's own ones resolved) */
static int err_registered;

/* The classes flexrma adds, as flexrma.h exports them: MPI_ERR_OTHER until MPI_Init made them
 * (the class the draft's users fall back to on an MPI without it). */
FR_API int mpix_err_invalid_notification = MPI_ERR_OTHER;
static const char notification_class_text[] =
    "MPI_ERR_INVALID_NOTIFICATION: invalid notification index, or no notifications on the window";

static int own_class(int fr_class)
{
    int *cls = &mpix_err_invalid_notification; /* the only one so far */
    if (fr_class == FR_CLASS_INVALID_NOTIFICATION && *cls == MPI_ERR_OTHER) {
        int made;
        if (PMPI_Add_error_class(&made) == MPI_SUCCESS &&
            PMPI_Add_error_string(made, (char *)notification_class_text) == MPI_SUCCESS)
            *cls = made;
    }
    return *cls;
}

static __thread char err_detail[512];

int fr_errors_register(void)
{
    for (int e = 0; e < FR_ERR__COUNT; e++) {
        err_class[e] = err_table[e].mpi_class < 0 ? own_class(err_table[e].mpi_class)
                                                  : err_table[e].mpi_class;
        int rc = PMPI_Add_error_code(err_class[e], &err_code[e]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Add_error_string(err_code[e], (char *)err_table[e].text);
        if (rc != MPI_SUCCESS)
            err_code[e] = err_class[e]; /* fall back to the bare class */
    }
    err_registered = 1;
    return MPI_SUCCESS;
}

/* MPI_Error_string of flexrma's codes answers from the table: MPICH 4.0 reads a code made by
 * MPI_Add_error_code as an index into its error-stack ring and prints another call's message. */
FR_API int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    for (int e = 0; err_registered && string && resultlen && e < FR_ERR__COUNT; e++)
        if (err_code[e] == errorcode && errorcode != err_class[e]) {
            *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", err_table[e].text);
            if (*resultlen >= MPI_MAX_ERROR_STRING)
                *resultlen = MPI_MAX_ERROR_STRING - 1;
            return MPI_SUCCESS;
        }
    if (err_registered && string && resultlen && errorcode == mpix_err_invalid_notification &&
        errorcode != MPI_ERR_OTHER) {
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", notification_class_text);
        return MPI_SUCCESS;
    }
    return FR_NEXT(Error_string)(errorcode, string, resultlen);
}
FR_PMPI(Error_string);

int fr_errorf(fr_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof err_detail, fmt, ap);
    va_end(ap);
    return err_registered ? err_code[e]
           : err_table[e].mpi_class < 0 ? MPI_ERR_OTHER : err_table[e].mpi_class;
}

const char *fr_error_detail(void) { return err_detail; }

/* Print the detail when the handler will abort: it is the only place the user sees it. */
static void report_if_fatal(MPI_Errhandler eh, const char *call, int rc)
{
    if (eh != MPI_ERRORS_ARE_FATAL)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(rc, text, &len);
    fprintf(stderr, "flexrma: error in %s: %s [%s]\n", call, err_detail[0] ? err_detail : text, text);
    fflush(stderr);
}

int fr_handle_raise(MPI_Win win, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return rc;
    MPI_Errhandler eh;
    PMPI_Win_get_errhandler(win, &eh);
    report_if_fatal(eh, call, rc);
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN)
        PMPI_Errhandler_free(&eh);
    PMPI_Win_call_errhandler(win, rc);
    err_detail[0] = '\0';
    return rc;
}

int fr_comm_raise(MPI_Comm comm, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return rc;
    if (comm == MPI_COMM_NULL)
        comm = MPI_COMM_WORLD;
    MPI_Errhandler eh;
    PMPI_Comm_get_errhandler(comm, &eh);
    report_if_fatal(eh, call, rc);
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN)
        PMPI_Errhandler_free(&eh);
    PMPI_Comm_call_errhandler(comm, rc);
    err_detail[0] = '\0';
    return rc;
}
