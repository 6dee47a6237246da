/* tap.c - see tap.h. Each rank keeps its TAP lines, unnumbered ("ok - [rank r] ...",
 * "not ok - ...", "# ..."), in one growing buffer; rank 0 numbers them when it prints. */
#include "tap.h"

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static char *lines;          /* this rank's records, '\n'-terminated */
static size_t len, cap;
static int planned = -1;     /* -1: tap_plan() never called */
static int ran, failed;
static char last[256] = "(none)"; /* the last result's description, for a crash report */
static int crash_rank = -1;

static int my_rank(void)
{
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void append(const char *s, size_t n)
{
    if (len + n + 1 > cap) {
        cap = (len + n + 1) * 2;
        if (!(lines = realloc(lines, cap))) {
            perror("tap: realloc");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    memcpy(lines + len, s, n);
    len += n;
    lines[len] = '\0';
}

/* One record: prefix, then text with newlines flattened and, in descriptions, '#' escaped so a
 * description never reads as a TAP directive. */
static void record(const char *prefix, const char *text, int escape_hash)
{
    append(prefix, strlen(prefix));
    for (const char *p = text; *p; p++) {
        if (*p == '\n')
            append(" ", 1);
        else if (*p == '#' && escape_hash)
            append("\\#", 2);
        else
            append(p, 1);
    }
    append("\n", 1);
}

static void vdiag(const char *fmt, va_list ap)
{
    char msg[4096], prefix[32];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(prefix, sizeof prefix, "# [rank %d] ", my_rank());
    for (char *line = msg, *next; line; line = next) { /* one record per line of msg */
        if ((next = strchr(line, '\n')))
            *next++ = '\0';
        if (*line || next)
            record(prefix, line, 0);
    }
}

void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(fmt, ap);
    va_end(ap);
}

static void live(const char *what, const char *desc, const char *file, int line)
{
    fprintf(stderr, "# [rank %d] %s - %s (%s:%d)\n", my_rank(), what, desc, file, line);
    fflush(stderr);
}

static int result(const char *file, int line, int cond, const char *fmt, va_list ap)
{
    char desc[2048], prefix[48];
    vsnprintf(desc, sizeof desc, fmt, ap);
    snprintf(prefix, sizeof prefix, "%s - [rank %d] ", cond ? "ok" : "not ok", my_rank());
    record(prefix, desc, 1);
    ran++;
    snprintf(last, sizeof last, "%.*s", (int)sizeof last - 1, desc);
    if (!cond) {
        failed++;
        diag("  Failed test at %s line %d.", file, line);
        live("not ok", desc, file, line);
    } else if (getenv("TAP_VERBOSE")) {
        live("ok", desc, file, line);
    }
    return cond;
}

int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result(file, line, cond, fmt, ap);
    va_end(ap);
    return cond;
}

int tap_is_int_at(const char *file, int line, long long got, long long expected,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int cond = got == expected;
    result(file, line, cond, fmt, ap);
    va_end(ap);
    if (!cond)
        diag("         got: %lld\n    expected: %lld", got, expected);
    return cond;
}

/* The plain functions of the API, for callers that bypass the macros (e.g. through a pointer). */
#undef ok
#undef is_int
int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result("?", 0, cond, fmt, ap);
    va_end(ap);
    return cond;
}

int is_int(long long got, long long expected, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int cond = got == expected;
    result("?", 0, cond, fmt, ap);
    va_end(ap);
    if (!cond)
        diag("         got: %lld\n    expected: %lld", got, expected);
    return cond;
}

void skip(int n, const char *why)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "ok - [rank %d] # SKIP ", my_rank());
    for (int i = 0; i < n; i++, ran++)
        record(prefix, why, 0);
}

/* A crash loses the buffered results: say on stderr how far this rank got, then let the
 * previous handler (Open MPI's backtrace, or the default) deal with the signal. SIGTERM is what
 * the test watchdog (tests/watchdog) and the launchers end a hung or failed run with. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
static struct sigaction previous[sizeof fatal_signals / sizeof *fatal_signals];

static void on_fatal_signal(int sig)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "# [rank %d] signal %d after %d tests; last: %s\n",
                     crash_rank, sig, ran, last);
    if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
        n = 0;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        if (fatal_signals[i] == sig)
            sigaction(sig, &previous[i], NULL); /* the fault recurs on return, or abort() goes on */
    if (sig == SIGTERM)
        raise(sig); /* nothing recurs: deliver it again, to the previous handler */
}

void tap_plan(int n_per_rank)
{
    planned = n_per_rank;
    crash_rank = my_rank();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        sigaction(fatal_signals[i], &sa, &previous[i]);
#ifdef PR_SET_PTRACER
    /* Let the watchdog's gdb attach where Yama's ptrace_scope is 1 (only ancestors may attach;
     * gdb is none). Where Yama is absent this fails, harmlessly. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

void tap_counts(int *ran_out, int *failed_out)
{
    *ran_out = ran;
    *failed_out = failed;
}

int tap_done(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (ran != planned) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "not ok - [rank %d] ", rank);
        char msg[128];
        if (planned < 0)
            snprintf(msg, sizeof msg, "ran %d tests without calling tap_plan()", ran);
        else
            snprintf(msg, sizeof msg, "ran %d tests but planned %d", ran, planned);
        record(prefix, msg, 0);
        failed++;
    }
    if (!lines)
        append("", 0);

    /* Gather every rank's records to rank 0, in rank order. */
    int mylen = (int)len, plan = planned > 0 ? planned : 0, total_plan = 0;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = calloc((size_t)size, sizeof *lens);
        displs = calloc((size_t)size, sizeof *displs);
    }
    MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(&plan, &total_plan, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t sum = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)sum;
            sum += (size_t)lens[r];
        }
        all = malloc(sum + 1);
        all[sum] = '\0';
    }
    MPI_Gatherv(lines, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        /* Number the results and print the stream in one go. */
        printf("1..%d\n", total_plan);
        int k = 0;
        for (char *line = all, *next; *line; line = next) {
            next = strchr(line, '\n');
            *next++ = '\0';
            if (!strncmp(line, "ok - ", 5))
                printf("ok %d%s\n", ++k, line + 2);
            else if (!strncmp(line, "not ok - ", 9))
                printf("not ok %d%s\n", ++k, line + 6);
            else
                printf("%s\n", line);
        }
        fflush(stdout);
        free(all);
        free(lens);
        free(displs);
    }

    int any_failed = 0, mine = failed > 0;
    MPI_Allreduce(&mine, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(lines);
    lines = NULL;
    len = cap = 0;
    return any_failed ? 1 : 0;
}
