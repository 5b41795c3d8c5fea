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

# docs/editors.md's Neovim 0.7 set-up in Debian's headless Neovim: the diagnostics of a rules
# file read back (tests/lsp/neovim_test.py). scripts/setup.sh installs neovim for the tests.
find_program(TRAJCHECK_NVIM nvim)
if(TRAJCHECK_PYTHON3 AND TRAJCHECK_NVIM)
  add_test(NAME lsp.neovim
           COMMAND ${TRAJCHECK_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lsp/neovim_test.py ${TRAJCHECK_NVIM}
                   $<TARGET_FILE:trajcheck_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/lsp-neovim)
else()
  message(STATUS "nvim not found: the Neovim set-up test (lsp.neovim) is not registered")
endif()
