// libFuzzer target for the canonical key of a call's arguments (`no duplicate`): when the text
// is taken without a parse (append_flat_canonical), it must be JSON and the key must be byte
// for byte the key of its parse (append_canonical); a difference aborts. Also the rewrite of the
// numbers the DOM refuses (write_wide_numbers_as_doubles): a text the DOM reads has none to
// rewrite, and a rewrite changes the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <simdjson.h>

#include "checker/step_eval.hpp"
#include "json/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  static simdjson::dom::parser parser;
  {
    std::string wide;
    const bool rewrote = trajcheck::json::write_wide_numbers_as_doubles(text, wide);
    const simdjson::error_code e = parser.parse(simdjson::padded_string(text)).error();
    if (rewrote && !e) std::abort();  // the DOM read it, yet a number was rewritten
    if (rewrote && wide == text) std::abort();  // claimed a rewrite without one
  }
  std::string fast = "|";
  if (!trajcheck::detail::append_flat_canonical(fast, text)) {
    if (fast != "|") std::abort();  // refused, but `out` was changed
    return 0;
  }
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(text)).get(root)) std::abort();  // not JSON, yet taken
  std::string full = "|";
  trajcheck::detail::CanonicalMembers members;
  trajcheck::detail::append_canonical(full, root, members);
  if (full != fast) std::abort();
  return 0;
}
