// `trajcheck case new`: a corrected production trace -> a regression case record (docs/eval.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trajcheck/trace.hpp"
#include "suite/suite.hpp"

namespace trajcheck::eval {

struct CaseNewOptions {
  std::string case_id, note, split = "production", catalog_version;
  std::vector<std::pair<std::string, std::string>> fields;  // extra scalar fields (task_type=…)
  const suite::Suite* suite = nullptr;  // for the control patterns; else act/answer only
};

// One JSONL line (with a trailing newline): input = the first user message, expected tools
// and path = the trace's tool calls in order, expected control = the trace's control flow.
std::string case_from_trace(const Trajectory& trace, const CaseNewOptions& options);

}  // namespace trajcheck::eval
