# FindHttplib — Debian's libcpp-httplib-dev ships the compiled library and pkg-config metadata
# but no CMake config. Defines Httplib::httplib with the definitions its header must be compiled
# with (the library was built with OpenSSL, zlib and brotli support: the header's classes then
# have the members the library expects).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_HTTPLIB QUIET cpp-httplib)
endif()
find_path(HTTPLIB_INCLUDE_DIR httplib.h HINTS ${PC_HTTPLIB_INCLUDE_DIRS})
find_library(HTTPLIB_LIBRARY NAMES cpp-httplib HINTS ${PC_HTTPLIB_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Httplib REQUIRED_VARS HTTPLIB_LIBRARY HTTPLIB_INCLUDE_DIR)
if(Httplib_FOUND AND NOT TARGET Httplib::httplib)
  add_library(Httplib::httplib UNKNOWN IMPORTED)
  set(_httplib_defs CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
  if(PC_HTTPLIB_FOUND)
    set(_httplib_defs)
    foreach(flag ${PC_HTTPLIB_CFLAGS_OTHER})
      if(flag MATCHES "^-D(.+)")
        list(APPEND _httplib_defs ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set_target_properties(Httplib::httplib PROPERTIES
    IMPORTED_LOCATION "${HTTPLIB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${HTTPLIB_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "${_httplib_defs}")
  unset(_httplib_defs)
endif()
mark_as_advanced(HTTPLIB_INCLUDE_DIR HTTPLIB_LIBRARY)
