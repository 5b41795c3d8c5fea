// Compiled `where` conditions: operands resolved to a step field or a document root and
// its path, regexes compiled. Evaluated by the checker (checker/condition_eval.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace re2 {
class RE2;
}

namespace trajcheck::detail {

class RegexPrefilter;

constexpr std::uint32_t kNoId = 0xffffffffu;

// A field of the step itself named by the first segment of a step-rooted path.
enum class StepField : std::uint8_t { type, tool, raw_tool, status, id, content, turn, extra };

struct CondOperand {
  enum class Kind : std::uint8_t { none, path, literal, list };
  Kind kind = Kind::none;
  ir::FieldPath::Root root = ir::FieldPath::Root::step;
  StepField field = StepField::extra;      // root == step
  std::vector<ir::PathSegment> segments;   // navigated inside the JSON document
  ir::Literal literal;
  std::vector<ir::Literal> list;
};

struct CondNode {
  ir::Cond::Kind kind = ir::Cond::Kind::exists;
  std::uint32_t a = kNoId, b = kNoId;  // child conditions (and/or/not)
  ir::CompareOp op = ir::CompareOp::eq;
  CondOperand lhs, rhs;
  std::uint8_t sources = ir::kSeenAll;    // seen: where to look (ir::kSeen* bits)
  std::shared_ptr<const re2::RE2> regex;  // matches
  std::shared_ptr<const RegexPrefilter> prefilter;  // matches: literals a match needs; null if none
  std::string text;                       // for dumps
};

}  // namespace trajcheck::detail
