#!/bin/sh
# check-render.sh MANDIR - every page under MANDIR (man3/, man7/) renders without a warning (TAP).
#
# groff -man -ww turns on every warning (a macro or font missing, a bad escape, a line that
# cannot be broken...); -z formats without output, so stderr holds the warnings and nothing
# else. A .so page renders the page it points to, as man does. Without groff (Debian:
# groff-base) the whole test is skipped, with exit status 77 (ctest's SKIP_RETURN_CODE).
set -u
if [ $# -ne 1 ]; then
    echo "usage: check-render.sh MANDIR" >&2
    exit 2
fi
if ! command -v groff >/dev/null 2>&1; then
    echo "1..0 # SKIP groff not found (Debian: groff-base): the pages' rendering is not checked"
    exit 77
fi
cd "$1" || exit 2
set -- man[0-9]/*.[0-9]
[ -e "$1" ] || { echo "Bail out! no pages under $(pwd)"; exit 1; }
echo "1..$#"
n=0
for page in "$@"; do
    n=$((n + 1))
    # .so paths are relative to the man directory, hence the cd above.
    if warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1) && [ -z "$warnings" ]; then
        echo "ok $n - $page"
    else
        echo "not ok $n - $page"
        printf '%s\n' "$warnings" | sed 's/^/# /'
    fi
done
