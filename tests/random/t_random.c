/* t_random.c - random one-sided programs, checked against a model after every epoch.
 *
 *   t_random [--seed S] [--ops N | --time SECONDS] [--kinds LIST] [--flavors LIST] [--verbose]
 *   t_random --replay PROGRAM_SEED [--kinds LIST] [--flavors LIST]
 *
 * Runs programs (random.h) whose seeds derive from the run's seed S (default 1) until N
 * operations (default 13000, every rank's counted; FLEXRMA_TEST_RANDOM_OPS changes the default)
 * have been checked, or for SECONDS (a soak).
 * A mismatch stops the run: every rank that sees one prints the program's seed, the epoch, the
 * first wrong byte and the operations that touched it; `--replay` with that seed, on as many
 * ranks and with the same FLEXRMA_ variables, runs that program alone and prints its epochs.
 * LIST: comma-separated epoch kinds (fence,pscw,lock,lock_all,counter,signal,change) or flavors
 * (malloc,alloc_mem,allocate,shared,dynamic). `change` (MPI_Win_change_comm) takes a few percent
 * of the epochs when other kinds are allowed too, and every epoch when it is alone. Output: one
 * TAP result per rank. */
#include "nodes.h"
#include "random.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned parse_list(const char *arg, const char *const *names, int n, const char *what)
{
    unsigned mask = 0;
    char *copy = strdup(arg), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(tok, names[i]))
                found = i;
        if (found < 0) {
            fprintf(stderr, "t_random: unknown %s '%s'\n", what, tok);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        mask |= 1u << found;
    }
    free(copy);
    return mask;
}

/* A change epoch: the new communicator by world rank, and who leaves and joins with what. */
static void print_change(const program *p, const epoch *e, int index)
{
    fprintf(stderr, "epoch %d: change, window ranks 0..%d are world ranks", index, e->nnew - 1);
    for (int i = 0; i < e->nnew; i++)
        fprintf(stderr, " %d", e->new_member[i]);
    fprintf(stderr, "; peer_rank %d (world rank %d)\n", e->leader, e->new_member[e->leader]);
    for (int w = 0; w < p->nprocs; w++) {
        if (p->wrank_of[w] >= 0 && e->new_rank[w] < 0)
            fprintf(stderr, "  world rank %d leaves (window rank %d), keeping its memory\n", w,
                    p->wrank_of[w]);
        else if (p->wrank_of[w] < 0 && e->new_rank[w] >= 0 && e->fresh[w])
            fprintf(stderr,
                    "  world rank %d joins as window rank %d with a new %s window of %zu B, "
                    "disp_unit %d%s\n",
                    w, e->new_rank[w], flavor_name[e->fresh_fl[w]], e->fresh_bytes[w],
                    e->fresh_unit[w],
                    e->fresh_fl[w] == FL_DYNAMIC && e->fresh_allocmem[w] ? " (MPI_Alloc_mem region)"
                                                                          : "");
        else if (p->wrank_of[w] < 0 && e->new_rank[w] >= 0)
            fprintf(stderr, "  world rank %d joins as window rank %d with the window it kept\n", w,
                    e->new_rank[w]);
        else if (p->wrank_of[w] >= 0 && p->wrank_of[w] != e->new_rank[w])
            fprintf(stderr, "  world rank %d: window rank %d becomes %d\n", w, p->wrank_of[w],
                    e->new_rank[w]);
    }
}

static void print_plan(const program *p, const epoch *e, int index)
{
    if (e->kind == EK_CHANGE) {
        print_change(p, e, index);
        return;
    }
    fprintf(stderr, "epoch %d: %s, %ld operations, %d blocks%s%s%s%s\n", index, epoch_name[e->kind],
            e->nops, e->nblocks, e->nocheck ? ", nocheck" : "", e->multi ? ", multi" : "",
            e->noprecede ? ", noprecede" : "", e->nosucceed ? ", nosucceed" : "");
    if (e->kind == EK_LOCK || e->kind == EK_LOCKALL) {
        fprintf(stderr, "  lock order");
        for (int k = 0; k < e->nprocs; k++)
            fprintf(stderr, " %d", e->lock_order[k]);
        fprintf(stderr, "; by origin:");
        for (int o = 0; o < e->nprocs; o++) {
            fprintf(stderr, " %d:", o);
            if (e->lockall_of[o])
                fprintf(stderr, "lock_all");
            else
                for (int t = 0; t < e->nprocs; t++)
                    fprintf(stderr, "%c", e->lock_type[o * e->nprocs + t] == MPI_LOCK_EXCLUSIVE
                                              ? 'X' : 's');
        }
        fprintf(stderr, "\n");
    }
    for (int b = 0; b < e->nblocks; b++)
        fprintf(stderr, "  block %d: rank %d bytes [%zu, %zu): %s\n", b, e->blocks[b].target,
                e->blocks[b].off, e->blocks[b].off + e->blocks[b].len,
                block_name[e->blocks[b].use]);
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++) {
            const op *x = &e->prog[o][i];
            fprintf(stderr, "  rank %d op %d: %s via %d to %d, %d x %d B at %zu, block %d\n", o, i,
                    op_name[x->kind], (int)x->via, x->target, x->tl.n, x->esize, x->toff, x->block);
        }
    (void)p;
}

/* One program: its window, its epochs, a check after each. 1 if a check failed anywhere. */
static int run_program(uint64_t seed, int nprocs, int rank, unsigned kinds, unsigned flavors,
                       int verbose, long *ops, int *epochs, int *changes)
{
    program p;
    plan_program(&p, seed, nprocs, rank, kinds, flavors);
    if (verbose && rank == 0) {
        fprintf(stderr, "program 0x%016llx: %s window, %zu B per rank, disp_unit %d, %d epochs",
                (unsigned long long)seed, flavor_name[p.fl], p.bytes, p.disp_unit, p.nepochs);
        if (p.nmembers < nprocs) {
            fprintf(stderr, "; window ranks 0..%d are world ranks", p.nmembers - 1);
            for (int i = 0; i < p.nmembers; i++)
                fprintf(stderr, " %d", p.member[i]);
            fprintf(stderr, ", the others start with windows over themselves");
        }
        fprintf(stderr, "\n");
    }
    exec_window_create(&p);
    int failed = 0;
    for (int i = 0; i < p.nepochs && !failed; i++) {
        epoch e;
        plan_epoch(&p, i, &e);
        if (verbose && rank == 0)
            print_plan(&p, &e, i);
        model_epoch(&p, &e, i);
        exec_epoch(&p, &e, i);
        if (e.kind == EK_CHANGE) {
            model_change(&p, &e);
            ++*changes;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int bad = check_epoch(&p, &e, i);
        MPI_Allreduce(&bad, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        *ops += e.nops;
        ++*epochs;
        epoch_free(&e);
    }
    exec_window_free(&p);
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    static const char *const kind_args[EK_COUNT] = {"fence",   "pscw",   "lock",  "lock_all",
                                                    "counter", "signal", "change"};
    static const char *const flavor_args[FL_COUNT] = {"malloc", "alloc_mem", "allocate", "shared",
                                                      "dynamic"};
    uint64_t seed = 1, replay = 0;
    long max_ops = 13000;
    const char *ops_env = getenv("FLEXRMA_TEST_RANDOM_OPS"); /* the sanitizer build's smaller run */
    if (ops_env && atol(ops_env) > 0)
        max_ops = atol(ops_env);
    double seconds = 0;
    int verbose = 0, replaying = 0;
    unsigned kinds = (1u << EK_COUNT) - 1, flavors = (1u << FL_COUNT) - 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verbose")) {
            verbose = 1;
            continue;
        }
        if (!v) {
            if (rank == 0)
                fprintf(stderr, "t_random: %s needs a value (see t_random.c)\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
        if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--replay"))
            replay = strtoull(v, NULL, 0), replaying = 1, verbose = 1;
        else if (!strcmp(a, "--ops"))
            max_ops = strtol(v, NULL, 0);
        else if (!strcmp(a, "--time"))
            seconds = strtod(v, NULL);
        else if (!strcmp(a, "--kinds"))
            kinds = parse_list(v, kind_args, EK_COUNT, "epoch kind");
        else if (!strcmp(a, "--flavors"))
            flavors = parse_list(v, flavor_args, FL_COUNT, "window flavor");
        else {
            if (rank == 0)
                fprintf(stderr, "t_random: unknown option %s (see t_random.c)\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* Over several nodes, real or simulated, MPI_Win_allocate_shared over MPI_COMM_WORLD fails by
     * design. */
    if (!on_one_node(MPI_COMM_WORLD))
        flavors &= ~(1u << FL_SHARED);
    if (nprocs < 2) /* a change needs two processes in the new communicator */
        kinds &= ~(1u << EK_CHANGE);
    if (!flavors || !kinds) {
        if (rank == 0)
            fprintf(stderr, "t_random: no window flavor or epoch kind left to run\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tap_plan(1);
    long ops = 0;
    int epochs = 0, changes = 0, programs = 0, failed = 0;
    double start = MPI_Wtime();
    if (replaying) {
        failed = run_program(replay, nprocs, rank, kinds, flavors, verbose, &ops, &epochs,
                            &changes);
        programs = 1;
    } else {
        for (uint64_t i = 0; !failed; i++) {
            int more = seconds > 0 ? MPI_Wtime() - start < seconds : ops < max_ops;
            MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's clock decides */
            if (!more)
                break;
            failed = run_program(seed_mix(seed, i), nprocs, rank, kinds, flavors, verbose, &ops,
                                 &epochs, &changes);
            programs++;
        }
    }
    ok(!failed,
       "%ld operations of %d ranks checked in %d epochs (%d membership changes) of %d programs "
       "(run seed %llu)",
       ops, nprocs, epochs, changes, programs, (unsigned long long)(replaying ? replay : seed));
    double took = MPI_Wtime() - start;
    int rc = tap_done();
    if (rank == 0)
        printf("# t_random: %ld operations checked, %d epochs (%d membership changes), %d "
               "programs, %.1f s%s\n",
               ops, epochs, changes, programs, took, failed ? ", FAILED" : "");
    MPI_Finalize();
    return rc;
}
