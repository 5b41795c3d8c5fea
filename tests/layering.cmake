# Layering: every #include "…" under src/ points down the floors of cmake/layers.cmake, and
# docs/architecture.md's table of floors says the same; a fixture tree holding one of each kind
# of violation (a higher floor, a sibling, a private header, a folder on no floor) must fail.
set(TRAJCHECK_LAYERING ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_layers.cmake)
add_test(NAME layering.src
         COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${PROJECT_SOURCE_DIR}/src -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake
                 -DDOC=${PROJECT_SOURCE_DIR}/docs/architecture.md -P ${TRAJCHECK_LAYERING})
add_test(NAME layering.violations
         COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad/src
                 -DFLOORS=${PROJECT_SOURCE_DIR}/cmake/layers.cmake -P ${TRAJCHECK_LAYERING})
set_tests_properties(layering.violations PROPERTIES PASS_REGULAR_EXPRESSION "4 layering problem\\(s\\)")
