/* info.c - reading boolean info keys, flexrma's own and MPI's. */
#include "fr.h"

#include <string.h>
#include <strings.h>

int fr_info_bool(MPI_Info info, const char *key, int dflt)
{
    if (info == MPI_INFO_NULL)
        return dflt;
    char value[16];
    int flag = 0;
    if (PMPI_Info_get(info, key, (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
        return dflt;
    if (strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0 || strcasecmp(value, "yes") == 0)
        return 1;
    if (strcasecmp(value, "false") == 0 || strcmp(value, "0") == 0 || strcasecmp(value, "no") == 0)
        return 0;
    return dflt;
}

int fr_info_flag(MPI_Info info, const char *key) { return fr_info_bool(info, key, 0); }
