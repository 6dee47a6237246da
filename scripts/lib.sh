# lib.sh - shell helpers shared by scripts/test and scripts/demo (POSIX sh; source it, do not run).
# shellcheck shell=sh

# The repository root (scripts/..), made absolute.
FLEXRMA_ROOT=$(cd "$(dirname "$0")/.." && pwd)

# Debian packages needed to build flexrma and run its tests, examples and demo.
# FLEXRMA_EXTRA_PACKAGES (environment) adds more.
FLEXRMA_PACKAGES="cmake make gcc gfortran libc6-dev pkg-config openmpi-bin libopenmpi-dev libatomic-ops-dev"
# The man pages: python3 generates them (cmake/man.cmake), groff-base and man-db render and look
# them up in their tests (tests/man).
FLEXRMA_PACKAGES="$FLEXRMA_PACKAGES python3 groff-base man-db"

# Number of parallel build jobs.
FLEXRMA_JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }
warn() { printf '%s: warning: %s\n' "${0##*/}" "$*" >&2; }
die() {
    printf '%s: error: %s\n' "${0##*/}" "$*" >&2
    exit 1
}

# ensure_packages: install the missing Debian packages (as root: apt-get update once, then
# apt-get install), or, not root, say what to install and exit 1. Without dpkg (not Debian),
# check for the tools themselves.
ensure_packages() {
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    set -- $FLEXRMA_PACKAGES ${FLEXRMA_EXTRA_PACKAGES:-}
    if ! command -v dpkg-query >/dev/null 2>&1; then
        missing=
        for tool in cmake make cc pkg-config mpicc mpirun; do
            command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
        done
        command -v pkg-config >/dev/null 2>&1 && ! pkg-config --exists atomic_ops &&
            missing="$missing atomic_ops(pkg-config)"
        [ -z "$missing" ] ||
            die "not a Debian system and missing:$missing; install CMake, a C compiler, make, pkg-config, an MPI (Open MPI or MPICH) and libatomic_ops"
        return 0
    fi
    missing=
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) || status=
        [ "$status" = "install ok installed" ] || missing="$missing $pkg"
    done
    if [ -z "$missing" ]; then
        say "packages: all present ($*)"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        printf '%s: missing Debian packages:%s\n' "${0##*/}" "$missing" >&2
        printf 'install them with:\n  sudo apt-get update && sudo apt-get install -y%s\n' "$missing" >&2
        exit 1
    fi
    say "packages: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q </dev/null || die "apt-get update failed"
    # shellcheck disable=SC2086
    apt-get install -y -q -o Dpkg::Use-Pty=0 $missing </dev/null || die "apt-get install failed for:$missing"
}

# mpi_env: environment for running Open MPI's mpirun here: as root (with the two variables
# Open MPI asks for) and with more ranks than cores allowed.
mpi_env() {
    if [ "$(id -u)" -eq 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
    export OMPI_MCA_rmaps_base_oversubscribe="${OMPI_MCA_rmaps_base_oversubscribe:-1}"
}

# build_tree DIR BUILD_TYPE [CMAKE ARGS...]: configure and build the project in DIR.
build_tree() {
    dir=$1
    type=$2
    shift 2
    say "configure $dir ($type${*:+ $*})"
    cmake -S "$FLEXRMA_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" || return 1
    say "build $dir"
    cmake --build "$dir" -j "$FLEXRMA_JOBS" || return 1
}

# elapsed SINCE: seconds since SINCE (a `date +%s` value), as "1m23s".
elapsed() {
    s=$(($(date +%s) - $1))
    printf '%dm%02ds' $((s / 60)) $((s % 60))
}
