// Helpers shared by the readers_*_test.cpp files: read a file or a string through
// RecordSource + TraceParser and keep every trajectory, error and warning.
#pragma once

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "trajcheck/reader.hpp"

namespace trajcheck::test {

struct ReadResult {
  std::shared_ptr<ToolTable> tools = std::make_shared<ToolTable>();  // the copies point at it
  std::vector<Trajectory> traces;
  std::vector<std::string> normalized;  // write_normalized_json of each trace
  std::vector<RecordError> errors;
  std::vector<std::string> warnings;
  std::uint64_t records = 0;
  std::uint64_t rejected = 0;
};

inline std::string data_path(const std::string& rel) { return std::string(TRAJCHECK_TEST_DIR) + "/data/" + rel; }

inline ReadResult read_inputs(const std::vector<std::string>& inputs, NormalizeOptions opts = {}) {
  ReadResult r;
  RecordSource src(inputs);
  TraceParser parser(std::move(opts));
  Trajectory t(r.tools.get());
  RawRecord rec;
  while (src.next(rec)) {
    if (rec.skipped()) {  // an input the listing skipped: its warning, as the CLI prints it
      r.warnings.push_back(rec.skip_warning);
      continue;
    }
    ++r.records;
    ParseOutcome o = parser.parse(rec, t, [&](Trajectory& tr) {
      r.traces.push_back(tr);
      std::string line;
      write_normalized_json(tr, line);
      r.normalized.push_back(line);
      for (const auto& w : tr.warnings) r.warnings.push_back(w);
    });
    if (!o.ok()) {
      ++r.rejected;
      for (const auto& e : o.errors) r.errors.push_back(e);
    }
  }
  return r;
}

inline ReadResult read_file(const std::string& rel, NormalizeOptions opts = {}) {
  return read_inputs({data_path(rel)}, std::move(opts));
}

// Parses one record given as text (origin "mem", line 1). `borrow`: with parse_borrowing,
// the record's bytes overwritten once it returns (the kept copies must not refer to them).
inline ReadResult read_text(std::string_view text, NormalizeOptions opts = {}, bool borrow = false) {
  ReadResult r;
  TraceParser parser(std::move(opts));
  Trajectory t(r.tools.get());
  RawRecord rec;
  rec.text = std::string(text);
  rec.origin = RecordOrigin{"mem", 1, 1, 0};
  r.records = 1;
  auto emit = [&](Trajectory& tr) {
    r.traces.push_back(tr);
    std::string line;
    write_normalized_json(tr, line);
    r.normalized.push_back(line);
    for (const auto& w : tr.warnings) r.warnings.push_back(w);
  };
  ParseOutcome o = borrow ? parser.parse_borrowing(rec, t, emit) : parser.parse(rec, t, emit);
  if (borrow) {
    std::fill(rec.text.begin(), rec.text.end(), '#');
    if (!t.steps().empty() || t.borrows()) r.warnings.push_back("the scratch trajectory was not cleared");
  }
  if (!o.ok()) {
    r.rejected = 1;
    r.errors = o.errors;
  }
  return r;
}

// Text of each field of a step, for compact assertions.
inline std::string tool_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].tool_name)); }
inline std::string args_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].arguments)); }
inline std::string result_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].result)); }
inline std::string content_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].content)); }
inline std::string extra_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].extra)); }
inline std::string id_of(const Trajectory& t, std::size_t i) { return std::string(t.text(t.steps()[i].id)); }

// The steps of a trace as "type" or "tool:status", in order.
inline std::string steps_of(const Trajectory& t) {
  std::string out;
  for (std::size_t i = 0; i < t.steps().size(); ++i) {
    const Step& s = t.steps()[i];
    if (!out.empty()) out += ' ';
    if (s.type == StepType::tool_call) out += tool_of(t, i) + (s.status == StepStatus::error ? ":error" : ":ok");
    else out += std::string(to_string(s.type));
  }
  return out;
}

}  // namespace trajcheck::test
