# The floors of src/, bottom up: the one definition of trajcheck's layering. A file may include
# the public headers (include/trajcheck/), headers of its own folder, and headers of folders on
# lower floors, except those listed as private below; never a folder on its own floor or a
# higher one. The top CMakeLists.txt builds a library per folder from this list, whose include
# path shows its own folder and the lower floors only; tests/layering/check_layers.cmake checks
# every #include "…" under src/ (private headers included), and that docs/architecture.md's
# table of floors says the same.
set(TRAJCHECK_FLOORS
  "util json trace http"     # 1: text, globs, diagnostics, JSON text, the trajectory; HTTP
  "readers ir"               # 2: trace formats -> Trajectory; the rule IR (data)
  "language catalog"         # 3: rules text -> IR; the tool catalog (data)
  "compiler"                 # 4: IR + catalog -> Program
  "checker metrics suite"    # 5: Program x Trajectory -> verdicts; scores; .suite files
  "run lsp"                  # 6: corpora: rule sets, runners, report writers; the language server
  "eval testing"             # 7: eval suites over runs; checks inside other test suites
  "cli")                     # 8: the command line

# Headers that are internal to their folder even for higher floors.
set(TRAJCHECK_PRIVATE_HEADERS
  readers/json_util.hpp readers/parser_impl.hpp readers/tape_value.hpp
  language/ast.hpp
  catalog/schema_regex.hpp catalog/valijson.hpp
  checker/monitor.hpp checker/step_eval.hpp
  eval/eval_internal.hpp)
