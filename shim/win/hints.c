/* hints.c - the window info keys MPI-3.1 defines (11.2.1): read at MPI_Win_create and
 * MPI_Win_set_info, reported by MPI_Win_get_info. Hints never make a call fail: a key absent keeps
 * its value and a value MPI does not define is ignored, as Open MPI and MPICH do. */
#include "win.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    unsigned bit;
} orders[] = {{"rar", FR_ORDER_RAR}, {"raw", FR_ORDER_RAW}, {"war", FR_ORDER_WAR},
              {"waw", FR_ORDER_WAW}};
#define NORDERS (sizeof orders / sizeof *orders)
#define ALL_ORDERS (FR_ORDER_RAR | FR_ORDER_RAW | FR_ORDER_WAR | FR_ORDER_WAW)

fr_win_hints fr_win_hints_default(void)
{
    return (fr_win_hints){.ordering = ALL_ORDERS};
}

/* The value of key in info, or NULL. */
static const char *value_of(MPI_Info info, const char *key, char *buf, int len)
{
    int flag = 0;
    if (PMPI_Info_get(info, key, len - 1, buf, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return buf;
}

/* "none", or a comma-separated list of rar, raw, war, waw; 0 and ignored (*ok = 0) otherwise. */
static unsigned parse_ordering(const char *v, int *ok)
{
    *ok = 1;
    if (strcasecmp(v, "none") == 0)
        return 0;
    unsigned bits = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        size_t i = 0;
        while (i < NORDERS && !(n == 3 && strncasecmp(v, orders[i].name, 3) == 0))
            i++;
        if (i == NORDERS) {
            *ok = 0;
            return 0;
        }
        bits |= orders[i].bit;
        v += n + (v[n] == ',');
    }
    *ok = bits != 0;
    return bits;
}

void fr_win_hints_read(fr_win_hints *h, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return;
    char buf[64];
    const char *v = value_of(info, "accumulate_ordering", buf, (int)sizeof buf);
    int ok;
    unsigned bits = v ? parse_ordering(v, &ok) : 0;
    if (v && ok)
        h->ordering = bits;
    v = value_of(info, "accumulate_ops", buf, (int)sizeof buf);
    if (v && strcasecmp(v, "same_op") == 0)
        h->same_op = 1;
    else if (v && strcasecmp(v, "same_op_no_op") == 0)
        h->same_op = 0;
    h->no_locks = fr_info_bool(info, "no_locks", h->no_locks);
    h->same_size = fr_info_bool(info, "same_size", h->same_size);
    h->same_disp_unit = fr_info_bool(info, "same_disp_unit", h->same_disp_unit);
}

int fr_win_hints_info(const fr_win_hints *h, MPI_Info *info)
{
    char order[32] = "";
    for (size_t i = 0; i < NORDERS; i++)
        if (h->ordering & orders[i].bit) {
            if (order[0])
                strcat(order, ",");
            strcat(order, orders[i].name);
        }
    const char *boolean[] = {"false", "true"};
    int rc = PMPI_Info_create(info);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Info_set(*info, "no_locks", boolean[h->no_locks]);
    PMPI_Info_set(*info, "accumulate_ordering", order[0] ? order : "none");
    PMPI_Info_set(*info, "accumulate_ops", h->same_op ? "same_op" : "same_op_no_op");
    PMPI_Info_set(*info, "same_size", boolean[h->same_size]);
    PMPI_Info_set(*info, "same_disp_unit", boolean[h->same_disp_unit]);
    return MPI_SUCCESS;
}
