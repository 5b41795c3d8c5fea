# Checks that the build itself refuses an include running up a floor (run by ctest; cmake -P):
#   cmake -DCXX=c++ -DINCLUDES=build/floors/targets.cmake -DSRC_DIR=src -DFLOORS=cmake/layers.cmake
#         -DWORK_DIR=dir -P check_build.cmake
# INCLUDES sets includes_trajcheck_FOLDER to the include path the build compiles FOLDER's sources
# with (the top CMakeLists.txt writes it). For each such folder, the compiler is run on two
# files with exactly that path:
# - a probe asking __has_include for a file of every folder of src/: it must see its own folder
#   and the folders of lower floors, and no other;
# - a file that includes a header of the floor above, as a source of the folder would: it must
#   fail to compile, because that header is not found.
# Fails, naming folder and header, on any difference.
cmake_minimum_required(VERSION 3.20)
include(${FLOORS})
include(${INCLUDES})

set(floor_of_names "")
set(all_folders "")
set(n 0)
foreach(floor IN LISTS TRAJCHECK_FLOORS)
  math(EXPR n "${n} + 1")
  string(REPLACE " " ";" folders "${floor}")
  set(first_of_${n} "")
  foreach(folder IN LISTS folders)
    set(floor_of_${folder} ${n})
    list(APPEND all_folders ${folder})
    # One file of the folder to look for (ir and trace have no header of their own: any file
    # is found or not found the same way).
    file(GLOB files RELATIVE ${SRC_DIR} ${SRC_DIR}/${folder}/*.hpp)
    if(NOT files)
      file(GLOB files RELATIVE ${SRC_DIR} ${SRC_DIR}/${folder}/*.cpp)
    endif()
    list(SORT files)
    list(GET files 0 file_of_${folder})
    if(NOT first_of_${n})
      set(first_of_${n} ${folder})
    endif()
  endforeach()
endforeach()
set(top ${n})

set(problems "")
set(checked 0)
foreach(from IN LISTS all_folders)
  if(NOT DEFINED includes_trajcheck_${from})
    continue()  # not a library folder with sources (cli, ir)
  endif()
  math(EXPR checked "${checked} + 1")
  set(flags "")
  set(dirs ${includes_trajcheck_${from}})
  list(REMOVE_DUPLICATES dirs)
  foreach(dir IN LISTS dirs)
    list(APPEND flags "-I${dir}")
  endforeach()
  set(dir ${WORK_DIR}/${from})
  file(MAKE_DIRECTORY ${dir})

  # The probe: every folder's file, visible or not as the floors say.
  set(probe "// ${from}: which folders of src/ its include path shows\n")
  foreach(to IN LISTS all_folders)
    if(to STREQUAL from OR floor_of_${to} LESS floor_of_${from})
      set(expected 1)
      set(says "must be visible")
    else()
      set(expected 0)
      set(says "is on floor ${floor_of_${to}}, not below ${from}/ (floor ${floor_of_${from}}), yet visible")
    endif()
    string(APPEND probe "#if __has_include(\"${file_of_${to}}\") != ${expected}\n"
                        "#error \"${file_of_${to}} ${says}\"\n#endif\n")
  endforeach()
  file(WRITE ${dir}/probe.cpp "${probe}")
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only ${flags} ${dir}/probe.cpp
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REGEX MATCHALL "error:[^\n]*" errors "${out}")
    if(NOT errors)
      set(errors "${out}")
    endif()
    foreach(error IN LISTS errors)
      list(APPEND problems "trajcheck_${from}: ${error}")
    endforeach()
  endif()

  # The include itself, one floor up.
  if(floor_of_${from} LESS top)
    math(EXPR above "${floor_of_${from}} + 1")
    set(header ${file_of_${first_of_${above}}})
    file(WRITE ${dir}/up.cpp "// A source of ${from}/ including a header of the floor above.\n#include \"${header}\"\n")
    execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only ${flags} ${dir}/up.cpp
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    string(REPLACE "." "\\." header_re "${header}")
    if(rc EQUAL 0)
      list(APPEND problems "trajcheck_${from}: #include \"${header}\" compiles")
    elseif(NOT out MATCHES "error: '?${header_re}'?:? (No such file|file not found)")
      list(APPEND problems "trajcheck_${from}: #include \"${header}\" fails, but not as a header not found:\n${out}")
    endif()
  endif()
endforeach()

if(checked EQUAL 0)
  list(APPEND problems "${INCLUDES} names no folder's include path")
endif()
if(problems)
  list(LENGTH problems count)
  foreach(problem IN LISTS problems)
    message(NOTICE "${problem}")  # one line each, as the compiler said it
  endforeach()
  message(FATAL_ERROR "${count} build layering problem(s)")
endif()
message(STATUS "layering: the include paths of ${checked} folders show only their own folder and lower floors")
