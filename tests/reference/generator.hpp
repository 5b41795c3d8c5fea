// The differential tests' generator: seeded random rules (every statement form under every
// scope kind, `ignoring`, where-conditions, random PATHs, `$` bindings) and random traces.
// Shared by the tests that compare the checker with the reference and the monitor with the
// checker.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <random>
#include <string>

#include "reference/builders.hpp"

namespace trajcheck::testing {

struct Gen {
  using K = ir::StatementKind;
  std::mt19937_64 rng;
  IrBuilder b;

  explicit Gen(std::uint64_t seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }

  ir::Id cond(int depth) {
    using Op = ir::CompareOp;
    int k = pick(depth > 0 ? 16 : 13);
    switch (k) {
      case 0: return b.cmp("arguments.id", Op::eq, lit_num(1));
      case 1: return b.cmp("arguments.id", Op::eq, lit_str("1"));
      case 2: return b.cmp("arguments.id", Op::ne, lit_num(1));
      case 3: return b.cmp("arguments.id", static_cast<Op>(2 + pick(4)), lit_num(1 + pick(2)));
      case 4: return b.exists("arguments.id");
      case 5: return b.cmp("decision", Op::eq, lit_str("approved"));
      case 6: return b.cmp("status", Op::eq, lit_str("error"));
      case 7: return b.contains("arguments.tags", lit_str("p"));
      case 8: return b.in("arguments.id", {lit_num(2), lit_str("x")});
      case 9: return b.matches("content", chance(50) ? "^h" : R"((?i)\bye?s\b)");
      case 10: return b.cmp("result.ok", Op::eq, lit_bool(true));
      case 11: return b.cmp("context.user", Op::eq, lit_str("u1"));
      case 12:
        if (chance(50)) return b.cmp_paths("arguments.id", Op::eq, "arguments.tags[0]");
        // every source, or a non-empty part of them (user, result, context)
        // (arguments.tags is an array: seen when every element is)
        return b.seen(chance(70) ? "arguments.id" : "arguments.tags",
                      chance(50) ? ir::kSeenAll : static_cast<std::uint8_t>(1 + pick(ir::kSeenAll)));
      case 13: return b.cand(cond(depth - 1), cond(depth - 1));
      case 14: return b.cor(cond(depth - 1), cond(depth - 1));
      default: return b.cnot(cond(depth - 1));
    }
  }

  ir::Id tool_pattern() {
    static const char* kTools[] = {"a", "b", "c", "d_x"};
    int k = pick(7);
    if (k < 4) return b.tool(kTools[k]);
    if (k == 4) return b.glob("d_*");
    if (k == 5) return b.glob("?");
    return b.any();
  }

  ir::Id pattern(int depth) {
    int k = pick(depth > 0 ? 12 : 8);
    switch (k) {
      case 0: case 1: case 2: case 3: return tool_pattern();
      case 4: return b.type(chance(50) ? StepType::approval : StepType::user_message);
      case 5: return b.type(StepType::assistant_message);
      case 6: return chance(20) ? b.step() : b.any();
      case 7: return b.failed(tool_pattern());
      case 8: return b.or_(pattern(depth - 1), pattern(depth - 1));
      case 9: return b.not_(pattern(depth - 1));
      default: return b.where(pattern(depth - 1), cond(1));
    }
  }

  ir::Id path(int depth) {
    int k = big_groups && depth == 3 && chance(80) ? 7 : pick(depth > 0 ? 9 : 1);
    switch (k) {
      case 0: case 1: case 2: return b.atom(chance(80) ? tool_pattern() : pattern(1));
      case 3: return b.node(ir::PathExpr::Kind::seq, {path(depth - 1), path(depth - 1), path(depth - 1)});
      case 4: return b.node(ir::PathExpr::Kind::seq, {path(depth - 1), path(depth - 1)});
      case 5: return b.node(ir::PathExpr::Kind::alt, {path(depth - 1), path(depth - 1)});
      case 6: {
        auto kind = std::array{ir::PathExpr::Kind::optional, ir::PathExpr::Kind::star,
                               ir::PathExpr::Kind::plus}[pick(3)];
        return b.node(kind, {path(depth - 1)});
      }
      case 7:
        if (big_groups && depth == 3) {  // 5–8 elements, some of them groups themselves
          std::vector<ir::Id> kids;
          int n = 5 + pick(4);
          for (int i = 0; i < n; ++i)
            kids.push_back(chance(15) ? b.node(ir::PathExpr::Kind::all_of, {path(0), path(0), path(0)})
                                      : path(chance(70) ? 0 : 1));
          return b.node(ir::PathExpr::Kind::all_of, kids);
        }
        return b.node(ir::PathExpr::Kind::all_of, {path(depth - 1), path(depth - 1)});
      default: return b.node(ir::PathExpr::Kind::all_of, {path(0), path(depth - 1), path(0)});
    }
  }

  int param_percent = 25;
  int max_len = 10;
  bool global_only = false;  // every rule global
  bool scoped_only = false;  // every rule after / before / between / after until
  bool big_groups = false;   // all-of groups of 5–8 elements, nested ones
  int extra_expect = 0;      // percent of rules given an extra `expect` statement
  int free_alt = 15;         // percent of binders given a free alternative (`| tool`)
  int status_binder = 0;     // percent of binders also testing `status` (a call binds or not by its outcome)
  int failed_binder = 0;     // percent of binders wrapped in `failed` (only a failed call binds)
  int force_kind = -1;       // every statement of this kind (ir::StatementKind), when >= 0
  int shared_turns = 50;    // percent of traces whose steps carry turns, adjacent ones often shared
  int mention = 0;           // percent of binary parametric statements whose B looks for $o (`contains $o`)

  // `P where [C and] PATH contains $o`: a text or array that may hold a value bound by A.
  ir::Id mention_pattern() {
    ir::Id has = b.contains_var(chance(60) ? "arguments.note" : "arguments.tags", "o");
    ir::Id c = chance(30) ? b.cand(cond(0), has) : has;
    ir::Id w = b.where(chance(80) ? tool_pattern() : b.type(StepType::approval), c);
    return chance(free_alt) ? b.or_(w, tool_pattern()) : w;
  }

  ir::Id binder() {
    ir::Id bind = b.cmp_var(chance(80) ? "arguments.id" : "arguments.tags[0]", "o");
    ir::Id c = chance(30) ? b.cand(cond(0), bind) : bind;
    if (status_binder > 0 && chance(status_binder)) {
      ir::Id failed = b.cmp("status", ir::CompareOp::eq, lit_str("error"));
      c = b.cand(chance(50) ? failed : b.cnot(failed), c);
    }
    ir::Id w = b.where(chance(70) ? tool_pattern() : b.type(StepType::approval), c);
    if (failed_binder > 0 && chance(failed_binder)) w = b.failed(w);
    return chance(free_alt) ? b.or_(w, tool_pattern()) : w;
  }

  ir::Statement statement() {
    auto kind = big_groups ? (chance(50) ? K::expect : K::expect_exactly) : static_cast<K>(pick(18));
    if (force_kind >= 0) kind = static_cast<K>(force_kind);
    ir::Statement s = IrBuilder::st(kind, pattern(2));
    switch (kind) {
      case K::precedes: case K::immediately_precedes: case K::followed_by:
      case K::immediately_followed_by: case K::requires_: case K::never_followed_by:
      case K::excludes:
        s.b = pattern(2);
        break;
      case K::count:
        switch (pick(4)) {
          case 0: s.lo = 0; s.hi = pick(3); break;                    // at most
          case 1: s.lo = 1 + pick(2); s.hi = ir::kUnbounded; break;   // at least
          case 2: s.lo = s.hi = pick(3); break;                       // exactly
          default: s.lo = 1 + pick(2); s.hi = s.lo + pick(2); break;  // between
        }
        break;
      case K::in_a_row: case K::retries: s.hi = pick(3); break;
      case K::expect: case K::expect_exactly: s.a = ir::kNone; s.path = path(3); break;
      default: break;
    }
    if (kind != K::expect && kind != K::expect_exactly && chance(param_percent)) {
      // Parametric (§5): bind $o on the statement's patterns.
      const bool binds_a = chance(70);
      s.a = binds_a ? binder() : s.a;
      if (s.b != ir::kNone && binds_a && mention > 0 && chance(mention)) s.b = mention_pattern();
      else if (s.b != ir::kNone && chance(70)) s.b = binder();
    }
    if (chance(30)) s.ignoring = pattern(1);
    s.text = std::to_string(static_cast<int>(kind));
    return s;
  }

  void module() {
    b = IrBuilder{};
    int rules = 1 + pick(3);
    for (int r = 0; r < rules; ++r) {
      auto scope = global_only ? ir::ScopeKind::global
                   : scoped_only ? static_cast<ir::ScopeKind>(1 + pick(4))
                                 : static_cast<ir::ScopeKind>(pick(5));
      ir::Id q = ir::kNone, rr = ir::kNone;
      if (scope == ir::ScopeKind::after || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        q = pattern(1);
      if (scope == ir::ScopeKind::before || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        rr = pattern(1);
      ir::Rule& rule = b.rule(statement(), scope, q, rr);
      if (chance(20)) rule.statements.push_back(statement());
      if (extra_expect > 0 && chance(extra_expect)) {  // an `expect` beside the (maybe binding) statement
        ir::Statement e = IrBuilder::st(chance(50) ? K::expect : K::expect_exactly, ir::kNone);
        e.path = path(2);
        if (chance(20)) e.ignoring = pattern(1);
        e.text = "expect";
        rule.statements.push_back(e);
      }
    }
  }

  void trace(StepsBuilder& t) {
    static const char* kTools[] = {"a", "b", "c", "d_x", "d_y"};
    static const char* kArgs[] = {"", "{}", R"({"id":1})", R"({"id":1.0})", R"({"id":"1"})",
                                  R"({"id":2,"tags":["p","q"]})", R"({"tags":["p"],"id":"x"})",
                                  R"({"b":1,"a":{"y":[1,2],"x":null}})", R"({"a":{"x":null,"y":[1.0,2]},"b":1.0})",
                                  R"({"id":"p","tags":["p"],"note":"1 or xp"})"};
    t.t.clear();
    if (chance(50)) t.context(chance(50) ? R"({"user":"u1"})" : R"({"user":"u1","ids":["p",1]})");
    int n = pick(max_len + 1);
    // Half the traces say which steps share a turn (parallel calls of one message): runs of
    // steps with one turn number, or no number at all (a turn of its own).
    const bool turns = shared_turns > 0 && chance(shared_turns);
    std::uint32_t turn = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t before = t.t.steps().size();
      const bool share = turns && i > 0 && chance(45);
      if (turns && !share) ++turn;
      const bool own = turns && !share && chance(10);
      int k = pick(10);
      if (k < 6) {
        // "x" and "p" as keys, and "p" escaped: seen() must read leaves, not raw bytes.
        static const char* kResults[] = {"", R"({"ok":true})", R"({"id":1,"items":[{"id":"x"}]})", R"("p")",
                                         R"({"a":{"b":[2.0,null]}})", R"({"x":{"p":1}})", R"(["\u0070"])"};
        t.call(kTools[pick(5)], kArgs[pick(10)], chance(35), kResults[pick(7)]);
      } else if (k == 6) {
        t.message(StepType::user_message,
                  std::array{"hello", "bye", "order x 12", "tags p and q", "Yes", "YES please", "eyes", "\u212Aelvin ys"}[pick(8)]);
      } else if (k == 7) {
        t.message(StepType::assistant_message, "ok");
      } else if (k == 8) {
        t.message(StepType::approval, "", chance(50) ? R"({"decision":"approved"})" : R"({"decision":"denied"})");
      } else {
        t.message(StepType::approval_request);
      }
      if (turns && t.t.steps().size() > before) t.t.steps().back().turn = own ? 1000 + static_cast<std::uint32_t>(i) : turn;
    }
  }
};

// A case's generator seed and number of modules; TRAJCHECK_DIFF_SEED (plus the case's own
// offset, so cases stay apart) and TRAJCHECK_DIFF_MODULES override them for longer soak runs.
inline std::pair<std::uint64_t, int> soak(std::uint64_t seed, int modules, int offset) {
  if (const char* e = std::getenv("TRAJCHECK_DIFF_SEED")) seed = std::strtoull(e, nullptr, 10) + offset;
  if (const char* e = std::getenv("TRAJCHECK_DIFF_MODULES")) modules = std::atoi(e);
  return {seed, modules};
}

inline std::string describe(const Trajectory& t) {
  std::string s;
  for (std::size_t i = 0; i < t.steps().size(); ++i) {
    const Step& st = t.steps()[i];
    s += std::to_string(i) + ": " + std::string(to_string(st.type));
    s += " turn=" + std::to_string(st.turn);
    if (st.type == StepType::tool_call)
      s += " " + std::string(t.text(st.tool_name)) + " " + std::string(t.text(st.arguments)) +
           " status=" + std::string(to_string(st.status)) + " result=" + std::string(t.text(st.result));
    s += " " + std::string(t.text(st.content)) + " " + std::string(t.text(st.extra)) + "\n";
  }
  return s + "context: " + std::string(t.context()) + "\n";
}

inline std::string verdict_text(VerdictStatus s, const std::vector<std::uint32_t>& w) {
  std::string out(to_string(s));
  for (auto i : w) out += " " + std::to_string(i);
  return out;
}

}  // namespace trajcheck::testing
