// A slow, obviously-correct reference checker, written from docs/language.md's statement table (§3) and
// the §4/§4a fine print with loops over positions (no automata, no incremental state).
// Conditions are evaluated with nlohmann_json, independently of the simdjson evaluator.
// For tests only: quadratic and worse on purpose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::reference {

struct Verdict {
  VerdictStatus status = VerdictStatus::satisfied;
  std::vector<std::uint32_t> steps;
};

// One verdict per rule of `module`, in order (parametric rules: combined over bindings).
std::vector<Verdict> check(const ir::Module& module, const Trajectory& trace);

// Parametric form (§5): one entry per violated binding of a parametric rule, else one
// entry; `binding` is the bound value's JSON text (empty for a non-binding entry).
struct Entry {
  std::uint32_t rule = 0;
  std::string binding;
  Verdict verdict;
};
std::vector<Entry> check_entries(const ir::Module& module, const Trajectory& trace);

}  // namespace trajcheck::reference
