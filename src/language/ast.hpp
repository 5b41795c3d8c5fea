// The syntax tree of a rules file: what the parser builds from PEGTL's parse tree and what
// the checks, the lowering to IR and the formatter read. Nodes live in flat tables and
// refer to each other by index, so no walk over a huge file recurses deeper than the
// nesting limit and destruction never recurses at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "trajcheck/diagnostic.hpp"

namespace trajcheck::language::ast {

using Id = std::uint32_t;
constexpr Id kNone = ir::kNone;

struct Cond {
  enum class Kind : std::uint8_t { and_, or_, not_, paren, compare, matches, contains, in, exists, seen, valid };
  Kind kind = Kind::exists;
  std::vector<Id> children;  // and_/or_: operands (n-ary); not_/paren: one
  ir::CompareOp op = ir::CompareOp::eq;
  ir::Operand a, b;           // a: left (a path unless compare); b: right of compare/contains/in
  std::uint8_t sources = 0;   // seen: ir::kSeen* bits as written; 0: none written (every source)
  std::string regex;          // matches: the regex text between the slashes, as written
  SourceRange regex_range;
  SourceRange range;
};

struct Pattern {
  enum class Kind : std::uint8_t {
    name,     // a bare tool name, glob or group reference (`order_get`, `delete_*`, `lookup`)
    quoted,   // a quoted tool name: exact, never a glob or a group
    keyword,  // any, tool_call, step, user_message, …
    or_,      // children (n-ary)
    not_,     // children[0]
    failed,   // children[0]
    where,    // children[0] where conds (chained `where`s are conjoined)
    paren,    // ( children[0] )
  };
  Kind kind = Kind::name;
  std::string text;  // name / decoded quoted name / keyword
  std::vector<Id> children;
  std::vector<Id> conds;
  SourceRange range;
};

struct PathNode {
  enum class Kind : std::uint8_t { atom, seq, alt, all_of, group, optional, star, plus };
  Kind kind = Kind::atom;
  Id pattern = kNone;  // atom
  std::vector<Id> children;
  SourceRange range;
};

// How a count was written, for printing (the bounds are in lo/hi).
enum class CountForm : std::uint8_t { none, at_most, at_least, exactly, between };

struct Count {
  std::uint64_t value = 0;
  bool too_large = false;  // the literal does not fit below 2^63
  std::string text;        // digits, "once" or "twice"
  SourceRange range;
};

struct Statement {
  ir::StatementKind kind = ir::StatementKind::forbid;
  Id a = kNone, b = kNone, ignoring = kNone;
  Id path = kNone;
  CountForm form = CountForm::none;
  Count first, second;  // first: N (or the lower bound of between); second: M of between
  SourceRange range;
};

struct Scope {
  ir::ScopeKind kind = ir::ScopeKind::global;
  Id q = kNone, r = kNone;
  SourceRange range;
};

// One logical line of the file, as parsed.
struct Line {
  enum class Kind : std::uint8_t {
    blank, comment, error,  // error: a line with a syntax error (reported already)
    workflow, catalog, alias, group, case_sensitive,
    rule, scope, statement, message, tag,
  };
  Kind kind = Kind::blank;
  std::uint32_t number = 0;  // 1-based line number
  std::uint32_t indent = 0;  // columns (a tab advances to the next multiple of 8)
  std::uint32_t begin = 0;   // offset of the first non-blank character
  std::string comment;       // trailing `# …` (or the whole comment line), without newline
  // Payload by kind.
  std::string text, text2;   // workflow/catalog/message value; alias from/to; group/rule name
  SourceRange text_range, text2_range;
  std::optional<RuleSeverity> severity;
  SourceRange severity_range;
  Id pattern = kNone;        // group
  std::optional<Scope> scope;       // scope line, or a rule line with an inline scope
  Id statement = kNone;             // statement line, or an inline statement of rule/scope
  std::vector<std::string> tags;
  std::vector<SourceRange> tag_ranges;
  SourceRange range;         // the code part of the line
  std::vector<std::uint32_t> children;  // indices of lines in the indented block below
  std::uint32_t parent = UINT32_MAX;
};

struct File {
  std::vector<Line> lines;  // every physical line (blank and comment lines included)
  std::vector<std::uint32_t> top;  // lines at the top level (not blank/comment)
  std::vector<Pattern> patterns;
  std::vector<Cond> conds;
  std::vector<PathNode> paths;
  std::vector<Statement> statements;
};

}  // namespace trajcheck::language::ast
