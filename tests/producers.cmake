# The readers on what real agent software writes: each generator of tests/producers/ (and the
# Claude Code one in tests/claude-code/) rerun against its local mock model API, and what it
# wrote read like the committed copy in tests/data/producers/ (check.py). The generators need
# their npm packages (`scripts/setup.sh test` runs npm ci in each folder); without them the
# tests report skipped. The committed copies are read by the golden and unit tests regardless.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(producer claude-code codex openai-agents langchain)
    add_test(NAME producers.${producer}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/producers/check.py ${producer}
                     $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/producers-${producer})
    set_tests_properties(producers.${producer} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()

# OTLP: the OpenTelemetry JS SDK (a BatchSpanProcessor exporting over OTLP/HTTP in small batches)
# and the Vercel AI SDK's two telemetry integrations, their spans written one export request per
# line; run.sh reruns them and checks the verdicts trajcheck gives (the batched export as the
# same spans in one request, the AI SDK's calls read in both span formats).
add_test(NAME producers.otel
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/producers/otel/run.sh $<TARGET_FILE:trajcheck_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/producers-otel)
set_tests_properties(producers.otel PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
