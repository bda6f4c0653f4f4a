# The wheel's layout, for scikit-build-core (pyproject.toml; included by CMakeLists.txt when
# SKBUILD is set, instead of the `cmake --install` rules):
#
#   lancever/                 the Python files (python/lancever, copied by scikit-build-core)
#   lancever/liblancever.so   the library the package loads first (_lib.py), RUNPATH $ORIGIN
#   lancever/<bundled>.so.N   the libraries of LV_WHEEL_BUNDLE, copied from the build machine
#   lancever/_rows.<abi>.so   the C accelerator (cmake/pyrows.cmake), when pip's Python has headers
#   lancever/_bin/lancever    the C command (the `lancever` console entry execs it),
#                             RUNPATH $ORIGIN/..
#   <data>/share/man/man1/lancever.1
#
# Invariants: every shared object in the wheel needs, besides what it bundles, only libraries
# every Debian/Ubuntu system running Python has: libc (and libm, libpthread, libdl), libzstd
# and liblz4 (apt and dpkg need them), libexpat (Debian's and Ubuntu's python3 need it).
# libjansson is not among them (Priority optional, nothing essential needs it), so it is
# bundled (its static archive is not position-independent: it cannot go into a shared
# object).  libcurl and libcrypto stay loaded on first S3/Azure use (src/lib/objstore/dl.c: an error naming the missing library).
# python/tests/test_wheel.sh checks this with ldd.
set(LV_WHEEL_BUNDLE JANSSON CACHE STRING
    "pkg-config prefixes (cmake/deps.cmake) whose shared library is copied into the wheel")

# One file per library: no version symlinks (a wheel is a zip and would hold three copies).
set_property(TARGET lancever PROPERTY VERSION)
set_property(TARGET lancever PROPERTY SOVERSION)
set_target_properties(lancever PROPERTIES INSTALL_RPATH "$ORIGIN")
set_target_properties(lancever_cli PROPERTIES INSTALL_RPATH "$ORIGIN/..")
install(TARGETS lancever LIBRARY DESTINATION lancever)
install(TARGETS lancever_cli RUNTIME DESTINATION lancever/_bin)
include(${CMAKE_SOURCE_DIR}/cmake/pyrows.cmake)
if(LV_PYROWS_TARGET)
  install(TARGETS ${LV_PYROWS_TARGET} LIBRARY DESTINATION lancever)
endif()
install(FILES ${CMAKE_BINARY_DIR}/lancever.1 DESTINATION ${SKBUILD_DATA_DIR}/share/man/man1)

foreach(dep ${LV_WHEEL_BUNDLE})
  # The shared object the link resolved (pkg-config gives full paths), under its soname.
  set(_lv_so "")
  foreach(lib ${${dep}_LINK_LIBRARIES})
    if(lib MATCHES "\\.so$")
      set(_lv_so ${lib})
    endif()
  endforeach()
  if(_lv_so STREQUAL "")
    message(FATAL_ERROR "lancever wheel: no shared library for ${dep} in '${${dep}_LINK_LIBRARIES}'")
  endif()
  execute_process(COMMAND objdump -p ${_lv_so} OUTPUT_VARIABLE _dump RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _dump MATCHES "SONAME +([^\n ]+)")
    message(FATAL_ERROR "lancever wheel: cannot read the soname of ${_lv_so}")
  endif()
  set(_lv_soname ${CMAKE_MATCH_1})
  file(REAL_PATH ${_lv_so} _lv_real)
  message(STATUS "lancever wheel: bundles ${_lv_real} as lancever/${_lv_soname}")
  install(FILES ${_lv_real} DESTINATION lancever RENAME ${_lv_soname})
  # Its licence notice travels with it (Debian keeps it under /usr/share/doc/<package>/).
  execute_process(COMMAND dpkg -S ${_lv_real} OUTPUT_VARIABLE _pkg ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _pkg MATCHES "^([^:]+):")
    set(_lv_copyright /usr/share/doc/${CMAKE_MATCH_1}/copyright)
    if(EXISTS ${_lv_copyright})
      install(FILES ${_lv_copyright} DESTINATION lancever RENAME ${_lv_soname}.copyright)
    endif()
  endif()
endforeach()
