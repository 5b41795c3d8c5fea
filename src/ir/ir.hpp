// The rule IR: what the front end (src/language) lowers a rules file to and what the
// compiler (src/compiler) builds a Program from. Desugared (synonyms gone, groups and
// aliases resolved, names normalized), with source ranges kept for diagnostics. Flat
// tables indexed by `Id`, so equal sub-patterns can be shared and a Program can map each
// pattern to one classifier column.
//
// Meaning of every node: docs/language.md.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::ir {

using Id = std::uint32_t;
constexpr Id kNone = std::numeric_limits<Id>::max();

struct Literal {
  enum class Kind : std::uint8_t { null, boolean, number, string };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string string;  // decoded string value (Kind::string)
  std::string text;    // as written in the source (for printing)
};

// One step of a field path: `.key` or `[index]`.
struct PathSegment {
  std::string key;          // empty for an index segment
  std::int64_t index = -1;  // >= 0 for `[index]`
};

// A field path in a condition: `arguments.x.y`, `args.x`, `result.items[0].id`,
// `context.user_id`, `fixture.customer.orders` (the case's environment fixture, in eval), or a field of the step itself (`type`, `tool`, `raw_tool`, `status`,
// `id`, `content`, `decision`, `latency_ms`, …: for Root::step the first segment names
// the field; fields outside the normalized core are looked up in Step::extra).
struct FieldPath {
  enum class Root : std::uint8_t { arguments, result, context, fixture, step };
  Root root = Root::step;
  std::vector<PathSegment> segments;
  std::string text;  // canonical text, `arguments.order_id`
  SourceRange range;
};

struct Operand {
  enum class Kind : std::uint8_t { none, path, literal, variable, list };
  Kind kind = Kind::none;
  FieldPath path;             // Kind::path
  Literal literal;            // Kind::literal
  std::string variable;       // Kind::variable: the name without `$` (parametric, §5)
  std::vector<Literal> list;  // Kind::list: the right side of `in`
  SourceRange range;
};

enum class CompareOp : std::uint8_t { eq, ne, lt, le, gt, ge };

// The sources `seen(PATH, …)` looks in (§5), as bits of Cond::sources.
constexpr std::uint8_t kSeenUser = 1;     // earlier user messages (strings: a substring)
constexpr std::uint8_t kSeenResult = 2;   // scalar leaves of earlier tool results
constexpr std::uint8_t kSeenContext = 4;  // scalar leaves of the trace's context
constexpr std::uint8_t kSeenAll = kSeenUser | kSeenResult | kSeenContext;
// The sources of `sources` as written after `seen(PATH, `: "user | result", in the order user,
// result, context.
inline std::string seen_sources_text(std::uint8_t sources) {
  std::string out;
  for (auto [bit, word] : {std::pair<std::uint8_t, const char*>{kSeenUser, "user"}, {kSeenResult, "result"},
                           {kSeenContext, "context"}})
    if (sources & bit) out.append(out.empty() ? "" : " | ").append(word);
  return out;
}
// `seen(OPERAND)`, or `seen(OPERAND, SOURCES)` when `sources` is not every source (0: none
// written, every source): the canonical text, for fmt and the program's keys.
inline std::string seen_text(const std::string& operand, std::uint8_t sources) {
  if (sources == 0 || sources == kSeenAll) return "seen(" + operand + ")";
  return "seen(" + operand + ", " + seen_sources_text(sources) + ")";
}

struct Cond {
  enum class Kind : std::uint8_t {
    and_,      // lhs and rhs (child conds)
    or_,       // lhs or rhs
    not_,      // not lhs
    compare,   // a op b
    matches,   // a (path) matches regex (RE2, unanchored partial match)
    contains,  // a (path) contains b (literal, path or variable)
    in,        // a (path) in b (list)
    exists,    // a (path) exists
    seen,      // seen(a.path): provenance (§5)
    valid,     // valid(arguments) / valid(tool): the call against the tool catalog (§2, §7)
  };
  Kind kind = Kind::exists;
  Id lhs = kNone, rhs = kNone;
  CompareOp op = CompareOp::eq;
  Operand a, b;
  std::uint8_t sources = kSeenAll;  // seen: where to look (kSeen* bits, never 0)
  std::string regex;
  SourceRange range;
};

struct Pattern {
  enum class Kind : std::uint8_t {
    tool,       // a tool call whose normalized name == name
    glob,       // a tool call whose normalized name matches the glob `name` (* and ?)
    any_tool,   // `any` / `tool_call`
    any_step,   // `step`
    step_type,  // a step of type `step_type` (not tool_call: that is any_tool)
    or_,        // a | b
    not_,       // not a: a step of any type that does not match a
    failed,     // failed a: a tool call matching a whose status is error
    where,      // a where cond b
    write,      // a tool call whose catalog effect is `write` (§7)
  };
  Kind kind = Kind::any_step;
  std::string name;
  StepType step_type = StepType::tool_call;
  Id a = kNone, b = kNone;  // or_: a, b patterns; not_/failed: a; where: a pattern, b cond
  SourceRange range;
};

// A PATH expression (`expect`, and expected paths of `trajcheck score`).
struct PathExpr {
  enum class Kind : std::uint8_t {
    atom,      // one step matching `pattern`
    seq,       // children in order (A -> B -> C)
    alt,       // one of the children (X | Y)
    all_of,    // {A, B, C}: each child exactly once, as a whole unit, in any order
    optional,  // children[0]?
    star,      // children[0]*
    plus,      // children[0]+
  };
  Kind kind = Kind::atom;
  Id pattern = kNone;
  std::vector<Id> children;
  SourceRange range;
};

enum class StatementKind : std::uint8_t {
  forbid,                   // forbid a / never a
  require,                  // require a
  count,                    // a at most / at least / exactly / between: lo <= count(a) <= hi
  precedes,                 // a precedes b
  immediately_precedes,     // a immediately precedes b
  followed_by,              // a is followed by b
  immediately_followed_by,  // a is immediately followed by b
  requires_,                // a requires b
  never_followed_by,        // a is never followed by b
  excludes,                 // a excludes b
  starts_with,              // starts with a
  ends_with,                // ends with a
  only,                     // only a
  no_duplicate,             // no duplicate a
  in_a_row,                 // a at most hi in a row
  retries,                  // retries of a at most hi
  expect,                   // expect path
  expect_exactly,           // expect exactly path
};
constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

struct Statement {
  StatementKind kind = StatementKind::forbid;
  Id a = kNone, b = kNone;  // patterns
  Id ignoring = kNone;      // pattern removed before ordering/adjacency checks, or kNone
  std::uint64_t lo = 0, hi = kUnbounded;  // count bounds; in_a_row and retries use hi
  Id path = kNone;                        // expect / expect_exactly
  std::string text;                       // canonical source text (fmt's form)
  SourceRange range;
};

enum class ScopeKind : std::uint8_t { global, after, before, between, after_until };

struct Scope {
  ScopeKind kind = ScopeKind::global;
  Id q = kNone, r = kNone;  // patterns: after q / before r / between q and r / after q until r
  std::string text;         // canonical text of the header, empty for global
  SourceRange range;
};

using trajcheck::RuleSeverity;

// A rule: one scope and one statement, or (a named rule with a block) several statements
// under one scope whose verdicts combine: violated if any is (witnesses merged, sorted),
// else satisfied if any is, else vacuous. A bare statement is a rule named by its own
// canonical text, severity error. A scope block of bare statements gives one rule each.
struct Rule {
  std::string name;
  RuleSeverity severity = RuleSeverity::error;
  std::string message;
  std::vector<std::string> tags;
  Scope scope;
  std::vector<Statement> statements;
  std::vector<std::string> variables;  // `$names` the rule binds (parametric, §5), sorted
  SourceRange range;
};

struct Module {
  std::string workflow;  // `workflow "…"`
  std::string catalog;   // `catalog "…"`, as written (relative to the rules file)
  SourceRange catalog_range;
  bool case_sensitive = false;
  std::vector<std::pair<std::string, std::string>> aliases;  // observed -> canonical
  std::vector<Pattern> patterns;
  std::vector<Cond> conds;
  std::vector<PathExpr> paths;
  std::vector<Rule> rules;
};

}  // namespace trajcheck::ir
