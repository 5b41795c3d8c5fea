// The evaluator's internals shared by src/eval (the public API is trajcheck/eval.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/suite.hpp"
#include "util/sha256.hpp"
#include "trajcheck/eval.hpp"

namespace trajcheck::eval {

// Aggregation (exposed for tests and compare).
Dimensions aggregate(const std::vector<const CaseResult*>& cases);
std::optional<double> percentile(std::vector<double> values, double p);  // nearest rank
// The value of a gate's metric over `dims`; absent when no case applies.
std::optional<double> metric_value(const Dimensions& dims, const suite::Gate& gate);
// An external command's answer: eval's graders and case vary's variations run their commands
// through run_command_cached (graders.cpp), so both are run, limited and cached alike.
struct CommandAnswer {
  std::string output;  // the command's standard output, or the cached one
  bool cached = false;
  std::string error;   // why there is no answer (could not start, timed out, exited 3 (…), …)
};
// Runs `command` with `/bin/sh -c` in `dir`, `input` on its standard input, in a process group
// of its own that is killed after `timeout_seconds` or past 1 MiB of standard output — unless
// `cache_file` (empty: no cache) holds an output that `accept` takes. `accept(output, why)`
// says whether an output is an answer (else why not, into `why`, which becomes the error);
// only accepted outputs are cached, written whole under a temporary name and renamed.
CommandAnswer run_command_cached(const std::string& command, double timeout_seconds, const std::string& dir,
                                 const std::string& input, const std::string& cache_file,
                                 const std::function<bool(const std::string& output, std::string& why)>& accept);

}  // namespace trajcheck::eval
