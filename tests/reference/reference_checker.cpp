// The reference checker: segments computed from the whole trace, each statement decided
// from its table row by scanning positions. Included by the differential test.
#include "reference/reference_checker.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

namespace trajcheck::reference {

namespace {

using json = nlohmann::json;
using K = ir::StatementKind;

bool glob(std::string_view g, std::string_view t) {
  if (g.empty()) return t.empty();
  if (g[0] == '*') {
    for (std::size_t k = 0; k <= t.size(); ++k)
      if (glob(g.substr(1), t.substr(k))) return true;
    return false;
  }
  if (t.empty()) return false;
  return (g[0] == '?' || g[0] == t[0]) && glob(g.substr(1), t.substr(1));
}

struct Ref {
  const ir::Module& m;
  const Trajectory& t;
  std::optional<json> env;          // the value of the rule's variable in this slice
  std::size_t env_from = 0;         // the step that first bound it: a mention looks for it from there on
  std::vector<std::uint32_t> keep;  // the slice: step indices checked

  std::string tool_name(const Step& s) const {
    std::string name(t.text(s.tool_name));
    if (m.case_sensitive) {
      name = std::string(t.text(s.raw_tool));
      if (name.empty()) name = std::string(t.text(s.tool_name));
      while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    }
    std::string out = name;
    for (const auto& [observed, canonical] : m.aliases)
      if (observed == name) out = canonical;
    return out;
  }

  static std::optional<json> parse(std::string_view text) {
    if (text.empty()) return std::nullopt;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }

  static std::optional<json> walk(std::optional<json> cur, const std::vector<ir::PathSegment>& segs,
                                  std::size_t from) {
    for (std::size_t i = from; i < segs.size() && cur; ++i) {
      if (segs[i].index >= 0) {
        if (!cur->is_array() || std::size_t(segs[i].index) >= cur->size()) return std::nullopt;
        cur = (*cur)[std::size_t(segs[i].index)];
      } else {
        if (!cur->is_object() || !cur->contains(segs[i].key)) return std::nullopt;
        cur = (*cur)[segs[i].key];
      }
    }
    return cur;
  }

  std::optional<json> value(const ir::Operand& o, std::size_t i) const {
    if (o.kind == ir::Operand::Kind::literal) {
      const ir::Literal& l = o.literal;
      switch (l.kind) {
        case ir::Literal::Kind::null: return json(nullptr);
        case ir::Literal::Kind::boolean: return json(l.boolean);
        case ir::Literal::Kind::number: return json(l.number);
        case ir::Literal::Kind::string: return json(l.string);
      }
    }
    if (o.kind == ir::Operand::Kind::variable) return env;
    if (o.kind != ir::Operand::Kind::path) return std::nullopt;
    const Step& s = t.steps()[i];
    const ir::FieldPath& p = o.path;
    switch (p.root) {
      case ir::FieldPath::Root::arguments: return walk(parse(t.text(s.arguments)), p.segments, 0);
      case ir::FieldPath::Root::result: return walk(parse(t.text(s.result)), p.segments, 0);
      case ir::FieldPath::Root::context: return walk(parse(t.context()), p.segments, 0);
      case ir::FieldPath::Root::fixture: return std::nullopt;  // generated traces run without a fixture
      case ir::FieldPath::Root::step: break;
    }
    if (p.segments.empty()) return std::nullopt;
    const std::string& f = p.segments[0].key;
    bool leaf = p.segments.size() == 1;
    std::optional<json> core;
    bool is_core = true;
    if (f == "type") core = json(s.type == StepType::other ? std::string(t.text(s.type_name)) : std::string(to_string(s.type)));
    else if (f == "tool") { if (s.type == StepType::tool_call) core = json(std::string(t.text(s.tool_name))); }
    else if (f == "raw_tool") { if (s.type == StepType::tool_call) core = json(std::string(t.text(s.raw_tool))); }
    else if (f == "status") { if (s.status != StepStatus::none) core = json(std::string(to_string(s.status))); }
    else if (f == "id") { if (!s.id.empty()) core = json(std::string(t.text(s.id))); }
    else if (f == "content") { if (!s.content.empty()) core = json(std::string(t.text(s.content))); }
    else if (f == "turn") core = json(s.turn);
    else is_core = false;
    if (is_core) return leaf ? core : std::nullopt;
    return walk(parse(t.text(s.extra)), p.segments, 0);
  }

  static bool scalar(const std::optional<json>& v) {
    return v && (v->is_string() || v->is_number() || v->is_boolean());
  }
  static int kind(const json& v) { return v.is_string() ? 0 : v.is_number() ? 1 : 2; }
  static bool eq(const std::optional<json>& x, const std::optional<json>& y) {
    if (!scalar(x) || !scalar(y) || kind(*x) != kind(*y)) return false;
    if (x->is_number()) return x->get<double>() == y->get<double>();
    return *x == *y;
  }

  bool cond(ir::Id id, std::size_t i) const {
    const ir::Cond& c = m.conds[id];
    switch (c.kind) {
      case ir::Cond::Kind::and_: return cond(c.lhs, i) && cond(c.rhs, i);
      case ir::Cond::Kind::or_: return cond(c.lhs, i) || cond(c.rhs, i);
      case ir::Cond::Kind::not_: return !cond(c.lhs, i);
      case ir::Cond::Kind::exists: return value(c.a, i).has_value();
      case ir::Cond::Kind::matches: {
        auto v = value(c.a, i);
        return v && v->is_string() && RE2::PartialMatch(v->get<std::string>(), RE2(c.regex));
      }
      case ir::Cond::Kind::contains: {
        if (c.b.kind == ir::Operand::Kind::variable && i < env_from) return false;  // not bound yet
        auto x = value(c.a, i), y = value(c.b, i);
        if (x && x->is_string()) return y && y->is_string() && x->get<std::string>().find(y->get<std::string>()) != std::string::npos;
        if (x && x->is_array())
          for (const json& e : *x)
            if (eq(e, y)) return true;
        return false;
      }
      case ir::Cond::Kind::in: {
        auto x = value(c.a, i);
        if (c.b.kind != ir::Operand::Kind::list) {  // `x in PATH`: an element of the array at PATH
          auto y = value(c.b, i);
          if (y && y->is_array())
            for (const json& e : *y)
              if (eq(x, e)) return true;
          return false;
        }
        for (const ir::Literal& l : c.b.list) {
          ir::Operand o;
          o.kind = ir::Operand::Kind::literal;
          o.literal = l;
          if (eq(x, value(o, i))) return true;
        }
        return false;
      }
      case ir::Cond::Kind::compare: {
        auto x = value(c.a, i), y = value(c.b, i);
        if (!scalar(x) || !scalar(y)) return false;
        if (kind(*x) != kind(*y)) return c.op == ir::CompareOp::ne;
        if (x->is_boolean() && c.op != ir::CompareOp::eq && c.op != ir::CompareOp::ne) return false;
        bool lt, gt;
        if (x->is_number()) {
          lt = x->get<double>() < y->get<double>();
          gt = x->get<double>() > y->get<double>();
        } else if (x->is_string()) {
          lt = x->get<std::string>() < y->get<std::string>();
          gt = x->get<std::string>() > y->get<std::string>();
        } else {
          lt = false;
          gt = x->get<bool>() != y->get<bool>();
        }
        switch (c.op) {
          case ir::CompareOp::eq: return !lt && !gt;
          case ir::CompareOp::ne: return lt || gt;
          case ir::CompareOp::lt: return lt;
          case ir::CompareOp::le: return !gt;
          case ir::CompareOp::gt: return gt;
          case ir::CompareOp::ge: return !lt;
        }
        return false;
      }
      case ir::Cond::Kind::seen: {
        auto v = value(c.a, i);
        // One scalar, seen when it is a leaf of the context or of an earlier result, or (a
        // string) inside an earlier user message.
        auto seen_one = [&](const json& x) {
          std::function<bool(const json&)> leaf = [&](const json& j) {
            if (j.is_object() || j.is_array()) {
              for (const json& e : j)
                if (leaf(e)) return true;
              return false;
            }
            return eq(j, x);
          };
          if (auto ctx = parse(t.context()); (c.sources & ir::kSeenContext) && ctx && leaf(*ctx)) return true;
          for (std::size_t j = 0; j < i; ++j) {
            const Step& s = t.steps()[j];
            if (s.type == StepType::tool_call) {
              if (auto r = parse(t.text(s.result)); (c.sources & ir::kSeenResult) && r && leaf(*r)) return true;
            } else if (s.type == StepType::user_message && (c.sources & ir::kSeenUser) && x.is_string() &&
                       t.text(s.content).find(x.get<std::string>()) != std::string_view::npos) {
              return true;
            }
          }
          return false;
        };
        // An array: not empty, and every element a scalar that is seen.
        if (v && v->is_array()) {
          if (v->empty()) return false;
          for (const json& e : *v)
            if (e.is_object() || e.is_array() || e.is_null() || !seen_one(e)) return false;
          return true;
        }
        if (!scalar(v)) return false;
        return seen_one(*v);
      }
      case ir::Cond::Kind::valid:
        // valid() asks the tool catalog, which this checker does not model; the generator
        // never writes it, and a test that did must not get a silent answer.
        throw std::logic_error("the reference checker has no tool catalog: valid() is not modelled");
    }
    return false;
  }

  bool match(ir::Id id, std::size_t i) const {
    const ir::Pattern& p = m.patterns[id];
    const Step& s = t.steps()[i];
    bool call = s.type == StepType::tool_call;
    switch (p.kind) {
      case ir::Pattern::Kind::tool: return call && tool_name(s) == p.name;
      case ir::Pattern::Kind::glob: return call && glob(p.name, tool_name(s));
      case ir::Pattern::Kind::any_tool: return call;
      case ir::Pattern::Kind::any_step: return true;
      case ir::Pattern::Kind::step_type: return s.type == p.step_type;
      case ir::Pattern::Kind::or_: return match(p.a, i) || match(p.b, i);
      case ir::Pattern::Kind::not_: return !match(p.a, i);
      case ir::Pattern::Kind::failed: return call && s.status == StepStatus::error && match(p.a, i);
      case ir::Pattern::Kind::where: return match(p.a, i) && cond(p.b, i);
      case ir::Pattern::Kind::write: return false;
    }
    return false;
  }

  // Segments of the whole trace per §4/§4a (each a list of step indices).
  std::vector<std::vector<std::uint32_t>> segments(const ir::Scope& sc) const {
    std::vector<std::vector<std::uint32_t>> out;
    // Positions below are positions in the slice `keep`; segments hold trace indices.
    std::uint32_t n = static_cast<std::uint32_t>(keep.size());
    auto range = [&](std::uint32_t a, std::uint32_t b) {
      std::vector<std::uint32_t> v;
      for (std::uint32_t i = a; i < b; ++i) v.push_back(keep[i]);
      return v;
    };
    auto match = [&](ir::Id p, std::uint32_t i) { return this->match(p, keep[i]); };
    switch (sc.kind) {
      case ir::ScopeKind::global: out.push_back(range(0, n)); break;
      case ir::ScopeKind::before: {
        std::uint32_t end = n;
        for (std::uint32_t i = 0; i < n; ++i)
          if (match(sc.r, i)) { end = i; break; }
        out.push_back(range(0, end));
        break;
      }
      case ir::ScopeKind::after:
        for (std::uint32_t i = 0; i < n; ++i)
          if (match(sc.q, i)) { out.push_back(range(i, n)); break; }
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until: {
        std::optional<std::uint32_t> start;
        for (std::uint32_t i = 0; i < n; ++i) {
          if (!start) {
            if (match(sc.q, i) && !match(sc.r, i)) start = i;
          } else if (match(sc.r, i)) {
            out.push_back(range(*start, i));
            start.reset();
          }
        }
        if (start && sc.kind == ir::ScopeKind::after_until) out.push_back(range(*start, n));
        break;
      }
    }
    return out;
  }

  static json canonical_args(std::string_view text) {
    if (text.empty()) return json::object();
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return json("raw:" + std::string(text));
    return j;
  }
  // Deep equality, numbers by value (nlohmann compares across number kinds), key order free.
  static bool deep_equal(const json& a, const json& b) {
    if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
    if (a.type() != b.type()) return false;
    if (a.is_object()) {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it)
        if (!b.contains(it.key()) || !deep_equal(it.value(), b[it.key()])) return false;
      return true;
    }
    if (a.is_array()) {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!deep_equal(a[i], b[i])) return false;
      return true;
    }
    return a == b;
  }

  // PATH matching over a letter list: every end position of a full match from `pos`.
  std::set<std::size_t> full(ir::Id node, std::size_t pos, const std::vector<std::uint32_t>& L) const {
    const ir::PathExpr& p = m.paths[node];
    std::set<std::size_t> out;
    switch (p.kind) {
      case ir::PathExpr::Kind::atom:
        if (pos < L.size() && match(p.pattern, L[pos])) out.insert(pos + 1);
        break;
      case ir::PathExpr::Kind::seq: {
        std::set<std::size_t> cur{pos};
        for (ir::Id c : p.children) {
          std::set<std::size_t> next;
          for (std::size_t e : cur)
            for (std::size_t f : full(c, e, L)) next.insert(f);
          cur = next;
        }
        out = cur;
        break;
      }
      case ir::PathExpr::Kind::alt:
        for (ir::Id c : p.children)
          for (std::size_t f : full(c, pos, L)) out.insert(f);
        break;
      case ir::PathExpr::Kind::optional:
        out = full(p.children[0], pos, L);
        out.insert(pos);
        break;
      case ir::PathExpr::Kind::star:
      case ir::PathExpr::Kind::plus: {
        std::set<std::size_t> reach;  // ends after one or more repetitions
        std::vector<std::size_t> work{pos};
        std::set<std::size_t> visited{pos};
        while (!work.empty()) {
          std::size_t e = work.back();
          work.pop_back();
          for (std::size_t f : full(p.children[0], e, L)) {
            reach.insert(f);
            if (visited.insert(f).second) work.push_back(f);
          }
        }
        out = reach;
        if (p.kind == ir::PathExpr::Kind::star) out.insert(pos);
        break;
      }
      case ir::PathExpr::Kind::all_of:
        all_of_full(p.children, (1u << p.children.size()) - 1, pos, L, out);
        break;
    }
    return out;
  }
  void all_of_full(const std::vector<ir::Id>& ch, unsigned mask, std::size_t pos,
                   const std::vector<std::uint32_t>& L, std::set<std::size_t>& out) const {
    if (mask == 0) {
      out.insert(pos);
      return;
    }
    for (std::size_t k = 0; k < ch.size(); ++k)
      if (mask >> k & 1)
        for (std::size_t e : full(ch[k], pos, L)) all_of_full(ch, mask & ~(1u << k), e, L, out);
  }
  // Can L[pos, lim) be consumed as a prefix of some word of `node`? (Every node has words.)
  bool hit(ir::Id node, std::size_t pos, std::size_t lim, const std::vector<std::uint32_t>& L) const {
    if (pos == lim) return true;
    const ir::PathExpr& p = m.paths[node];
    auto ends = [&](ir::Id n) {
      std::set<std::size_t> e;
      for (std::size_t f : full(n, pos, L))
        if (f <= lim) e.insert(f);
      return e;
    };
    switch (p.kind) {
      case ir::PathExpr::Kind::atom: return lim == pos + 1 && match(p.pattern, L[pos]);
      case ir::PathExpr::Kind::seq: return seq_hit(p.children, 0, pos, lim, L);
      case ir::PathExpr::Kind::alt:
        for (ir::Id c : p.children)
          if (hit(c, pos, lim, L)) return true;
        return false;
      case ir::PathExpr::Kind::optional: return hit(p.children[0], pos, lim, L);
      case ir::PathExpr::Kind::star:
      case ir::PathExpr::Kind::plus: {
        std::vector<std::size_t> work{pos};
        std::set<std::size_t> visited{pos};
        while (!work.empty()) {
          std::size_t e = work.back();
          work.pop_back();
          if (hit(p.children[0], e, lim, L)) return true;
          for (std::size_t f : full(p.children[0], e, L))
            if (f <= lim && visited.insert(f).second) work.push_back(f);
        }
        (void)ends;
        return false;
      }
      case ir::PathExpr::Kind::all_of:
        return all_of_hit(p.children, (1u << p.children.size()) - 1, pos, lim, L);
    }
    return false;
  }
  bool seq_hit(const std::vector<ir::Id>& ch, std::size_t k, std::size_t pos, std::size_t lim,
               const std::vector<std::uint32_t>& L) const {
    if (pos == lim) return true;
    if (k == ch.size()) return false;
    if (hit(ch[k], pos, lim, L)) return true;
    for (std::size_t e : full(ch[k], pos, L))
      if (e <= lim && seq_hit(ch, k + 1, e, lim, L)) return true;
    return false;
  }
  bool all_of_hit(const std::vector<ir::Id>& ch, unsigned mask, std::size_t pos, std::size_t lim,
                  const std::vector<std::uint32_t>& L) const {
    if (pos == lim) return true;
    for (std::size_t k = 0; k < ch.size(); ++k)
      if (mask >> k & 1) {
        if (hit(ch[k], pos, lim, L)) return true;
        for (std::size_t e : full(ch[k], pos, L))
          if (e <= lim && all_of_hit(ch, mask & ~(1u << k), e, lim, L)) return true;
      }
    return false;
  }

  bool is_call(std::uint32_t i) const { return t.steps()[i].type == StepType::tool_call; }
  // The first step of step i's turn (adjacent tool calls with one turn number; any other
  // step is a turn of its own): steps of one turn are unordered, so step j is before step i
  // only when j < turn_start(i).
  std::uint32_t turn_start(std::uint32_t i) const {
    auto call = [&](std::uint32_t k) { return t.steps()[k].type == StepType::tool_call; };
    while (i > 0 && call(i) && call(i - 1) && t.steps()[i - 1].turn == t.steps()[i].turn) --i;
    return i;
  }

  // A scope on a trace with turns: the tool calls that share the turn of a step opening or
  // closing a segment (segments over the whole trace) on a side that matters — not another
  // Q of an opening turn, not another R of a closing turn — and that the rule looks at: a
  // pattern of its statements (PATH atoms included), or any call for a statement that looks
  // at every call and for a rule with a variable.
  std::vector<std::uint32_t> turn_ambiguous(const ir::Rule& rule, bool parametric) const {
    std::vector<std::uint32_t> out;
    const ir::Scope& sc = rule.scope;
    if (sc.kind == ir::ScopeKind::global) return out;
    bool every = parametric;
    std::vector<ir::Id> looks;
    for (const ir::Statement& st : rule.statements) {
      switch (st.kind) {
        case K::immediately_precedes:
        case K::immediately_followed_by:
        case K::starts_with:
        case K::ends_with:
        case K::only:
        case K::in_a_row:
        case K::expect_exactly: every = true; break;
        default: break;
      }
      for (ir::Id p : {st.a, st.b})
        if (p != ir::kNone) looks.push_back(p);
      if (st.kind == K::expect || st.kind == K::expect_exactly) {
        std::function<void(ir::Id)> collect = [&](ir::Id id) {
          if (m.paths[id].kind == ir::PathExpr::Kind::atom) looks.push_back(m.paths[id].pattern);
          for (ir::Id c : m.paths[id].children) collect(c);
        };
        collect(st.path);
      }
    }
    const auto n = static_cast<std::uint32_t>(t.steps().size());
    auto Q = [&](std::uint32_t i) { return sc.q != ir::kNone && match(sc.q, i); };
    auto R = [&](std::uint32_t i) { return sc.r != ir::kNone && match(sc.r, i); };
    // The boundary steps, and whether each opens.
    std::vector<std::pair<std::uint32_t, bool>> bounds;
    bool open = sc.kind == ir::ScopeKind::before, opened = false;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (sc.kind == ir::ScopeKind::before) {
        if (open && R(i)) bounds.push_back({i, false}), open = false;
      } else if (sc.kind == ir::ScopeKind::after) {
        if (!opened && Q(i)) bounds.push_back({i, true}), opened = true;
      } else if (open && R(i)) {
        bounds.push_back({i, false}), open = false;
      } else if (!open && Q(i) && !R(i)) {
        bounds.push_back({i, true}), open = true;
      }
    }
    for (std::uint32_t c = 0; c < n; ++c) {
      if (!is_call(c)) continue;
      bool looked = every;
      for (ir::Id p : looks) looked = looked || match(p, c);
      for (const auto& [b, opens] : bounds) {
        if (b == c || turn_start(b) != turn_start(c)) continue;
        const bool amb = opens ? !(Q(c) && !R(c)) && (looked || R(c)) : !R(c) && (looked || Q(c));
        if (amb) {
          out.push_back(c);
          break;
        }
      }
    }
    return out;
  }

  // Adds witnesses to `w`; returns the statement's verdict on segment `S`.
  VerdictStatus statement(const ir::Statement& st, const std::vector<std::uint32_t>& S,
                          std::vector<std::uint32_t>& w) const {
    std::vector<std::uint32_t> L;
    for (std::uint32_t i : S)
      if (st.ignoring == ir::kNone || !match(st.ignoring, i)) L.push_back(i);
    const std::size_t n = L.size();
    auto A = [&](std::size_t k) { return match(st.a, L[k]); };
    auto B = [&](std::size_t k) { return match(st.b, L[k]); };
    std::vector<std::uint32_t> mine;
    bool violated = false, vacuous = false;
    switch (st.kind) {
      case K::forbid:
        for (std::size_t k = 0; k < n; ++k)
          if (A(k)) mine.push_back(L[k]);
        violated = !mine.empty();
        break;
      case K::require: {
        bool any = false;
        for (std::size_t k = 0; k < n; ++k) any = any || A(k);
        violated = !any;
        break;
      }
      case K::count: {
        std::vector<std::uint32_t> all;
        for (std::size_t k = 0; k < n; ++k)
          if (A(k)) all.push_back(L[k]);
        violated = all.size() < st.lo || all.size() > st.hi;
        if (st.lo == 0 && st.hi != ir::kUnbounded) {
          for (std::size_t j = st.hi; j < all.size(); ++j) mine.push_back(all[j]);
        } else {
          mine = all;
        }
        break;
      }
      case K::precedes: {
        bool any_b = false;
        for (std::size_t k = 0; k < n; ++k)
          if (B(k)) {
            any_b = true;
            bool before = false;
            for (std::size_t j = 0; j < k; ++j) before = before || (A(j) && L[j] < turn_start(L[k]));
            if (!before) mine.push_back(L[k]);
          }
        violated = !mine.empty();
        vacuous = !any_b;
        break;
      }
      case K::immediately_precedes: {
        bool any_b = false;
        for (std::size_t k = 0; k < n; ++k)
          if (B(k)) {
            any_b = true;
            // An A in the turn just before B's (the steps of L, from the segment, by turn).
            std::size_t j = k;
            while (j > 0 && turn_start(L[j - 1]) == turn_start(L[k])) --j;
            bool a_before = false;
            for (std::size_t m = j; m-- > 0 && turn_start(L[m]) == turn_start(L[j - 1]);) a_before = a_before || A(m);
            if (!a_before) mine.push_back(L[k]);
          }
        violated = !mine.empty();
        vacuous = !any_b;
        break;
      }
      case K::followed_by: {
        bool any_a = false;
        for (std::size_t k = 0; k < n; ++k)
          if (A(k)) {
            any_a = true;
            bool after = false;
            for (std::size_t j = k + 1; j < n; ++j) after = after || (B(j) && L[k] < turn_start(L[j]));
            if (!after) mine.push_back(L[k]);
          }
        violated = !mine.empty();
        vacuous = !any_a;
        break;
      }
      case K::immediately_followed_by: {
        bool any_a = false;
        for (std::size_t k = 0; k < n; ++k)
          if (A(k)) {
            any_a = true;
            // A B in the turn just after A's.
            std::size_t j = k + 1;
            while (j < n && turn_start(L[j]) == turn_start(L[k])) ++j;
            bool b_after = false;
            for (std::size_t m = j; m < n && turn_start(L[m]) == turn_start(L[j]); ++m) b_after = b_after || B(m);
            if (!b_after) mine.push_back(L[k]);
          }
        violated = !mine.empty();
        vacuous = !any_a;
        break;
      }
      case K::requires_: {
        std::optional<std::size_t> first_a;
        bool any_b = false;
        for (std::size_t k = 0; k < n; ++k) {
          if (A(k) && !first_a) first_a = k;
          any_b = any_b || B(k);
        }
        vacuous = !first_a;
        violated = first_a && !any_b;
        if (violated) mine.push_back(L[*first_a]);
        break;
      }
      case K::never_followed_by: {
        std::optional<std::size_t> first_a;
        for (std::size_t k = 0; k < n; ++k)
          if (A(k)) { first_a = k; break; }
        vacuous = !first_a;
        // A B follows an A in some order when it is another step, in the A's turn or later.
        for (std::size_t k = 0; k < n; ++k) {
          bool a_before = false;
          for (std::size_t j = 0; j < n; ++j) a_before = a_before || (A(j) && j != k && turn_start(L[j]) <= turn_start(L[k]));
          if (B(k) && a_before) mine.push_back(L[k]);
        }
        violated = !mine.empty();
        if (violated) mine.push_back(L[*first_a]);
        break;
      }
      case K::excludes: {
        std::optional<std::size_t> fa, fb;
        for (std::size_t k = 0; k < n; ++k) {
          if (A(k) && !fa) fa = k;
          if (B(k) && !fb) fb = k;
        }
        vacuous = !fa && !fb;
        violated = fa && fb;
        if (violated) {
          mine.push_back(L[*fa]);
          mine.push_back(L[*fb]);
        }
        break;
      }
      case K::starts_with:
        violated = n == 0 || !A(0);
        if (n > 0 && violated) mine.push_back(L[0]);
        break;
      case K::ends_with:
        violated = n == 0 || !A(n - 1);
        if (n > 0 && violated) mine.push_back(L[n - 1]);
        break;
      case K::only:
        for (std::size_t k = 0; k < n; ++k)
          if (is_call(L[k]) && !A(k)) mine.push_back(L[k]);
        violated = !mine.empty();
        break;
      case K::no_duplicate:
        for (std::size_t k = 0; k < n; ++k) {
          if (!is_call(L[k]) || !A(k)) continue;
          const Step& sk = t.steps()[L[k]];
          for (std::size_t j = 0; j < k; ++j) {
            const Step& sj = t.steps()[L[j]];
            if (is_call(L[j]) && A(j) && tool_name(sj) == tool_name(sk) &&
                deep_equal(canonical_args(t.text(sj.arguments)), canonical_args(t.text(sk.arguments)))) {
              mine.push_back(L[k]);
              break;
            }
          }
        }
        violated = !mine.empty();
        break;
      case K::in_a_row: {
        std::vector<std::size_t> calls;
        for (std::size_t k = 0; k < n; ++k)
          if (is_call(L[k])) calls.push_back(k);
        for (std::size_t c = 0; c < calls.size(); ++c) {
          std::uint64_t run = 0;
          for (std::size_t d = c + 1; d-- > 0 && A(calls[d]);) ++run;
          if (run > st.hi) mine.push_back(L[calls[c]]);
        }
        violated = !mine.empty();
        break;
      }
      case K::retries:
        for (std::size_t k = 0; k < n; ++k) {
          if (!is_call(L[k]) || !A(k)) continue;
          std::string tool = tool_name(t.steps()[L[k]]);
          std::uint64_t failures = 0;  // failed calls of this tool right before k
          for (std::size_t j = k; j-- > 0;) {
            if (!is_call(L[j]) || !A(j) || tool_name(t.steps()[L[j]]) != tool) continue;
            if (t.steps()[L[j]].status != StepStatus::error) break;
            ++failures;
          }
          if (failures > st.hi) mine.push_back(L[k]);
        }
        violated = !mine.empty();
        break;
      case K::expect:
      case K::expect_exactly: {
        std::vector<ir::Id> atoms;
        std::function<void(ir::Id)> collect = [&](ir::Id id) {
          if (m.paths[id].kind == ir::PathExpr::Kind::atom) atoms.push_back(m.paths[id].pattern);
          for (ir::Id c : m.paths[id].children) collect(c);
        };
        collect(st.path);
        std::vector<std::uint32_t> letters;
        for (std::uint32_t i : L) {
          if (!is_call(i)) continue;
          bool letter = st.kind == K::expect_exactly;
          for (ir::Id a : atoms) letter = letter || match(a, i);
          if (letter) letters.push_back(i);
        }
        // Every order of each turn's letters: the witness is the first letter (recorded
        // order) such that some order of its turn's letters up to it, after some order of
        // the turns before, is a prefix of no word; else the trace must be a word in every
        // order. A turn with more than kTurnLetters letters: violated at the one past them.
        std::vector<std::vector<std::uint32_t>> turns;  // the letters, by turn
        for (std::uint32_t i : letters) {
          if (turns.empty() || turn_start(turns.back().front()) != turn_start(i)) turns.emplace_back();
          turns.back().push_back(i);
        }
        // f(seq) for each order of turns[0, upto) and of the first `last` letters of turns[upto].
        auto orders = [&](std::size_t upto, std::size_t last, const std::function<bool(const std::vector<std::uint32_t>&)>& f) {
          std::vector<std::vector<std::uint32_t>> parts(turns.begin(), turns.begin() + static_cast<std::ptrdiff_t>(upto));
          if (last > 0) parts.emplace_back(turns[upto].begin(), turns[upto].begin() + static_cast<std::ptrdiff_t>(last));
          for (auto& part : parts) std::sort(part.begin(), part.end());
          std::function<bool(std::size_t)> rec = [&](std::size_t k) {
            if (k == parts.size()) {
              std::vector<std::uint32_t> seq;
              for (const auto& part : parts) seq.insert(seq.end(), part.begin(), part.end());
              return f(seq);
            }
            std::vector<std::uint32_t> keep_part = parts[k];
            bool found = false;
            do found = rec(k + 1); while (!found && std::next_permutation(parts[k].begin(), parts[k].end()));
            parts[k] = keep_part;
            return found;
          };
          return rec(0);
        };
        constexpr std::size_t kTurnLetters = 12;
        for (std::size_t u = 0; u < turns.size() && !violated; ++u)
          for (std::size_t l = 1; l <= turns[u].size() && !violated; ++l) {
            if (l > kTurnLetters) {
              violated = true;
              mine.push_back(turns[u][l - 1]);
              break;
            }
            if (orders(u, l, [&](const std::vector<std::uint32_t>& seq) { return !hit(st.path, 0, seq.size(), seq); })) {
              violated = true;
              mine.push_back(turns[u][l - 1]);
            }
          }
        if (!violated)
          violated = orders(turns.size(), 0, [&](const std::vector<std::uint32_t>& seq) {
            return full(st.path, 0, seq).count(seq.size()) == 0;
          });
        break;
      }
    }
    if (violated) {
      w.insert(w.end(), mine.begin(), mine.end());
      return VerdictStatus::violated;
    }
    return vacuous ? VerdictStatus::vacuous : VerdictStatus::satisfied;
  }
};

// `bound`, for a parametric rule's slice: the steps that bind its value. A segment none of
// whose steps does is never satisfied (§5: a rule whose scope opened but that never bound a
// value is vacuous).
Verdict check_rule(Ref& ref, const ir::Rule& rule, const std::vector<bool>* bound = nullptr) {
  bool violated = false, satisfied = false;
  std::vector<std::uint32_t> w;
  for (const auto& seg : ref.segments(rule.scope)) {
    const bool binds = bound == nullptr ||
                       std::any_of(seg.begin(), seg.end(), [&](std::uint32_t i) { return (*bound)[i]; });
    for (const ir::Statement& st : rule.statements) {
      VerdictStatus v = ref.statement(st, seg, w);
      violated = violated || v == VerdictStatus::violated;
      satisfied = satisfied || (binds && v == VerdictStatus::satisfied);
    }
  }
  Verdict v;
  if (violated) {
    v.status = VerdictStatus::violated;
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    v.steps = w;
  } else {
    v.status = satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
  }
  return v;
}

bool has_variable(const ir::Module& m, ir::Id cond) {
  const ir::Cond& c = m.conds[cond];
  if (c.a.kind == ir::Operand::Kind::variable || c.b.kind == ir::Operand::Kind::variable) return true;
  if (c.kind == ir::Cond::Kind::and_ || c.kind == ir::Cond::Kind::or_) return has_variable(m, c.lhs) || has_variable(m, c.rhs);
  if (c.kind == ir::Cond::Kind::not_) return has_variable(m, c.lhs);
  return false;
}

// The where-patterns under `p` that compare a path with a variable, with that path: the
// patterns that bind, and where their candidate values come from. Under `failed`, only a
// failed call binds.
struct Carrier {
  ir::Id pattern;
  ir::Operand path;
  bool failed;
  bool mention = false;  // `PATH contains $v`: looks for the values bound by the others
};
void variable_paths(const ir::Module& m, ir::Id p, std::vector<Carrier>& out, bool failed = false) {
  if (p == ir::kNone) return;
  const ir::Pattern& pt = m.patterns[p];
  failed = failed || pt.kind == ir::Pattern::Kind::failed;
  if (pt.kind == ir::Pattern::Kind::where) {
    std::function<void(ir::Id)> walk = [&](ir::Id c) {
      const ir::Cond& k = m.conds[c];
      const bool mention = k.kind == ir::Cond::Kind::contains;
      if (k.a.kind == ir::Operand::Kind::variable && k.b.kind == ir::Operand::Kind::path) out.push_back({p, k.b, failed, mention});
      if (k.b.kind == ir::Operand::Kind::variable && k.a.kind == ir::Operand::Kind::path) out.push_back({p, k.a, failed, mention});
      if (k.kind == ir::Cond::Kind::and_ || k.kind == ir::Cond::Kind::or_) { walk(k.lhs); walk(k.rhs); }
      if (k.kind == ir::Cond::Kind::not_) walk(k.lhs);
    };
    walk(pt.b);
  }
  if (pt.kind != ir::Pattern::Kind::tool && pt.kind != ir::Pattern::Kind::glob) {
    variable_paths(m, pt.a, out, failed);
    if (pt.kind == ir::Pattern::Kind::or_) variable_paths(m, pt.b, out, failed);
  }
}

std::string value_text(const json& v) {
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return v.dump();
}

}  // namespace

std::vector<Entry> check_entries(const ir::Module& module, const Trajectory& trace) {
  std::vector<Entry> out;
  Ref ref{module, trace, std::nullopt, {}};
  std::vector<std::uint32_t> all;
  for (std::uint32_t i = 0; i < trace.steps().size(); ++i) all.push_back(i);
  for (std::uint32_t r = 0; r < module.rules.size(); ++r) {
    const ir::Rule& rule = module.rules[r];
    // The statement patterns that carry the variable, and the paths it is compared with.
    std::vector<Carrier> binders;
    for (const ir::Statement& st : rule.statements)
      for (ir::Id p : {st.a, st.b}) variable_paths(module, p, binders);
    ref.env.reset();
    ref.env_from = 0;
    ref.keep = all;
    const std::vector<std::uint32_t> unsided = ref.turn_ambiguous(rule, !binders.empty());
    auto with_unsided = [&](Verdict v) {
      v.status = VerdictStatus::violated;
      v.steps.insert(v.steps.end(), unsided.begin(), unsided.end());
      std::sort(v.steps.begin(), v.steps.end());
      v.steps.erase(std::unique(v.steps.begin(), v.steps.end()), v.steps.end());
      return v;
    };
    if (binders.empty()) {
      Verdict v = check_rule(ref, rule);
      out.push_back(Entry{r, "", unsided.empty() ? v : with_unsided(v)});
      continue;
    }
    // binds[i]: the values step i binds (a carrier matches it with the variable = v).
    std::vector<std::vector<json>> binds(trace.steps().size());
    std::vector<json> domain;  // in order of first binding
    std::vector<std::size_t> first;  // the step that first bound each
    for (std::uint32_t i = 0; i < trace.steps().size(); ++i) {
      for (const auto& [binder, path, failed, mention] : binders) {
        if (mention) continue;
        auto v = ref.value(path, i);
        if (!Ref::scalar(v)) continue;
        ref.env = v;
        if (!ref.match(binder, i)) continue;
        const Step& s = trace.steps()[i];
        if (failed && (s.type != StepType::tool_call || s.status != StepStatus::error)) continue;
        auto same = [&](const json& x) { return Ref::eq(x, *v); };
        if (std::none_of(binds[i].begin(), binds[i].end(), same)) binds[i].push_back(*v);
        if (std::none_of(domain.begin(), domain.end(), same)) {
          domain.push_back(*v);
          first.push_back(i);
        }
      }
      // A mention puts the step in the slices of the values bound so far (here or before)
      // that its PATH contains.
      for (const auto& [carrier, path, failed, mention] : binders) {
        if (!mention) continue;
        const Step& s = trace.steps()[i];
        if (failed && (s.type != StepType::tool_call || s.status != StepStatus::error)) continue;
        for (std::size_t d = 0; d < domain.size(); ++d) {
          const json& v = domain[d];
          ref.env = v;
          ref.env_from = first[d];
          if (!ref.match(carrier, i)) continue;
          auto same = [&](const json& x) { return Ref::eq(x, v); };
          if (std::none_of(binds[i].begin(), binds[i].end(), same)) binds[i].push_back(v);
        }
      }
    }
    bool violated = false, satisfied = false;
    for (std::size_t d = 0; d < domain.size(); ++d) {
      const json& v = domain[d];
      ref.env = v;
      ref.env_from = first[d];
      ref.keep.clear();
      std::vector<bool> bound(trace.steps().size(), false);
      for (std::uint32_t i = 0; i < trace.steps().size(); ++i) {
        bound[i] = std::any_of(binds[i].begin(), binds[i].end(), [&](const json& x) { return Ref::eq(x, v); });
        if (binds[i].empty() || bound[i]) ref.keep.push_back(i);
      }
      Verdict verdict = check_rule(ref, rule, &bound);
      if (verdict.status == VerdictStatus::violated) {
        violated = true;
        out.push_back(Entry{r, value_text(v), verdict});
      }
      satisfied = satisfied || verdict.status == VerdictStatus::satisfied;
    }
    if (!violated) {
      Verdict verdict;
      verdict.status = satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
      out.push_back(Entry{r, "", unsided.empty() ? verdict : with_unsided(Verdict{})});
    } else if (!unsided.empty()) {  // an entry of its own, without a binding
      out.push_back(Entry{r, "", with_unsided(Verdict{})});
    }
  }
  return out;
}

std::vector<Verdict> check(const ir::Module& module, const Trajectory& trace) {
  std::vector<Verdict> out(module.rules.size());
  std::vector<bool> first(module.rules.size(), true);
  for (Entry& e : check_entries(module, trace)) {
    Verdict& v = out[e.rule];
    if (first[e.rule]) {
      v = e.verdict;
      first[e.rule] = false;
    } else {  // several violated bindings: merge their witnesses
      v.steps.insert(v.steps.end(), e.verdict.steps.begin(), e.verdict.steps.end());
      std::sort(v.steps.begin(), v.steps.end());
      v.steps.erase(std::unique(v.steps.begin(), v.steps.end()), v.steps.end());
    }
  }
  return out;
}

}  // namespace trajcheck::reference
