# The executable's HTTP plugin: not loaded at start, missing said loudly, found when installed
# (tests/http/plugin.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.http_plugin
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/http/plugin.py
                   $<TARGET_FILE:trajcheck_cli> ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/http-plugin)
  set_tests_properties(cli.http_plugin PROPERTIES TIMEOUT 180)
endif()
