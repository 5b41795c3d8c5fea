# Golden tests of `trajcheck check`: one ctest test per folder tests/golden/check/<case>/
# holding a case.rules (see golden/run_golden.cmake, MODE=check, for the folder layout).
file(GLOB TRAJCHECK_CHECK_CASES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/golden/check/*/case.rules")
foreach(rules ${TRAJCHECK_CHECK_CASES})
  get_filename_component(case_dir ${rules} DIRECTORY)
  get_filename_component(case ${case_dir} NAME)
  add_test(NAME check.${case}
           COMMAND ${CMAKE_COMMAND} -DMODE=check -DBIN=$<TARGET_FILE:trajcheck_cli> -DCASE_DIR=${case_dir}
                   -P ${TRAJCHECK_GOLDEN_RUNNER})
endforeach()

# The README's quick-start output is what the command prints.
add_test(NAME check.readme_quickstart
         COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:trajcheck_cli> -DROOT=${PROJECT_SOURCE_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/readme_quickstart.cmake)
