// libFuzzer target for the canonical key of a call's arguments (`no duplicate`): when the text
// is taken without a parse (append_flat_canonical), it must be JSON and the key must be byte
// for byte the key of its parse (append_canonical); a difference aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <simdjson.h>

#include "checker/step_eval.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string fast = "|";
  if (!trajcheck::detail::append_flat_canonical(fast, text)) {
    if (fast != "|") std::abort();  // refused, but `out` was changed
    return 0;
  }
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(text)).get(root)) std::abort();  // not JSON, yet taken
  std::string full = "|";
  trajcheck::detail::CanonicalMembers members;
  trajcheck::detail::append_canonical(full, root, members);
  if (full != fast) std::abort();
  return 0;
}
