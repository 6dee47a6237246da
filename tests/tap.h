/* tap.h - TAP (Test Anything Protocol) output for multi-rank MPI tests.
 *
 * Every rank records its own results. tap_done(), collective over MPI_COMM_WORLD, gathers them to
 * rank 0, which prints one TAP stream on stdout:
 *
 *     1..N                      N = sum of every rank's tap_plan()
 *     ok 1 - [rank 0] ring put
 *     not ok 2 - [rank 1] counter
 *     #   Failed test at t_lock.c line 42.
 *     #          got: 7
 *     #     expected: 8
 *
 * A rank that ran a different number of tests than it planned adds a "not ok" line saying so.
 * tap_done() returns 0 only if every rank passed everything; main() returns it.
 *
 * Failures are also written to stderr at once (every result with TAP_VERBOSE=1), and a rank
 * killed by a fatal signal says on stderr how many tests it had run and which was the last, so a
 * test that hangs or crashes before tap_done() still shows how far it got. */
#ifndef FLEXRMA_TAP_H
#define FLEXRMA_TAP_H

#define TAP_PRINTF(fmt_arg, first) __attribute__((format(printf, fmt_arg, first)))

void tap_plan(int n_per_rank);                                          /* after MPI_Init */
int ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);                /* returns cond */
int is_int(long long got, long long expected, const char *fmt, ...) TAP_PRINTF(3, 4);
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
void skip(int n, const char *why);
int tap_done(void); /* collective over MPI_COMM_WORLD, before MPI_Finalize */
/* Tests run and failed so far on this rank: for a process that reports to another one instead
 * of calling tap_done (a spawned process has an MPI_COMM_WORLD of its own). */
void tap_counts(int *ran, int *failed);

/* ok() and is_int() with the call site; the macros make every call record where it was made. */
int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...) TAP_PRINTF(4, 5);
int tap_is_int_at(const char *file, int line, long long got, long long expected,
                  const char *fmt, ...) TAP_PRINTF(5, 6);
#define ok(cond, ...) tap_ok_at(__FILE__, __LINE__, (cond), __VA_ARGS__)
#define is_int(got, expected, ...) tap_is_int_at(__FILE__, __LINE__, (got), (expected), __VA_ARGS__)

#endif
