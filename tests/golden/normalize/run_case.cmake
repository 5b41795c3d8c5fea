# Runs `trajcheck normalize` on one golden case and compares stdout with expected.jsonl and
# stderr (plus a last line "exit: N") with expected.stderr. Prints the actual output on a
# mismatch; with UPDATE_GOLDEN=1 in the environment it rewrites the expectations instead.
#   cmake -DTRAJCHECK=path/to/trajcheck -DCASE_DIR=tests/golden/normalize/<case> -P run_case.cmake
# A case folder holds input.* (or an inputs/ directory, or `stdin`, fed to `-`) and optionally `args`, extra
# command-line arguments one per line.
file(GLOB inputs RELATIVE "${CASE_DIR}" "${CASE_DIR}/input.*" "${CASE_DIR}/inputs")
set(stdin_args "")
if(EXISTS "${CASE_DIR}/stdin")  # a case may feed standard input instead: `trajcheck normalize -`
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
execute_process(
  COMMAND "${TRAJCHECK}" normalize ${args} ${inputs}
  WORKING_DIRECTORY "${CASE_DIR}"
  OUTPUT_VARIABLE actual_out
  ERROR_VARIABLE actual_err
  RESULT_VARIABLE rc
  ${stdin_args})
string(APPEND actual_err "exit: ${rc}\n")

if("$ENV{UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE "${CASE_DIR}/expected.jsonl" "${actual_out}")
  file(WRITE "${CASE_DIR}/expected.stderr" "${actual_err}")
  message(STATUS "updated ${CASE_DIR}")
  return()
endif()

set(failed FALSE)
foreach(kind out err)
  if(kind STREQUAL "out")
    set(file "${CASE_DIR}/expected.jsonl")
  else()
    set(file "${CASE_DIR}/expected.stderr")
  endif()
  if(NOT EXISTS "${file}")
    message(SEND_ERROR "missing ${file} (run with UPDATE_GOLDEN=1 to create it)")
    set(failed TRUE)
    continue()
  endif()
  file(READ "${file}" expected)
  if(NOT expected STREQUAL actual_${kind})
    message(SEND_ERROR "${file} differs.\n--- expected ---\n${expected}\n--- actual ---\n${actual_${kind}}")
    set(failed TRUE)
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "golden case ${CASE_DIR} failed (UPDATE_GOLDEN=1 rewrites the expectations)")
endif()
