# lancever._rows (python/ext/rows.c): the Python package's optional C accelerator, which builds
# versions()' pylance-shaped rows in C.  Included by python/CMakeLists.txt (the build tree and
# `cmake --install`) and by cmake/wheel.cmake (pip install .).
#
# Invariants:
#  - It is built for one interpreter: LV_PYTHON in a CMake build, the one pip runs under a
#    wheel build (scikit-build-core sets Python3_EXECUTABLE).  Its file name carries that
#    interpreter's extension suffix (WITH_SOABI), so another Python never loads it.
#  - Without that interpreter's headers (Debian: python3-dev) it is left out with a warning,
#    never an error: the package then builds the same rows in Python (lancever/_accel.py).
#  - It links no library: it reads the entries through the buffer the package hands it, so
#    the wheel's ldd rule (python/tests/test_wheel.sh) holds.
#  - LV_PYROWS_TARGET is the target's name when it is built, empty otherwise.
option(LV_PYTHON_ACCEL "Build the Python package's C accelerator lancever._rows (needs Python's headers)" ON)
set(LV_PYROWS_TARGET "")
if(LV_PYTHON_ACCEL)
  # A wheel build hands CMake the interpreter's include directory (scikit-build-core sets
  # Python3_INCLUDE_DIR from sysconfig) whether or not the headers are installed, and
  # FindPython fails the whole configure when it cannot read the version header there: a
  # given directory without the main header is "no headers", decided before FindPython looks.
  if(DEFINED Python3_INCLUDE_DIR AND NOT EXISTS "${Python3_INCLUDE_DIR}/Python.h")
    set(_lv_py_headers FALSE)
  else()
    find_package(Python3 COMPONENTS Interpreter Development.Module)
    set(_lv_py_headers ${Python3_Development.Module_FOUND})
  endif()
  if(_lv_py_headers)
    Python3_add_library(lancever_pyrows MODULE WITH_SOABI ${CMAKE_SOURCE_DIR}/python/ext/rows.c)
    set_target_properties(lancever_pyrows PROPERTIES OUTPUT_NAME _rows
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR} C_VISIBILITY_PRESET hidden)
    target_compile_options(lancever_pyrows PRIVATE ${LV_WARNINGS})
    set(LV_PYROWS_TARGET lancever_pyrows)
    message(STATUS "lancever: the Python accelerator lancever._rows for ${Python3_EXECUTABLE} (${Python3_VERSION})")
  else()
    message(WARNING "lancever: no Python headers for ${Python3_EXECUTABLE} (Debian: python3-dev; "
                    "looked in ${Python3_INCLUDE_DIR}): "
                    "lancever._rows is left out; the package builds versions() rows in Python "
                    "(the same values, about twice the time)")
  endif()
endif()
