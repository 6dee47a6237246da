# fortran.cmake - whether the Fortran 2008 module flexrma_f08 (fortran/) is built: included by
# CMakeLists.txt after cmake/mpi.cmake. enable_language(Fortran) is called here, at the top
# level, because the tests and examples in other folders compile Fortran too.
#
#   -DFLEXRMA_FORTRAN=AUTO  (default) built when there is a Fortran compiler and the MPI's Fortran
#                           wrapper has an mpi_f08 module; otherwise skipped, saying why
#   -DFLEXRMA_FORTRAN=ON    the same, but a missing piece is an error
#   -DFLEXRMA_FORTRAN=OFF   not built
#
# The MPI's Fortran wrapper: MPI_Fortran_COMPILER if given, else mpif90.<mpi> (Debian's name for
# the wrapper of the MPI flexrma is built over, FLEXRMA_MPI_KIND), else what FindMPI finds.
# Sets FLEXRMA_HAVE_FORTRAN (TRUE or FALSE).

set(FLEXRMA_FORTRAN AUTO CACHE STRING "Build the Fortran module flexrma_f08: AUTO, ON or OFF")
set_property(CACHE FLEXRMA_FORTRAN PROPERTY STRINGS AUTO ON OFF)
set(FLEXRMA_HAVE_FORTRAN FALSE)

# flexrma_fortran_skip(WHY): not built, because WHY; an error under FLEXRMA_FORTRAN=ON.
macro(flexrma_fortran_skip why)
  if(FLEXRMA_FORTRAN STREQUAL "ON")
    message(FATAL_ERROR "flexrma: FLEXRMA_FORTRAN=ON, but ${why}")
  endif()
  message(STATUS "flexrma: the Fortran module flexrma_f08 is not built: ${why} "
                 "(-DFLEXRMA_FORTRAN=OFF silences this)")
endmacro()

string(TOUPPER "${FLEXRMA_FORTRAN}" _flexrma_fortran)
if(_flexrma_fortran STREQUAL "OFF")
  message(STATUS "flexrma: the Fortran module flexrma_f08 is not built (FLEXRMA_FORTRAN=OFF)")
else()
  include(CheckLanguage)
  check_language(Fortran)
  if(NOT CMAKE_Fortran_COMPILER)
    flexrma_fortran_skip("no Fortran compiler was found (Debian: apt-get install gfortran)")
  else()
    enable_language(Fortran)
    if(NOT MPI_Fortran_COMPILER)
      find_program(MPI_Fortran_COMPILER NAMES mpif90.${FLEXRMA_MPI_KIND})
    endif()
    find_package(MPI COMPONENTS Fortran)
    if(NOT MPI_Fortran_FOUND)
      flexrma_fortran_skip("${FLEXRMA_MPI_KIND} has no Fortran binding here (MPI_Fortran_COMPILER=${MPI_Fortran_COMPILER})")
    elseif(NOT MPI_Fortran_HAVE_F08_MODULE)
      flexrma_fortran_skip("${MPI_Fortran_COMPILER} has no mpi_f08 module")
    else()
      # The module passes buffers as TYPE(*), DIMENSION(..) to C descriptors (Fortran 2018's
      # ISO_Fortran_binding.h; gfortran has them from version 9, complete from 12).
      include(CheckFortranSourceCompiles)
      set(CMAKE_REQUIRED_QUIET TRUE)
      check_fortran_source_compiles([=[
        module flexrma_probe
          interface
            subroutine c_take(buf) bind(C, name="take")
              type(*), dimension(..), intent(in), asynchronous :: buf
            end subroutine
          end interface
        end module
        program p
        end program]=] FLEXRMA_FORTRAN_ASSUMED_RANK SRC_EXT F90)
      unset(CMAKE_REQUIRED_QUIET)
      if(NOT FLEXRMA_FORTRAN_ASSUMED_RANK)
        flexrma_fortran_skip("${CMAKE_Fortran_COMPILER} cannot pass TYPE(*), DIMENSION(..) to C")
      else()
        set(FLEXRMA_HAVE_FORTRAN TRUE)
        message(STATUS "flexrma: the Fortran module flexrma_f08 is built (${CMAKE_Fortran_COMPILER}, "
                       "mpi_f08 of ${MPI_Fortran_COMPILER})")
      endif()
    endif()
  endif()
endif()
