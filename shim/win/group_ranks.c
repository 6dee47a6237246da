/* group_ranks.c - the groups of MPI_Win_post and MPI_Win_start in window ranks.
 *
 * MPI_Group_translate_ranks searches the window's group for every member of the argument (in
 * Open MPI a name comparison per pair): a tenth of a short PSCW epoch, paid twice per epoch for
 * the same neighbour group every time. So the last FR_GROUP_MEMOS groups are remembered with
 * their translation. A remembered group is held by a reference of ours (MPI_Group_union with
 * the empty group), so its handle cannot be freed and reused for another group behind our
 * back; MPI_Group_compare finds an identical group at once when the program passes the same
 * object again, and member by member otherwise. */
#include "win.h"

#include <stdlib.h>
#include <string.h>

static int translate(fr_win *w, MPI_Group g, int gsize, int *out)
{
    int small[64], *in = gsize <= 64 ? small : fr_xcalloc((size_t)gsize, sizeof *in);
    for (int i = 0; i < gsize; i++)
        in[i] = i;
    int rc = MPI_SUCCESS;
    if (gsize > 0 && PMPI_Group_translate_ranks(g, gsize, in, w->group, out) != MPI_SUCCESS)
        rc = fr_errorf(FR_ERR_GROUP, "cannot translate the group into window ranks");
    for (int i = 0; rc == MPI_SUCCESS && i < gsize; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = fr_errorf(FR_ERR_GROUP, "process %d of the group is not a member of the window",
                           i);
    if (in != small)
        free(in);
    return rc;
}

static void memo_drop(fr_group_memo *m)
{
    if (m->valid)
        PMPI_Group_free(&m->held);
    free(m->ranks);
    *m = (fr_group_memo){0};
}

/* The remembered translation of g, moved to the front; NULL if g is not remembered. */
static const fr_group_memo *memo_find(fr_win *w, MPI_Group g)
{
    fr_group_memo *m = w->group_memo;
    for (int i = 0; i < FR_GROUP_MEMOS && m[i].valid; i++) {
        int same;
        if (PMPI_Group_compare(g, m[i].held, &same) != MPI_SUCCESS || same != MPI_IDENT)
            continue;
        fr_group_memo hit = m[i];
        memmove(&m[1], &m[0], (size_t)i * sizeof *m);
        m[0] = hit;
        return &m[0];
    }
    return NULL;
}

static void memo_add(fr_win *w, MPI_Group g, const int *ranks, int n)
{
    fr_group_memo *m = w->group_memo;
    fr_group_memo fresh = {.ranks = fr_xmalloc((size_t)n * sizeof(int)), .n = n};
    if (PMPI_Group_union(g, MPI_GROUP_EMPTY, &fresh.held) != MPI_SUCCESS) {
        free(fresh.ranks);
        return; /* not remembered: translated again next time */
    }
    fresh.valid = 1;
    if (n > 0) /* (an empty group's ranks may be NULL: memcpy must not see it) */
        memcpy(fresh.ranks, ranks, (size_t)n * sizeof(int));
    memo_drop(&m[FR_GROUP_MEMOS - 1]);
    memmove(&m[1], &m[0], (size_t)(FR_GROUP_MEMOS - 1) * sizeof *m);
    m[0] = fresh;
}

int fr_win_group_ranks(fr_win *w, MPI_Group g, int **ranks, int *cap, int *n)
{
    if (g == MPI_GROUP_NULL)
        return fr_errorf(FR_ERR_GROUP, "MPI_GROUP_NULL given as the group");
    const fr_group_memo *m = memo_find(w, g);
    int gsize;
    if (m)
        gsize = m->n;
    else if (PMPI_Group_size(g, &gsize) != MPI_SUCCESS)
        return fr_errorf(FR_ERR_GROUP, "invalid group");
    if (gsize > *cap) {
        *ranks = fr_xrealloc(*ranks, (size_t)gsize * sizeof **ranks);
        *cap = gsize;
    }
    if (m) {
        if (gsize > 0)
            memcpy(*ranks, m->ranks, (size_t)gsize * sizeof **ranks);
        *n = gsize;
        return MPI_SUCCESS;
    }
    int rc = translate(w, g, gsize, *ranks);
    *n = rc == MPI_SUCCESS ? gsize : 0;
    if (rc == MPI_SUCCESS)
        memo_add(w, g, *ranks, gsize);
    return rc;
}

void fr_win_groups_free(fr_win *w)
{
    for (int i = 0; i < FR_GROUP_MEMOS; i++)
        memo_drop(&w->group_memo[i]);
    free(w->start_ranks);
    free(w->post_ranks);
    w->start_ranks = w->post_ranks = NULL;
    w->nstart = w->npost = w->start_cap = w->post_cap = 0;
}
