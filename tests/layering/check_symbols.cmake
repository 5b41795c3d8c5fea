# Checks that no folder's library calls up a floor (run by ctest; cmake -P):
#   cmake -DNM=nm -DLIBRARIES=build/floors/targets.cmake -DFLOORS=cmake/layers.cmake -P check_symbols.cmake
# LIBRARIES sets library_trajcheck_FOLDER to each folder's static library (the top
# CMakeLists.txt writes it). Every folder may include every public header, and several
# declare what more than one floor defines (rules.hpp: the severity words of the front end,
# compile() of the compiler, the Checker); what a folder may not do is use a function or
# object that a folder of its own floor or a higher one defines. Fails, naming both folders
# and the symbol, on each such use: a symbol one library leaves undefined and another of its
# own or a higher floor defines (strongly: inline functions and templates, defined weakly
# wherever they are used, are nobody's).
cmake_minimum_required(VERSION 3.20)
include(${FLOORS})
include(${LIBRARIES})

set(n 0)
set(libraries "")
foreach(floor IN LISTS TRAJCHECK_FLOORS)
  math(EXPR n "${n} + 1")
  string(REPLACE " " ";" folders "${floor}")
  foreach(folder IN LISTS folders)
    set(floor_of_${folder} ${n})
    if(DEFINED library_trajcheck_${folder})
      list(APPEND libraries ${folder})
    endif()
  endforeach()
endforeach()

# nm's lines: "[address] TYPE name" (mangled names: letters, digits, _ . $).
macro(symbols folder kind out)
  execute_process(COMMAND ${NM} ${kind} ${library_trajcheck_${folder}}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${kind} ${library_trajcheck_${folder}}: ${err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" ${out} "${text}")
endmacro()

foreach(folder IN LISTS libraries)
  symbols(${folder} --defined-only lines)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-f]* *[TDBR] ([^ ]+)$")
      set("defined_${CMAKE_MATCH_1}" ${folder})
    endif()
  endforeach()
endforeach()

set(problems "")
set(undefined 0)
foreach(folder IN LISTS libraries)
  symbols(${folder} --undefined-only lines)
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^ *U ([^ ]+)$")
      continue()
    endif()
    set(symbol ${CMAKE_MATCH_1})
    math(EXPR undefined "${undefined} + 1")
    if(NOT DEFINED "defined_${symbol}")
      continue()  # a library of the system, or a third party's
    endif()
    set(to ${defined_${symbol}})
    if(NOT to STREQUAL folder AND NOT floor_of_${to} LESS floor_of_${folder})
      list(APPEND problems "${folder}/ (floor ${floor_of_${folder}}) uses ${symbol}, defined in ${to}/ (floor ${floor_of_${to}})")
    endif()
  endforeach()
endforeach()

list(LENGTH libraries count)
if(count EQUAL 0)
  list(APPEND problems "${LIBRARIES} names no library")
endif()
if(problems)
  list(REMOVE_DUPLICATES problems)
  list(LENGTH problems count)
  foreach(problem IN LISTS problems)
    message(NOTICE "${problem}")
  endforeach()
  message(FATAL_ERROR "${count} symbol(s) used up a floor")
endif()
message(STATUS "layering: ${undefined} symbols the ${count} folders' libraries use, none defined on their floor or above")
