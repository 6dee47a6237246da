#!/bin/sh
# t_shm_residue.sh MPIEXEC PROG - a rank killed with SIGKILL leaves no shared memory behind.
#
# PROG (t_shm_residue.c) runs on 3 ranks: every rank allocates and maps segments, then the last
# rank kills itself with SIGKILL and mpirun ends the job (a non-zero exit, expected). Afterwards
# nothing may remain:
#  - in /dev/shm: where possible the job runs in a private mount namespace with a fresh, empty
#    /dev/shm, so any file at all is residue; otherwise (no unshare, not root) the shared
#    /dev/shm is listed before and after, and new names containing "flexrma" are residue (other
#    new names are only reported: another job on the machine may have made them);
#  - in TMPDIR, a fresh directory for the job: any file is residue; and in /tmp, new names
#    containing "flexrma".
# Runs: memfd segments (the default), named segments unlinked once the peers attached, and a
# control that keeps its names, where the residue must be found (and is then removed).
# Ends with "t_shm_residue: PASS" or "t_shm_residue: FAIL".
set -u
if [ "${1:-}" != --private ] && [ "$(id -u)" = 0 ] &&
    unshare --mount --propagation private true 2>/dev/null; then
    exec unshare --mount --propagation private sh "$0" --private "$@"
fi
private=0
if [ "${1:-}" = --private ]; then
    shift
    # A private, empty /dev/shm, seen by this script and the job only.
    if mount -t tmpfs -o mode=1777,size=64m flexrma-residue /dev/shm; then
        private=1
    else
        echo "t_shm_residue: cannot mount a private /dev/shm; using the shared one"
    fi
fi
if [ $# -ne 2 ]; then
    echo "usage: t_shm_residue.sh MPIEXEC PROG" >&2
    exit 2
fi
mpiexec=$1 prog=$2 np=3
# shellcheck source=../launch.sh
. "$(dirname "$0")/../launch.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/t_shm_residue.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM # the watchdog's (tests/watchdog): no next run, and the EXIT trap
failed=0
[ $private = 1 ] && echo "t_shm_residue: private /dev/shm" ||
    echo "t_shm_residue: shared /dev/shm (only names with flexrma count)"

# listing DIR: the names in DIR, sorted
listing() { find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort; }

fail() {
    echo "t_shm_residue: FAIL: $*"
    failed=1
}

# residue NAME: what the run left; the list in $work/NAME.residue, non-empty if anything.
residue() {
    : >"$work/$1.residue"
    listing /dev/shm >"$work/$1.shm.after"
    comm -13 "$work/$1.shm.before" "$work/$1.shm.after" >"$work/$1.shm.new"
    if [ $private = 1 ]; then
        sed 's|^|/dev/shm/|' "$work/$1.shm.new" >>"$work/$1.residue"
    else
        grep flexrma "$work/$1.shm.new" | sed 's|^|/dev/shm/|' >>"$work/$1.residue"
        grep -v flexrma "$work/$1.shm.new" |
            sed 's|^|t_shm_residue: note: new in /dev/shm, not flexrma: |'
    fi
    find "$work/$1.tmp" -mindepth 1 >>"$work/$1.residue"
    listing /tmp >"$work/$1.tmp.after"
    comm -13 "$work/$1.tmp.before" "$work/$1.tmp.after" | grep flexrma | sed 's|^|/tmp/|' \
        >>"$work/$1.residue"
    [ -s "$work/$1.residue" ]
}

# run NAME [PROG-ARG]: the job, with its listings before and after
run() {
    name=$1
    shift
    listing /dev/shm >"$work/$name.shm.before"
    listing /tmp >"$work/$name.tmp.before"
    mkdir "$work/$name.tmp"
    (TMPDIR=$work/$name.tmp && export TMPDIR && launch $np TMPDIR="$TMPDIR" -- "$prog" "$@") \
        >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    echo "t_shm_residue: $name run ($*): exit $rc (non-zero expected: a rank was killed)"
    sed "s/^/  [$name] /" "$work/$name.out"
    mapped=$(grep -c "^t_shm_residue: rank [0-9]* mapped $((3 * (np - 1))) segments$" \
        "$work/$name.out")
    if [ "$rc" = 0 ] || grep -q survived "$work/$name.out"; then
        fail "$name: the job was not ended by the killed rank"
        sed "s/^/  [$name stderr] /" "$work/$name.err"
    elif [ "$mapped" != $np ]; then
        fail "$name: $mapped of $np ranks mapped all their peers' segments before the kill"
        sed "s/^/  [$name stderr] /" "$work/$name.err"
    fi
}

run memfd
if residue memfd; then
    fail "memfd: residue after SIGKILL:"
    sed 's/^/    /' "$work/memfd.residue"
fi

run named named
if residue named; then
    fail "named (unlinked after attach): residue after SIGKILL:"
    sed 's/^/    /' "$work/named.residue"
fi

# The control: names kept until the kill must be found, or the check above proves nothing.
run control named-keep
if residue control; then
    echo "t_shm_residue: control: the residue of a job that kept its names was found:"
    sed 's/^/    /' "$work/control.residue"
    grep '^/dev/shm/flexrma\.' "$work/control.residue" | while read -r f; do rm -f "$f"; done
else
    fail "control: a job that kept its names left nothing behind, or the check cannot see it"
fi

if [ $failed = 0 ]; then
    echo "t_shm_residue: PASS"
fi
exit $failed
