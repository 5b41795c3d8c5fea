// libFuzzer target for the trace readers: the input is split into records the way
// RecordSource splits a JSONL file (lines, CR stripped, blank lines skipped) and each is
// parsed with every input format forced in turn, plus auto-detection.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trajcheck/reader.hpp"

namespace {

const trajcheck::TraceParser& parser(trajcheck::InputFormat f) {
  static trajcheck::TraceParser parsers[] = {
      trajcheck::TraceParser({trajcheck::InputFormat::auto_detect, {{"a", "b"}}, {"^Error", "(?i)timeout"}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::native, {}, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::openai, {}, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::anthropic, {}, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::otel, {}, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::list, {}, {}, true}),
  };
  return parsers[static_cast<int>(f)];
}

void parse_record(std::string_view text, std::uint64_t line) {
  static trajcheck::ToolTable tools;
  static trajcheck::Trajectory t(&tools);
  trajcheck::RawRecord rec;
  rec.text.assign(text);
  rec.origin = trajcheck::RecordOrigin{"fuzz", line, 1, line};
  std::string out;
  for (int f = 0; f < 6; ++f) {
    trajcheck::ParseOutcome o =
        parser(static_cast<trajcheck::InputFormat>(f)).parse(rec, t, [&](trajcheck::Trajectory& tr) {
          out.clear();
          trajcheck::write_normalized_json(tr, out);
        });
    // Positions must stay inside the record.
    for (const auto& e : o.errors)
      if (e.where.line < line) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1 << 20)) return 0;
  std::string_view all(reinterpret_cast<const char*>(data), size);
  // The whole input as one record (the .json path) …
  parse_record(all, 1);
  // … and line by line (the .jsonl path).
  std::uint64_t line = 0;
  while (!all.empty()) {
    std::size_t nl = all.find('\n');
    std::string_view l = all.substr(0, nl);
    all = nl == std::string_view::npos ? std::string_view() : all.substr(nl + 1);
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    parse_record(l, line);
  }
  return 0;
}
