/* t_fuzz.c - a fuzzer of the one-sided calls' arguments: many thousands of calls with random
 * invalid arguments under a counting error handler that returns (so, as with
 * MPI_ERRORS_RETURN, each call returns its code), each with exactly one thing wrong.
 *
 *   t_fuzz [--seed S] [--calls N]
 *
 * N erroneous calls per rank (default 4000) in batches of FZ_BATCH (fuzz.h says how a batch
 * runs); S (default 1) fixes everything: the same S and N on as many ranks make the same calls.
 * For each call: its error class is the one docs/specification.md prescribes, the error was
 * raised exactly once through the window's handler (MPI_COMM_WORLD's for MPI_WIN_NULL and
 * requests without a window), and the outputs it must not write (request handles, result and
 * get buffers, flags, values, counter arrays) are untouched. After each batch: every rank's
 * window is exactly what the batch's valid puts made of it (checksums gathered to all ranks),
 * and the batch's valid get brought the right data. A failure prints the seed, the batch, the
 * call (function, the argument that was wrong, expected and actual class) on stderr. Output:
 * five TAP results per rank. */
#include "error_names.h"
#include "fuzz.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define FZ_BATCH 40     /* erroneous calls per rank and batch */
#define FZ_MAX_REPORTS 20

int fz_raised;
static int raised_mark;

static void win_counted(MPI_Win *win, int *code, ...) { fz_raised++; }
static void comm_counted(MPI_Comm *comm, int *code, ...) { fz_raised++; }
static MPI_Errhandler win_eh;

int fz_win_errhandler_set(MPI_Win win) { return MPI_Win_set_errhandler(win, win_eh); }

/* ---- results ---- */
static long calls, wrong_class, wrong_raise, touched, by_class[32]; /* by class_names index */
static long by_notification; /* MPI_ERR_INVALID_NOTIFICATION: not a constant, not in the table */
static int reports;
static fz_call batch_log[FZ_BATCH + 8];
static int nlog;

static const char *class_name(int cls)
{
    const char *name = class_name_or_null(cls);
    if (name)
        return name;
    static char other[32];
    snprintf(other, sizeof other, "class %d", cls);
    return other;
}

static void report(const fz_run *r, const fz_call *c, const char *problem)
{
    if (++reports > FZ_MAX_REPORTS) {
        if (reports == FZ_MAX_REPORTS + 1)
            fprintf(stderr, "t_fuzz: [rank %d] further failures not shown\n", r->rank);
        return;
    }
    fprintf(stderr, "t_fuzz: FAIL seed %llu batch %d [rank %d, %s window, %s context]: %s: %s: %s\n",
            (unsigned long long)r->seed, r->batch, r->rank, fz_flavor_name[r->w->flavor],
            fz_context_name[r->cx], c->fn, c->what, problem);
}

void fz_check(fz_run *r, const fz_call *c, int rc, int untouched)
{
    int got = MPI_SUCCESS, raised = fz_raised - raised_mark;
    char problem[160];
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    calls++;
    for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++)
        by_class[i] += class_names[i].cls == c->expect;
    by_notification += c->expect == MPI_ERR_INVALID_NOTIFICATION;
    if (nlog < (int)(sizeof batch_log / sizeof *batch_log))
        batch_log[nlog++] = *c;
    if (got != c->expect) {
        wrong_class++;
        snprintf(problem, sizeof problem, "expected %s, got %s (code %d)", class_name(c->expect),
                 class_name(got), rc);
        report(r, c, problem);
    } else if (raised != (rc != MPI_SUCCESS)) {
        wrong_raise++;
        snprintf(problem, sizeof problem, "%s as expected, but the error handler ran %d times",
                 class_name(got), raised);
        report(r, c, problem);
    }
    if (!untouched) {
        touched++;
        report(r, c, "it changed an output it must leave alone");
    }
    raised_mark = fz_raised;
}

/* ---- setup ---- */
static void noop_op(void *in, void *inout, int *len, MPI_Datatype *t) {}

/* (op, type) pairs outside MPI's table that the MPI library itself refuses to reduce: flexrma
 * must refuse them too (MPI_ERR_OP), and only those (it must never be stricter). */
static void find_refused_ops(fz_run *r)
{
    static const struct {
        MPI_Op op;
        MPI_Datatype t;
    } cand[] = {{MPI_BAND, MPI_DOUBLE}, {MPI_BOR, MPI_FLOAT}, {MPI_BXOR, MPI_DOUBLE},
                {MPI_MAXLOC, MPI_INT}, {MPI_MINLOC, MPI_DOUBLE}, {MPI_BAND, MPI_FLOAT}};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < sizeof cand / sizeof *cand && r->nbad_op < 8; i++) {
        double in[2] = {1, 2}, inout[2] = {3, 4};
        if (MPI_Reduce_local(in, inout, 1, cand[i].t, cand[i].op) != MPI_SUCCESS) {
            r->bad_op[r->nbad_op] = cand[i].op;
            r->bad_op_type[r->nbad_op++] = cand[i].t;
        }
    }
}

static void setup(fz_run *r)
{
    MPI_Type_contiguous(2, MPI_INT, &r->contig2);
    MPI_Type_commit(&r->contig2);
    MPI_Type_vector(2, 1, 2, MPI_INT, &r->uncommitted);
    MPI_Type_contiguous(3, MPI_INT, &r->freed);
    MPI_Type_commit(&r->freed);
    MPI_Type_free(&r->freed); /* what the program holds afterwards: MPI_DATATYPE_NULL */
    MPI_Type_vector(3, 1, 64, MPI_INT, &r->wide);
    MPI_Type_commit(&r->wide);
    MPI_Op_create(noop_op, 1, &r->user_op);
    find_refused_ops(r);
    MPI_Send_init(r->src, 1, MPI_INT, r->right, 99, MPI_COMM_WORLD, &r->p2p);
    memset(r->src, 0x77, sizeof r->src);
    memset(r->sink, 0xEE, sizeof r->sink);
    memset(r->cmp, 0x55, sizeof r->cmp);

    MPI_Errhandler ceh;
    MPI_Comm_create_errhandler(comm_counted, &ceh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, ceh);
    MPI_Errhandler_free(&ceh);
    MPI_Win_create_errhandler(win_counted, &win_eh);

    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &r->left, &fz_left_group);
    MPI_Group_incl(world, 1, &r->right, &fz_right_group);
    MPI_Group_free(&world);
}

static void teardown(fz_run *r)
{
    MPI_Type_free(&r->contig2);
    MPI_Type_free(&r->uncommitted);
    MPI_Type_free(&r->wide);
    MPI_Op_free(&r->user_op);
    MPI_Request_free(&r->p2p);
    MPI_Errhandler_free(&win_eh);
    MPI_Group_free(&fz_left_group);
    MPI_Group_free(&fz_right_group);
}

/* Every rank's window against its model, checksums gathered to all; on a mismatch, the owner
 * names the first wrong int and every rank the calls of the batch it aimed there. Returns the
 * number of ranks whose window changed. */
static int windows_checked(fz_run *r)
{
    fz_win *w = r->w;
    uint64_t mine[2] = {fz_checksum(w->mem, sizeof w->model), fz_checksum(w->model, sizeof w->model)};
    uint64_t all[2 * FZ_MAX_RANKS];
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    int changed = 0;
    for (int q = 0; q < r->nprocs; q++) {
        if (all[2 * q] == all[2 * q + 1])
            continue;
        changed++;
        if (q == r->rank) {
            for (int i = 0; i < FZ_NW; i++)
                if (w->mem[i] != w->model[i]) {
                    fprintf(stderr, "t_fuzz: FAIL seed %llu batch %d: rank %d's %s window changed: "
                                    "int %d is %d, expected %d\n",
                            (unsigned long long)r->seed, r->batch, q, fz_flavor_name[w->flavor],
                            i, w->mem[i], w->model[i]);
                    break;
                }
            memcpy(w->model, w->mem, sizeof w->model); /* one report per change */
        }
        for (int i = 0; i < nlog; i++)
            if (batch_log[i].target == q)
                fprintf(stderr, "t_fuzz:   rank %d aimed there in that batch: %s: %s\n", r->rank,
                        batch_log[i].fn, batch_log[i].what);
    }
    return changed;
}

int main(int argc, char **argv)
{
    fz_run r = {.seed = 1};
    long ncalls = 4000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nprocs);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            r.seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            ncalls = strtol(argv[++i], NULL, 0);
        else {
            if (r.rank == 0)
                fprintf(stderr, "usage: t_fuzz [--seed S] [--calls N]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (r.nprocs < 2 || r.nprocs > FZ_MAX_RANKS) {
        if (r.rank == 0)
            fprintf(stderr, "t_fuzz needs 2 to %d ranks\n", FZ_MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r.right = (r.rank + 1) % r.nprocs;
    r.left = (r.rank + r.nprocs - 1) % r.nprocs;
    tap_plan(5);
    setup(&r);
    fz_win wins[FL_COUNT];
    fz_windows_create(wins);

    int nbatches = (int)((ncalls + FZ_BATCH - 1) / FZ_BATCH);
    long windows_bad = 0, valid_bad = 0;
    for (int b = 0; b < nbatches; b++) {
        fz_rng shared = fz_stream(r.seed, b, -1);
        r.batch = b;
        r.rng = fz_stream(r.seed, b, r.rank);
        int f = fz_below(&shared, FL_COUNT);
        r.w = &wins[f];
        r.other = &wins[(f + 1 + fz_below(&shared, FL_COUNT - 1)) % FL_COUNT];
        r.cx = (fz_context)fz_below(&shared, CX_COUNT);
        r.lock_type = fz_below(&r.rng, 2) ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
        nlog = 0;
        raised_mark = fz_raised;

        int rc = MPI_SUCCESS;
        fz_epoch_open(&r);
        if (r.cx != CX_NONE)
            rc = fz_valid_put(&r);
        if (fz_below(&shared, 4) == 0)
            fz_bad_collective(&r, &shared);
        for (int i = 0; i < FZ_BATCH; i++) {
            int kind = fz_below(&r.rng, 20);
            raised_mark = fz_raised;
            if (kind < 12)
                fz_bad_rma(&r);
            else if (kind < 15)
                fz_bad_sync(&r);
            else if (kind < 17)
                fz_bad_counter(&r);
            else if (kind < 18)
                fz_bad_notify(&r);
            else
                fz_bad_window(&r);
        }
        if (r.cx == CX_NONE)
            rc = fz_valid_put(&r);
        int grc = fz_valid_get(&r);
        fz_epoch_close(&r);
        MPI_Barrier(MPI_COMM_WORLD);
        int valid = fz_valid_after(&r) && rc == MPI_SUCCESS && grc == MPI_SUCCESS;
        static const unsigned char sink0[512] = {[0 ... 511] = 0xEE};
        if (memcmp(r.sink, sink0, sizeof r.sink)) {
            fprintf(stderr, "t_fuzz: FAIL seed %llu batch %d [rank %d]: an erroneous get or "
                            "fetch wrote into its buffer\n", (unsigned long long)r.seed, b, r.rank);
            memset(r.sink, 0xEE, sizeof r.sink);
            touched++;
        }
        valid_bad += !valid;
        windows_bad += windows_checked(&r);
        MPI_Barrier(MPI_COMM_WORLD); /* the next batch's calls may aim anywhere */
    }

    ok(wrong_class == 0, "seed %llu: %ld calls (%d batches, %s) returned the class the "
       "specification prescribes (%ld did not)", (unsigned long long)r.seed, calls, nbatches,
       "every flavor and epoch context", wrong_class);
    ok(wrong_raise == 0, "seed %llu: each error was raised exactly once through a handler "
       "(%ld were not)", (unsigned long long)r.seed, wrong_raise);
    ok(touched == 0, "seed %llu: the calls left their outputs alone (%ld did not)",
       (unsigned long long)r.seed, touched);
    ok(windows_bad == 0, "seed %llu: no window of any rank changed but by the valid puts (%ld "
       "changes seen)", (unsigned long long)r.seed, windows_bad);
    ok(valid_bad == 0, "seed %llu: the valid put and get after the erroneous calls of each batch "
       "moved the right data (%ld batches did not)", (unsigned long long)r.seed, valid_bad);
    if (r.rank == 0) {
        fprintf(stderr, "t_fuzz: seed %llu, %d ranks: %ld calls per rank; expected classes:",
                (unsigned long long)r.seed, r.nprocs, calls);
        for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++)
            if (by_class[i])
                fprintf(stderr, " %s %ld", class_names[i].name, by_class[i]);
        if (by_notification)
            fprintf(stderr, " MPI_ERR_INVALID_NOTIFICATION %ld", by_notification);
        fprintf(stderr, "\n");
    }
    fz_windows_free(wins);
    teardown(&r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
