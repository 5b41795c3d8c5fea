# Golden runner for a command transcript (lint, fmt, explain, check options): the folder
# holds `cmd` (one trajcheck command line per line, optionally ending in `< FILE`; run in
# order in a scratch copy of the folder, so `fmt --write` is safe) and `expected.out`, the
# transcript of every command's standard output, standard error and exit status.
# On a mismatch it prints the actual transcript; UPDATE_GOLDEN=1 rewrites expected.out.
# Usage: cmake -DTRAJCHECK=path -DCASE_DIR=path -DWORK_DIR=path -P run_transcript.cmake
cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(GLOB inputs "${CASE_DIR}/*")
file(COPY ${inputs} DESTINATION "${WORK_DIR}")

file(STRINGS "${CASE_DIR}/cmd" lines)
set(transcript "")
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  if(line MATCHES "^cat (.*)$")
    # `cat FILE` shows a file the previous command wrote.
    file(READ "${WORK_DIR}/${CMAKE_MATCH_1}" content)
    string(APPEND transcript "$ cat ${CMAKE_MATCH_1}\n${content}")
    continue()
  endif()
  # `… < FILE` feeds FILE to standard input.
  set(input_file /dev/null)
  set(command "${line}")
  if(command MATCHES "^(.*) < ([^ ]+)$")
    set(command "${CMAKE_MATCH_1}")
    set(input_file "${WORK_DIR}/${CMAKE_MATCH_2}")
  endif()
  separate_arguments(argv UNIX_COMMAND "${command}")
  execute_process(COMMAND "${TRAJCHECK}" ${argv} WORKING_DIRECTORY "${WORK_DIR}"
                  INPUT_FILE "${input_file}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(APPEND transcript "$ trajcheck ${line}\n${out}")
  if(NOT err STREQUAL "")
    string(APPEND transcript "[stderr]\n${err}")
  endif()
  string(APPEND transcript "[exit ${rc}]\n")
endforeach()

if("$ENV{UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE "${CASE_DIR}/expected.out" "${transcript}")
  message(STATUS "rewrote ${CASE_DIR}/expected.out")
  return()
endif()
set(want "")
if(EXISTS "${CASE_DIR}/expected.out")
  file(READ "${CASE_DIR}/expected.out" want)
endif()
if(NOT transcript STREQUAL want)
  message(NOTICE "=== actual transcript:\n${transcript}===")
  message(FATAL_ERROR "${CASE_DIR}/expected.out differs (UPDATE_GOLDEN=1 rewrites it)")
endif()
