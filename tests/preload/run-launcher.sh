#!/bin/sh
# run-launcher.sh MPIEXEC FLEXRMA_RUN LIB PROG - flexrma-run with the configured launcher (TAP).
#
# PROG (prog_mpi2.c, linked with MPI alone) runs on 3 ranks as a user would start it:
#   FLEXRMA_STATS=1 FLEXRMA_TRANSPORT=am flexrma-run MPIEXEC -n 3 PROG
# (Open MPI's flags for its mpirun, Hydra's for MPICH's). flexrma-run must hand LD_PRELOAD to
# the ranks and not to the launcher, and forward every FLEXRMA_* variable. To see what the
# launcher got, MPIEXEC is started through a stand-in named mpiexec that writes down its
# environment and arguments, then runs MPIEXEC. Hydra passes its whole environment on to the
# ranks, so for Hydra the stand-in also drops FLEXRMA_* from it: the ranks can then have them
# only from flexrma-run's -genv flags. (Open MPI's -x NAME takes the value from mpirun's own
# environment, so there it stays.) LIB is the build's library, which flexrma-run must choose.
set -u
if [ $# -ne 4 ]; then
    echo "usage: run-launcher.sh MPIEXEC FLEXRMA_RUN LIB PROG" >&2
    exit 2
fi
real=$1 run=$2 lib=$3 prog=$4 np=3
tag=$(basename "$prog")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-launcher.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD FLEXRMA_LIB

mpiexec=$real
# shellcheck source=../launch.sh
. "$(dirname "$0")/../launch.sh"

drop=
[ "$LAUNCHER" = hydra ] && drop="-u FLEXRMA_STATS -u FLEXRMA_TRANSPORT"
cat >"$tmp/mpiexec" <<EOF
#!/bin/sh
# Stands in for $real: records the environment and arguments flexrma-run gave it.
[ "\${1:-}" = --version ] && exec "$real" "\$@"
printf 'LD_PRELOAD=%s\n' "\${LD_PRELOAD-(unset)}" >"$tmp/launcher.env"
for a in "\$@"; do printf '%s\n' "\$a"; done >"$tmp/launcher.args"
exec env $drop "$real" "\$@"
EOF
chmod +x "$tmp/mpiexec"
mpiexec=$tmp/mpiexec

echo "1..5"
n=0
result() { # result OK DESCRIPTION
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# 1. flexrma-run picks the library of this build (the launcher's MPI is the build's).
picked=$("$run" --print-lib "$mpiexec" -n $np "$prog" 2>&1)
echo "# flexrma-run --print-lib $real: $picked"
[ "$picked" = "$lib" ]
result $? "flexrma-run picks $lib for $LAUNCHER's $(basename "$real")"

(
    FLEXRMA_STATS=1 FLEXRMA_TRANSPORT=am
    export FLEXRMA_STATS FLEXRMA_TRANSPORT
    launch_via=$run
    launch $np -- "$prog"
) >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out" "$tmp/err"
grep -q "^$tag: $np of $np ranks as expected$" "$tmp/out" && [ $rc = 0 ]
result $? "the program ran (exit $rc) and every rank's checksums are the expected ones"

# Per rank: a stats line with puts, gets and accumulates (flexrma, preloaded, did the work) and
# no node peer reached through shared memory (FLEXRMA_TRANSPORT=am arrived too).
awk -v np=$np '
/^flexrma stats: rank [0-9]+ win / {
    r = $4
    lines[r]++
    for (i = 5; i < NF; i++) {
        if ($i == "puts" || $i == "gets" || $i == "accs") ops[r, $i] += $(i + 1)
        if ($i == "shm" && $(i - 1) == "peers") shm[r] += $(i + 1)
        if ($i == "am" && $(i - 2) == "shm") am[r] += $(i + 1)
    }
}
END {
    bad = 0
    for (r = 0; r < np; r++) {
        if (!lines[r]) { print "# rank " r ": no flexrma stats line"; bad = 1; continue }
        if (!ops[r, "puts"] || !ops[r, "gets"] || !ops[r, "accs"]) {
            print "# rank " r ": flexrma counted no puts, gets or accumulates"; bad = 1
        }
        if (shm[r] || !am[r]) { print "# rank " r ": peers not reached by messages only"; bad = 1 }
    }
    exit bad
}' "$tmp/err" >"$tmp/stats"
rc=$?
cat "$tmp/stats"
result $rc "every rank ran flexrma (FLEXRMA_STATS=1 and FLEXRMA_TRANSPORT=am reached it)"

grep -q '^LD_PRELOAD=(unset)$' "$tmp/launcher.env" 2>/dev/null
result $? "the launcher itself ran without LD_PRELOAD ($(cat "$tmp/launcher.env" 2>/dev/null))"

# The arguments flexrma-run put before the launcher's own: LD_PRELOAD and the FLEXRMA_* set.
preload=$("$run" --print-preload "$mpiexec" 2>&1)
if [ "$LAUNCHER" = hydra ]; then
    want="-genv LD_PRELOAD $preload|-genv FLEXRMA_STATS 1|-genv FLEXRMA_TRANSPORT am"
else
    want="-x LD_PRELOAD=$preload|-x FLEXRMA_STATS|-x FLEXRMA_TRANSPORT"
fi
args=$(tr '\n' ' ' <"$tmp/launcher.args" 2>/dev/null)
echo "# launcher arguments: $args"
missing=
IFS='|'
for w in $want; do
    case " $args" in
        *" $w "*) ;;
        *) missing="$missing [$w]" ;;
    esac
done
unset IFS
[ -z "$missing" ]
result $? "flexrma-run passed the launcher ${missing:+all but$missing}${missing:-LD_PRELOAD and every FLEXRMA_* variable}"
