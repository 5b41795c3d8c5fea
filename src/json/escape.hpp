// JSON string literals: the one escaping routine for every writer (normalize, check and score
// reports, canonical argument keys, the rule language's printer, the Python module). Declared
// in the public header; this name stays for the library's own files.
#pragma once

#include "trajcheck/json_text.hpp"
