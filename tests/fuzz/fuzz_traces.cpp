// libFuzzer target for the trace readers: the input is split into records the way
// RecordSource splits a JSONL file (lines, CR stripped, blank lines skipped) and each is
// parsed with every input format forced in turn, plus auto-detection; so are the whole input
// and its lines joined into one array, as RecordSource reads a coding-agent session log.
// Under auto-detection and the native, openai and anthropic formats (those the DOM fast path
// serves) records are also read without the fast path, and both readings must be the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <vector>

#include "trajcheck/reader.hpp"

namespace {

// One parser per input format (every one of input_format_names()).
const trajcheck::TraceParser& parser(trajcheck::InputFormat f) {
  static const std::vector<trajcheck::TraceParser> parsers = [] {
    std::vector<trajcheck::TraceParser> v;
    for (std::size_t i = 0; i < trajcheck::input_format_names().size(); ++i) {
      auto format = static_cast<trajcheck::InputFormat>(i);
      if (format == trajcheck::InputFormat::auto_detect)
        v.emplace_back(trajcheck::NormalizeOptions{format, {{"a", "b"}}, {"^Error", "(?i)timeout"}, false});
      else
        v.emplace_back(trajcheck::NormalizeOptions{format, {}, {}, format == trajcheck::InputFormat::list});
    }
    return v;
  }();
  return parsers[static_cast<int>(f)];
}

// The same auto-detecting, native and chat parsers without the DOM fast path: both paths
// must agree on every input.
const trajcheck::TraceParser& ondemand_parser(trajcheck::InputFormat f) {
  static trajcheck::TraceParser parsers[] = {
      trajcheck::TraceParser({trajcheck::InputFormat::auto_detect, {{"a", "b"}}, {"^Error", "(?i)timeout"}, false, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::native, {}, {}, false, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::openai, {}, {}, false, {}, false}),
      trajcheck::TraceParser({trajcheck::InputFormat::anthropic, {}, {}, false, {}, false}),
  };
  return parsers[static_cast<int>(f)];
}

// Everything a parse produced, to compare the two ways a record reaches the parser.
std::string outcome_text(const trajcheck::ParseOutcome& o, const std::string& normalized) {
  std::string r = normalized;
  for (const auto& e : o.errors) {
    r += '\n';
    r += std::to_string(e.where.line) + ":" + std::to_string(e.where.column) + " " + e.message;
  }
  return r;
}

void parse_record(std::string_view text, std::uint64_t line) {
  static trajcheck::ToolTable tools;
  static trajcheck::Trajectory t(&tools);
  // The same record copied by the parser (no spare capacity) and parsed in place (spare
  // capacity as RecordSource leaves it, filled with bytes that must not matter).
  trajcheck::RawRecord copied, in_place;
  copied.text.assign(text);
  copied.text.shrink_to_fit();
  in_place.text.reserve(text.size() + trajcheck::kRecordPadding);
  in_place.text.assign(text);
  in_place.text.append(trajcheck::kRecordPadding, '"');
  in_place.text.resize(text.size());
  copied.origin = in_place.origin = trajcheck::RecordOrigin{"fuzz", line, 1, line};
  std::string out;
  // Each trajectory's normalized JSON and warnings.
  auto collect = [&](trajcheck::Trajectory& tr) {
    trajcheck::write_normalized_json(tr, out);
    out += '\n';
    for (const std::string& w : tr.warnings) out += w + '\n';
  };
  for (int f = 0; f < static_cast<int>(trajcheck::input_format_names().size()); ++f) {
    std::string results[2];
    for (int k = 0; k < 2; ++k) {
      out.clear();
      trajcheck::ParseOutcome o = parser(static_cast<trajcheck::InputFormat>(f)).parse(k == 0 ? copied : in_place, t, collect);
      // Positions must stay inside the record.
      for (const auto& e : o.errors)
        if (e.where.line < line) __builtin_trap();
      results[k] = outcome_text(o, out);
    }
    if (copied.text.capacity() < text.size() + trajcheck::kRecordPadding && results[0] != results[1]) __builtin_trap();
    if (f <= 3) {
      out.clear();
      trajcheck::ParseOutcome o = ondemand_parser(static_cast<trajcheck::InputFormat>(f)).parse(in_place, t, collect);
      if (outcome_text(o, out) != results[1]) __builtin_trap();
    }
  }
}

// The lines as records of one run, OTLP traces joined across them (TraceJoiner) under a small
// bound, so that traces are also let go early: every step offered comes out exactly once, and
// a trace let go early says so.
void join_lines(std::string_view all) {
  static trajcheck::ToolTable tools;
  static trajcheck::Trajectory t(&tools), joined(&tools);
  trajcheck::TraceJoinOptions o;
  o.max_bytes = 4096;
  trajcheck::TraceJoiner joiner(o);
  std::uint64_t offered = 0, emitted = 0, early = 0, line = 0;
  // Steps of spans (a call read from a model call's messages may be dropped as the duplicate
  // of a tool span's).
  auto span_steps = [](const trajcheck::Trajectory& tr) {
    std::uint64_t n = 0;
    for (const trajcheck::Step& s : tr.steps())
      n += tr.text(s.extra).rfind(R"({"source":"gen_ai.output.messages")", 0) != 0;
    return n;
  };
  auto count = [&](trajcheck::Trajectory& tr) {
    emitted += span_steps(tr);
    if (tr.spans.size() != tr.steps().size()) __builtin_trap();
    for (const std::string& w : tr.warnings) early += w.find("is checked before the end of the input") != std::string::npos;
  };
  trajcheck::RawRecord rec;
  while (!all.empty()) {
    std::size_t nl = all.find('\n');
    std::string_view l = all.substr(0, nl);
    all = nl == std::string_view::npos ? std::string_view() : all.substr(nl + 1);
    ++line;
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    rec.text.assign(l);
    rec.origin = trajcheck::RecordOrigin{"fuzz", line, 1, line};
    parser(trajcheck::InputFormat::otel).parse(rec, t, [&](trajcheck::Trajectory& tr) {
      if (!tr.spans.empty()) offered += span_steps(tr);
      if (!joiner.offer(tr, joined, count) && !tr.spans.empty()) __builtin_trap();
    });
  }
  joiner.finish(joined, count);
  if (offered != emitted || early != joiner.early_traces() || joiner.held_traces() != 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1 << 20)) return 0;
  std::string_view all(reinterpret_cast<const char*>(data), size);
  // The whole input as one record (the .json path) …
  parse_record(all, 1);
  // … line by line (the .jsonl path), and its lines as one array (a session log).
  std::string session = "[";
  std::uint64_t line = 0;
  while (!all.empty()) {
    std::size_t nl = all.find('\n');
    std::string_view l = all.substr(0, nl);
    all = nl == std::string_view::npos ? std::string_view() : all.substr(nl + 1);
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    parse_record(l, line);
    if (session.size() > 1) session += ",\n";
    session.append(l);
  }
  session += ']';
  if (line > 1) parse_record(session, 1);
  join_lines(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
