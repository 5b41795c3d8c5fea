// libFuzzer target for the rules test-file reader (`trajcheck test`, docs/testing-rules.md):
// parse_rule_test_file on arbitrary bytes, its diagnostics formatted, and the rule-name
// suggestion on every expectation it accepted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trajcheck/rule_tests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  trajcheck::RuleTestFile f = trajcheck::parse_rule_test_file(trajcheck::Source("dir/fuzz.rules.test.json", text));
  (void)trajcheck::format_diagnostics(f.source, f.diagnostics);
  const std::vector<std::string> names = {"refund_needs_approval", "forbid delete_*", "order_get at most 1"};
  for (const trajcheck::RuleTestCase& c : f.cases)
    for (const trajcheck::RuleExpectation& e : c.expect) (void)trajcheck::closest_name(e.rule, names);
  return 0;
}
