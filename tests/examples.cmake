# The AgentDojo example: every run is read back with its own tool calls, and the
# injection-goal rules' verdicts compared with the runs' security labels give the report
# recorded in examples/agentdojo/expected-report.txt.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME examples.agentdojo
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/examples/agentdojo/check_runs.py
                 ${PROJECT_SOURCE_DIR}/examples/agentdojo/runs --trajcheck $<TARGET_FILE:trajcheck_cli>
                 --rules ${PROJECT_SOURCE_DIR}/examples/agentdojo/injections.rules
                 --expect ${PROJECT_SOURCE_DIR}/examples/agentdojo/expected-report.txt)
