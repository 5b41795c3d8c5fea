// A slow, obviously-correct reference checker, written from LANGUAGE.md's §3 table and
// the §4/§4a fine print with loops over positions (no automata, no incremental state).
// Conditions are evaluated with nlohmann_json, independently of the simdjson evaluator.
// For tests only: quadratic and worse on purpose.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::reference {

struct Verdict {
  VerdictStatus status = VerdictStatus::satisfied;
  std::vector<std::uint32_t> steps;
};

// One verdict per rule of `module`, in order.
std::vector<Verdict> check(const ir::Module& module, const Trajectory& trace);

}  // namespace trajcheck::reference
