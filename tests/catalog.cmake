# Golden transcripts of the tool catalog (docs/catalog.md): one ctest test per folder
# tests/golden/catalog/<case>/ holding a `cmd` file (see golden/run_golden.cmake, MODE=transcript).
file(GLOB TRAJCHECK_CATALOG_CASES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/golden/catalog/*/cmd")
foreach(cmd ${TRAJCHECK_CATALOG_CASES})
  get_filename_component(case_dir ${cmd} DIRECTORY)
  get_filename_component(case ${case_dir} NAME)
  add_test(NAME catalog.${case}
           COMMAND ${CMAKE_COMMAND} -DMODE=transcript -DBIN=$<TARGET_FILE:trajcheck_cli> -DCASE_DIR=${case_dir}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/catalog-work/${case}
                   -P ${TRAJCHECK_GOLDEN_RUNNER})
endforeach()
