// Ordering: LCS for sequences and a position DP over the forms of an expected PATH.
#include "metrics/ordering.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <string>

#include "util/glob.hpp"

namespace trajcheck::metrics {

namespace {

constexpr int kNeg = INT_MIN / 4;

Form make_atom(ir::Id pattern) {
  Form f;
  FormNode n;
  n.kind = FormNode::Kind::atom;
  n.pattern = pattern;
  f.nodes.push_back(std::move(n));
  f.root = 0;
  f.steps = 1;
  return f;
}

// Copies `b`'s nodes after `f`'s, returning the offset.
std::uint32_t append_nodes(Form& f, const Form& b) {
  auto off = static_cast<std::uint32_t>(f.nodes.size());
  for (FormNode n : b.nodes) {
    for (auto& c : n.children) c += off;
    f.nodes.push_back(std::move(n));
  }
  return off;
}

// `a` then `b`; nested sequences are flattened.
Form concat(const Form& a, const Form& b) {
  if (a.root < 0) return b;
  if (b.root < 0) return a;
  Form f = a;
  std::uint32_t off = append_nodes(f, b);
  std::vector<std::uint32_t> kids;
  auto add = [&](std::uint32_t r) {
    if (f.nodes[r].kind == FormNode::Kind::seq) {
      for (auto c : f.nodes[r].children) kids.push_back(c);
    } else {
      kids.push_back(r);
    }
  };
  add(static_cast<std::uint32_t>(a.root));
  add(static_cast<std::uint32_t>(b.root) + off);
  FormNode s;
  s.kind = FormNode::Kind::seq;
  s.children = std::move(kids);
  f.nodes.push_back(std::move(s));
  f.root = static_cast<std::int32_t>(f.nodes.size() - 1);
  f.steps = a.steps + b.steps;
  return f;
}

Form make_group(const std::vector<const Form*>& members) {
  std::vector<const Form*> live;
  for (const Form* m : members)
    if (m->root >= 0) live.push_back(m);
  if (live.empty()) return Form{};
  if (live.size() == 1) return *live[0];
  Form f;
  FormNode g;
  g.kind = FormNode::Kind::group;
  for (const Form* m : live) {
    std::uint32_t off = append_nodes(f, *m);
    g.children.push_back(static_cast<std::uint32_t>(m->root) + off);
    f.steps += m->steps;
  }
  f.nodes.push_back(std::move(g));
  f.root = static_cast<std::int32_t>(f.nodes.size() - 1);
  return f;
}

std::vector<Form> expand(const ir::Module& m, ir::Id id, bool* truncated, int depth) {
  std::vector<Form> out;
  if (id >= m.paths.size() || depth > 256) {
    *truncated = true;
    return out;
  }
  const ir::PathExpr& p = m.paths[id];
  auto cap = [&](std::vector<Form>& v) {
    if (v.size() > kMaxForms) {
      v.resize(kMaxForms);
      *truncated = true;
    }
  };
  switch (p.kind) {
    case ir::PathExpr::Kind::atom:
      out.push_back(make_atom(p.pattern));
      break;
    case ir::PathExpr::Kind::alt:
      for (ir::Id c : p.children) {
        for (Form& f : expand(m, c, truncated, depth + 1)) out.push_back(std::move(f));
        cap(out);
      }
      break;
    case ir::PathExpr::Kind::optional:
    case ir::PathExpr::Kind::star:
      out.push_back(Form{});  // zero occurrences
      [[fallthrough]];
    case ir::PathExpr::Kind::plus:
      if (!p.children.empty())
        for (Form& f : expand(m, p.children[0], truncated, depth + 1)) out.push_back(std::move(f));
      cap(out);
      break;
    case ir::PathExpr::Kind::seq: {
      out.push_back(Form{});
      for (ir::Id c : p.children) {
        std::vector<Form> tails = expand(m, c, truncated, depth + 1);
        std::vector<Form> next;
        for (const Form& head : out)
          for (const Form& tail : tails) {
            if (next.size() >= kMaxForms) {
              *truncated = true;
              break;
            }
            next.push_back(concat(head, tail));
          }
        out = std::move(next);
      }
      break;
    }
    case ir::PathExpr::Kind::all_of: {
      // Cartesian product of the members' forms, each combination one group.
      std::vector<std::vector<Form>> per;
      for (ir::Id c : p.children) per.push_back(expand(m, c, truncated, depth + 1));
      std::vector<std::size_t> idx(per.size(), 0);
      for (const auto& v : per)
        if (v.empty()) return out;
      for (;;) {
        std::vector<const Form*> members;
        for (std::size_t i = 0; i < per.size(); ++i) members.push_back(&per[i][idx[i]]);
        out.push_back(make_group(members));
        if (out.size() >= kMaxForms) {
          *truncated = true;
          break;
        }
        std::size_t k = 0;
        while (k < per.size() && ++idx[k] == per[k].size()) idx[k++] = 0;
        if (k == per.size()) break;
      }
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<Form> expand_path(const ir::Module& m, ir::Id root, bool* truncated) {
  *truncated = false;
  return expand(m, root, truncated, 0);
}

void form_atoms(const Form& f, std::vector<ir::Id>& out) {
  out.clear();
  if (f.root < 0) return;
  std::vector<std::uint32_t> stack{static_cast<std::uint32_t>(f.root)};
  while (!stack.empty()) {
    std::uint32_t n = stack.back();
    stack.pop_back();
    const FormNode& node = f.nodes[n];
    if (node.kind == FormNode::Kind::atom) {
      out.push_back(node.pattern);
    } else {
      for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) stack.push_back(*it);
    }
  }
}

bool pattern_matches_name(const ir::Module& m, ir::Id id, std::string_view name) {
  if (id >= m.patterns.size()) return false;
  const ir::Pattern& p = m.patterns[id];
  switch (p.kind) {
    case ir::Pattern::Kind::tool: return p.name == name;
    case ir::Pattern::Kind::glob: return detail::glob_match(p.name, name);
    case ir::Pattern::Kind::any_tool:
    case ir::Pattern::Kind::any_step: return true;
    case ir::Pattern::Kind::step_type: return p.step_type == StepType::tool_call;
    case ir::Pattern::Kind::or_:
      return pattern_matches_name(m, p.a, name) || pattern_matches_name(m, p.b, name);
    case ir::Pattern::Kind::not_: return !pattern_matches_name(m, p.a, name);
    case ir::Pattern::Kind::failed:
    case ir::Pattern::Kind::where: return pattern_matches_name(m, p.a, name);
    case ir::Pattern::Kind::write: return false;  // needs a catalog; scoring has none
  }
  return false;
}

std::string pattern_label(const ir::Module& m, ir::Id id) {
  if (id >= m.patterns.size()) return "?";
  const ir::Pattern& p = m.patterns[id];
  switch (p.kind) {
    case ir::Pattern::Kind::tool:
    case ir::Pattern::Kind::glob: return p.name;
    case ir::Pattern::Kind::any_tool: return "any";
    case ir::Pattern::Kind::any_step: return "step";
    case ir::Pattern::Kind::step_type: return std::string(to_string(p.step_type));
    case ir::Pattern::Kind::or_: return pattern_label(m, p.a) + " | " + pattern_label(m, p.b);
    case ir::Pattern::Kind::not_: return "not " + pattern_label(m, p.a);
    case ir::Pattern::Kind::failed: return "failed " + pattern_label(m, p.a);
    case ir::Pattern::Kind::where: return pattern_label(m, p.a);
    case ir::Pattern::Kind::write: return "write";
  }
  return "?";
}

namespace {

// Bit-parallel LCS (Allison–Dix, in the form of Crochemore et al. 2001; Hyyrö 2004): the DP
// column over `a` is kept as bits, one 64-bit word for 64 positions of `a`. Bit i of V is 0
// where the column steps up (L(i + 1, j) = L(i, j) + 1), so L(i, j) is the number of zeros
// among the first i bits of V after j columns. A column with symbol c does
//   V = (V + (V & M[c])) | (V & ~M[c])
// with M[c] the positions of c in `a` (carry across words).
class BitLcs {
 public:
  // `a` and `b` are views of the two sequences; `keep_columns` keeps V after every column
  // for a traceback (|b| × words words).
  std::uint32_t run(const std::uint32_t* a, std::size_t n, const std::uint32_t* b, std::size_t m,
                    bool keep_columns);
  // L(i, j) after run(.., keep_columns = true).
  std::uint32_t at(std::size_t i, std::size_t j) const {
    const std::uint64_t* v = j == 0 ? nullptr : columns_.data() + (j - 1) * words_;
    std::uint32_t zeros = 0;
    std::size_t w = 0;
    for (; (w + 1) * 64 <= i; ++w) zeros += 64 - static_cast<std::uint32_t>(std::popcount(v ? v[w] : ~0ull));
    if (const std::size_t rest = i - w * 64; rest > 0) {
      const std::uint64_t low = (std::uint64_t(1) << rest) - 1;
      zeros += static_cast<std::uint32_t>(rest) - static_cast<std::uint32_t>(std::popcount((v ? v[w] : ~0ull) & low));
    }
    return zeros;
  }

 private:
  std::size_t words_ = 0;
  std::vector<std::uint64_t> v_, scratch_, dense_, columns_;
  std::vector<std::uint32_t> symbols_, start_, pos_, dense_row_;
};

std::uint32_t BitLcs::run(const std::uint32_t* a, std::size_t n, const std::uint32_t* b, std::size_t m,
                          bool keep_columns) {
  words_ = (n + 63) / 64;
  // Symbols of `a`, compressed to 0 .. k-1 (sorted), and where each occurs in `a`.
  symbols_.assign(a, a + n);
  std::sort(symbols_.begin(), symbols_.end());
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end()), symbols_.end());
  const std::size_t k = symbols_.size();
  auto symbol_of = [&](std::uint32_t x) -> std::size_t {
    auto it = std::lower_bound(symbols_.begin(), symbols_.end(), x);
    return it != symbols_.end() && *it == x ? static_cast<std::size_t>(it - symbols_.begin()) : k;
  };
  start_.assign(k + 1, 0);
  std::vector<std::uint32_t>& code = dense_row_;  // reused below once the codes are read
  code.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    code[i] = static_cast<std::uint32_t>(symbol_of(a[i]));
    ++start_[code[i] + 1];
  }
  for (std::size_t s = 0; s < k; ++s) start_[s + 1] += start_[s];
  pos_.resize(n);
  {
    std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) pos_[fill[code[i]]++] = static_cast<std::uint32_t>(i);
  }
  // A symbol with more positions than there are words gets its mask built once (there are at
  // most 64 such symbols, so these masks take at most 64 · words words: linear in |a|); the
  // others are set into a scratch mask per column and cleared after it, at the cost of their
  // positions, which is at most the column's own cost.
  dense_row_.assign(k, UINT32_MAX);
  dense_.clear();
  for (std::size_t s = 0; s < k; ++s) {
    if (start_[s + 1] - start_[s] <= words_) continue;
    dense_row_[s] = static_cast<std::uint32_t>(dense_.size() / words_);
    dense_.resize(dense_.size() + words_, 0);
    std::uint64_t* row = dense_.data() + dense_.size() - words_;
    for (std::uint32_t p = start_[s]; p < start_[s + 1]; ++p) row[pos_[p] / 64] |= std::uint64_t(1) << (pos_[p] % 64);
  }
  scratch_.assign(words_, 0);
  v_.assign(words_, ~std::uint64_t(0));
  if (keep_columns) columns_.resize(m * words_);
  std::uint64_t* v = v_.data();
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t s = symbol_of(b[j]);
    // A symbol absent from `a` leaves V as it is.
    if (s < k) {
      const std::uint64_t* mask;
      const bool dense = dense_row_[s] != UINT32_MAX;
      if (dense) {
        mask = dense_.data() + std::size_t(dense_row_[s]) * words_;
      } else {
        for (std::uint32_t p = start_[s]; p < start_[s + 1]; ++p)
          scratch_[pos_[p] / 64] |= std::uint64_t(1) << (pos_[p] % 64);
        mask = scratch_.data();
      }
      unsigned char carry = 0;
      for (std::size_t w = 0; w < words_; ++w) {
        const std::uint64_t x = v[w], u = x & mask[w];
        unsigned long long sum;
        carry = static_cast<unsigned char>(__builtin_add_overflow(x, u, &sum) |
                                           __builtin_add_overflow(sum, std::uint64_t(carry), &sum));
        v[w] = sum | (x & ~mask[w]);
      }
      if (!dense)
        for (std::uint32_t p = start_[s]; p < start_[s + 1]; ++p) scratch_[pos_[p] / 64] = 0;
    }
    if (keep_columns) std::copy(v, v + words_, columns_.data() + j * words_);
  }
  std::uint32_t zeros = 0;
  for (std::size_t w = 0; w < words_; ++w) {
    std::uint64_t x = ~v[w];
    if (w + 1 == words_ && n % 64 != 0) x &= (std::uint64_t(1) << (n % 64)) - 1;
    zeros += static_cast<std::uint32_t>(std::popcount(x));
  }
  return zeros;
}

}  // namespace

std::uint32_t lcs(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                  std::vector<char>* matched_a) {
  const std::size_t n = a.size(), m = b.size();
  // Scratch kept per thread: the explanation's swap search calls this once per position.
  thread_local BitLcs bits;
  if (!matched_a) {
    // A common prefix and suffix are in some LCS (matching equal first elements is always
    // optimal), so the DP runs on what lies between: sequences compared here mostly agree.
    std::size_t lo = 0, hi_a = n, hi_b = m;
    while (lo < n && lo < m && a[lo] == b[lo]) ++lo;
    while (hi_a > lo && hi_b > lo && a[hi_a - 1] == b[hi_b - 1]) {
      --hi_a;
      --hi_b;
    }
    const auto trimmed = static_cast<std::uint32_t>(lo + (n - hi_a));
    if (hi_a == lo || hi_b == lo) return trimmed;
    return trimmed + bits.run(a.data() + lo, hi_a - lo, b.data() + lo, hi_b - lo, false);
  }
  // One LCS, traced back from the last cell: equal elements are matched, else the step goes
  // up when that keeps the length, else left (the columns kept take |b| · ⌈|a|/64⌉ words).
  const std::uint32_t length = n == 0 || m == 0 ? 0 : bits.run(a.data(), n, b.data(), m, true);
  matched_a->assign(n, 0);
  if (length == 0) return 0;
  for (std::size_t i = n, j = m; i > 0 && j > 0;) {
    if (a[i - 1] == b[j - 1]) {
      (*matched_a)[i - 1] = 1;
      --i;
      --j;
    } else if (bits.at(i - 1, j) >= bits.at(i, j - 1)) {
      --i;
    } else {
      --j;
    }
  }
  return length;
}

namespace {

// block_lcs's DP rows (value only): rows[b * (m + 1) + i] = most of e[0, i) matched by
// blocks [0, b). Two facts keep it cheap: a block of one call is a plain LCS row, and a
// run is best started at an element the block can match (F(b, ·) never decreases) and
// stops growing once it matched all the block can match.
void block_lcs_rows(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                    const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                    std::vector<std::uint32_t>& rows) {
  const std::size_t m = e.size(), nb = block_end.size(), w1 = m + 1;
  thread_local std::vector<std::uint32_t> have, used, in_e, hits;
  rows.assign((nb + 1) * w1, 0);
  have.assign(name_count, 0);
  used.assign(name_count, 0);
  in_e.assign(name_count, 0);
  for (std::uint32_t n : e) ++in_e[n];
  std::size_t start = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const std::uint32_t* prev = rows.data() + b * w1;
    std::uint32_t* cur = rows.data() + (b + 1) * w1;
    std::uint32_t cap = 0;  // the most this block can match: per name, min(calls, copies in e)
    for (std::size_t j = start; j < block_end[b]; ++j)
      if (have[a[j]]++ < in_e[a[j]]) ++cap;
    std::copy(prev, prev + w1, cur);
    if (cap > 0 && block_end[b] - start == 1) {
      const std::uint32_t x = a[start];
      for (std::size_t j = 1; j <= m; ++j) {
        std::uint32_t v = std::max(prev[j], cur[j - 1]);
        if (e[j - 1] == x) v = std::max(v, prev[j - 1] + 1);
        cur[j] = v;
      }
    } else if (cap > 0) {
      // Only elements naming a call of the block can add to a run, and a run's value at
      // other positions is its value at the last such element, which the prefix maximum
      // below carries forward: so runs step over those elements only.
      hits.clear();
      for (std::size_t k = 0; k < m; ++k)
        if (have[e[k]] != 0) hits.push_back(static_cast<std::uint32_t>(k));
      for (std::size_t h = 0; h < hits.size(); ++h) {
        const std::uint32_t i = hits[h];
        std::uint32_t w = 0;
        for (std::size_t g = h; g < hits.size(); ++g) {
          std::uint32_t nm = e[hits[g]];
          if (used[nm] < have[nm]) {
            ++used[nm];
            ++w;
            if (prev[i] + w > cur[hits[g] + 1]) cur[hits[g] + 1] = prev[i] + w;
            if (w == cap) break;  // longer runs add nothing the prefix maximum below misses
          }
        }
        for (std::size_t j = start; j < block_end[b]; ++j) used[a[j]] = 0;
      }
      for (std::size_t j = 1; j <= m; ++j)
        if (cur[j - 1] > cur[j]) cur[j] = cur[j - 1];
    }
    for (std::size_t j = start; j < block_end[b]; ++j) have[a[j]] = 0;
    start = block_end[b];
  }
}

// block_lcs's value. A leading block whose calls are, as a multiset, the next elements of
// e is matched to them in some optimal solution (moving it onto them loses at most what it
// gains: any other solution matches no more than |block| of those positions with this block
// and the later blocks together), and likewise a trailing block at the end of e; so the DP
// runs only on what lies between, which for the lists compared here is mostly short.
std::uint32_t block_lcs_value(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                              const std::vector<std::uint32_t>& block_end, std::size_t name_count) {
  thread_local std::vector<std::uint32_t> rows, count, te, ta, tend;
  const std::size_t m = e.size(), nb = block_end.size();
  auto begin_of = [&](std::size_t b) -> std::size_t { return b == 0 ? 0 : block_end[b - 1]; };
  if (count.size() < name_count) count.assign(name_count, 0);  // kept all zero between uses
  // Whether block b's calls are the multiset e[at, at + size of b).
  auto same = [&](std::size_t b, std::size_t at) {
    const std::size_t from = begin_of(b), to = block_end[b];
    if (to - from == 1) return a[from] == e[at];
    for (std::size_t j = from; j < to; ++j) ++count[a[j]];
    bool ok = true;
    for (std::size_t i = at; i < at + (to - from); ++i) {
      if (count[e[i]] == 0) {
        ok = false;
        break;
      }
      --count[e[i]];
    }
    for (std::size_t j = from; j < to; ++j) count[a[j]] = 0;
    return ok;
  };
  std::size_t eb = 0, ee = m, bb = 0, be = nb;
  while (bb < be && block_end[bb] - begin_of(bb) <= ee - eb && same(bb, eb)) {
    eb += block_end[bb] - begin_of(bb);
    ++bb;
  }
  while (be > bb && block_end[be - 1] - begin_of(be - 1) <= ee - eb &&
         same(be - 1, ee - (block_end[be - 1] - begin_of(be - 1)))) {
    ee -= block_end[be - 1] - begin_of(be - 1);
    --be;
  }
  const auto trimmed = static_cast<std::uint32_t>(eb + (m - ee));
  if (bb == be || eb == ee) return trimmed;
  if (bb == 0 && be == nb) {
    block_lcs_rows(e, a, block_end, name_count, rows);
    return rows.back();
  }
  te.assign(e.begin() + static_cast<std::ptrdiff_t>(eb), e.begin() + static_cast<std::ptrdiff_t>(ee));
  const std::size_t a0 = begin_of(bb);
  ta.assign(a.begin() + static_cast<std::ptrdiff_t>(a0), a.begin() + static_cast<std::ptrdiff_t>(block_end[be - 1]));
  tend.clear();
  for (std::size_t b = bb; b < be; ++b) tend.push_back(static_cast<std::uint32_t>(block_end[b] - a0));
  block_lcs_rows(te, ta, tend, name_count, rows);
  return trimmed + rows.back();
}

}  // namespace

std::uint32_t block_lcs(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                        const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                        std::vector<char>* matched_e) {
  if (!matched_e) return block_lcs_value(e, a, block_end, name_count);
  const std::size_t m = e.size(), nb = block_end.size();
  // f[b][i]: most expected steps of e[0, i) matched within blocks [0, b); a block takes a run
  // e[i, j) and matches, per name, min(copies in the run, calls in the block).
  // from/till: the run e[from, till) the block matched in the best way to reach (b + 1, j).
  thread_local std::vector<std::uint32_t> f, from, till, have, used;
  f.assign((nb + 1) * (m + 1), 0);
  from.assign((nb + 1) * (m + 1), 0);
  till.assign((nb + 1) * (m + 1), 0);
  auto F = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return f[b * (m + 1) + i]; };
  auto From = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return from[b * (m + 1) + i]; };
  auto Till = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return till[b * (m + 1) + i]; };
  have.assign(name_count, 0);
  used.assign(name_count, 0);
  thread_local std::vector<std::uint32_t> in_e, last_in_e, sweep_head, sweep_next, sweep_value, next_hit;
  constexpr std::uint32_t kNoRun = 0xffffffffu;
  in_e.assign(name_count, 0);
  last_in_e.assign(name_count, 0);  // 1 + the last index of each name in e (0: absent)
  for (std::size_t k = 0; k < m; ++k) {
    ++in_e[e[k]];
    last_in_e[e[k]] = static_cast<std::uint32_t>(k + 1);
  }
  sweep_head.assign(m + 2, kNoRun);
  next_hit.assign(m + 1, 0);
  sweep_next.assign(m, kNoRun);
  sweep_value.assign(m, 0);
  std::size_t start = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    std::uint32_t cap = 0;  // the most this block can match
    for (std::size_t j = start; j < block_end[b]; ++j)
      if (have[a[j]]++ < in_e[a[j]]) ++cap;
    for (std::size_t j = 0; j <= m; ++j) {
      F(b + 1, j) = F(b, j);
      From(b + 1, j) = Till(b + 1, j) = static_cast<std::uint32_t>(j);
    }
    // Starts that cannot beat F(b, j) at any j (an update needs a strictly larger value)
    // are skipped. A run stops growing once no later element can add to it (the block has
    // matched all it can, or no name of the block occurs past `stop`); its candidate from
    // there on is constant, so it is applied by the sweep below instead of position by
    // position. Each position keeps the best candidate and, among equal ones, the first
    // start (or its own value when that is as good), exactly as a full scan would.
    std::size_t last = 0;  // past the last element of e that names a call of this block
    for (std::size_t j = start; j < block_end[b]; ++j) last = std::max<std::size_t>(last, last_in_e[a[j]]);
    std::fill(sweep_head.begin(), sweep_head.end(), kNoRun);
    // Up to the first element the block can match a run adds nothing (F(b, i) never beats
    // F(b + 1, j) >= F(b, j) >= F(b, i)), so each run starts there.
    next_hit[m] = static_cast<std::uint32_t>(m);
    for (std::size_t k = m; k-- > 0;) next_hit[k] = have[e[k]] != 0 ? static_cast<std::uint32_t>(k) : next_hit[k + 1];
    for (std::size_t i = 0; i < m && cap > 0; ++i) {
      if (F(b, i) + cap <= F(b, i + 1)) continue;
      const std::size_t first = next_hit[i];
      if (first == m) continue;
      std::uint32_t w = 0;
      std::size_t j = first + 1;
      for (; j <= m; ++j) {
        std::uint32_t nm = e[j - 1];
        if (used[nm] < have[nm]) {
          ++used[nm];
          ++w;
        }
        if (F(b, i) + w > F(b + 1, j)) {
          F(b + 1, j) = F(b, i) + w;
          From(b + 1, j) = static_cast<std::uint32_t>(i);
          Till(b + 1, j) = static_cast<std::uint32_t>(j);
        }
        if (w == cap || j >= last) break;
      }
      for (std::size_t k = first; k < j && k < m; ++k) used[e[k]] = 0;
      if (j < m) {  // positions j + 1 .. m get F(b, i) + w from start i
        sweep_value[i] = F(b, i) + w;
        sweep_next[i] = sweep_head[j + 1];
        sweep_head[j + 1] = static_cast<std::uint32_t>(i);
      }
    }
    {
      std::uint32_t best_value = 0, best_start = kNoRun;
      for (std::size_t j = 1; j <= m; ++j) {
        for (std::uint32_t i = sweep_head[j]; i != kNoRun; i = sweep_next[i])
          if (best_start == kNoRun || sweep_value[i] > best_value ||
              (sweep_value[i] == best_value && i < best_start)) {
            best_value = sweep_value[i];
            best_start = i;
          }
        if (best_start == kNoRun) continue;
        // From == j marks the position's own value, which wins ties.
        const bool own = From(b + 1, j) == j;
        if (best_value > F(b + 1, j) ||
            (best_value == F(b + 1, j) && !own && best_start < From(b + 1, j))) {
          F(b + 1, j) = best_value;
          From(b + 1, j) = best_start;
          Till(b + 1, j) = static_cast<std::uint32_t>(j);
        }
      }
    }
    for (std::size_t j = 1; j <= m; ++j)
      if (F(b + 1, j - 1) > F(b + 1, j)) {
        F(b + 1, j) = F(b + 1, j - 1);
        From(b + 1, j) = From(b + 1, j - 1);
        Till(b + 1, j) = Till(b + 1, j - 1);
      }
    for (std::size_t j = start; j < block_end[b]; ++j) --have[a[j]];
    start = block_end[b];
  }
  if (matched_e) {
    matched_e->assign(m, 0);
    // Walk back: block b matched within e[From, j); mark greedily by the block's name counts.
    std::size_t j = m;
    for (std::size_t b = nb; b > 0 && j > 0; --b) {
      std::size_t i = From(b, j), end = Till(b, j);
      std::size_t bstart = b >= 2 ? block_end[b - 2] : 0;
      for (std::size_t k = bstart; k < block_end[b - 1]; ++k) ++have[a[k]];
      for (std::size_t k = i; k < end; ++k)
        if (have[e[k]] > 0) {
          --have[e[k]];
          (*matched_e)[k] = 1;
        }
      for (std::size_t k = bstart; k < block_end[b - 1]; ++k) have[a[k]] = 0;
      j = i;
    }
  }
  return F(nb, m);
}

void swap_bounds(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                 const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                 std::vector<std::uint32_t>& bound) {
  constexpr std::uint32_t kNoBlock = 0xffffffffu;
  const std::size_t m = e.size(), nb = block_end.size(), w1 = m + 1;
  bound.assign(m, 0);
  if (m < 2 || nb < 2) return;
  // Forward rows over e, and backward rows over e and the blocks reversed:
  // back[c * w1 + t] = most of e[m - t, m) matched by the last c blocks.
  thread_local std::vector<std::uint32_t> fwd, back, er, ar, rend;
  block_lcs_rows(e, a, block_end, name_count, fwd);
  er.assign(e.rbegin(), e.rend());
  ar.assign(a.rbegin(), a.rend());
  rend.clear();
  const std::size_t na = a.size();
  for (std::size_t c = nb; c-- > 0;) rend.push_back(static_cast<std::uint32_t>(na - (c == 0 ? 0 : block_end[c - 1])));
  block_lcs_rows(er, ar, rend, name_count, back);
  // The blocks holding a call of each name, ascending (CSR by name): a pair's bound looks
  // at the blocks of its two names only.
  thread_local std::vector<std::uint32_t> name_start, name_blocks, fill;
  name_start.assign(name_count + 1, 0);
  fill.assign(name_count, kNoBlock);  // last block recorded per name
  for (std::size_t b = 0, j = 0; b < nb; ++b)
    for (; j < block_end[b]; ++j)
      if (fill[a[j]] != b) {
        fill[a[j]] = static_cast<std::uint32_t>(b);
        ++name_start[a[j] + 1];
      }
  for (std::size_t n = 0; n < name_count; ++n) name_start[n + 1] += name_start[n];
  name_blocks.resize(name_start[name_count]);
  std::fill(fill.begin(), fill.end(), kNoBlock);
  {
    thread_local std::vector<std::uint32_t> next;
    next.assign(name_start.begin(), name_start.end() - 1);
    for (std::size_t b = 0, j = 0; b < nb; ++b)
      for (; j < block_end[b]; ++j)
        if (fill[a[j]] != b) {
          fill[a[j]] = static_cast<std::uint32_t>(b);
          name_blocks[next[a[j]]++] = static_cast<std::uint32_t>(b);
        }
  }
  for (std::size_t k = 0; k + 1 < m; ++k) {
    // The exchanged pair counts for 2 only with e[k + 1] matched in a block b before the
    // block b' that matches e[k]; the prefix then fits in blocks [0, b] and the suffix in
    // blocks [b', nb): at most fwd(b + 1, k) + 2 + back(nb - b', m - k - 2).
    // Blocks in ascending order; within one block, e[k]'s test comes before e[k + 1]'s update.
    std::int64_t best_prefix = -1, best = 0;
    const std::uint32_t x = e[k], y = e[k + 1];
    std::uint32_t px = name_start[x], ex = name_start[x + 1], py = name_start[y], ey = name_start[y + 1];
    while (px < ex || py < ey) {
      const std::uint32_t bx = px < ex ? name_blocks[px] : kNoBlock;
      const std::uint32_t by = py < ey ? name_blocks[py] : kNoBlock;
      const std::uint32_t b = std::min(bx, by);
      if (bx == b) {
        if (best_prefix >= 0) best = std::max<std::int64_t>(best, best_prefix + 2 + back[(nb - b) * w1 + (m - k - 2)]);
        ++px;
      }
      if (by == b) {
        best_prefix = std::max<std::int64_t>(best_prefix, fwd[(b + 1) * w1 + k]);
        ++py;
      }
    }
    bound[k] = static_cast<std::uint32_t>(best);
  }
}

const std::vector<char>& FormEvaluator::match_row(ir::Id pattern) {
  if (pattern >= rows_.size()) {
    rows_.resize(pattern + 1);
    have_row_.resize(pattern + 1, 0);
  }
  if (!have_row_[pattern]) {
    auto& row = rows_[pattern];
    row.assign(actual_->size(), 0);
    for (std::size_t j = 0; j < actual_->size(); ++j)
      row[j] = pattern_matches_name(*m_, pattern, (*actual_)[j]) ? 1 : 0;
    have_row_[pattern] = 1;
  }
  return rows_[pattern];
}

// The nodes placed one after another in the order given: a sequence, and a group too large for
// the subset DP (one allowed order, a lower bound).
void FormEvaluator::eval_in_order(const Form& f, const std::vector<std::uint32_t>& nodes, const std::vector<int>& in,
                                  std::vector<int>& out) {
  std::vector<int> cur = in, next;
  for (auto c : nodes) {
    eval(f, c, cur, next);
    std::swap(cur, next);
  }
  out = std::move(cur);
}

// in[i]: best count having used actual calls [0, i) (non-decreasing in i); out[j] likewise
// after also placing `node` within [i, j).
void FormEvaluator::eval(const Form& f, std::uint32_t node, const std::vector<int>& in,
                         std::vector<int>& out) {
  const std::size_t n = actual_->size();
  const FormNode& nd = f.nodes[node];
  out.assign(n + 1, kNeg);
  switch (nd.kind) {
    case FormNode::Kind::atom: {
      const std::vector<char>& row = match_row(nd.pattern);
      out[0] = in[0];
      for (std::size_t j = 1; j <= n; ++j)
        out[j] = std::max({out[j - 1], in[j], row[j - 1] ? in[j - 1] + 1 : kNeg});
      return;
    }
    case FormNode::Kind::seq:
      eval_in_order(f, nd.children, in, out);
      return;
    case FormNode::Kind::group: break;
  }
  const std::size_t k = nd.children.size();
  bool plain = true;  // every member a single named tool: any order, a window count suffices
  for (auto c : nd.children) {
    const FormNode& cn = f.nodes[c];
    if (cn.kind != FormNode::Kind::atom || cn.pattern >= m_->patterns.size() ||
        m_->patterns[cn.pattern].kind != ir::Pattern::Kind::tool)
      plain = false;
  }
  if (plain) {
    // need[name] = members with that name; W(i, j) = Σ min(need, calls of it in [i, j)).
    std::vector<std::string_view> names;
    std::vector<int> need;
    for (auto c : nd.children) {
      std::string_view nm = m_->patterns[f.nodes[c].pattern].name;
      auto it = std::find(names.begin(), names.end(), nm);
      if (it == names.end()) {
        names.push_back(nm);
        need.push_back(1);
      } else {
        ++need[it - names.begin()];
      }
    }
    std::vector<int> name_of(n, -1);
    for (std::size_t j = 0; j < n; ++j) {
      auto it = std::find(names.begin(), names.end(), (*actual_)[j]);
      if (it != names.end()) name_of[j] = static_cast<int>(it - names.begin());
    }
    std::vector<int> have(names.size());
    for (std::size_t i = 0; i <= n; ++i) {
      if (in[i] <= kNeg) continue;
      std::fill(have.begin(), have.end(), 0);
      int w = 0;
      out[i] = std::max(out[i], in[i]);
      for (std::size_t j = i + 1; j <= n; ++j) {
        int nm = name_of[j - 1];
        if (nm >= 0 && have[nm] < need[nm]) {
          ++have[nm];
          ++w;
        }
        out[j] = std::max(out[j], in[i] + w);
      }
    }
    for (std::size_t j = 1; j <= n; ++j) out[j] = std::max(out[j], out[j - 1]);
    return;
  }
  if (k > kMaxGroupSubsetMembers || (std::size_t(1) << k) * (n + 1) > (std::size_t(1) << 24)) {
    // Too many members for the subset DP: written order (one allowed order, a lower bound).
    exact_ = false;
    eval_in_order(f, nd.children, in, out);
    return;
  }
  // G[S]: best count with the members in S placed, as whole units, in some order.
  const std::size_t full = (std::size_t(1) << k) - 1;
  std::vector<std::vector<int>> g(full + 1);
  g[0] = in;
  std::vector<int> tmp;
  for (std::size_t s = 0; s < full; ++s) {
    if (g[s].empty()) continue;
    for (std::size_t c = 0; c < k; ++c) {
      if (s & (std::size_t(1) << c)) continue;
      eval(f, nd.children[c], g[s], tmp);
      auto& dst = g[s | (std::size_t(1) << c)];
      if (dst.empty()) {
        dst = tmp;
      } else {
        for (std::size_t j = 0; j <= n; ++j) dst[j] = std::max(dst[j], tmp[j]);
      }
    }
    if (s != 0) std::vector<int>().swap(g[s]);  // done with it: keep memory bounded
  }
  out = std::move(g[full]);
}

std::uint32_t FormEvaluator::evaluate(const ir::Module& m, const Form& f,
                                      const std::vector<std::string_view>& actual, bool* exact) {
  m_ = &m;
  actual_ = &actual;
  rows_.clear();
  have_row_.clear();
  exact_ = true;
  if (f.root < 0) {
    if (exact) *exact = true;
    return 0;
  }
  std::vector<int> in(actual.size() + 1, 0), out;
  eval(f, static_cast<std::uint32_t>(f.root), in, out);
  if (exact) *exact = exact_;
  return static_cast<std::uint32_t>(std::max(0, out.back()));
}

}  // namespace trajcheck::metrics
