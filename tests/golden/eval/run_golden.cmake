# Runs one `trajcheck eval|compare|case` golden case: stdout, then stderr and the exit status,
# compared with EXPECTED. On a mismatch the actual text is printed (or run with UPDATE_GOLDEN=1
# in the environment to rewrite EXPECTED).
#   cmake -DBIN=… -DWORKDIR=… -DEXPECTED=… "-DARGS=eval|--format|json|x.suite" -P run_golden.cmake
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${BIN} ${args}
                WORKING_DIRECTORY ${WORKDIR}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(actual "${out}--- stderr\n${err}--- exit ${rc}\n")
if(DEFINED ENV{UPDATE_GOLDEN} AND NOT "$ENV{UPDATE_GOLDEN}" STREQUAL "0")
  file(WRITE ${EXPECTED} "${actual}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
if(NOT EXISTS ${EXPECTED})
  message(FATAL_ERROR "missing ${EXPECTED}; actual output:\n${actual}")
endif()
file(READ ${EXPECTED} expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "output differs from ${EXPECTED}\n--- actual:\n${actual}--- expected:\n${expected}")
endif()
