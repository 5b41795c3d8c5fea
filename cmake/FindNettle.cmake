# FindNettle — Debian's nettle-dev has pkg-config metadata but no CMake config. Defines
# Nettle::nettle (SHA-256 digests; libarchive's zip reader uses it too).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_NETTLE QUIET nettle)
endif()
find_path(NETTLE_INCLUDE_DIR nettle/sha2.h HINTS ${PC_NETTLE_INCLUDE_DIRS})
find_library(NETTLE_LIBRARY NAMES nettle HINTS ${PC_NETTLE_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Nettle REQUIRED_VARS NETTLE_LIBRARY NETTLE_INCLUDE_DIR)
if(Nettle_FOUND AND NOT TARGET Nettle::nettle)
  add_library(Nettle::nettle UNKNOWN IMPORTED)
  set_target_properties(Nettle::nettle PROPERTIES
    IMPORTED_LOCATION "${NETTLE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NETTLE_INCLUDE_DIR}")
endif()
mark_as_advanced(NETTLE_INCLUDE_DIR NETTLE_LIBRARY)
