# Golden diagnostics of the rule-language front end: one ctest per folder under
# tests/golden/diagnostics/ (case.rules -> expected). UPDATE_GOLDEN=1 rewrites expectations.
add_executable(diagnostics_runner ${CMAKE_CURRENT_SOURCE_DIR}/golden_runner/diagnostics_runner.cpp)
target_include_directories(diagnostics_runner PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(diagnostics_runner PRIVATE trajcheck fmt::fmt RE2::re2 taocpp::pegtl)

file(GLOB TRAJCHECK_DIAG_CASES LIST_DIRECTORIES true CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/golden/diagnostics/*")
foreach(case_dir ${TRAJCHECK_DIAG_CASES})
  if(IS_DIRECTORY ${case_dir})
    get_filename_component(case_name ${case_dir} NAME)
    add_test(NAME diagnostics.${case_name} COMMAND diagnostics_runner ${case_dir})
  endif()
endforeach()
