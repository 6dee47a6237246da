# install.cmake - what `cmake --install` puts where, and the build tree's flexrma-run.
# Included by the top-level CMakeLists.txt once the `flexrma` target exists, before the tests
# (tests/install installs the build; FLEXRMA_DEFAULT_MPI is set here).
#
# Installed by a build over MPI <mpi> (openmpi or mpich: FLEXRMA_MPI_KIND, cmake/mpi.cmake):
#   <libdir>/libflexrma-<mpi>.so*                the library (target flexrma)
#   <includedir>/flexrma.h                       the public header (internal headers are not installed)
#   <libdir>/pkgconfig/flexrma-<mpi>.pc          pkg-config: `pkg-config --cflags --libs flexrma-<mpi>`
#   <libdir>/cmake/flexrma/flexrmaTargets-<mpi>*.cmake   flexrma::flexrma over <mpi>
#   <libdir>/cmake/flexrma/flexrmaConfig*.cmake, flexrmaMpi.cmake, flexrma_mpi_kind.c
#                                                find_package(flexrma): takes the targets of the
#                                                consumer's MPI (the same files from every build)
#   <bindir>/flexrma-run                         the launcher wrapper: preloads the
#                                                libflexrma-<mpi>.so of the launcher's MPI
#   <libdir>/pkgconfig/flexrma.pc                the default build's flexrma-<mpi>.pc, unsuffixed
#   <mandir>/man3/*.3, man7/flexrma.7            the man pages, and <docdir>/specification.md and
#                                                architecture.md, which they cite (cmake/man.cmake;
#                                                the same files from every build)
# and where the Fortran module is built (FLEXRMA_HAVE_FORTRAN, cmake/fortran.cmake):
#   <libdir>/libflexrma_f08-<mpi>.so*            its library (target flexrma_f08, in the same
#                                                targets file: flexrma::flexrma_f08)
#   <libdir>/fortran/flexrma-<mpi>/flexrma_f08.mod   the module (FLEXRMA_FORTRAN_MODDIR)
#   <libdir>/pkgconfig/flexrma_f08-<mpi>.pc      and flexrma_f08.pc, as flexrma.pc
# So builds over different MPIs install into one prefix side by side, as Debian's MPIs do. The
# unsuffixed names, flexrma.pc and flexrma-run (whose own library serves a program started
# without a launcher), belong to the default build: the one over FLEXRMA_DEFAULT_MPI, by default
# the MPI of the plain `mpicc` at configure time. Another build writes them only where they are
# missing, so that the default build's stay whatever the order of the installs.
# flexrma-run and the .pc files are written at install time, so that `cmake --install --prefix P`
# gets paths under P (DESTDIR is honoured and not written into them).
#
# Build tree: ${CMAKE_BINARY_DIR}/flexrma-run preloads the build tree's library (tests, demo).

include(CMakePackageConfigHelpers)

set(FLEXRMA_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/flexrma"
    CACHE STRING "Where the flexrma CMake package files are installed, relative to the prefix")
mark_as_advanced(FLEXRMA_CMAKE_INSTALL_DIR)

if(NOT TARGET flexrma::flexrma)
  add_library(flexrma::flexrma ALIAS flexrma)
endif()

# ---- libraries that must precede libflexrma in LD_PRELOAD ----
# A sanitizer build of libflexrma needs its runtime (ASan's, or TSan's for FLEXRMA_SANITIZE=thread)
# loaded first when it is preloaded into a program that is not itself built with it. Only GCC's
# shared libasan and libtsan are handled.
set(FLEXRMA_PRELOAD_FIRST "")
if(FLEXRMA_SANITIZER AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  if(FLEXRMA_SANITIZER STREQUAL "thread")
    set(_flexrma_san_lib libtsan.so)
  else()
    set(_flexrma_san_lib libasan.so)
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${_flexrma_san_lib}
                  OUTPUT_VARIABLE _flexrma_san_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(IS_ABSOLUTE "${_flexrma_san_path}" AND EXISTS "${_flexrma_san_path}")
    get_filename_component(_flexrma_san_path "${_flexrma_san_path}" REALPATH)
    set(FLEXRMA_PRELOAD_FIRST "${_flexrma_san_path}")
  else()
    message(WARNING "flexrma: ${_flexrma_san_lib} not found; flexrma-run will not preload the "
                    "sanitizer runtime")
  endif()
endif()

# ---- the default build ----
# Which MPI the plain mpicc is: the same probe as cmake/flexrmaMpi.cmake's, through that wrapper.
if(NOT DEFINED FLEXRMA_DEFAULT_MPI)
  set(_flexrma_default "")
  foreach(_flexrma_kind IN LISTS FLEXRMA_MPI_KINDS)
    string(TOUPPER "${_flexrma_kind}" _flexrma_upper)
    execute_process(COMMAND mpicc -E -DFLEXRMA_PROBE_${_flexrma_upper} ${_FLEXRMA_MPI_PROBE}
                    RESULT_VARIABLE _flexrma_rc OUTPUT_QUIET ERROR_QUIET)
    if(_flexrma_rc EQUAL 0)
      set(_flexrma_default ${_flexrma_kind})
      break()
    endif()
  endforeach()
  set(FLEXRMA_DEFAULT_MPI "${_flexrma_default}" CACHE STRING
      "The MPI whose flexrma build installs flexrma.pc and flexrma-run over another's (default: the plain mpicc's)")
endif()
if(FLEXRMA_DEFAULT_MPI STREQUAL FLEXRMA_MPI_KIND)
  set(FLEXRMA_INSTALL_DEFAULT TRUE)
else()
  set(FLEXRMA_INSTALL_DEFAULT FALSE)
endif()
if(FLEXRMA_INSTALL_DEFAULT)
  message(STATUS "flexrma: the default build (FLEXRMA_DEFAULT_MPI=${FLEXRMA_DEFAULT_MPI}): "
                 "installs flexrma.pc and flexrma-run")
else()
  message(STATUS "flexrma: not the default build (FLEXRMA_DEFAULT_MPI=${FLEXRMA_DEFAULT_MPI}): "
                 "installs flexrma.pc and flexrma-run only where missing")
endif()

# ---- pkg-config: how flexrma-<mpi>.pc brings in MPI ----
# flexrma.h includes mpi.h and libflexrma must come before libmpi on the link line, so MPI is a
# public requirement: `Requires: ompi-c` (Open MPI) or `mpich` when that MPI's .pc file exists.
# Otherwise the flags FindMPI found are written into Cflags/Libs directly.
set(FLEXRMA_PC_REQUIRES "")
set(FLEXRMA_PC_MPI_CFLAGS "")
set(FLEXRMA_PC_MPI_LIBS "")
if(FLEXRMA_MPI_KIND STREQUAL "openmpi")
  set(_flexrma_pc ompi-c)
else()
  set(_flexrma_pc mpich)
endif()
pkg_check_modules(_FLEXRMA_PC_${FLEXRMA_MPI_KIND} QUIET ${_flexrma_pc})
if(_FLEXRMA_PC_${FLEXRMA_MPI_KIND}_FOUND)
  set(FLEXRMA_PC_REQUIRES "${_flexrma_pc}")
else()
  foreach(_flexrma_dir IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND FLEXRMA_PC_MPI_CFLAGS " -I${_flexrma_dir}")
  endforeach()
  foreach(_flexrma_l IN LISTS MPI_C_LIBRARIES)
    string(APPEND FLEXRMA_PC_MPI_LIBS " ${_flexrma_l}")
  endforeach()
  message(STATUS "flexrma: no ${_flexrma_pc}.pc; flexrma-${FLEXRMA_MPI_KIND}.pc lists the MPI flags itself")
endif()

# ---- library, header, CMake package ----
install(TARGETS flexrma EXPORT flexrmaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/flexrma.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(FLEXRMA_HAVE_FORTRAN)
  install(TARGETS flexrma_f08 EXPORT flexrmaTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES $<TARGET_PROPERTY:flexrma_f08,Fortran_MODULE_DIRECTORY>/flexrma_f08.mod
    DESTINATION ${FLEXRMA_FORTRAN_MODDIR})
  set(FLEXRMA_INSTALL_F08 TRUE)
else()
  set(FLEXRMA_INSTALL_F08 FALSE)
endif()

# One targets file per MPI; flexrmaConfig.cmake includes the one of the consumer's MPI.
install(EXPORT flexrmaTargets NAMESPACE flexrma:: FILE flexrmaTargets-${FLEXRMA_MPI_KIND}.cmake
  DESTINATION ${FLEXRMA_CMAKE_INSTALL_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flexrmaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/flexrmaConfig.cmake
  INSTALL_DESTINATION ${FLEXRMA_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: minor versions may break compatibility.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flexrmaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flexrmaConfig.cmake ${PROJECT_BINARY_DIR}/flexrmaConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/flexrmaMpi.cmake ${_FLEXRMA_MPI_PROBE}
  DESTINATION ${FLEXRMA_CMAKE_INSTALL_DIR})
# The build tree is usable as a package too: -Dflexrma_DIR=<build>.
export(EXPORT flexrmaTargets NAMESPACE flexrma::
  FILE ${PROJECT_BINARY_DIR}/flexrmaTargets-${FLEXRMA_MPI_KIND}.cmake)
foreach(_flexrma_f IN ITEMS ${PROJECT_SOURCE_DIR}/cmake/flexrmaMpi.cmake ${_FLEXRMA_MPI_PROBE})
  configure_file(${_flexrma_f} ${PROJECT_BINARY_DIR} COPYONLY)
endforeach()

# ---- flexrma-run and the .pc files, configured at install time ----
# The code below runs inside `cmake --install`: ${CMAKE_INSTALL_PREFIX} is the prefix of that
# install, @VARS@ are filled in now, and the generator expression when the install script is made.
set(_flexrma_install_code [=[
  set(_prefix "${CMAKE_INSTALL_PREFIX}")
  foreach(_kind IN ITEMS BIN LIB INCLUDE)
    set(_dir "${_FLEXRMA_${_kind}DIR}")
    if(NOT IS_ABSOLUTE "${_dir}")
      set(_dir "${_prefix}/${_dir}")
    endif()
    set(_FLEXRMA_FULL_${_kind}DIR "${_dir}")
  endforeach()
  set(FLEXRMA_MPI_KIND "@FLEXRMA_MPI_KIND@")
  # The unsuffixed files: the default build's, else whoever's came first (see the top).
  set(_default @FLEXRMA_INSTALL_DEFAULT@)
  # flexrma-run
  set(FLEXRMA_LIB "${_FLEXRMA_FULL_LIBDIR}/$<TARGET_SONAME_FILE_NAME:flexrma>")
  set(FLEXRMA_PRELOAD_FIRST "@FLEXRMA_PRELOAD_FIRST@")
  if(_default OR NOT EXISTS "$ENV{DESTDIR}${_FLEXRMA_FULL_BINDIR}/flexrma-run")
    configure_file("@PROJECT_SOURCE_DIR@/scripts/flexrma-run" "@_flexrma_stage@/flexrma-run" @ONLY)
    file(INSTALL DESTINATION "${_FLEXRMA_FULL_BINDIR}" TYPE PROGRAM FILES "@_flexrma_stage@/flexrma-run")
  else()
    message(STATUS "Kept: $ENV{DESTDIR}${_FLEXRMA_FULL_BINDIR}/flexrma-run (an earlier install's; FLEXRMA_DEFAULT_MPI=@FLEXRMA_DEFAULT_MPI@)")
  endif()
  # flexrma-<mpi>.pc and flexrma.pc: ${prefix}-relative when the directories are under the prefix
  set(FLEXRMA_PC_PREFIX "${_prefix}")
  set(FLEXRMA_PC_LIBDIR "${_FLEXRMA_FULL_LIBDIR}")
  set(FLEXRMA_PC_INCLUDEDIR "${_FLEXRMA_FULL_INCLUDEDIR}")
  foreach(_v FLEXRMA_PC_LIBDIR FLEXRMA_PC_INCLUDEDIR)
    string(FIND "${${_v}}" "${_prefix}/" _at)
    if(_at EQUAL 0)
      string(LENGTH "${_prefix}" _len)
      string(SUBSTRING "${${_v}}" ${_len} -1 _rest)
      set(${_v} "\${prefix}${_rest}")
    endif()
  endforeach()
  set(FLEXRMA_VERSION "@PROJECT_VERSION@")
  set(FLEXRMA_PC_REQUIRES "@FLEXRMA_PC_REQUIRES@")
  set(FLEXRMA_PC_MPI_CFLAGS "@FLEXRMA_PC_MPI_CFLAGS@")
  set(FLEXRMA_PC_MPI_LIBS "@FLEXRMA_PC_MPI_LIBS@")
  set(_pcdir "${_FLEXRMA_FULL_LIBDIR}/pkgconfig")
  set(FLEXRMA_PC_NAME "flexrma-${FLEXRMA_MPI_KIND}")
  configure_file("@PROJECT_SOURCE_DIR@/cmake/flexrma.pc.in" "@_flexrma_stage@/${FLEXRMA_PC_NAME}.pc" @ONLY)
  file(INSTALL DESTINATION "${_pcdir}" TYPE FILE FILES "@_flexrma_stage@/${FLEXRMA_PC_NAME}.pc")
  if(_default OR NOT EXISTS "$ENV{DESTDIR}${_pcdir}/flexrma.pc")
    set(FLEXRMA_PC_NAME "flexrma")
    configure_file("@PROJECT_SOURCE_DIR@/cmake/flexrma.pc.in" "@_flexrma_stage@/flexrma.pc" @ONLY)
    file(INSTALL DESTINATION "${_pcdir}" TYPE FILE FILES "@_flexrma_stage@/flexrma.pc")
  else()
    message(STATUS "Kept: $ENV{DESTDIR}${_pcdir}/flexrma.pc (an earlier install's; FLEXRMA_DEFAULT_MPI=@FLEXRMA_DEFAULT_MPI@)")
  endif()
  # flexrma_f08-<mpi>.pc and flexrma_f08.pc, the same way, where the Fortran module is built
  set(_f08 @FLEXRMA_INSTALL_F08@)
  if(_f08)
    set(FLEXRMA_PC_FMODDIR "${_FLEXRMA_FMODDIR}")
    if(NOT IS_ABSOLUTE "${FLEXRMA_PC_FMODDIR}")
      set(FLEXRMA_PC_FMODDIR "\${prefix}/${FLEXRMA_PC_FMODDIR}")
    endif()
    set(FLEXRMA_F08_PC_NAME "flexrma_f08-${FLEXRMA_MPI_KIND}")
    configure_file("@PROJECT_SOURCE_DIR@/cmake/flexrma_f08.pc.in" "@_flexrma_stage@/${FLEXRMA_F08_PC_NAME}.pc" @ONLY)
    file(INSTALL DESTINATION "${_pcdir}" TYPE FILE FILES "@_flexrma_stage@/${FLEXRMA_F08_PC_NAME}.pc")
    if(_default OR NOT EXISTS "$ENV{DESTDIR}${_pcdir}/flexrma_f08.pc")
      set(FLEXRMA_F08_PC_NAME "flexrma_f08")
      configure_file("@PROJECT_SOURCE_DIR@/cmake/flexrma_f08.pc.in" "@_flexrma_stage@/flexrma_f08.pc" @ONLY)
      file(INSTALL DESTINATION "${_pcdir}" TYPE FILE FILES "@_flexrma_stage@/flexrma_f08.pc")
    endif()
  endif()
]=])
set(_flexrma_stage "${PROJECT_BINARY_DIR}/install-stage")
string(CONFIGURE "${_flexrma_install_code}" _flexrma_install_code @ONLY)
install(CODE "
  set(_FLEXRMA_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(_FLEXRMA_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(_FLEXRMA_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(_FLEXRMA_FMODDIR \"${FLEXRMA_FORTRAN_MODDIR}\")")
install(CODE "${_flexrma_install_code}")

# ---- the build tree's flexrma-run ----
# Configured now, then given the library's path by file(GENERATE) once the generator knows it.
set(FLEXRMA_LIB "$<TARGET_FILE:flexrma>")
configure_file(${PROJECT_SOURCE_DIR}/scripts/flexrma-run ${PROJECT_BINARY_DIR}/flexrma-run.in @ONLY)
if(CMAKE_CONFIGURATION_TYPES)
  set(_flexrma_run_out "${PROJECT_BINARY_DIR}/$<CONFIG>/flexrma-run")
else()
  set(_flexrma_run_out "${PROJECT_BINARY_DIR}/flexrma-run")
endif()
if(CMAKE_VERSION VERSION_LESS 3.20)
  file(GENERATE OUTPUT ${_flexrma_run_out} INPUT ${PROJECT_BINARY_DIR}/flexrma-run.in)
else()
  file(GENERATE OUTPUT ${_flexrma_run_out} INPUT ${PROJECT_BINARY_DIR}/flexrma-run.in
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                     WORLD_READ WORLD_EXECUTE)
endif()
unset(FLEXRMA_LIB)
