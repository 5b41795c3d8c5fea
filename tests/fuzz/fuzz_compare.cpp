// libFuzzer target for compare's report reader: the input is one report compared with itself
// and with a small valid one, in both orders, and every output format is rendered.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trajcheck/eval.hpp"

namespace {
const char* kReport =
    R"({"suite":"s","overall":{"pass":true},"dimensions":{"correctness":{"value":0.5}},)"
    R"("cases":[{"case_id":"c1","passed":true,"scores":{"correctness":1}},{"case_id":"c2","passed":false,"scores":{"correctness":0}}]})";

void run(const std::string& a, const std::string& b) {
  trajcheck::eval::CompareOptions o;
  o.resamples = 50;
  trajcheck::eval::CompareReport r;
  std::string error;
  if (!trajcheck::eval::compare_reports("a.json", a, "b.json", b, o, r, error)) return;
  (void)trajcheck::eval::compare_text(r);
  (void)trajcheck::eval::compare_json(r);
  (void)trajcheck::eval::compare_markdown(r);
  (void)trajcheck::eval::compare_html(r);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  run(text, text);
  run(text, kReport);
  run(kReport, text);
  return 0;
}
