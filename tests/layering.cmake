# Layering: every #include "…" under src/ points down the floors of cmake/layers.cmake, and
# docs/architecture.md's table of floors says the same (its table of headers names every
# public header); a fixture tree holding one of each kind
# of violation (a higher floor, a sibling, a private header, a folder on no floor) must fail.
set(TRAJCHECK_LAYERING ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_layers.cmake)
add_test(NAME layering.src
         COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${PROJECT_SOURCE_DIR}/src -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake
                 -DDOC=${PROJECT_SOURCE_DIR}/docs/architecture.md
                 -DPUBLIC_DIR=${PROJECT_SOURCE_DIR}/include/trajcheck -P ${TRAJCHECK_LAYERING})
add_test(NAME layering.violations
         COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad/src
                 -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake -P ${TRAJCHECK_LAYERING})
set_tests_properties(layering.violations PROPERTIES PASS_REGULAR_EXPRESSION "4 layering problem\\(s\\)")

# The build refuses what the script above reports: each folder's library compiles with an
# include path showing its own folder and lower floors only (CMakeLists.txt), so a header of
# a higher floor is not found; and a path showing all of src/ must fail the same check.
set(TRAJCHECK_LAYERING_BUILD ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_build.cmake)
add_test(NAME layering.build
         COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DINCLUDES=${PROJECT_BINARY_DIR}/floors/targets.cmake
                 -DSRC_DIR=${PROJECT_SOURCE_DIR}/src -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/layering-build -P ${TRAJCHECK_LAYERING_BUILD})
add_test(NAME layering.build_violations
         COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DINCLUDES=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad/includes.cmake
                 -DSRC_DIR=${PROJECT_SOURCE_DIR}/src -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/layering-build-bad -P ${TRAJCHECK_LAYERING_BUILD})
# util sees json/, trace/, http/ (its own floor), the 12 folders above and cli/, and the include of
# readers/ compiles or fails for another reason than a header not found.
set_tests_properties(layering.build_violations PROPERTIES
                     PASS_REGULAR_EXPRESSION "readers/[a-z_]+\\.hpp is on floor 2, not below util/.*17 build layering problem\\(s\\)")

# No folder's library uses a symbol defined on its own floor or above (every folder may include
# every public header, so this is where a call up a floor shows).
add_test(NAME layering.symbols
         COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARIES=${PROJECT_BINARY_DIR}/floors/targets.cmake
                 -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_symbols.cmake)
add_test(NAME layering.symbols_violations
         COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARIES=${PROJECT_BINARY_DIR}/floors/targets.cmake
                 -DFLOORS=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad/floors_swapped.cmake
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_symbols.cmake)
set_tests_properties(layering.symbols_violations PROPERTIES
                     PASS_REGULAR_EXPRESSION "compiler/ \\(floor 3\\) uses [^ ]+, defined in language/ \\(floor 4\\)")
