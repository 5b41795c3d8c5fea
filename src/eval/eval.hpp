// The evaluator's internals shared by src/eval (the public API is trajcheck/eval.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/suite.hpp"
#include "trajcheck/eval.hpp"

namespace trajcheck::eval {

// Aggregation (exposed for tests and compare).
Dimensions aggregate(const std::vector<const CaseResult*>& cases);
std::optional<double> percentile(std::vector<double> values, double p);  // nearest rank
// The value of a gate's metric over `dims`; absent when no case applies.
std::optional<double> metric_value(const Dimensions& dims, const suite::Gate& gate);
// The SHA-256 of `data` as 64 lowercase hex digits (grader cache keys, input digests).
std::string sha256_hex(std::string_view data);

}  // namespace trajcheck::eval
