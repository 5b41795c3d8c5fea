# Command transcripts (lint, fmt, explain and check options): one ctest test per folder
# tests/golden/check/cli-<case>/ holding a `cmd` file (see golden/run_golden.cmake, MODE=transcript).
file(GLOB TRAJCHECK_CLI_CASES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/golden/check/cli-*/cmd")
foreach(cmd ${TRAJCHECK_CLI_CASES})
  get_filename_component(case_dir ${cmd} DIRECTORY)
  get_filename_component(case ${case_dir} NAME)
  string(REGEX REPLACE "^cli-" "" name ${case})
  add_test(NAME cli.${name}
           COMMAND ${CMAKE_COMMAND} -DMODE=transcript -DBIN=$<TARGET_FILE:trajcheck_cli> -DCASE_DIR=${case_dir}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/cli-work/${case}
                   -P ${TRAJCHECK_GOLDEN_RUNNER})
endforeach()

# SIGINT/SIGTERM during `check` on an endless generated input: exit 130, a note on standard
# error, and every format's report closed as a whole (tests/cli_interrupt.py).
# Debian's python3 first (python3-yaml is installed for it), as in tests/lsp.cmake.
find_program(TRAJCHECK_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(TRAJCHECK_PYTHON3 python3 REQUIRED)
add_test(NAME cli.interrupt
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli_interrupt.py $<TARGET_FILE:trajcheck_cli>
                 ${PROJECT_SOURCE_DIR}/examples/rules/refunds.rules
                 ${PROJECT_SOURCE_DIR}/examples/traces/refund_violations.jsonl
                 ${PROJECT_SOURCE_DIR}/examples/traces/refund_ok.jsonl)
set_tests_properties(cli.interrupt PROPERTIES TIMEOUT 120)

# The GitHub Actions composite action (action.yml, scripts/ci-action.sh) run as GitHub runs its
# steps, and the pre-commit hooks (.pre-commit-hooks.yaml) as pre-commit runs them; both read
# the YAML with Debian's python3-yaml.
add_test(NAME cli.action
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/ci_action.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:trajcheck_cli> ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work/action)
add_test(NAME cli.precommit
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/precommit_hooks.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/cli-work/precommit)

# The tests beside every bundled rules file (rules/, examples/; docs/testing-rules.md) pass, and
# make every rule both violated and held, every statement and every PATH position reached.
add_test(NAME cli.rules_tests
         COMMAND $<TARGET_FILE:trajcheck_cli> test --quiet --coverage --min-coverage 100 rules examples
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# … and catch small edits of those rules (a bound raised, a condition negated, a glob narrowed, …).
add_test(NAME cli.rules_tests_mutants
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/rule_tests_mutants.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/cli-work/rules-mutants)
# docs/testing-rules.md's example test file passes, and its FAIL block is what the command prints.
add_test(NAME cli.testing_rules_doc
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/testing_rules_doc.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/cli-work/testing-rules-doc)

# `trajcheck diff` reports small edits of every bundled rule with a counterexample `check`
# confirms (docs/rule-diff.md, "Measured"; tests/rule_diff_mutants.py).
# Under the sanitizers (where each search is several times slower) every fourth mutant.
set(diff_mutants_sample)
if(TRAJCHECK_SANITIZE)
  set(diff_mutants_sample --every 4)
endif()
add_test(NAME cli.diff_mutants
         COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/rule_diff_mutants.py ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/cli-work/diff-mutants ${diff_mutants_sample})
set_tests_properties(cli.diff_mutants PROPERTIES TIMEOUT 600)

# Every subcommand named first, as the command line then sets it up alone (tests/cli_subcommands.sh).
add_test(NAME cli.subcommands COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_subcommands.sh $<TARGET_FILE:trajcheck_cli>)
