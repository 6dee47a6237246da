/* info.c - reading flexrma's info keys. */
#include "fr.h"

#include <string.h>
#include <strings.h>

int fr_info_flag(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL)
        return 0;
    char value[16];
    int flag = 0;
    if (PMPI_Info_get(info, key, (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
        return 0;
    return strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
           strcasecmp(value, "yes") == 0;
}
