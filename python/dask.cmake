# trajcheck.dask: running check and score on a Dask cluster. Its C++ half (dask_support.cpp)
# is part of the extension trajcheck._native; its Python half is the subpackage
# trajcheck/dask, copied into the build tree's package and installed beside it.
target_sources(trajcheck_python PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dask_support.cpp)

file(GLOB dask_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/trajcheck/dask/*.py)
set(dask_copies)
foreach(src ${dask_sources})
  get_filename_component(name ${src} NAME)
  add_custom_command(OUTPUT ${pkg_build_dir}/dask/${name}
                     COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src} ${pkg_build_dir}/dask/${name}
                     DEPENDS ${src})
  list(APPEND dask_copies ${pkg_build_dir}/dask/${name})
endforeach()
add_custom_target(trajcheck_dask_files ALL DEPENDS ${dask_copies})
add_dependencies(trajcheck_python trajcheck_dask_files)
install(FILES ${dask_sources} DESTINATION ${TRAJCHECK_PYTHON_INSTALL_DIR}/trajcheck/dask COMPONENT python)

if(TRAJCHECK_BUILD_TESTS)
  # A real scheduler and two workers on 127.0.0.1; needs Debian's python3-distributed.
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import distributed"
                  RESULT_VARIABLE no_distributed OUTPUT_QUIET ERROR_QUIET)
  if(no_distributed EQUAL 0)
    add_test(NAME python.dask
             COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/tests/dask
             WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    set_tests_properties(python.dask PROPERTIES TIMEOUT 300 COST 60 ENVIRONMENT
      "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1;TRAJCHECK_CLI=$<TARGET_FILE:trajcheck_cli>;TRAJCHECK_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  else()
    message(STATUS "trajcheck: python3-distributed not found; the Dask tests are not registered")
  endif()
endif()
