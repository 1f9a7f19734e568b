# UnblockInstallDirs.cmake — where `make install` and the package put things, and
# how the installed parts find each other without knowing the prefix, so that an
# installed tree still works after it was moved (docs/install.md).
#
#   PREFIX/bin/unblock                     the launcher
#   PREFIX/lib/unblock/                    the preload libraries, the link-time
#                                          variant (.a, .wrap) and unblock-sidecar:
#                                          private files, off the linker's path
#   PREFIX/include/unblock.h
#   PREFIX/share/modulefiles/unblock/V     Tcl modulefile (Environment Modules, Lmod)
#   PREFIX/share/lmod/modulefiles/unblock/V.lua   the same for Lmod, in Lua
#
# The launcher finds the libraries from its own place (/proc/self/exe) through
# UNBLOCK_LIBDIR_FROM_BIN, and passes that folder on in UNBLOCK_LIBDIR; a
# preloaded library finds the sidecar beside itself.  Only a program linked with
# the link-time variant and started with neither the launcher nor the modulefile
# falls back on the folders compiled in (UNBLOCK_SIDECAR_DIRS).
include(GNUInstallDirs)

set(UNBLOCK_INSTALL_LIBDIR "lib/unblock" CACHE STRING
    "Folder of the libraries and the sidecar, relative to the install prefix")
# The prefix of the Debian package (CPack's default for DEB).
set(UNBLOCK_PACKAGE_PREFIX "/usr" CACHE STRING "Install prefix inside the Debian package")

function(unblock_full_path dir out)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

unblock_full_path("${CMAKE_INSTALL_BINDIR}" bin_full)
unblock_full_path("${UNBLOCK_INSTALL_LIBDIR}" lib_full)
file(RELATIVE_PATH UNBLOCK_LIBDIR_FROM_BIN "${bin_full}" "${lib_full}")
if(UNBLOCK_LIBDIR_FROM_BIN STREQUAL "")
  set(UNBLOCK_LIBDIR_FROM_BIN ".")
endif()

set(UNBLOCK_SIDECAR_DIRS "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}:${lib_full}")
if(NOT IS_ABSOLUTE "${UNBLOCK_INSTALL_LIBDIR}" AND
   NOT "${UNBLOCK_PACKAGE_PREFIX}" STREQUAL "${CMAKE_INSTALL_PREFIX}")
  string(APPEND UNBLOCK_SIDECAR_DIRS ":${UNBLOCK_PACKAGE_PREFIX}/${UNBLOCK_INSTALL_LIBDIR}")
endif()
