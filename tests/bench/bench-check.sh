#!/bin/sh
# bench-check.sh MPIEXEC LIB NP PROG "VARIANTS" "CONFIGS" [ARGS...] - a benchmark program's
# results, never its times (TAP).
#
# Runs PROG (a bench/ program, plain MPI) on NP ranks with libflexrma LIB preloaded, with ARGS
# (small sizes, few steps), over the default transport and over FLEXRMA_TRANSPORT=am. Each run
# must exit 0 (the program checks every timed loop's data itself, and a wrong result fails it),
# and must print a row labelled flexrma for every variant of VARIANTS in every configuration of
# CONFIGS ("VARIANT/CONFIG") at every size: a variant the program left out (say, flexrma's calls
# not found) fails here instead of silently missing from the benchmark's tables.
set -u
if [ $# -lt 6 ]; then
    echo "usage: bench-check.sh MPIEXEC LIB NP PROG \"VARIANTS\" \"CONFIGS\" [ARGS...]" >&2
    exit 2
fi
mpiexec=$1 lib=$2 np=$3 prog=$4 variants=$5 configs=$6
shift 6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
# shellcheck source=../launch.sh
. "$(dirname "$0")/../launch.sh"

tag=$(basename "$prog")
nv=$(echo "$variants" | wc -w)
nc=$(echo "$configs" | wc -w)
echo "1..$((2 * (1 + nv * nc)))"
n=0
result() { # result STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

for transport in default am; do
    env=
    [ "$transport" = default ] || env="FLEXRMA_TRANSPORT=$transport"
    # shellcheck disable=SC2086 # env: one word or none
    launch "$np" LD_PRELOAD="$(preload_of "$lib")" $env -- "$prog" --impl flexrma \
        --transport "$transport" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sed 's/^/# /' "$tmp/out" "$tmp/err"
    result "$rc" "$tag on $np ranks, transport $transport: exit status $rc"
    # the sizes are the reference rows' (variant 1 of config 1)
    first=$(echo "$variants" | awk '{ print $1 }')/$(echo "$configs" | awk '{ print $1 }')
    sizes=$(awk -F, -v v="$first" '$2 == v { print $6 }' "$tmp/out" | sort -u | tr '\n' ' ')
    for c in $configs; do
        for v in $variants; do
            missing=
            [ -n "$sizes" ] || missing=all
            for s in $sizes; do
                awk -F, -v v="$v/$c" -v s="$s" -v np="$np" -v t="$transport" \
                    '$2 == v && $3 == "flexrma" && $4 == t && $5 == np && $6 == s { f = 1 }
                     END { exit !f }' "$tmp/out" || missing="$missing $s"
            done
            [ -z "$missing" ]
            result $? "$v/$c: a row at every size${missing:+ (none at:$missing)}"
        done
    done
done
