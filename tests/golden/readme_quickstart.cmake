# The README's quick start shows a `trajcheck check` command and what it prints; this runs the
# command from the repository root and compares its standard output with the block below it.
#   cmake -DBIN=… -DROOT=… -P readme_quickstart.cmake
cmake_minimum_required(VERSION 3.20)
file(READ "${ROOT}/README.md" readme)
set(cmd "build/trajcheck check -r examples/rules/refunds.rules examples/traces/refund_violations.jsonl")
string(FIND "${readme}" "    ${cmd}\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md no longer shows the quick-start command: ${cmd}")
endif()
string(SUBSTRING "${readme}" ${at} -1 rest)
string(FIND "${rest}" "```\n" open)
math(EXPR open "${open} + 4")
string(SUBSTRING "${rest}" ${open} -1 rest)
string(FIND "${rest}" "```\n" close)
string(SUBSTRING "${rest}" 0 ${close} shown)
execute_process(COMMAND "${BIN}" check -r examples/rules/refunds.rules examples/traces/refund_violations.jsonl
                        --color never
                WORKING_DIRECTORY "${ROOT}" OUTPUT_VARIABLE printed RESULT_VARIABLE rc)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the quick-start command exited ${rc}, the README says 1")
endif()
if(NOT printed STREQUAL shown)
  message(FATAL_ERROR "README.md's quick-start output differs from what the command prints:\n${printed}")
endif()
