# man.cmake - the man pages: <build>/man/man3/*.3 and man7/flexrma.7, made by docs/man/mkpages.py
# from docs/man/*.md, include/flexrma.h and docs/specification.md (docs/architecture.md, "Man
# pages"), and installed under <mandir>/man3 and man7; the specification and the architecture
# under <docdir>, which the pages cite.
#
# Needs python3 (Debian: python3; scripts/test installs it). Without it the pages are not made,
# with a warning, and tests/man reports its tests as skipped.

option(FLEXRMA_MAN "Generate and install the man pages (needs python3)" ON)
set(FLEXRMA_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(FLEXRMA_MAN_BUILT FALSE)
if(FLEXRMA_MAN)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(FLEXRMA_MAN_BUILT TRUE)
  else()
    message(WARNING "flexrma: python3 not found: the man pages are not generated nor installed "
                    "(install python3, or configure with -DFLEXRMA_MAN=OFF to silence this)")
  endif()
endif()

if(FLEXRMA_MAN_BUILT)
  file(GLOB _flexrma_man_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.md)
  # The list of sources as a file that changes only when the list does, so that a removed
  # source makes the pages again too (and its pages go), not only a changed one.
  string(REPLACE ";" "\n" _flexrma_man_list "${_flexrma_man_sources}")
  file(WRITE ${PROJECT_BINARY_DIR}/man-sources.txt.new "${_flexrma_man_list}\n")
  configure_file(${PROJECT_BINARY_DIR}/man-sources.txt.new ${PROJECT_BINARY_DIR}/man-sources.txt
                 COPYONLY)
  # One stamp for all pages: mkpages.py rewrites only pages whose text changed, and removes
  # those of a source that is gone.
  add_custom_command(OUTPUT ${FLEXRMA_MAN_DIR}/pages.stamp
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/man/mkpages.py
            ${PROJECT_SOURCE_DIR}/docs/man ${FLEXRMA_MAN_DIR} ${PROJECT_VERSION}
    COMMAND ${CMAKE_COMMAND} -E touch ${FLEXRMA_MAN_DIR}/pages.stamp
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/mkpages.py ${_flexrma_man_sources}
            ${PROJECT_BINARY_DIR}/man-sources.txt
            ${PROJECT_SOURCE_DIR}/include/flexrma.h ${PROJECT_SOURCE_DIR}/docs/specification.md
    COMMENT "Generating the man pages (docs/man)"
    VERBATIM)
  add_custom_target(flexrma_man ALL DEPENDS ${FLEXRMA_MAN_DIR}/pages.stamp)
  install(DIRECTORY ${FLEXRMA_MAN_DIR}/man3 ${FLEXRMA_MAN_DIR}/man7
          DESTINATION ${CMAKE_INSTALL_MANDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/docs/specification.md ${PROJECT_SOURCE_DIR}/docs/architecture.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
