# The VS Code extension (editors/vscode): its TextMate grammars tokenize the bundled rules and
# suite files to the golden scopes (vscode-textmate), its TypeScript type-checks, and it packs
# as a .vsix (@vscode/vsce). They need node and editors/vscode/node_modules, which
# `scripts/setup.sh test` installs (npm ci); without them each test reports itself skipped.
set(TRAJCHECK_VSCODE_RUN ${PROJECT_SOURCE_DIR}/editors/vscode/test/run.sh)
add_test(NAME vscode.grammar COMMAND sh ${TRAJCHECK_VSCODE_RUN} grammar)
add_test(NAME vscode.typecheck COMMAND sh ${TRAJCHECK_VSCODE_RUN} typecheck)
add_test(NAME vscode.package COMMAND sh ${TRAJCHECK_VSCODE_RUN} package ${CMAKE_CURRENT_BINARY_DIR}/trajcheck.vsix)
set_tests_properties(vscode.grammar vscode.typecheck vscode.package PROPERTIES SKIP_RETURN_CODE 77)
