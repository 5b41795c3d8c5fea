// Glushkov construction for PATH expressions: expand all-of groups into permutations,
// number the atoms, compute first/last/follow sets as bitsets.
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

struct Expander {
  const ir::Module& module;
  const std::function<std::uint32_t(ir::Id)>& map_pattern;
  std::uint32_t cap;
  std::uint64_t atoms = 0;
  bool over = false;

  std::uint64_t count_atoms(const Node& n) {
    if (n.kind == ir::PathExpr::Kind::atom) return 1;
    std::uint64_t c = 0;
    for (const Node& ch : n.children) c += count_atoms(ch);
    return c;
  }

  Node expand(ir::Id id, int depth) {
    Node n;
    if (over || depth > 512 || id >= module.paths.size()) {
      over = true;
      return n;
    }
    const ir::PathExpr& p = module.paths[id];
    n.kind = p.kind;
    if (p.kind == ir::PathExpr::Kind::atom) {
      n.pattern = map_pattern(p.pattern);
      return n;
    }
    for (ir::Id c : p.children) n.children.push_back(expand(c, depth + 1));
    if (p.kind != ir::PathExpr::Kind::all_of) return n;
    // {A, B, C}: each child once, as a whole unit, in any order.
    std::uint64_t unit_atoms = 0;
    for (const Node& ch : n.children) unit_atoms += count_atoms(ch);
    std::uint64_t perms = 1;
    for (std::size_t k = 2; k <= n.children.size(); ++k) {
      perms *= k;
      if (perms * std::max<std::uint64_t>(unit_atoms, 1) > cap) {
        over = true;
        return n;
      }
    }
    if (perms * unit_atoms > cap) {
      over = true;
      return n;
    }
    Node alt;
    alt.kind = ir::PathExpr::Kind::alt;
    std::vector<std::size_t> order(n.children.size());
    std::iota(order.begin(), order.end(), 0);
    do {
      Node seq;
      seq.kind = ir::PathExpr::Kind::seq;
      for (std::size_t i : order) seq.children.push_back(n.children[i]);
      alt.children.push_back(std::move(seq));
    } while (std::next_permutation(order.begin(), order.end()));
    return alt;
  }
};

struct Glushkov {
  Nfa& nfa;
  std::vector<std::uint64_t> set() const { return std::vector<std::uint64_t>(nfa.words, 0); }
  static void unite(std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] |= b[i];
  }
  void link(const std::vector<std::uint64_t>& from, const std::vector<std::uint64_t>& to) {
    for (std::uint32_t p = 0; p < nfa.positions; ++p)
      if (from[p / 64] >> (p % 64) & 1)
        for (std::uint32_t w = 0; w < nfa.words; ++w) nfa.follow[std::size_t(p) * nfa.words + w] |= to[w];
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
      case ir::PathExpr::Kind::seq:
      case ir::PathExpr::Kind::all_of: {  // all_of never survives expansion
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
};

}  // namespace

bool build_nfa(const ir::Module& module, ir::Id root,
               const std::function<std::uint32_t(ir::Id)>& map_pattern, std::uint32_t cap,
               Nfa& out, std::string& error) {
  // The follow table is n² bits: whatever the option says, stay under 256 MiB of it.
  constexpr std::uint32_t kHardCap = 46000;
  cap = std::min(cap, kHardCap);
  Expander ex{module, map_pattern, cap};
  Node tree = ex.expand(root, 0);
  std::uint64_t n = ex.over ? std::uint64_t(cap) + 1 : ex.count_atoms(tree);
  if (n > cap) {
    error = fmt::format("the automaton of this PATH needs more than {} states (all-of groups "
                        "expand to every order of their elements)", cap);
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
