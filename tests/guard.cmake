# `trajcheck guard` in a real MCP conversation: the protocol's client SDK and the reference
# filesystem server from npm (conversation.mjs; hostile.mjs sends it the bytes a client could use
# to smuggle a forbidden call) (tests/mcp, pinned by its package-lock.json; `scripts/setup.sh
# test` installs them with npm ci). Without node or the packages the test reports skipped.
add_test(NAME guard.mcp_conversation
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mcp/run.sh $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/guard-mcp)
set_tests_properties(guard.mcp_conversation PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# The command line: `--` before a server command with dashes, --context forms, the trace and
# decision-log options, --mode (tests/guard_cli.sh, a stand-in server: no node needed).
add_test(NAME guard.cli
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/guard_cli.sh $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/guard-cli)
set_tests_properties(guard.cli PROPERTIES TIMEOUT 60)
