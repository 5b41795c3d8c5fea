# Golden tests of `trajcheck normalize`: one ctest per folder of tests/golden/normalize/.
file(GLOB normalize_cases LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/golden/normalize/*")
foreach(case_dir ${normalize_cases})
  if(IS_DIRECTORY "${case_dir}")
    get_filename_component(case_name "${case_dir}" NAME)
    add_test(NAME golden.normalize.${case_name}
             COMMAND ${CMAKE_COMMAND} -DMODE=normalize -DBIN=$<TARGET_FILE:trajcheck_cli> -DCASE_DIR=${case_dir}
                     -P ${TRAJCHECK_GOLDEN_RUNNER})
  endif()
endforeach()
