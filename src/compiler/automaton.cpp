// Glushkov construction for PATH expressions: number the atoms, compute first/last/follow
// sets as bitsets; all-of groups by subsets of elements done (2^n), not permutations (n!).
#include "compiler/automaton.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace trajcheck::detail {

namespace {

struct Node {
  ir::PathExpr::Kind kind = ir::PathExpr::Kind::atom;
  std::uint32_t pattern = 0;  // compiled id (atom)
  std::vector<Node> children;
};

// Positions of a PATH: one per atom occurrence; an all-of group `{E1..En}` holds one copy
// of each Ei per set S of elements done before it (i not in S): Σ|Ei| · 2^(n-1), not n!.
struct Counter {
  const ir::Module& module;
  const std::function<std::uint32_t(ir::Id)>& map_pattern;
  std::uint64_t cap;
  bool over = false;
  bool all_of = false;  // the PATH holds an all-of group

  static std::uint64_t add(std::uint64_t a, std::uint64_t b) { return std::min(a + b, kSaturate); }
  static constexpr std::uint64_t kSaturate = std::uint64_t(1) << 60;

  std::uint64_t count(const Node& n) {
    if (n.kind == ir::PathExpr::Kind::atom) return 1;
    std::uint64_t c = 0;
    for (const Node& ch : n.children) c = add(c, count(ch));
    if (n.kind == ir::PathExpr::Kind::all_of && !n.children.empty()) {
      if (n.children.size() > 40) return kSaturate;
      std::uint64_t copies = std::uint64_t(1) << (n.children.size() - 1);
      c = c > kSaturate / copies ? kSaturate : c * copies;
    }
    return c;
  }

  Node convert(ir::Id id, int depth) {
    Node n;
    if (over || depth > 512 || id >= module.paths.size()) {
      over = true;
      return n;
    }
    const ir::PathExpr& p = module.paths[id];
    n.kind = p.kind;
    all_of = all_of || p.kind == ir::PathExpr::Kind::all_of;
    if (p.kind == ir::PathExpr::Kind::atom) {
      n.pattern = map_pattern(p.pattern);
      return n;
    }
    for (ir::Id c : p.children) n.children.push_back(convert(c, depth + 1));
    return n;
  }
};

bool nullable(const Node& n) {
  switch (n.kind) {
    case ir::PathExpr::Kind::atom: return false;
    case ir::PathExpr::Kind::seq:
    case ir::PathExpr::Kind::all_of:
      return std::all_of(n.children.begin(), n.children.end(), [](const Node& c) { return nullable(c); });
    case ir::PathExpr::Kind::alt:
      return std::any_of(n.children.begin(), n.children.end(), [](const Node& c) { return nullable(c); });
    case ir::PathExpr::Kind::optional:
    case ir::PathExpr::Kind::star: return true;
    case ir::PathExpr::Kind::plus: return nullable(n.children.at(0));
  }
  return false;
}

struct Glushkov {
  Nfa& nfa;
  std::vector<std::uint64_t> set() const { return std::vector<std::uint64_t>(nfa.words, 0); }
  static void unite(std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] |= b[i];
  }
  void link(const std::vector<std::uint64_t>& from, const std::vector<std::uint64_t>& to) {
    for (std::uint32_t fw = 0; fw < nfa.words; ++fw)
      for (std::uint64_t bits = from[fw]; bits != 0; bits &= bits - 1) {
        std::uint32_t p = fw * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
        for (std::uint32_t w = 0; w < nfa.words; ++w) nfa.follow[std::size_t(p) * nfa.words + w] |= to[w];
      }
  }
  struct Sets {
    bool nullable = false;
    std::vector<std::uint64_t> first, last;
  };
  std::uint32_t next = 0;

  Sets build(const Node& n) {
    Sets s{false, set(), set()};
    switch (n.kind) {
      case ir::PathExpr::Kind::atom: {
        std::uint32_t p = next++;
        nfa.atom[p] = n.pattern;
        s.first[p / 64] |= std::uint64_t(1) << (p % 64);
        s.last = s.first;
        return s;
      }
      case ir::PathExpr::Kind::all_of: return build_all_of(n);
      case ir::PathExpr::Kind::seq: {
        s.nullable = true;
        bool started = false;
        for (const Node& c : n.children) {
          Sets g = build(c);
          if (!started) {
            s = std::move(g);
            started = true;
            continue;
          }
          link(s.last, g.first);
          if (s.nullable) unite(s.first, g.first);
          if (g.nullable) unite(g.last, s.last);
          s.last = std::move(g.last);
          s.nullable = s.nullable && g.nullable;
        }
        return s;
      }
      case ir::PathExpr::Kind::alt:
        for (const Node& c : n.children) {
          Sets g = build(c);
          unite(s.first, g.first);
          unite(s.last, g.last);
          s.nullable = s.nullable || g.nullable;
        }
        return s;
      case ir::PathExpr::Kind::optional:
      case ir::PathExpr::Kind::star:
      case ir::PathExpr::Kind::plus: {
        Sets g = build(n.children.at(0));
        if (n.kind != ir::PathExpr::Kind::optional) link(g.last, g.first);
        if (n.kind != ir::PathExpr::Kind::plus) g.nullable = true;
        return g;
      }
    }
    return s;
  }

  // `{E1..En}`: each element once, as a whole unit, in any order. State S = the set of
  // elements done; copy (S, i) matches Ei next. first(S) = the copies (S, i) can start, plus
  // first(S ∪ {i}) when Ei may be empty; a finished copy (S, i) continues at first(S ∪ {i});
  // it ends the group when every element outside S ∪ {i} may be empty. Supersets are larger
  // numbers, so S runs downwards and first(S ∪ {i}) is known when S is built.
  Sets build_all_of(const Node& n) {
    const std::size_t k = n.children.size();
    Sets s{true, set(), set()};
    if (k == 0) return s;
    const std::uint64_t full = (std::uint64_t(1) << k) - 1;
    std::uint64_t empty_ok = 0;  // elements that may match the empty word
    for (std::size_t i = 0; i < k; ++i)
      if (nullable(n.children[i])) empty_ok |= std::uint64_t(1) << i;
    std::vector<std::vector<std::uint64_t>> first(full + 1);
    first[full] = set();
    for (std::uint64_t S = full; S-- > 0;) {
      first[S] = set();
      for (std::size_t i = 0; i < k; ++i) {
        const std::uint64_t bit = std::uint64_t(1) << i;
        if (S & bit) continue;
        const std::uint64_t T = S | bit;
        Sets g = build(n.children[i]);
        link(g.last, first[T]);
        unite(first[S], g.first);
        if (empty_ok & bit) unite(first[S], first[T]);
        if ((full & ~T & ~empty_ok) == 0) unite(s.last, g.last);
      }
      // Only first(∅) and the supersets still to be built are needed from here on.
    }
    s.first = std::move(first[0]);
    s.nullable = empty_ok == full;
    return s;
  }
};

}  // namespace

bool build_nfa(const ir::Module& module, ir::Id root,
               const std::function<std::uint32_t(ir::Id)>& map_pattern, std::uint32_t cap,
               Nfa& out, std::string& error) {
  // The follow table is n² bits: whatever the option says, stay under 256 MiB of it.
  constexpr std::uint32_t kHardCap = 46000;
  cap = std::min(cap, kHardCap);
  Counter ex{module, map_pattern, cap};
  Node tree = ex.convert(root, 0);
  std::uint64_t n = ex.over ? std::uint64_t(cap) + 1 : ex.count(tree);
  if (n > cap) {
    const char* why = ex.all_of ? "an all-of group of n elements holds each element 2^(n-1) times"
                                : "one state per step name or group in it: split it into shorter PATHs";
    error = ex.over || n >= Counter::kSaturate
                ? fmt::format("the automaton of this PATH needs more than {} states ({})", cap, why)
                : fmt::format("the automaton of this PATH needs {} states, over the cap of {} ({})", n, cap, why);
    return false;
  }
  out = Nfa{};
  out.positions = static_cast<std::uint32_t>(n);
  out.words = std::max<std::uint32_t>(1, (out.positions + 63) / 64);
  out.atom.assign(out.positions, 0);
  out.follow.assign(std::size_t(out.positions) * out.words, 0);
  Glushkov g{out};
  Glushkov::Sets s = g.build(tree);
  out.first = std::move(s.first);
  out.last = std::move(s.last);
  out.nullable = s.nullable;
  out.atoms = out.atom;
  std::sort(out.atoms.begin(), out.atoms.end());
  out.atoms.erase(std::unique(out.atoms.begin(), out.atoms.end()), out.atoms.end());
  return true;
}

std::string Nfa::dump(const std::function<std::string(std::uint32_t)>& pattern_name) const {
  auto set_text = [&](const std::uint64_t* bits) {
    std::string t = "{";
    bool sep = false;
    for (std::uint32_t p = 0; p < positions; ++p)
      if (bits[p / 64] >> (p % 64) & 1) {
        t += fmt::format("{}{}", sep ? ", " : "", p);
        sep = true;
      }
    return t + "}";
  };
  std::string out = fmt::format("    nfa: {} positions, start {}, accept {}{}\n", positions,
                                set_text(first.data()), set_text(last.data()),
                                nullable ? " + empty word" : "");
  for (std::uint32_t p = 0; p < positions; ++p)
    out += fmt::format("      {}: {} -> {}\n", p, pattern_name(atom[p]), set_text(follow_of(p)));
  return out;
}

}  // namespace trajcheck::detail
