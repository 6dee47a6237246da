/* stats.c - per-window totals, one line per window on stderr at MPI_Finalize:
 *   flexrma stats: rank R win W: puts N gets N accs N bytes N epochs fence N pscw N lock N */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct saved {
    struct saved *next;
    int id, size;
    fr_win_stats st;
} saved;

static saved *freed_windows, **freed_tail = &freed_windows;

void fr_stats_window_freed(const fr_win *w)
{
    if (!fr_opt.stats)
        return;
    saved *s = fr_xmalloc(sizeof *s);
    s->next = NULL;
    s->id = w->id;
    s->size = w->size;
    s->st = w->st;
    *freed_tail = s;
    freed_tail = &s->next;
}

static void print_one(int rank, int id, int size, const fr_win_stats *st)
{
    fprintf(stderr,
            "flexrma stats: rank %d win %d: members %d puts %llu gets %llu accs %llu bytes %llu "
            "epochs fence %llu pscw %llu lock %llu\n",
            rank, id, size, (unsigned long long)st->puts, (unsigned long long)st->gets,
            (unsigned long long)st->accs, (unsigned long long)st->bytes,
            (unsigned long long)st->fences, (unsigned long long)st->pscw,
            (unsigned long long)st->locks);
}

void fr_stats_print(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (saved *s = freed_windows, *next; s; s = next) {
        next = s->next;
        print_one(rank, s->id, s->size, &s->st);
        free(s);
    }
    freed_windows = NULL;
    freed_tail = &freed_windows;
    for (fr_win *w = fr_windows; w; w = w->next)
        print_one(rank, w->id, w->size, &w->st);
    fflush(stderr);
}
