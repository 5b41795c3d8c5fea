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

# The AgentDojo replay (bench/agentdojo_replay.py, with injections.rules and guard.rules) on the
# example's seven runs: each call decided before it is observed; the run where the benchmark's
# check is looser than the task's goal has its transfer to the attacker denied by guard.rules.
# The figures of the run slice (docs/findings-agentdojo.md has the full set's).
if(TRAJCHECK_PYTHON AND Python3_EXECUTABLE)
  add_test(NAME hook.agentdojo_replay_slice
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/agentdojo_replay.py
                   ${PROJECT_SOURCE_DIR}/examples/agentdojo/runs)
  set_tests_properties(hook.agentdojo_replay_slice PROPERTIES
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1"
    PASS_REGULAR_EXPRESSION "[|] [*][*]all[*][*] [|] 3/3 [(]100[.]0%; 1[)] [|] 0 [|] 0/1 [(]0[.]0%; 0[)] [|] 2/3 [(]66[.]7%; 2 / 0; 0[)] [|]")
endif()
