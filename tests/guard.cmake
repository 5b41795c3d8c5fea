# `trajcheck guard` in a real MCP conversation: the protocol's client SDK and the reference
# filesystem server from npm (tests/mcp, pinned by its package-lock.json; `scripts/setup.sh
# test` installs them with npm ci). Without node or the packages the test reports skipped.
add_test(NAME guard.mcp_conversation
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mcp/run.sh $<TARGET_FILE:trajcheck_cli> ${CMAKE_CURRENT_BINARY_DIR}/guard-mcp)
set_tests_properties(guard.mcp_conversation PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
