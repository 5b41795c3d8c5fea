# cmake/layers.cmake with the compiler put below the front end it calls: check_symbols.cmake
# must report compile() calling up a floor into language/.
set(TRAJCHECK_FLOORS
  "util json trace"
  "readers ir"
  "compiler"
  "language catalog"
  "checker metrics suite"
  "run lsp"
  "eval testing"
  "cli")
