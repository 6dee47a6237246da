#!/bin/sh
# run-fortran.sh MPIEXEC LIBFLEXRMA PROG: run the Fortran MPI-2 program on 3 ranks with flexrma
# preloaded and FLEXRMA_STATS=1. Passes when every rank verified its data and reports the exact
# counter, and every rank's stats line shows flexrma handled its puts, gets and accumulates
# (the Fortran bindings reached flexrma through its PMPI_ entry points).
set -u
mpiexec=$1 lib=$2 prog=$3
np=3
# shellcheck source=../launch.sh
. "$(dirname "$0")/../launch.sh"
preload=$(preload_of "$lib")
out=$(launch $np LD_PRELOAD="$preload" FLEXRMA_STATS=1 -- "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() { echo "run-fortran: FAIL: $*"; exit 1; }
[ $rc -eq 0 ] || fail "exit status $rc"
good=$(printf '%s\n' "$out" | grep -c "^fortran rank [0-9]*: bad 0 counter $np$")
[ "$good" -eq $np ] || fail "$good of $np ranks verified their data and the counter"
stats=$(printf '%s\n' "$out" | grep "^flexrma stats:" | grep -v " puts 0 " | grep -v " gets 0 " |
        grep -v " accs 0 " | grep -c .)
[ "$stats" -eq $np ] || fail "$stats of $np ranks show flexrma handled puts, gets and accumulates"
echo "run-fortran: PASS"
