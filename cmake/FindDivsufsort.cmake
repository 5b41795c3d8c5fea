# FindDivsufsort — Debian's libdivsufsort-dev has pkg-config metadata but no CMake config.
# Defines Divsufsort::divsufsort (the 32-bit-index library: suffix arrays of up to 2 GiB).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_DIVSUFSORT QUIET libdivsufsort)
endif()
find_path(DIVSUFSORT_INCLUDE_DIR divsufsort.h HINTS ${PC_DIVSUFSORT_INCLUDE_DIRS})
find_library(DIVSUFSORT_LIBRARY NAMES divsufsort HINTS ${PC_DIVSUFSORT_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Divsufsort REQUIRED_VARS DIVSUFSORT_LIBRARY DIVSUFSORT_INCLUDE_DIR)
if(Divsufsort_FOUND AND NOT TARGET Divsufsort::divsufsort)
  add_library(Divsufsort::divsufsort UNKNOWN IMPORTED)
  set_target_properties(Divsufsort::divsufsort PROPERTIES
    IMPORTED_LOCATION "${DIVSUFSORT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${DIVSUFSORT_INCLUDE_DIR}")
endif()
mark_as_advanced(DIVSUFSORT_INCLUDE_DIR DIVSUFSORT_LIBRARY)
