# Build dependencies, named by the Debian package that provides them.
#
# tests/debian-packages.txt is the one list: tests/install-deps.sh installs from it, and a
# missing pkg-config module here is reported with its package and the command to install
# it, rather than CMake's bare "A required package was not found".  Every library the
# build needs is found through lv_require_pc (tests/cli/test_deps.sh checks what a configure
# really used against the list).

set(LV_DEPS_LIST ${CMAKE_CURRENT_LIST_DIR}/../tests/debian-packages.txt)

# The Debian package whose row provides `what` ("pc:libcurl", "bin:cmake"), or "".
function(lv_debian_package var what)
  file(STRINGS ${LV_DEPS_LIST} rows REGEX "^[a-z]+[ \t]+[^ \t]+[ \t]+${what}[ \t]")
  set(pkg "")
  if(rows)
    list(GET rows 0 row)
    string(REGEX REPLACE "^[a-z]+[ \t]+([^ \t]+).*" "\\1" pkg "${row}")
  endif()
  set(${var} "${pkg}" PARENT_SCOPE)
endfunction()

# Stops the configure with the package to install and the command.
function(lv_missing what)
  lv_debian_package(pkg ${what})
  if(NOT pkg)
    set(pkg "(none listed for ${what} in tests/debian-packages.txt)")
  endif()
  string(REGEX REPLACE "^pc:(.*)" "the pkg-config module '\\1'" name "${what}")
  string(REGEX REPLACE "^bin:(.*)" "the program '\\1'" name "${name}")
  message(FATAL_ERROR
    "lancever: ${name} was not found; it comes with the Debian package ${pkg}.\n"
    "  Install it:                 apt-get install --no-install-recommends ${pkg}\n"
    "  or everything the build needs: bash tests/install-deps.sh --build   (as root)")
endfunction()

# Before project(): the compiler and the generator's build tool, which project() needs.
macro(lv_require_toolchain)
  if(NOT DEFINED CMAKE_C_COMPILER AND NOT DEFINED ENV{CC})
    find_program(LV_CC NAMES cc gcc)
    if(NOT LV_CC)
      lv_missing(bin:cc)
    endif()
  endif()
  if(CMAKE_GENERATOR STREQUAL "Ninja" AND NOT CMAKE_MAKE_PROGRAM)
    find_program(LV_NINJA NAMES ninja ninja-build)
    if(NOT LV_NINJA)
      lv_missing(bin:ninja)
    endif()
  endif()
endmacro()

# pkg_check_modules(PREFIX IMPORTED_TARGET module), naming the Debian package on failure.
macro(lv_require_pc prefix module)
  if(NOT PKG_CONFIG_FOUND)
    find_package(PkgConfig QUIET)
    if(NOT PKG_CONFIG_FOUND)
      lv_missing(bin:pkg-config)
    endif()
  endif()
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  if(NOT ${prefix}_FOUND)
    lv_missing(pc:${module})
  endif()
endmacro()
