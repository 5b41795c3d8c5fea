# Static archives for the `trajcheck` executable (TRAJCHECK_STATIC_DEPS).
#
# Every trajcheck process pays for the shared libraries it loads before it does any work: the
# loader maps each one and resolves its relocations (Debian builds them with BIND_NOW), and each
# page it touches is a page fault. protobuf, SQLite, nettle and libarchive (with what libarchive
# loads: libxml2, ICU, liblzma, …) are used by a few subcommands only, yet cost every start;
# linked statically, the executable holds only the objects it references and the loader has
# nothing to resolve for them (docs/performance.md, "Start-up").
#
# trajcheck_static_dep(VAR NAME name SHARED target LIBRARY files ARCHIVE libname.a [PKG module]
#                      [INCLUDES dirs] [DEPS link items] TEST file.cpp)
# sets VAR to the link item that stands for the library in TRAJCHECK_LIB_DEPS: the static
# archive for a target whose TRAJCHECK_STATIC_DEPS property is true (the executable), the
# shared library for every other target (the Python module, the tests, an installed copy's
# users). The archive is used only when it is installed beside the shared LIBRARY and a test
# program (cmake/static_deps/*.cpp), which calls the entry points trajcheck calls, links
# against it: its private dependencies (pkg-config --static) are each linked from their
# own static archive, or from the shared library trajcheck links anyway (zlib, zstd, glibc's),
# and a dependency with neither is left out, so that the test link says whether the archive's
# objects trajcheck uses need it. When the archive is missing or the test fails,
# VAR is the shared library and configure says why.
option(TRAJCHECK_STATIC_DEPS
       "Link protobuf, SQLite, nettle and libarchive into the trajcheck executable statically where their static archives are installed"
       ON)

find_package(PkgConfig QUIET)
set(TRAJCHECK_STATIC_DEPS_USED)  # the names of those linked statically, for configure's report

function(trajcheck_static_dep var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;SHARED;ARCHIVE;PKG;TEST" "LIBRARY;INCLUDES;DEPS")
  set(${var} ${arg_SHARED} PARENT_SCOPE)
  if(NOT TRAJCHECK_STATIC_DEPS)
    return()
  endif()
  set(why)
  string(MAKE_C_IDENTIFIER "${arg_NAME}" id)
  string(TOUPPER "${id}" id)
  set(library_dir)
  foreach(library IN LISTS arg_LIBRARY)  # FindProtobuf's may be "optimized;FILE;debug;FILE"
    if(IS_ABSOLUTE "${library}" AND EXISTS "${library}")
      get_filename_component(dir "${library}" DIRECTORY)
      list(APPEND library_dir ${dir})
    endif()
  endforeach()
  if(TRAJCHECK_${id}_ARCHIVE AND NOT EXISTS "${TRAJCHECK_${id}_ARCHIVE}")
    unset(TRAJCHECK_${id}_ARCHIVE CACHE)  # removed since the last configure
  endif()
  # Beside the shared library only: an archive elsewhere may be another version than the headers.
  find_library(TRAJCHECK_${id}_ARCHIVE NAMES ${arg_ARCHIVE} PATHS ${library_dir} NO_DEFAULT_PATH)
  mark_as_advanced(TRAJCHECK_${id}_ARCHIVE)
  if(NOT library_dir)
    set(why "its shared library's folder is not known")
  elseif(NOT TRAJCHECK_${id}_ARCHIVE)
    set(why "no ${arg_ARCHIVE} beside its shared library")
  endif()

  # The archive's private dependencies, as link items.
  set(deps ${arg_DEPS})
  if(NOT why AND arg_PKG AND PkgConfig_FOUND)
    pkg_check_modules(_trajcheck_pc_${id} QUIET ${arg_PKG})
    foreach(lib IN LISTS _trajcheck_pc_${id}_STATIC_LIBRARIES)
      if(lib STREQUAL "z")
        list(APPEND deps ZLIB::ZLIB)
      elseif(lib STREQUAL "zstd" AND TARGET zstd::libzstd_shared)
        list(APPEND deps zstd::libzstd_shared)
      elseif(lib MATCHES "^(m|dl|rt|pthread)$")
        list(APPEND deps ${lib})
      elseif(NOT "lib${lib}.a" STREQUAL arg_ARCHIVE)
        find_library(TRAJCHECK_${id}_DEP_${lib} NAMES lib${lib}.a HINTS ${library_dir})
        mark_as_advanced(TRAJCHECK_${id}_DEP_${lib})
        if(TRAJCHECK_${id}_DEP_${lib})
          list(APPEND deps ${TRAJCHECK_${id}_DEP_${lib}})
        endif()
      endif()
    endforeach()
  endif()
  list(APPEND deps Threads::Threads)
  list(REMOVE_DUPLICATES deps)

  # The test link, remembered for the same archive and dependencies.
  if(NOT why)
    set(test ${CMAKE_CURRENT_SOURCE_DIR}/${arg_TEST})
    file(SHA256 ${test} test_hash)
    set(signature "${TRAJCHECK_${id}_ARCHIVE};${deps};${test_hash}")
    if(NOT DEFINED TRAJCHECK_STATIC_${id}_LINKS OR NOT "${signature}" STREQUAL "${TRAJCHECK_STATIC_${id}_SIGNATURE}")
      set(dir ${CMAKE_CURRENT_BINARY_DIR}/static-deps/${arg_NAME})
      try_compile(_trajcheck_static_${id}_links ${dir} SOURCES ${test}
                  CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${arg_INCLUDES}"
                  LINK_LIBRARIES ${TRAJCHECK_${id}_ARCHIVE} ${deps}
                  CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                  OUTPUT_VARIABLE output)
      if(NOT _trajcheck_static_${id}_links)
        file(WRITE ${dir}.log "${output}")
      endif()
      set(TRAJCHECK_STATIC_${id}_LINKS ${_trajcheck_static_${id}_links} CACHE INTERNAL "")
      set(TRAJCHECK_STATIC_${id}_SIGNATURE "${signature}" CACHE INTERNAL "")
    endif()
    if(NOT TRAJCHECK_STATIC_${id}_LINKS)
      set(why "a test program does not link against ${TRAJCHECK_${id}_ARCHIVE} (static-deps/${arg_NAME}.log in the build tree)")
    endif()
  endif()
  if(why)
    message(STATUS "trajcheck: the trajcheck executable links the shared ${arg_NAME}: ${why}")
    return()
  endif()

  set(static trajcheck_static_${id})
  add_library(${static} STATIC IMPORTED)
  set_target_properties(${static} PROPERTIES IMPORTED_LOCATION ${TRAJCHECK_${id}_ARCHIVE}
                        INTERFACE_LINK_LIBRARIES "${deps}")
  list(APPEND TRAJCHECK_STATIC_DEPS_USED ${arg_NAME})
  set(TRAJCHECK_STATIC_DEPS_USED ${TRAJCHECK_STATIC_DEPS_USED} PARENT_SCOPE)
  # Evaluated for the target being linked (the head of the link), not for the folder library
  # that names the dependency. An installed copy's users get the shared library.
  set(${var} "$<BUILD_INTERFACE:$<IF:$<BOOL:$<TARGET_PROPERTY:TRAJCHECK_STATIC_DEPS>>,${static},${arg_SHARED}>>$<INSTALL_INTERFACE:${arg_SHARED}>"
      PARENT_SCOPE)
endfunction()
