#!/bin/sh
# run-install.sh SRC BUILD MPI DEFAULT LIBDIR BINDIR CC MPICC MPIEXEC CMAKE - the install test (TAP).
#
# Installs BUILD, a build over MPI (openmpi or mpich), into an empty prefix as a user would
# (cmake --install BUILD --prefix P) and uses it from there:
#   - the files carry the MPI's name: libflexrma-MPI.so, flexrma-MPI.pc, flexrmaTargets-MPI.cmake;
#   - `pkg-config --cflags --libs flexrma-MPI` builds consumer.c with CC, which then runs;
#   - find_package(flexrma) (consumer/) configures and builds, for the project's MPICC and for
#     -DFLEXRMA_MPI=MPI, and says that flexrma over the other MPI is not installed;
#   - bin/flexrma-run --print-lib picks libflexrma-MPI for MPIEXEC and refuses the other MPI's
#     launcher.
#   - where the build has the Fortran module (FLEXRMA_TEST_F08_FC, the environment: the MPI's
#     Fortran wrapper; empty without it), `pkg-config --cflags --libs flexrma_f08-MPI` builds
#     consumer_f08.f90 with that wrapper, and find_package(flexrma COMPONENTS Fortran)
#     (consumer_f08/) builds it too; each runs on 2 ranks with flexrma carrying its window.
# Then, when the other MPI is here too (mpicc.OTHER and mpiexec.OTHER), it builds flexrma over
# that one from SRC (the library alone, Debug: quick to compile) and installs it into the same
# prefix: both must coexist, flexrma.pc must be the default MPI's (DEFAULT, the build's
# FLEXRMA_DEFAULT_MPI; when neither, the first installed), and pkg-config, find_package and
# flexrma-run must each give the library over the MPI asked for. Without it those are skipped.
set -u
if [ $# -ne 10 ]; then
    echo "usage: run-install.sh SRC BUILD MPI DEFAULT LIBDIR BINDIR CC MPICC MPIEXEC CMAKE" >&2
    exit 2
fi
src=$1 build=$2 mpi=$3 default=$4 libdir=$5 bindir=$6 cc=$7 mpicc=$8 mpiexec_mpi=$9
shift 9
cmake=$1
case $mpi in
    openmpi) other=mpich ;;
    *) other=openmpi ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-install.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
lib=$prefix/$libdir
bin=$prefix/$bindir
consumer=$src/tests/install/consumer
unset LD_PRELOAD FLEXRMA_LIB FLEXRMA_MPI PKG_CONFIG_PATH
mpiexec=$mpiexec_mpi
# shellcheck source=../launch.sh
. "$(dirname "$0")/../launch.sh"

echo "1..16"
n=0
# t DESCRIPTION FUNCTION [ARGS...]: one test point, FUNCTION's output as diagnostics.
t() {
    desc=$1
    shift
    n=$((n + 1))
    if out=$("$@" 2>&1); then echo "ok $n - $desc"; else echo "not ok $n - $desc"; fi
    [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
}
skip() {
    n=$((n + 1))
    echo "ok $n # SKIP $*"
}

# soname MPI: the installed library over MPI, by the name programs load it by.
soname() {
    printf '%s/%s\n' "$lib" "$(objdump -p "$lib/libflexrma-$1.so" 2>/dev/null | awk '/SONAME/ { print $2 }')"
}

# files MPI...: each MPI's library, pkg-config file and targets are installed, and nothing
# unsuffixed but flexrma.pc, flexrma-run and the shared find_package files.
files() {
    bad=0
    for m in "$@"; do
        for f in "$lib/libflexrma-$m.so" "$lib/pkgconfig/flexrma-$m.pc" \
            "$lib/cmake/flexrma/flexrmaTargets-$m.cmake"; do
            [ -e "$f" ] || { echo "missing: $f"; bad=1; }
        done
    done
    for f in "$prefix/include/flexrma.h" "$bin/flexrma-run" "$lib/pkgconfig/flexrma.pc" \
        "$lib/cmake/flexrma/flexrmaConfig.cmake" "$lib/cmake/flexrma/flexrmaMpi.cmake"; do
        [ -e "$f" ] || { echo "missing: $f"; bad=1; }
    done
    for f in "$lib"/libflexrma.so*; do
        [ -e "$f" ] && { echo "unsuffixed library: $f"; bad=1; }
    done
    (cd "$prefix" && find . -type f -o -type l | sort)
    return $bad
}

# pc_build MPI EXE: consumer.c built with pkg-config's flags for flexrma-MPI, which must put
# -lflexrma-MPI before the MPI library.
pc_build() {
    flags=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs "flexrma-$1") || return 1
    echo "pkg-config --cflags --libs flexrma-$1: $flags"
    case " $flags " in
        *" -lflexrma-$1 "*" -lmpi"*) ;;
        *) echo "not -lflexrma-$1 before the MPI library"; return 1 ;;
    esac
    # shellcheck disable=SC2086 # the flags are words
    "$cc" -o "$2" "$src/tests/install/consumer.c" $flags -Wl,-rpath,"$lib" || return 1
    links "$2" "$1"
}

# links EXE MPI: EXE loads the prefix's libflexrma-MPI.
links() {
    ldd "$1" | grep libflexrma
    want=$(soname "$2")
    ldd "$1" | grep -q "=> $want " || { echo "$1 does not load $want"; return 1; }
}

# runs EXE LAUNCHER: EXE on 2 ranks: both see their neighbour's rank, flexrma carried the window.
runs() {
    mpiexec=$2
    LAUNCHER=$(launcher_kind)
    asan=$(ldd "$1" | awk '/libasan/ { print $3 }')
    out=$(launch 2 FLEXRMA_STATS=1 ${asan:+"LD_PRELOAD=$asan"} -- "$1" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || return 1
    [ "$(printf '%s\n' "$out" | grep -c '^consumer: rank [01] ok$')" -eq 2 ] || return 1
    [ "$(printf '%s\n' "$out" | grep -c '^flexrma stats: rank [01] ')" -eq 2 ]
}

# package DIR MPI [CMAKE ARGS...]: consumer/ configured in DIR finds flexrma over MPI, builds
# and loads the prefix's libflexrma-MPI.
package() {
    d=$1 m=$2
    shift 2
    configure "$d" "$@" || return 1
    grep -q "consumer: flexrma over $m\$" "$d.log" || { echo "not over $m"; return 1; }
    "$cmake" --build "$d" >>"$d.log" 2>&1 || { tail -n 20 "$d.log"; return 1; }
    links "$d/consumer" "$m"
}

# configure DIR [CMAKE ARGS...]: configure consumer/ against the prefix; the log in DIR.log.
configure() {
    d=$1
    shift
    "$cmake" -S "$consumer" -B "$d" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON "$@" >"$d.log" 2>&1
    rc=$?
    grep -E 'consumer:|flexrma' "$d.log"
    [ $rc -eq 0 ] || { tail -n 20 "$d.log"; return 1; }
}

# not_there DIR MPI: find_package(flexrma) with -DFLEXRMA_MPI=MPI fails, saying it is not there.
not_there() {
    if configure "$1" -DFLEXRMA_MPI="$2" >/dev/null; then
        echo "configured"
        return 1
    fi
    grep -A3 "flexrma over $2 is not installed" "$1.log"
}

# picks LIB [FLEXRMA-RUN ARGS...]: flexrma-run --print-lib ARGS prints LIB.
picks() {
    want=$1
    shift
    got=$("$bin/flexrma-run" --print-lib "$@" 2>&1)
    echo "flexrma-run --print-lib $*: $got"
    [ "$got" = "$want" ]
}

# refuses LAUNCHER: flexrma-run will not start LAUNCHER's ranks with no library over its MPI.
refuses() {
    out=$("$bin/flexrma-run" --print-lib "$1" -n 2 ./app 2>&1)
    rc=$?
    echo "$out (exit $rc)"
    [ $rc -eq 2 ] && case $out in *"is not installed"*) true ;; *) false ;; esac
}

# ---- this build alone ----
install_build() { "$cmake" --install "$build" --prefix "$prefix"; }
t "cmake --install into an empty prefix" install_build
t "the files over $mpi carry its name" files "$mpi"
pc_mpi=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=mpi flexrma 2>&1)
echo "# flexrma.pc is over: $pc_mpi"
t "pkg-config flexrma-$mpi builds a program that loads $(soname "$mpi")" pc_build "$mpi" "$tmp/pc-$mpi"
t "it runs on 2 ranks over $mpi, flexrma carrying its window" runs "$tmp/pc-$mpi" "$mpiexec_mpi"
t "find_package(flexrma) for MPI_C_COMPILER=$mpicc builds against flexrma over $mpi" \
    package "$tmp/cm-$mpi" "$mpi" -DMPI_C_COMPILER="$mpicc"
if command -v "mpicc.$mpi" >/dev/null 2>&1; then
    t "find_package(flexrma) with -DFLEXRMA_MPI=$mpi (mpicc.$mpi) builds against it" \
        package "$tmp/cm-flag-$mpi" "$mpi" -DFLEXRMA_MPI="$mpi"
else
    skip "no mpicc.$mpi for -DFLEXRMA_MPI=$mpi to default to"
fi
t "find_package(flexrma) with -DFLEXRMA_MPI=$other says it is not installed" \
    not_there "$tmp/cm-none-$other" "$other"
picks_own() { picks "$(soname "$mpi")" "$mpiexec_mpi" -n 2 ./app && picks "$(soname "$mpi")" ./app; }
t "flexrma-run picks $(soname "$mpi") for $mpiexec_mpi and without a launcher" picks_own
if command -v "mpiexec.$other" >/dev/null 2>&1; then
    t "flexrma-run refuses mpiexec.$other: no flexrma over $other here" refuses "mpiexec.$other"
else
    skip "no mpiexec.$other"
fi

# ---- the Fortran module ----
f08_fc=${FLEXRMA_TEST_F08_FC:-}
# pc_f08 EXE: consumer_f08.f90 built by the MPI's Fortran wrapper with flexrma_f08-MPI's flags.
pc_f08() {
    flags=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs "flexrma_f08-$mpi") || return 1
    echo "pkg-config --cflags --libs flexrma_f08-$mpi: $flags"
    # shellcheck disable=SC2086 # the flags are words
    "$f08_fc" -o "$1" "$src/tests/install/consumer_f08.f90" $flags -Wl,-rpath,"$lib" || return 1
    links "$1" "$mpi" && runs "$1" "$mpiexec_mpi"
}
# package_f08 DIR: consumer_f08/ finds flexrma's Fortran component, builds and runs.
package_f08() {
    "$cmake" -S "$src/tests/install/consumer_f08" -B "$1" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" -DFLEXRMA_MPI="$mpi" -DMPI_Fortran_COMPILER="$f08_fc" \
        -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$1.log" 2>&1 &&
        "$cmake" --build "$1" >>"$1.log" 2>&1 || { tail -n 20 "$1.log"; return 1; }
    grep 'consumer:' "$1.log"
    links "$1/consumer" "$mpi" && runs "$1/consumer" "$mpiexec_mpi"
}
if [ -n "$f08_fc" ]; then
    t "pkg-config flexrma_f08-$mpi builds a Fortran program ($f08_fc) that runs over $mpi" \
        pc_f08 "$tmp/pc-f08-$mpi"
    t "find_package(flexrma COMPONENTS Fortran) builds a Fortran program that runs over $mpi" \
        package_f08 "$tmp/cm-f08-$mpi"
else
    skip "pkg-config flexrma_f08-$mpi: this build has no Fortran module"
    skip "find_package(flexrma COMPONENTS Fortran): this build has no Fortran module"
fi

# ---- both, side by side ----
if ! command -v "mpicc.$other" >/dev/null 2>&1 || ! command -v "mpiexec.$other" >/dev/null 2>&1; then
    for what in "flexrma over $other installs beside it" "the default build's unsuffixed names" \
        "pkg-config flexrma-$other" "find_package for each MPI" "flexrma-run for each launcher"; do
        skip "$what: no $other here (mpicc.$other, mpiexec.$other)"
    done
    exit 0
fi

# The other MPI's flexrma from the same sources, installed like this one.
other_install() {
    "$cmake" -S "$src" -B "$tmp/build-$other" -DFLEXRMA_MPI="$other" -DCMAKE_BUILD_TYPE=Debug \
        -DFLEXRMA_BUILD_TESTS=OFF -DFLEXRMA_BUILD_EXAMPLES=OFF -DFLEXRMA_FORTRAN=OFF \
        -DCMAKE_C_COMPILER="$cc" \
        -DFLEXRMA_DEFAULT_MPI="$default" -DCMAKE_INSTALL_LIBDIR="$libdir" \
        -DCMAKE_INSTALL_BINDIR="$bindir" >"$tmp/build-$other.log" 2>&1 &&
        "$cmake" --build "$tmp/build-$other" -j 2 >>"$tmp/build-$other.log" 2>&1 &&
        "$cmake" --install "$tmp/build-$other" --prefix "$prefix" >>"$tmp/build-$other.log" 2>&1
    rc=$?
    grep -E '^-- (flexrma|Kept)' "$tmp/build-$other.log"
    [ $rc -eq 0 ] || { tail -n 30 "$tmp/build-$other.log"; return 1; }
    files "$mpi" "$other" >/dev/null || { files "$mpi" "$other"; return 1; }
}
t "flexrma over $other builds from the sources and installs beside flexrma over $mpi" other_install

# flexrma.pc, and flexrma-run's library without a launcher: the default MPI's, else the first's.
case $default in
    "$mpi" | "$other") want=$default ;;
    *) want=$mpi ;;
esac
defaults() {
    got=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=mpi flexrma)
    echo "flexrma.pc is over $got"
    [ "$got" = "$want" ] && picks "$(soname "$want")" ./app
}
t "flexrma.pc and flexrma-run's own library are over $want (FLEXRMA_DEFAULT_MPI=$default)" defaults

mpiexec_other=$(command -v "mpiexec.$other")
pc_other() { pc_build "$other" "$tmp/pc-$other" && runs "$tmp/pc-$other" "$mpiexec_other"; }
t "pkg-config flexrma-$other builds a program that runs over $other" pc_other
package_each() {
    package "$tmp/cm-both-$other" "$other" -DFLEXRMA_MPI="$other" &&
        package "$tmp/cm-both-$mpi" "$mpi" -DMPI_C_COMPILER="$mpicc"
}
t "find_package(flexrma) gives each MPI's flexrma (-DFLEXRMA_MPI=$other; MPI_C_COMPILER=$mpicc)" \
    package_each
picks_each() {
    picks "$(soname "$mpi")" "$mpiexec_mpi" -n 2 ./app &&
        picks "$(soname "$other")" "$mpiexec_other" -n 2 ./app
}
t "flexrma-run picks the library over each launcher's MPI" picks_each
