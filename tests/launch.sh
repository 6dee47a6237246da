# launch.sh - sourced by the test scripts: run a program on N ranks with the launcher ctest was
# configured with, whichever MPI it belongs to. The scripts get that launcher as $mpiexec.
#
#   launch NP [NAME=VALUE ...] -- PROGRAM [ARGS ...]
#
# runs PROGRAM on NP ranks with each NAME=VALUE set in the ranks' environment, more ranks than
# cores allowed and no binding (as every ctest test runs). The flags differ by launcher:
#   Open MPI's mpirun:  -np NP --oversubscribe --bind-to none -x NAME=VALUE
#   MPICH's Hydra:      -n NP -bind-to none -genv NAME VALUE   (it oversubscribes anyway)
# launcher_kind prints which one $mpiexec is: openmpi or hydra. With $launch_via set (a command,
# such as flexrma-run), the launcher runs under it: "$launch_via" "$mpiexec" ...
# preload_of LIB prints the LD_PRELOAD that brings libflexrma LIB into a program built without it.
# shellcheck shell=sh

launcher_kind() {
    if "$mpiexec" --version 2>&1 | grep -q HYDRA; then echo hydra; else echo openmpi; fi
}
LAUNCHER=${LAUNCHER:-$(launcher_kind)}

# A sanitizer build of the library needs its ASan runtime loaded before everything else; what the
# test runs with already (the ASan build's tests/keep_modules.c) stays, after the library.
preload_of() {
    _asan=$(ldd "$1" 2>/dev/null | awk '/libasan/ { print $3 }')
    echo "${_asan:+$_asan:}$1${LD_PRELOAD:+:$LD_PRELOAD}"
}

launch() {
    _np=$1
    shift
    _nenv=0
    for _a in "$@"; do
        [ "$_a" = -- ] && break
        _nenv=$((_nenv + 1))
    done
    _nprog=$(($# - _nenv - 1))
    # Rotate the words: each NAME=VALUE becomes the launcher's flags at the end, the "--" goes,
    # then the program and its arguments move behind the flags.
    while [ "$_nenv" -gt 0 ]; do
        _a=$1
        shift
        if [ "$LAUNCHER" = hydra ]; then
            set -- "$@" -genv "${_a%%=*}" "${_a#*=}"
        else
            set -- "$@" -x "$_a"
        fi
        _nenv=$((_nenv - 1))
    done
    shift
    while [ "$_nprog" -gt 0 ]; do
        _a=$1
        shift
        set -- "$@" "$_a"
        _nprog=$((_nprog - 1))
    done
    if [ "$LAUNCHER" = hydra ]; then
        ${launch_via:+"$launch_via"} "$mpiexec" -n "$_np" -bind-to none "$@"
    else
        ${launch_via:+"$launch_via"} "$mpiexec" -np "$_np" --oversubscribe --bind-to none "$@"
    fi
}
