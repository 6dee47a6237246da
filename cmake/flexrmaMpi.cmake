# flexrmaMpi.cmake - which MPI library flexrma is built over, or a consumer uses: shared by
# flexrma's own build (cmake/mpi.cmake) and find_package(flexrma) (installed beside
# flexrmaConfig.cmake). The kinds are "openmpi" and "mpich"; one prefix may hold a flexrma
# for each (libflexrma-<kind>.so, flexrmaTargets-<kind>.cmake).

set(_FLEXRMA_MPI_PROBE "${CMAKE_CURRENT_LIST_DIR}/flexrma_mpi_kind.c")
set(FLEXRMA_MPI_KINDS openmpi mpich)

# flexrma_mpi_defaults(<kind>): MPI_C_COMPILER, MPIEXEC_EXECUTABLE and MPI_Fortran_COMPILER, unless
# already set, become that MPI's own wrappers and launcher, mpicc.<kind>, mpiexec.<kind> and
# mpif90.<kind> (Debian's names): the plain mpicc, mpiexec and mpif90 follow the system's default
# MPI, whichever it is.
function(flexrma_mpi_defaults kind)
  list(FIND FLEXRMA_MPI_KINDS "${kind}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "flexrma: FLEXRMA_MPI=${kind}: expected one of ${FLEXRMA_MPI_KINDS}")
  endif()
  if(NOT MPI_C_COMPILER)
    find_program(MPI_C_COMPILER NAMES mpicc.${kind})
    if(NOT MPI_C_COMPILER)
      message(FATAL_ERROR "flexrma: FLEXRMA_MPI=${kind}, but no mpicc.${kind} in PATH: "
                          "name the MPI's C compiler wrapper with -DMPI_C_COMPILER=...")
    endif()
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    find_program(MPIEXEC_EXECUTABLE NAMES mpiexec.${kind})
  endif()
  # The MPI's Fortran wrapper, for FindMPI's Fortran component (flexrma_f08), where there is one.
  if(NOT MPI_Fortran_COMPILER)
    find_program(MPI_Fortran_COMPILER NAMES mpif90.${kind})
  endif()
endfunction()

# flexrma_mpi_kind(<out>): the kind of the MPI that MPI::MPI_C brings in (find_package(MPI)
# first), from its mpi.h: "openmpi", "mpich", or "" for another MPI.
function(flexrma_mpi_kind out)
  # Compiling is enough: mpi.h decides, and no MPI library needs to be linked for it.
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  set(found "")
  foreach(kind IN LISTS FLEXRMA_MPI_KINDS)
    string(TOUPPER "${kind}" upper)
    try_compile(_flexrma_mpi_is ${CMAKE_BINARY_DIR}/CMakeFiles/flexrma_mpi_kind
      SOURCES ${_FLEXRMA_MPI_PROBE}
      COMPILE_DEFINITIONS -DFLEXRMA_PROBE_${upper}
      LINK_LIBRARIES MPI::MPI_C)
    set(is ${_flexrma_mpi_is})
    # try_compile caches its result: drop it, so a changed MPI is probed again.
    unset(_flexrma_mpi_is CACHE)
    if(is)
      set(found ${kind})
      break()
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
