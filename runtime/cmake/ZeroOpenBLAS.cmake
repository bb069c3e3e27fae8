# Finds OpenBLAS (library and its own cblas.h) and defines the imported
# target ZeroOpenBLAS::OpenBLAS. Used by runtime/ and bench/.
#
# Debian installs several BLAS implementations side by side and picks
# /usr/include/<triplet>/cblas.h and libblas.so through alternatives, which may
# point at the reference (netlib) BLAS. We therefore ask for libopenblas by
# name and prefer the cblas.h in OpenBLAS's own include directory
# (/usr/include/<triplet>/openblas-pthread/ on Debian, /usr/include/openblas/
# on Fedora), then check that the pair really is OpenBLAS by compiling and
# linking a call of openblas_set_num_threads. Override with
# -DZERO_OPENBLAS_LIBRARY=... -DZERO_OPENBLAS_INCLUDE_DIR=...

include_guard(GLOBAL)

set(_zero_openblas_hint
  "install the Debian package libopenblas-dev (apt-get install libopenblas-dev) "
  "or pass -DZERO_OPENBLAS_LIBRARY=<libopenblas.so> "
  "-DZERO_OPENBLAS_INCLUDE_DIR=<directory of OpenBLAS's cblas.h>")

find_library(ZERO_OPENBLAS_LIBRARY
  NAMES openblas openblasp openblas_pthread
  PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas
  DOC "OpenBLAS library used by zero-runtime")
find_path(ZERO_OPENBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas
  DOC "Directory of OpenBLAS's cblas.h")

if(NOT ZERO_OPENBLAS_LIBRARY)
  message(FATAL_ERROR "zero-runtime needs OpenBLAS but libopenblas was not "
    "found: ${_zero_openblas_hint}")
endif()
if(NOT ZERO_OPENBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "zero-runtime needs OpenBLAS but cblas.h was not "
    "found: ${_zero_openblas_hint}")
endif()

include(CheckSymbolExists)
include(CMakePushCheckState)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_INCLUDES ${ZERO_OPENBLAS_INCLUDE_DIR})
set(CMAKE_REQUIRED_LIBRARIES ${ZERO_OPENBLAS_LIBRARY})
set(CMAKE_REQUIRED_QUIET ON)
check_symbol_exists(openblas_set_num_threads "cblas.h" ZERO_OPENBLAS_WORKS)
cmake_pop_check_state()
if(NOT ZERO_OPENBLAS_WORKS)
  message(FATAL_ERROR "zero-runtime: ${ZERO_OPENBLAS_INCLUDE_DIR}/cblas.h "
    "with ${ZERO_OPENBLAS_LIBRARY} does not provide openblas_set_num_threads "
    "(not OpenBLAS's cblas.h?): ${_zero_openblas_hint}")
endif()
message(STATUS "OpenBLAS: ${ZERO_OPENBLAS_LIBRARY} "
  "(cblas.h in ${ZERO_OPENBLAS_INCLUDE_DIR})")

add_library(ZeroOpenBLAS::OpenBLAS INTERFACE IMPORTED GLOBAL)
set_target_properties(ZeroOpenBLAS::OpenBLAS PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${ZERO_OPENBLAS_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${ZERO_OPENBLAS_LIBRARY}")
