# The language server, driven as an editor drives it: tests/lsp/conversation_test.py speaks
# LSP to the real `trajcheck lsp` (Debian's python3, standard library only).
find_program(TRAJCHECK_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(TRAJCHECK_PYTHON3 python3)
if(TRAJCHECK_PYTHON3)
  add_test(NAME lsp.conversation
           COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lsp/conversation_test.py $<TARGET_FILE:trajcheck_cli>)
else()
  message(WARNING "python3 not found: the language server conversation test is not registered")
endif()
