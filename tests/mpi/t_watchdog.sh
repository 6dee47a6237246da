#!/bin/sh
# t_watchdog.sh NP COMMAND... - the test watchdog (tests/watchdog) turns a hang into a failure
# that shows every rank's stack.
#
# COMMAND... is the launcher's command that runs t_watchdog.c on NP ranks (the program last).
# Each run goes as ctest runs an MPI test: tap-check, the watchdog, the launcher.
#  1. WATCHDOG_TEST_HANG=1, deadline 15 s: every rank hangs in watchdog_test_hang(). tap-check
#     must fail with "tap-check: watchdog: no end after 15 s; stacks above"; for each rank
#     0..NP-1 the output must hold exactly one watchdog section "rank R", whose backtrace goes
#     through watchdog_test_hang exactly once; the run must end after the deadline and within
#     60 s; and no process of it (ranks, launcher, the watchdog's sleep and gdb) may be left.
#  2. no hang, deadline 60 s: tap-check passes and the watchdog prints nothing.
#  3. the watchdog hands on its command's exit status (7), silently.
# Ends with "t_watchdog: PASS" or "t_watchdog: FAIL".
set -u
if [ $# -lt 2 ]; then
    echo "usage: t_watchdog.sh NP COMMAND..." >&2
    exit 2
fi
np=$1
shift
tests=$(cd "$(dirname "$0")/.." && pwd)
unset FLEXRMA_TEST_WATCHDOG # the deadlines here are this test's own
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_watchdog.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM
failed=0

fail() {
    echo "t_watchdog: FAIL: $*"
    failed=1
}

# 1. the hang. Every process of the run inherits the tag, so any left behind can be found.
tag=t_watchdog.$$.$(date +%s)
t0=$(date +%s)
WATCHDOG_TEST_HANG=1 WATCHDOG_TEST_TAG=$tag \
    sh "$tests/tap-check" sh "$tests/watchdog" 15 "$@" >"$tmp/hang.out" 2>&1
rc=$?
took=$(($(date +%s) - t0))
sed 's/^/  [hang] /' "$tmp/hang.out"
echo "t_watchdog: hung run: tap-check exit $rc after $took s"
[ $rc -ne 0 ] || fail "tap-check passed a hung run"
grep -q '^tap-check: watchdog: no end after 15 s; stacks above$' "$tmp/hang.out" ||
    fail "no 'tap-check: watchdog: no end after 15 s; stacks above' line"
[ $took -ge 15 ] || fail "the run ended after $took s, before the deadline"
[ $took -lt 60 ] || fail "the run took $took s to end after a 15 s deadline"
awk -v np="$np" '
/^watchdog: ======== rank [0-9]+, pid / { r = $4; sub(/,$/, "", r); sect = r; seen[r]++; next }
/^watchdog: ======== end of /            { sect = ""; next }
sect != "" && /^#[0-9]+ .*watchdog_test_hang \(/ { frames[sect]++ }
END {
    bad = 0
    for (r = 0; r < np; r++) {
        if (seen[r] != 1) {
            print "t_watchdog: FAIL: " (seen[r] + 0) " stack sections for rank " r; bad = 1
        } else if (frames[r] != 1) {
            print "t_watchdog: FAIL: rank " r "\047s stack has " (frames[r] + 0) \
                  " watchdog_test_hang frames, not 1"
            bad = 1
        }
    }
    exit bad
}' "$tmp/hang.out" || failed=1
# Left behind: live processes (not zombies awaiting their reaper) carrying the tag.
left=
for d in /proc/[0-9]*; do
    tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qx "WATCHDOG_TEST_TAG=$tag" || continue
    state=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f1)
    case $state in "" | Z) continue ;; esac
    left="$left ${d#/proc/}"
    echo "t_watchdog: left behind: pid ${d#/proc/} ($state): $(tr '\0' ' ' <"$d/cmdline")"
done
[ -z "$left" ] || fail "processes of the hung run left behind:$left"

# 2. no hang: nothing changes
sh "$tests/tap-check" sh "$tests/watchdog" 60 "$@" >"$tmp/pass.out" 2>&1
rc=$?
sed 's/^/  [pass] /' "$tmp/pass.out"
echo "t_watchdog: run without a hang: tap-check exit $rc"
[ $rc -eq 0 ] || fail "tap-check failed a run without a hang"
! grep -q '^watchdog:' "$tmp/pass.out" || fail "the watchdog spoke in a run that ended in time"

# 3. the command's exit status, and not a word from the watchdog (a command this short ends
# before the timer is even ready: five times)
for _ in 1 2 3 4 5; do
    out=$(sh "$tests/watchdog" 60 sh -c 'exit 7' 2>&1)
    rc=$?
    [ $rc -eq 7 ] || fail "the watchdog turned exit status 7 into $rc"
    [ -z "$out" ] || fail "the watchdog spoke for a command of no time: $out"
done

if [ $failed = 0 ]; then
    echo "t_watchdog: PASS"
fi
exit $failed
