# mpi.cmake - the MPI library flexrma is built over (included by CMakeLists.txt).
#
#   -DFLEXRMA_MPI=openmpi|mpich   that MPI; MPI_C_COMPILER and MPIEXEC_EXECUTABLE, unless given,
#                                 become its mpicc.<mpi> and mpiexec.<mpi>
#   -DMPI_C_COMPILER=<wrapper>    (FLEXRMA_MPI empty) the MPI of that compiler wrapper
#   neither                       the MPI of the plain mpicc
#
# Which MPI it is comes from its mpi.h (flexrmaMpi.cmake), never from a name: it is recorded as
# FLEXRMA_MPI_KIND, which names the library and the installed files (cmake/install.cmake).

include(${CMAKE_CURRENT_LIST_DIR}/flexrmaMpi.cmake)

set(FLEXRMA_MPI "" CACHE STRING
    "MPI to build over: openmpi or mpich (empty: MPI_C_COMPILER's, else the plain mpicc's)")
set_property(CACHE FLEXRMA_MPI PROPERTY STRINGS "" ${FLEXRMA_MPI_KINDS})

set(_flexrma_mpiexec_given FALSE)
if(MPIEXEC_EXECUTABLE)
  set(_flexrma_mpiexec_given TRUE)
endif()
if(FLEXRMA_MPI)
  flexrma_mpi_defaults(${FLEXRMA_MPI})
endif()

find_package(MPI REQUIRED COMPONENTS C)

flexrma_mpi_kind(_flexrma_kind)
if(NOT _flexrma_kind)
  message(FATAL_ERROR "flexrma: the mpi.h of ${MPI_C_COMPILER} is neither Open MPI's nor MPICH's; "
                      "flexrma is built over those two (core/mpi_compat.h)")
endif()
if(FLEXRMA_MPI AND NOT FLEXRMA_MPI STREQUAL _flexrma_kind)
  message(FATAL_ERROR "flexrma: FLEXRMA_MPI=${FLEXRMA_MPI}, but MPI_C_COMPILER (${MPI_C_COMPILER}) "
                      "is ${_flexrma_kind}'s: give that MPI's wrapper, or use a fresh build directory")
endif()
set(FLEXRMA_MPI_KIND ${_flexrma_kind} CACHE INTERNAL "the MPI flexrma is built over, from its mpi.h")

# Only a compiler wrapper given: FindMPI took the first mpiexec it found, which on Debian is the
# default MPI's, not necessarily this one's. Another MPI's launcher is swapped for mpiexec.<mpi>.
# flexrma_launcher_kind(EXE KIND TEXT): what `EXE --version` prints into TEXT, and into KIND the
# MPI whose launcher that is: mpich for Hydra, else openmpi.
function(flexrma_launcher_kind exe kind text)
  execute_process(COMMAND ${exe} --version OUTPUT_VARIABLE v ERROR_VARIABLE v)
  if(v MATCHES "HYDRA")
    set(${kind} mpich PARENT_SCOPE)
  else()
    set(${kind} openmpi PARENT_SCOPE)
  endif()
  set(${text} "${v}" PARENT_SCOPE)
endfunction()

if(NOT _flexrma_mpiexec_given AND NOT FLEXRMA_MPI AND MPIEXEC_EXECUTABLE)
  flexrma_launcher_kind(${MPIEXEC_EXECUTABLE} _flexrma_launcher _flexrma_v)
  if(NOT _flexrma_launcher STREQUAL FLEXRMA_MPI_KIND)
    find_program(_FLEXRMA_MPIEXEC NAMES mpiexec.${FLEXRMA_MPI_KIND})
    if(_FLEXRMA_MPIEXEC)
      set(MPIEXEC_EXECUTABLE ${_FLEXRMA_MPIEXEC} CACHE FILEPATH "Executable for running MPI programs." FORCE)
    endif()
    unset(_FLEXRMA_MPIEXEC CACHE)
  endif()
endif()
message(STATUS "flexrma: built over ${FLEXRMA_MPI_KIND} (${MPI_C_COMPILER}; launcher ${MPIEXEC_EXECUTABLE})")

# The launcher in the end: FLEXRMA_LAUNCHER_MPI (openmpi or mpich) gives the tests its flags, and
# its --version the spawn verdict below.
set(FLEXRMA_LAUNCHER_MPI "")
set(_flexrma_v "")
if(MPIEXEC_EXECUTABLE)
  flexrma_launcher_kind(${MPIEXEC_EXECUTABLE} FLEXRMA_LAUNCHER_MPI _flexrma_v)
endif()

# Can this MPI spawn processes (MPI_Comm_spawn)? The spawn tests and the demo's spawn example
# need it. MPICH's ch4:ucx device cannot before MPICH 4.3:
# MPI_Comm_spawn opens a port first (MPID_Open_port, ch4_spawn.c), which asks the netmod for this
# process's address (MPIDI_UCX_get_local_upids), and in MPICH 4.0-4.2 the UCX netmod's dynamic-
# process functions are stubs returning "The function is currently not supported with ucx
# netmod". MPID_Comm_spawn_multiple drops that error and raises only "Error in spawn call"; Hydra
# is never asked to spawn (no PMI spawn command leaves the process), so no launcher option
# (-launcher fork, -hosts), info key (host, wdir, path) or environment changes it. Debian 12's
# mpich is 4.0.2 built --with-device=ch4:ucx (mpichversion: "MPICH Device: ch4:ucx"): there
# MPI_Open_port fails with that message, natively. So where the launcher is Hydra of such an
# MPICH, FLEXRMA_MPI_CAN_SPAWN is OFF.
set(_flexrma_can_spawn ON)
if(FLEXRMA_LAUNCHER_MPI STREQUAL "mpich" AND _flexrma_v MATCHES "ch4:ucx"
   AND _flexrma_v MATCHES "Version: *([0-9]+\\.[0-9]+)")
  if(CMAKE_MATCH_1 VERSION_LESS 4.3)
    set(_flexrma_can_spawn OFF)
    message(STATUS "flexrma: MPICH ${CMAKE_MATCH_1} with ch4:ucx cannot MPI_Comm_spawn (its UCX "
                   "netmod has no dynamic processes before 4.3)")
  endif()
endif()
set(FLEXRMA_MPI_CAN_SPAWN ${_flexrma_can_spawn} CACHE INTERNAL "whether this MPI can MPI_Comm_spawn")
