/* tap_f.c - the TAP helper (tap.h) for the Fortran tests: non-variadic entry points that the
 * module tap_f08 (tap_f08.f90) binds to, each passing one ready-made description. */
#include "tap.h"

void tap_f_plan(int n) { tap_plan(n); }

void tap_f_ok(int cond, const char *desc, const char *file, int line)
{
    tap_ok_at(file, line, cond, "%s", desc);
}

void tap_f_is(long long got, long long expected, const char *desc, const char *file, int line)
{
    tap_is_int_at(file, line, got, expected, "%s", desc);
}

void tap_f_diag(const char *msg) { diag("%s", msg); }

int tap_f_done(void) { return tap_done(); }
