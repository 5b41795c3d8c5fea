# `trajcheck hook claude-code`: fed Claude Code's hook events by hand (the answers, the
# session's state, nothing failing open), and inside the real Claude Code CLI from npm
# (tests/claude-code, pinned by its package-lock.json; `scripts/setup.sh test` installs it
# with npm ci) driven by a local mock of the model API. Without the package the conversation
# test reports skipped.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME hook.claude_code_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/claude-code/hook_cli.py
                   $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/hook-cli)
  set_tests_properties(hook.claude_code_cli PROPERTIES TIMEOUT 120)
endif()
add_test(NAME hook.claude_code_conversation
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/claude-code/run.sh $<TARGET_FILE:trajcheck_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/hook-claude-code)
set_tests_properties(hook.claude_code_conversation PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
