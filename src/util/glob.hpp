// Tool-name globs of the rule language: `*` any run, `?` one character (a UTF-8 sequence),
// everything else itself.
// One matcher for the checker, lint, score's PATH patterns and eval's file patterns, so that
// they agree on every name (a `*` or `?` inside a tool name is an ordinary byte there).
#pragma once

#include <string_view>

namespace trajcheck::detail {

// Whole-string match of `text` against `glob`.
bool glob_match(std::string_view glob, std::string_view text);

}  // namespace trajcheck::detail
