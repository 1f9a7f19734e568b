# UnblockPackage.cmake — the modulefiles that `make install` puts beside the tree,
# and the Debian package (`make package`: CPack's DEB generator).  Layout and
# relocation: UnblockInstallDirs.cmake; the whole story: docs/install.md.

# ---- modulefiles (packaging/modulefile/): found from their own place ----
set(UNBLOCK_MODULEDIR_TCL "${CMAKE_INSTALL_DATADIR}/modulefiles/unblock")
set(UNBLOCK_MODULEDIR_LUA "${CMAKE_INSTALL_DATADIR}/lmod/modulefiles/unblock")
foreach(kind tcl lua)
  string(TOUPPER ${kind} KIND)
  unblock_full_path("${UNBLOCK_MODULEDIR_${KIND}}" from)
  foreach(to BIN LIB INCLUDE)
    if(to STREQUAL "LIB")
      unblock_full_path("${UNBLOCK_INSTALL_LIBDIR}" where)
    else()
      unblock_full_path("${CMAKE_INSTALL_${to}DIR}" where)
    endif()
    file(RELATIVE_PATH MODULE_TO_${to} "${from}" "${where}")
  endforeach()
  configure_file(${CMAKE_SOURCE_DIR}/packaging/modulefile/unblock.${kind}.in
                 ${CMAKE_BINARY_DIR}/packaging/unblock.${kind} @ONLY)
endforeach()
install(FILES ${CMAKE_BINARY_DIR}/packaging/unblock.tcl
        DESTINATION ${UNBLOCK_MODULEDIR_TCL} RENAME ${PROJECT_VERSION})
install(FILES ${CMAKE_BINARY_DIR}/packaging/unblock.lua
        DESTINATION ${UNBLOCK_MODULEDIR_LUA} RENAME ${PROJECT_VERSION}.lua)

# ---- the Debian package ----
# No MPI is a dependency: the libraries are linked with libc alone and find MPI in
# the program that loads them (src/interpose/), so a machine with one MPI, or
# none (serial programs, file I/O), installs the package as it is.  The MPIs the
# libraries were built for are named as what the package enhances, and their
# launchers as suggestions: the Debian packages that own the MPI libraries and
# the mpirun this build found (dpkg-query), so the names follow the release.
function(unblock_debian_owner path out)
  set(${out} "" PARENT_SCOPE)
  if(NOT path OR NOT EXISTS "${path}")
    return()
  endif()
  get_filename_component(real "${path}" REALPATH)
  execute_process(COMMAND dpkg-query -S "${real}" OUTPUT_VARIABLE owner
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCH "^[^:, ]+" pkg "${owner}")
  set(${out} "${pkg}" PARENT_SCOPE)
endfunction()

set(enhances "")
set(suggests "")
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  foreach(lib mpi mpich)
    unblock_debian_owner("${UNBLOCK_${impl}_LIB_${lib}}" pkg)
    if(pkg)
      list(APPEND enhances ${pkg})
    endif()
  endforeach()
  find_program(UNBLOCK_${impl}_MPIRUN NAMES mpirun.${impl})
  unblock_debian_owner("${UNBLOCK_${impl}_MPIRUN}" pkg)
  if(pkg)
    list(APPEND suggests ${pkg})
  endif()
endforeach()
list(REMOVE_DUPLICATES enhances)
list(REMOVE_DUPLICATES suggests)
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_ENHANCES "${enhances}")
string(REPLACE ";" " | " CPACK_DEBIAN_PACKAGE_SUGGESTS "${suggests}")

set(UNBLOCK_PACKAGE_CONTACT "unblock developers <unblock@example.org>" CACHE STRING
    "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME unblock)
set(CPACK_PACKAGE_VENDOR unblock)
set(CPACK_PACKAGE_CONTACT "${UNBLOCK_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "blocking MPI calls and file I/O of unmodified programs made asynchronous")
set(CPACK_PACKAGE_DESCRIPTION
    "unblock is a run-time library, preloaded by its launcher\n\
(mpirun -np 4 unblock ./app), that turns the blocking MPI calls and the\n\
blocking file I/O of an unmodified program into background operations behind\n\
page protection: the program stops only when it touches memory an operation\n\
still owns, and its output is byte for byte the same.  Libraries for Open MPI,\n\
MPICH and programs without MPI, the link-time variant for static programs,\n\
and modulefiles for Environment Modules and Lmod.")
set(CPACK_PACKAGING_INSTALL_PREFIX "${UNBLOCK_PACKAGE_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # libc6, from the binaries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Debian wants a copyright file and a changelog in /usr/share/doc/unblock: they go
# into the package only (CPack runs the script while it stages the files), not
# into `make install`.  The changelog's date is SOURCE_DATE_EPOCH's, if set.
set(UNBLOCK_DEB_VERSION "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(when -d "@$ENV{SOURCE_DATE_EPOCH}")
endif()
execute_process(COMMAND date -u -R ${when} OUTPUT_VARIABLE UNBLOCK_PACKAGE_DATE
                OUTPUT_STRIP_TRAILING_WHITESPACE)
set(debdoc ${CMAKE_BINARY_DIR}/packaging/debian)
configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/changelog.in ${debdoc}/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf ${debdoc}/changelog.Debian)
# (CPack's DEB stages with DESTDIR, which file(INSTALL) adds; the script's
# CMAKE_INSTALL_PREFIX is the build's, not the package's.)
file(WRITE ${debdoc}/install-doc.cmake
     "file(INSTALL \"${CMAKE_SOURCE_DIR}/packaging/debian/copyright\" \"${debdoc}/changelog.Debian.gz\"\n"
     "     DESTINATION \"\${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/doc/unblock\")\n")
set(CPACK_INSTALL_SCRIPTS ${debdoc}/install-doc.cmake)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/")
include(CPack)
