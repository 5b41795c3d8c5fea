# `trajcheck serve`: a real server on a free 127.0.0.1 port, fed the OTLP files of
# tests/data/producers/otel one export request at a time; its verdicts equal `check`'s on the
# same files, across the idle rule and a SIGTERM with every trace open; /metrics, a 400, a bad
# SIGHUP reload. With tests/producers/otel/node_modules, the real OpenTelemetry JS SDK exports
# to it as well (that part is skipped, and says so, without them).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.serve
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/serve/serve_e2e.py
                   $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/serve-e2e)
  set_tests_properties(cli.serve PROPERTIES TIMEOUT 180)
  if(TRAJCHECK_SANITIZE)
    # The gzip-bomb check reads the server's RSS: ASan's quarantine keeps every freed buffer
    # resident (about 60 MB after the refused body), which is not the server holding it.
    set_tests_properties(cli.serve PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=0")
  endif()
endif()
