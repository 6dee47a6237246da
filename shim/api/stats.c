/* stats.c - per-window totals, one line per window on stderr at MPI_Finalize:
 *   flexrma stats: rank R win W: members M puts N gets N accs N bytes N epochs fence N pscw N
 *   lock N peers shm N am N direct N closed N bumps shm N packet N gone N acc atomic N locked N
 *   batches ring N msg N sync atomics N collectives N held N asks N taken back N
 * (peers: the members this process reached through a shared-memory ring, and by messages;
 * direct: operations copied straight into or out of a node peer's window, direct.h; closed:
 * post/start/complete/wait access epochs closed in the target's state page instead of by a
 * COMPLETE packet; bumps: the counter bumps this process made with an atomic in an owner's
 * shared state block, those it sent as BUMP packets, and atomic bumps that found the counter
 * freed; acc: accumulate elements it combined into a window that node peers map, with a
 * hardware atomic, and under a stripe lock, acc_shared.c; batches: the batches of packets it
 * wrote into node peers' rings and sent as MPI messages; sync atomics: its atomic updates of
 * node peers' lock words and their PSCW and fence close words; collectives: the collective
 * calls its fences made (reduce-scatter). The last three say what synchronization costs per
 * epoch: bench/scale.c; held: packets it set aside until their epoch opened, am_recv.c; asks:
 * gets it asked of node peers through the ring, and of them those it took back unserved and read
 * itself, direct.h).
 * Under the test switch FLEXRMA_TEST_JITTER one more line per process, before the windows':
 *   flexrma stats: rank R: jitter held N max wait N us
 * (the messages it held back before their real send, and the longest wait, progress/isend.h). */
#include "stats.h"
#include "node/shm_adopt.h"
#include "progress/coll_shm.h"
#include "progress/isend.h"
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct saved {
    struct saved *next;
    int id, size, nshm, nam;
    fr_win_stats st;
} saved;

static void count_peers(const fr_win *w, int *nshm, int *nam)
{
    *nshm = *nam = 0;
    for (int r = 0; r < w->size; r++) {
        *nshm += w->peers[r].tp == &fr_tp_shm;
        *nam += w->peers[r].tp == &fr_tp_am;
    }
}

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
    count_peers(w, &s->nshm, &s->nam);
    *freed_tail = s;
    freed_tail = &s->next;
}

static void print_one(int rank, const saved *s)
{
    const fr_win_stats *st = &s->st;
    fprintf(stderr,
            "flexrma stats: rank %d win %d: members %d puts %llu gets %llu accs %llu bytes %llu "
            "epochs fence %llu pscw %llu lock %llu peers shm %d am %d direct %llu closed %llu "
            "bumps shm %llu lane %llu packet %llu gone %llu acc atomic %llu locked %llu "
            "batches ring %llu msg %llu sync atomics %llu collectives %llu held %llu "
            "asks %llu taken back %llu\n",
            rank, s->id, s->size, (unsigned long long)st->puts, (unsigned long long)st->gets,
            (unsigned long long)st->accs, (unsigned long long)st->bytes,
            (unsigned long long)st->fences, (unsigned long long)st->pscw,
            (unsigned long long)st->locks, s->nshm, s->nam, (unsigned long long)st->direct,
            (unsigned long long)st->closed_direct, (unsigned long long)st->bumps_shm,
            (unsigned long long)st->bumps_lane,
            (unsigned long long)st->bumps_pkt, (unsigned long long)st->bumps_gone,
            (unsigned long long)st->acc_atomic, (unsigned long long)st->acc_locked,
            (unsigned long long)st->batches_ring, (unsigned long long)st->batches_msg,
            (unsigned long long)st->sync_atomics, (unsigned long long)st->collectives,
            (unsigned long long)st->held, (unsigned long long)st->gets_asked,
            (unsigned long long)st->gets_taken_back);
}

void fr_stats_print(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *why = fr_adopt_unavailable();
    if (why && *why)
        fprintf(stderr,
                "flexrma stats: rank %d: MPI_Win_create windows stay in ordinary memory, not "
                "shared in place with node peers: %s\n",
                rank, why);
    uint64_t areas, calls[5];
    fr_coll_stats(&areas, calls);
    if (areas > 0)
        fprintf(stderr,
                "flexrma stats: rank %d: collectives in shared memory: communicators %llu "
                "barriers %llu allreduces %llu bcasts %llu reduces %llu entered %llu\n",
                rank, (unsigned long long)areas, (unsigned long long)calls[0],
                (unsigned long long)calls[1], (unsigned long long)calls[2],
                (unsigned long long)calls[3], (unsigned long long)calls[4]);
    if (fr_opt.test_jitter) {
        uint64_t held, max_wait_us;
        fr_isend_stats(&held, &max_wait_us);
        fprintf(stderr, "flexrma stats: rank %d: jitter held %llu max wait %llu us\n", rank,
                (unsigned long long)held, (unsigned long long)max_wait_us);
    }
    for (saved *s = freed_windows, *next; s; s = next) {
        next = s->next;
        print_one(rank, s);
        free(s);
    }
    freed_windows = NULL;
    freed_tail = &freed_windows;
    for (fr_win *w = fr_windows; w; w = w->next) {
        saved s = {NULL, w->id, w->size, 0, 0, w->st};
        count_peers(w, &s.nshm, &s.nam);
        print_one(rank, &s);
    }
    fflush(stderr);
}
