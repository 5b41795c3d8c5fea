# The one golden runner: runs trajcheck, compares what it printed with the expectation
# files, prints the actual text on a mismatch, and with UPDATE_GOLDEN=1 (any value but 0) in
# the environment rewrites the expectations instead. MODE selects the case layout:
#
#   MODE=command     one command line, one EXPECTED file holding stdout, "--- stderr", stderr,
#                    "--- exit N" (score, eval, compare, case new):
#                      -DBIN=… -DWORKDIR=… -DEXPECTED=… "-DARGS=score|--format|jsonl|records.jsonl"
#                    (arguments travel as one '|'-separated string: a list would be split by add_test)
#   MODE=check       a `trajcheck check` case folder (-DBIN=… -DCASE_DIR=…):
#                      case.rules, traces.jsonl   the input (`inputs` lists other trace files,
#                                                 `args` adds options)
#                      expected.jsonl, expected.txt   stdout of --format jsonl and --format text
#                      expected.json / expected.junit.xml / expected.md   optional, other formats
#                      expected.stderr            optional, standard error of the jsonl run
#                      expected_exit              the exit status (same for every format)
#   MODE=transcript  a command transcript folder (-DBIN=… -DCASE_DIR=… -DWORK_DIR=…): `cmd` holds
#                    one trajcheck command line per line (optionally ending in `< FILE`; `cat FILE`
#                    shows a file a command wrote), run in order in a scratch copy of the folder
#                    (so `fmt --write` is safe); expected.out is the transcript of every
#                    command's stdout, stderr and exit status
#   MODE=normalize   a `trajcheck normalize` case folder (-DBIN=… -DCASE_DIR=…): input.* (or an
#                    inputs/ directory, or `stdin`, fed to `-`), optional `args` (one per line);
#                    expected.jsonl is stdout, expected.stderr is stderr plus "exit: N"
cmake_minimum_required(VERSION 3.20)

set(update FALSE)
if(NOT "$ENV{UPDATE_GOLDEN}" STREQUAL "" AND NOT "$ENV{UPDATE_GOLDEN}" STREQUAL "0")
  set(update TRUE)
endif()
set(failed FALSE)

# Compares `actual` with FILE (a missing file is empty), or rewrites FILE when updating.
function(golden_expect file actual what)
  if(update)
    file(WRITE "${file}" "${actual}")
    return()
  endif()
  set(want "")
  if(EXISTS "${file}")
    file(READ "${file}" want)
  endif()
  if(NOT actual STREQUAL want)
    message(NOTICE "=== ${file} differs; actual ${what}:\n${actual}===")
    set(failed TRUE PARENT_SCOPE)
  endif()
endfunction()

function(golden_done where)
  if(update)
    message(STATUS "rewrote the expectations of ${where}")
  elseif(failed)
    message(FATAL_ERROR "golden case ${where} failed (UPDATE_GOLDEN=1 rewrites the expectations)")
  endif()
endfunction()

if(NOT DEFINED MODE)
  set(MODE command)
endif()

if(MODE STREQUAL "command")
  string(REPLACE "|" ";" args "${ARGS}")
  execute_process(COMMAND "${BIN}" ${args} WORKING_DIRECTORY "${WORKDIR}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  golden_expect("${EXPECTED}" "${out}--- stderr\n${err}--- exit ${rc}\n" "output")
  golden_done("${EXPECTED}")

elseif(MODE STREQUAL "check")
  set(extra "")
  if(EXISTS "${CASE_DIR}/args")
    file(READ "${CASE_DIR}/args" args_text)
    string(STRIP "${args_text}" args_text)
    separate_arguments(extra UNIX_COMMAND "${args_text}")
  endif()
  set(inputs traces.jsonl)
  if(EXISTS "${CASE_DIR}/inputs")
    file(READ "${CASE_DIR}/inputs" inputs_text)
    string(STRIP "${inputs_text}" inputs_text)
    separate_arguments(inputs UNIX_COMMAND "${inputs_text}")
  endif()
  # Each run is "FORMAT|EXPECTED_FILE"; the optional formats run when their file exists.
  set(runs "jsonl|expected.jsonl" "text|expected.txt")
  foreach(opt "json|expected.json" "junit|expected.junit.xml" "markdown|expected.md")
    string(REGEX REPLACE "^.*\\|" "" file "${opt}")
    if(EXISTS "${CASE_DIR}/${file}")
      list(APPEND runs "${opt}")
    endif()
  endforeach()
  set(first_rc "")
  foreach(run IN LISTS runs)
    string(REPLACE "|" ";" pair "${run}")
    list(GET pair 0 format)
    list(GET pair 1 file)
    execute_process(
      COMMAND "${BIN}" check -r case.rules ${extra} --format ${format} --color never -j 2 ${inputs}
      WORKING_DIRECTORY "${CASE_DIR}"
      OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(first_rc STREQUAL "")
      set(first_rc "${rc}")
      set(first_err "${err}")
    elseif(NOT rc STREQUAL first_rc)
      message(SEND_ERROR "--format ${format} exited ${rc}, --format jsonl exited ${first_rc}")
      set(failed TRUE)
    endif()
    golden_expect("${CASE_DIR}/${file}" "${out}" "output of --format ${format} (standard error:\n${err})")
  endforeach()
  golden_expect("${CASE_DIR}/expected_exit" "${first_rc}\n" "exit status (standard error:\n${first_err})")
  if(EXISTS "${CASE_DIR}/expected.stderr")
    golden_expect("${CASE_DIR}/expected.stderr" "${first_err}" "standard error")
  endif()
  golden_done("${CASE_DIR}")

elseif(MODE STREQUAL "transcript")
  file(REMOVE_RECURSE "${WORK_DIR}")
  file(MAKE_DIRECTORY "${WORK_DIR}")
  file(GLOB case_files "${CASE_DIR}/*")
  file(COPY ${case_files} DESTINATION "${WORK_DIR}")
  file(STRINGS "${CASE_DIR}/cmd" lines)
  set(transcript "")
  foreach(line IN LISTS lines)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(line MATCHES "^cat (.*)$")
      file(READ "${WORK_DIR}/${CMAKE_MATCH_1}" content)
      string(APPEND transcript "$ cat ${CMAKE_MATCH_1}\n${content}")
      continue()
    endif()
    set(input_file /dev/null)
    set(command "${line}")
    if(command MATCHES "^(.*) < ([^ ]+)$")
      set(command "${CMAKE_MATCH_1}")
      set(input_file "${WORK_DIR}/${CMAKE_MATCH_2}")
    endif()
    separate_arguments(argv UNIX_COMMAND "${command}")
    execute_process(COMMAND "${BIN}" ${argv} WORKING_DIRECTORY "${WORK_DIR}" INPUT_FILE "${input_file}"
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    string(APPEND transcript "$ trajcheck ${line}\n${out}")
    if(NOT err STREQUAL "")
      string(APPEND transcript "[stderr]\n${err}")
    endif()
    string(APPEND transcript "[exit ${rc}]\n")
  endforeach()
  golden_expect("${CASE_DIR}/expected.out" "${transcript}" "transcript")
  golden_done("${CASE_DIR}")

elseif(MODE STREQUAL "normalize")
  file(GLOB inputs RELATIVE "${CASE_DIR}" "${CASE_DIR}/input.*" "${CASE_DIR}/inputs")
  set(stdin_args "")
  if(EXISTS "${CASE_DIR}/stdin")
    set(inputs "-")
    set(stdin_args INPUT_FILE "${CASE_DIR}/stdin")
  endif()
  if(NOT inputs)
    message(FATAL_ERROR "golden case ${CASE_DIR} has no input.* file")
  endif()
  set(args "")
  if(EXISTS "${CASE_DIR}/args")
    file(STRINGS "${CASE_DIR}/args" args)
  endif()
  execute_process(COMMAND "${BIN}" normalize ${args} ${inputs} WORKING_DIRECTORY "${CASE_DIR}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc ${stdin_args})
  golden_expect("${CASE_DIR}/expected.jsonl" "${out}" "standard output")
  golden_expect("${CASE_DIR}/expected.stderr" "${err}exit: ${rc}\n" "standard error")
  golden_done("${CASE_DIR}")

else()
  message(FATAL_ERROR "run_golden.cmake: unknown MODE '${MODE}' (command, check, transcript, normalize)")
endif()
