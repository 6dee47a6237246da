/* constants_c.c - the C values of flexrma.h's constants, by name, for t_f08_constants: what the
 * C compiler makes of the header, compared there with what the Fortran module holds. */
#include <flexrma.h>
#include <string.h>

/* The value of the integer constant `name`; -999 for a name not listed here. */
long long f08c_int(const char *name)
{
    static const struct { const char *name; long long value; } table[] = {
        {"MPI_MODE_WIN_PUT", MPI_MODE_WIN_PUT},
        {"MPI_MODE_WIN_GET", MPI_MODE_WIN_GET},
        {"MPI_MODE_WIN_ACCUMULATE", MPI_MODE_WIN_ACCUMULATE},
        {"MPIX_MAX_NOTIFICATION_IDX", MPIX_MAX_NOTIFICATION_IDX},
        {"FLEXRMA_VERSION_MAJOR", FLEXRMA_VERSION_MAJOR},
        {"FLEXRMA_VERSION_MINOR", FLEXRMA_VERSION_MINOR},
        {"FLEXRMA_VERSION_PATCH", FLEXRMA_VERSION_PATCH},
        {"sizeof(MPI_Sync)", (long long)sizeof(MPI_Sync)},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name))
            return table[i].value;
    return -999;
}

/* The values made by MPI_Init. */
int f08c_err_invalid_notification(void) { return MPI_ERR_INVALID_NOTIFICATION; }
MPI_Fint f08c_handle_sync(void) { return MPI_Type_c2f(MPI_Handle_sync); }

/* Whether the string constant `name` is `value`. */
int f08c_string_is(const char *name, const char *value)
{
    if (!strcmp(name, "MPIX_INFO_SYNC_REMOTE_COMPLETE"))
        return !strcmp(value, MPIX_INFO_SYNC_REMOTE_COMPLETE);
    if (!strcmp(name, "MPIX_INFO_SYNC_AUTO_RESTART"))
        return !strcmp(value, MPIX_INFO_SYNC_AUTO_RESTART);
    return 0;
}

/* Whether the words of a Fortran MPI_Sync are MPIX_SYNC_NULL's. */
int f08c_is_sync_null(const MPI_Sync *s)
{
    const MPI_Sync null = MPIX_SYNC_NULL;
    return !memcmp(s, &null, sizeof null);
}
