// libFuzzer target for the suite parser: parse_suite on arbitrary bytes, and its diagnostics.
#include <cstddef>
#include <cstdint>
#include <string>

#include "suite/suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  trajcheck::Source src("fuzz.suite", std::string(reinterpret_cast<const char*>(data), size));
  trajcheck::suite::SuiteResult r = trajcheck::suite::parse_suite(std::move(src));
  (void)trajcheck::format_diagnostics(r.source, r.diagnostics);
  return 0;
}
