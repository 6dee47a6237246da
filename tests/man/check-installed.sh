#!/bin/sh
# check-installed.sh BUILD CMAKE - `man NAME` finds and shows every page after an install (TAP).
#
# Installs BUILD into an empty prefix (cmake --install BUILD --prefix P), then, with
# MANPATH=P/share/man, for every page the build made: `man -w SECTION NAME` finds the prefix's
# file (for a name that shares a page, the page its .so link names), and `man SECTION NAME`
# shows a page whose NAME section names it. Also: the specification the pages cite is
# installed. Without man (Debian: man-db) the whole test is skipped, with exit status 77.
set -u
if [ $# -ne 2 ]; then
    echo "usage: check-installed.sh BUILD CMAKE" >&2
    exit 2
fi
build=$1 cmake=$2
if ! command -v man >/dev/null 2>&1; then
    echo "1..0 # SKIP man not found (Debian: man-db): the installed pages are not looked up"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-installed.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # man may read the pages as another user
prefix=$tmp/prefix
if ! out=$("$cmake" --install "$build" --prefix "$prefix" 2>&1); then
    printf '%s\n' "$out" | sed 's/^/# /'
    echo "Bail out! cmake --install $build failed"
    exit 1
fi
cd "$build/man" || exit 2
set -- man[0-9]/*.[0-9]
[ -e "$1" ] || { echo "Bail out! no pages under $build/man"; exit 1; }
echo "1..$(($# + 1))"
n=0
export MANPATH="$prefix/share/man" MANWIDTH=80 PAGER=cat
for page in "$@"; do
    n=$((n + 1))
    file=${page#*/}
    name=${file%.*}
    section=${file##*.}
    where=$(man -w "$section" "$name" 2>&1)
    # A name that shares a page (a .so link) must lead to that page, which is shown under its
    # own name in this loop (man is slow: each page is rendered once).
    target=$(sed -n 's/^\.so //p' "$page")
    if [ -n "$target" ]; then
        if [ "$where" = "$prefix/share/man/$target" ]; then
            echo "ok $n - man $section $name: $target"
        else
            echo "not ok $n - man $section $name: $target"
            echo "# man -w: $where"
        fi
        continue
    fi
    heading=$(man "$section" "$name" 2>&1 | sed -n '/^NAME/,/^[A-Z]/p')
    case $heading in
        *"$name"*) named=yes ;;
        *) named=no ;;
    esac
    if [ "$where" = "$prefix/share/man/$page" ] && [ $named = yes ]; then
        echo "ok $n - man $section $name"
    else
        echo "not ok $n - man $section $name"
        echo "# man -w: $where"
        printf '%s\n' "$heading" | sed 's/^/# /'
    fi
done
n=$((n + 1))
if [ -s "$prefix/share/doc/flexrma/specification.md" ]; then
    echo "ok $n - share/doc/flexrma/specification.md, which the pages cite, is installed"
else
    echo "not ok $n - share/doc/flexrma/specification.md, which the pages cite, is not installed"
fi
