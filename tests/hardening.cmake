# Hostile command lines (directories, FIFOs and devices as sources, -j far above the cores,
# compressed and broken input, oversized records): a script, since its cases make FIFOs,
# compressed files and paths longer than PATH_MAX.
add_test(NAME cli.hardening
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hardening/cli_hardening.sh $<TARGET_FILE:trajcheck_cli>)
set_tests_properties(cli.hardening PROPERTIES COST 50)  # a long test: started first (tests/CMakeLists.txt)
