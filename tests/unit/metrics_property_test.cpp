// Property tests against slow, obviously-correct references on small random inputs: optimal
// pairing vs every injection, PATH ordering vs every linearization, LCS vs every subsequence.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "metrics/ordering.hpp"
#include "metrics/scorer_impl.hpp"
#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"

using namespace trajcheck;

namespace {

// ---- pairing ---------------------------------------------------------------------------

// Argument objects as sets of "key=value" members, printed as JSON.
const std::vector<std::set<std::string>> kArgSets = {
    {}, {"a=1"}, {"a=1", "b=2"}, {"a=1", "c=3"}, {"b=2"}, {"a=2"}};

std::string to_json(const std::set<std::string>& s) {
  std::string j = "{";
  bool first = true;
  for (const std::string& m : s) {
    if (!first) j += ',';
    first = false;
    j += "\"" + m.substr(0, 1) + "\":" + m.substr(2);
  }
  return j + "}";
}

struct RefCall {
  std::string name;
  int args;
};

bool ref_compat(const RefCall& e, const RefCall& a, ArgumentMode mode) {
  if (e.name != a.name) return false;
  const auto& es = kArgSets[e.args];
  const auto& as = kArgSets[a.args];
  switch (mode) {
    case ArgumentMode::ignore: return true;
    case ArgumentMode::exact: return es == as;
    case ArgumentMode::superset: return std::includes(as.begin(), as.end(), es.begin(), es.end());
    case ArgumentMode::subset: return std::includes(es.begin(), es.end(), as.begin(), as.end());
  }
  return false;
}

// Largest injection from expected to actual over compatible pairs, by trying every one.
int ref_max_pairs(const std::vector<RefCall>& e, const std::vector<RefCall>& a, ArgumentMode mode,
                  std::size_t i, std::vector<char>& used) {
  if (i == e.size()) return 0;
  int best = ref_max_pairs(e, a, mode, i + 1, used);
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (used[j] || !ref_compat(e[i], a[j], mode)) continue;
    used[j] = 1;
    best = std::max(best, 1 + ref_max_pairs(e, a, mode, i + 1, used));
    used[j] = 0;
  }
  return best;
}

void fill(Trajectory& t, const std::vector<RefCall>& calls, bool one_turn) {
  t.clear();
  std::uint32_t turn = 0;
  for (const RefCall& c : calls) {
    Step& s = t.add_step(StepType::tool_call);
    s.tool_name = t.store(c.name);
    std::string j = to_json(kArgSets[c.args]);
    t.steps().back().arguments = t.store(j);
    t.steps().back().turn = one_turn ? 7 : turn++;
  }
}

// ---- PATH linearizations ------------------------------------------------------------

using Seq = std::vector<ir::Id>;

std::vector<Seq> linearizations(const ir::Module& m, ir::Id id) {
  const ir::PathExpr& p = m.paths[id];
  std::vector<Seq> out;
  switch (p.kind) {
    case ir::PathExpr::Kind::atom: out.push_back({p.pattern}); break;
    case ir::PathExpr::Kind::alt:
      for (ir::Id c : p.children)
        for (Seq& s : linearizations(m, c)) out.push_back(std::move(s));
      break;
    case ir::PathExpr::Kind::optional:
    case ir::PathExpr::Kind::star:
      out.push_back({});
      [[fallthrough]];
    case ir::PathExpr::Kind::plus:
      for (Seq& s : linearizations(m, p.children[0])) out.push_back(std::move(s));
      break;
    case ir::PathExpr::Kind::seq: {
      out.push_back({});
      for (ir::Id c : p.children) {
        std::vector<Seq> next;
        for (const Seq& head : out)
          for (const Seq& tail : linearizations(m, c)) {
            Seq s = head;
            s.insert(s.end(), tail.begin(), tail.end());
            next.push_back(std::move(s));
          }
        out = std::move(next);
      }
      break;
    }
    case ir::PathExpr::Kind::all_of: {
      // Every order of the members, each member one of its own linearizations, kept whole.
      std::vector<std::size_t> order(p.children.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      do {
        std::vector<Seq> acc{{}};
        for (std::size_t i : order) {
          std::vector<Seq> next;
          for (const Seq& head : acc)
            for (const Seq& tail : linearizations(m, p.children[i])) {
              Seq s = head;
              s.insert(s.end(), tail.begin(), tail.end());
              next.push_back(std::move(s));
            }
          acc = std::move(next);
        }
        for (Seq& s : acc) out.push_back(std::move(s));
      } while (std::next_permutation(order.begin(), order.end()));
      break;
    }
  }
  return out;
}

// Longest common subsequence where an expected pattern matches an actual name.
std::size_t ref_lcs(const ir::Module& m, const Seq& e, const std::vector<std::string>& a) {
  std::vector<std::vector<std::size_t>> t(e.size() + 1, std::vector<std::size_t>(a.size() + 1, 0));
  for (std::size_t i = 1; i <= e.size(); ++i)
    for (std::size_t j = 1; j <= a.size(); ++j)
      t[i][j] = metrics::pattern_matches_name(m, e[i - 1], a[j - 1])
                    ? t[i - 1][j - 1] + 1
                    : std::max(t[i - 1][j], t[i][j - 1]);
  return t[e.size()][a.size()];
}

struct PathGen {
  std::mt19937& rng;
  ir::Module& m;
  int atoms = 0;
  ir::Id atom() {
    ++atoms;
    ir::Pattern p;
    static const char* names[] = {"a", "b", "c", "d", "b*"};
    std::string n = names[rng() % 5];
    p.kind = n == "b*" ? ir::Pattern::Kind::glob : ir::Pattern::Kind::tool;
    p.name = n;
    m.patterns.push_back(p);
    ir::PathExpr e;
    e.kind = ir::PathExpr::Kind::atom;
    e.pattern = static_cast<ir::Id>(m.patterns.size() - 1);
    m.paths.push_back(e);
    return static_cast<ir::Id>(m.paths.size() - 1);
  }
  ir::Id node(int depth) {
    if (depth == 0 || atoms >= 6 || rng() % 3 == 0) return atom();
    ir::PathExpr e;
    int k = static_cast<int>(rng() % 6);
    static const ir::PathExpr::Kind kinds[] = {ir::PathExpr::Kind::seq, ir::PathExpr::Kind::seq,
                                               ir::PathExpr::Kind::alt, ir::PathExpr::Kind::all_of,
                                               ir::PathExpr::Kind::optional, ir::PathExpr::Kind::plus};
    e.kind = kinds[k];
    int n = (e.kind == ir::PathExpr::Kind::optional || e.kind == ir::PathExpr::Kind::plus)
                ? 1
                : 2 + static_cast<int>(rng() % 2);
    for (int i = 0; i < n; ++i) e.children.push_back(node(depth - 1));
    m.paths.push_back(e);
    return static_cast<ir::Id>(m.paths.size() - 1);
  }
};

}  // namespace

TEST_CASE("property: match verdicts equal the best of every injection, in any list order") {
  std::mt19937 rng(12345);
  ToolTable tools;
  Trajectory te(&tools), ta(&tools);
  const char* names[] = {"f", "g"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<RefCall> e(rng() % 5), a(rng() % 5);
    for (auto& c : e) c = {names[rng() % 2], static_cast<int>(rng() % kArgSets.size())};
    for (auto& c : a) c = {names[rng() % 2], static_cast<int>(rng() % kArgSets.size())};
    ArgumentMode mode = static_cast<ArgumentMode>(rng() % 4);
    std::vector<char> used(a.size(), 0);
    int best = ref_max_pairs(e, a, mode, 0, used);
    bool strict_ref = e.size() == a.size();
    for (std::size_t i = 0; strict_ref && i < e.size(); ++i) strict_ref = ref_compat(e[i], a[i], mode);

    ScoreOptions o;
    o.tool_args = mode;
    Scorer scorer(o);
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      fill(te, e, false);
      fill(ta, a, false);
      ScoreResult r = scorer.score(ta, te);
      INFO("iteration " << iter << " shuffle " << shuffle);
      CHECK(r.match.superset == (best == static_cast<int>(e.size())));
      CHECK(r.match.subset == (best == static_cast<int>(a.size())));
      CHECK(r.match.unordered == (best == static_cast<int>(e.size()) && e.size() == a.size()));
      if (shuffle == 0) CHECK(r.match.strict == strict_ref);
      fill(ta, a, true);  // one turn: strict is the unordered verdict
      CHECK(scorer.score(ta, te).match.strict == r.match.unordered);
      std::shuffle(e.begin(), e.end(), rng);
      std::shuffle(a.begin(), a.end(), rng);
    }
  }
}

TEST_CASE("property: LCS equals the longest subsequence found by brute force") {
  std::mt19937 rng(777);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<std::uint32_t> e(rng() % 8), a(rng() % 9);
    for (auto& x : e) x = rng() % 3;
    for (auto& x : a) x = rng() % 3;
    std::uint32_t best = 0;
    for (std::uint32_t mask = 0; mask < (1u << e.size()); ++mask) {
      std::size_t j = 0;
      bool ok = true;
      for (std::size_t i = 0; i < e.size() && ok; ++i) {
        if (!(mask & (1u << i))) continue;
        while (j < a.size() && a[j] != e[i]) ++j;
        if (j == a.size()) ok = false;
        else ++j;
      }
      if (ok) best = std::max<std::uint32_t>(best, __builtin_popcount(mask));
    }
    std::vector<char> matched;
    CHECK(metrics::lcs(e, a) == best);
    CHECK(metrics::lcs(e, a, &matched) == best);
    // The marked elements form a common subsequence of that length.
    std::vector<std::uint32_t> sub;
    for (std::size_t i = 0; i < e.size(); ++i)
      if (matched[i]) sub.push_back(e[i]);
    CHECK(sub.size() == best);
    CHECK(metrics::lcs(sub, a) == best);
  }
}

TEST_CASE("property: turn-block LCS equals the best LCS over orders within each block") {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<std::uint32_t> e(rng() % 7), a(rng() % 8);
    for (auto& x : e) x = rng() % 3;
    for (auto& x : a) x = rng() % 3;
    std::vector<std::uint32_t> ends;
    for (std::size_t j = 1; j <= a.size(); ++j)
      if (j == a.size() || rng() % 2) ends.push_back(static_cast<std::uint32_t>(j));
    // Brute force: every permutation inside every block.
    std::uint32_t best = 0;
    std::vector<std::uint32_t> cur = a;
    std::function<void(std::size_t)> go = [&](std::size_t b) {
      if (b == ends.size()) {
        best = std::max(best, metrics::lcs(e, cur));
        return;
      }
      std::size_t s = b ? ends[b - 1] : 0;
      std::sort(cur.begin() + s, cur.begin() + ends[b]);
      do go(b + 1);
      while (std::next_permutation(cur.begin() + s, cur.begin() + ends[b]));
    };
    go(0);
    std::vector<char> marks;
    INFO("iteration " << iter);
    CHECK(metrics::block_lcs(e, a, ends, 3) == best);
    CHECK(metrics::block_lcs(e, a, ends, 3, &marks) == best);
    std::uint32_t marked = 0;
    for (char c : marks) marked += c ? 1 : 0;
    CHECK(marked == best);
  }
}

TEST_CASE("property: PATH ordering equals the best linearization") {
  std::mt19937 rng(4242);
  const char* names[] = {"a", "b", "c", "d", "bx"};
  for (int iter = 0; iter < 1500; ++iter) {
    ir::Module m;
    PathGen gen{rng, m};
    ir::Id root = gen.node(3);
    std::vector<std::string> actual(rng() % 8);
    for (auto& s : actual) s = names[rng() % 5];

    double best = -1;
    for (const Seq& l : linearizations(m, root)) {
      double ratio = l.empty() ? 1.0 : double(ref_lcs(m, l, actual)) / double(l.size());
      best = std::max(best, ratio);
    }
    metrics::ScorerCore impl;
    std::vector<metrics::Call> calls;
    for (const std::string& s : actual) {
      metrics::Call c;
      c.name = s;
      calls.push_back(c);
    }
    impl.actual_args.assign(calls.size(), impl.canon.add({}));  // no arguments
    ScoreResult r = metrics::score_path_tree(impl, calls, m, root);
    INFO("iteration " << iter);
    REQUIRE(r.ordering.has_value());
    CHECK(*r.ordering == doctest::Approx(best));
  }
}

TEST_CASE("PATH: alternatives, groups and repetition on the brief's examples") {
  ir::Module m;
  auto atom = [&](const char* n) {
    ir::Pattern p;
    p.kind = ir::Pattern::Kind::tool;
    p.name = n;
    m.patterns.push_back(p);
    ir::PathExpr e;
    e.pattern = static_cast<ir::Id>(m.patterns.size() - 1);
    m.paths.push_back(e);
    return static_cast<ir::Id>(m.paths.size() - 1);
  };
  auto node = [&](ir::PathExpr::Kind k, std::vector<ir::Id> kids) {
    ir::PathExpr e;
    e.kind = k;
    e.children = std::move(kids);
    m.paths.push_back(e);
    return static_cast<ir::Id>(m.paths.size() - 1);
  };
  using K = ir::PathExpr::Kind;
  // (customer_get -> order_list | order_search_by_email) -> order_get
  ir::Id p1 = node(K::seq, {node(K::alt, {node(K::seq, {atom("customer_get"), atom("order_list")}),
                                          atom("order_search_by_email")}),
                            atom("order_get")});
  auto run = [&](ir::Id root, std::vector<std::string> names) {
    metrics::ScorerCore impl;
    std::vector<metrics::Call> calls;
    for (const std::string& s : names) {
      metrics::Call c;
      c.name = s;
      calls.push_back(c);
    }
    impl.actual_args.assign(calls.size(), impl.canon.add({}));  // no arguments
    // names must outlive the call: scoring copies what it keeps
    return metrics::score_path_tree(impl, calls, m, root);
  };
  std::vector<std::string> a1 = {"order_search_by_email", "order_get"};
  ScoreResult r = run(p1, a1);
  CHECK(*r.ordering == 1.0);
  CHECK(r.selection == 1.0);
  CHECK(r.expected_steps == 2);
  CHECK(r.match.strict);
  r = run(p1, {"order_get", "customer_get", "order_list"});
  CHECK(*r.ordering == doctest::Approx(2.0 / 3.0));
  CHECK(r.explanation.find("Ordering 67% (out of order: order_get)") != std::string::npos);
  CHECK(r.expected_steps == 3);
  CHECK_FALSE(r.match.strict);
  CHECK(r.match.unordered);

  // {profile_get, settings_get} -> render
  ir::Id p2 = node(K::seq, {node(K::all_of, {atom("profile_get"), atom("settings_get")}), atom("render")});
  CHECK(*run(p2, {"settings_get", "profile_get", "render"}).ordering == 1.0);
  CHECK(run(p2, {"settings_get", "profile_get", "render"}).match.strict);
  CHECK(*run(p2, {"settings_get", "render", "profile_get"}).ordering == doctest::Approx(2.0 / 3.0));
  r = run(p2, {"settings_get", "render"});
  CHECK(r.missing == std::vector<std::string>{"profile_get"});
  CHECK(*r.ordering == doctest::Approx(2.0 / 3.0));

  // a -> b* -> c+ : star as zero or one, plus as one
  ir::Id p3 = node(K::seq, {atom("a"), node(K::star, {atom("b")}), node(K::plus, {atom("c")})});
  CHECK(*run(p3, {"a", "c"}).ordering == 1.0);
  CHECK(run(p3, {"a", "c"}).expected_steps == 2);
  CHECK(*run(p3, {"a", "b", "c"}).ordering == 1.0);
  CHECK(run(p3, {"a", "b", "c"}).expected_steps == 3);
  CHECK(*run(p3, {"a", "b", "b", "c", "c"}).ordering == 1.0);

  // A large group of plain names is still exact (window counts), in any order.
  std::vector<ir::Id> many;
  std::vector<std::string> names;
  for (int i = 0; i < 24; ++i) {
    names.push_back("t" + std::to_string(i));
  }
  for (const std::string& n : names) many.push_back(atom(n.c_str()));
  ir::Id big = node(K::all_of, many);
  std::vector<std::string> rev(names.rbegin(), names.rend());
  CHECK(*run(big, rev).ordering == 1.0);
}

namespace {

// The turn-block LCS DP as first written (a full scan of every run, no trimming): the
// reference for the value and for the exact elements one best match marks, since the
// explanation names the unmarked ones and must not change with the faster versions.
std::uint32_t reference_block_lcs(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                                  const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                                  std::vector<char>& matched_e) {
  const std::size_t m = e.size(), nb = block_end.size();
  std::vector<std::uint32_t> f((nb + 1) * (m + 1)), from(f.size()), till(f.size());
  auto F = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return f[b * (m + 1) + i]; };
  auto From = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return from[b * (m + 1) + i]; };
  auto Till = [&](std::size_t b, std::size_t i) -> std::uint32_t& { return till[b * (m + 1) + i]; };
  std::vector<std::uint32_t> have(name_count), used(name_count), in_e(name_count);
  for (std::uint32_t n : e) ++in_e[n];
  std::size_t start = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    std::uint32_t cap = 0;
    for (std::size_t j = start; j < block_end[b]; ++j)
      if (have[a[j]]++ < in_e[a[j]]) ++cap;
    for (std::size_t j = 0; j <= m; ++j) {
      F(b + 1, j) = F(b, j);
      From(b + 1, j) = Till(b + 1, j) = static_cast<std::uint32_t>(j);
    }
    for (std::size_t i = 0; i < m && cap > 0; ++i) {
      if (F(b, i) + cap <= F(b, i + 1)) continue;
      std::uint32_t w = 0;
      for (std::size_t j = i + 1; j <= m; ++j) {
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
      }
      for (std::size_t k = i; k < m; ++k) used[e[k]] = 0;
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
  matched_e.assign(m, 0);
  std::size_t j = m;
  for (std::size_t b = nb; b > 0 && j > 0; --b) {
    std::size_t i = From(b, j), end = Till(b, j);
    std::size_t bstart = b >= 2 ? block_end[b - 2] : 0;
    for (std::size_t k = bstart; k < block_end[b - 1]; ++k) ++have[a[k]];
    for (std::size_t k = i; k < end; ++k)
      if (have[e[k]] > 0) {
        --have[e[k]];
        matched_e[k] = 1;
      }
    for (std::size_t k = bstart; k < block_end[b - 1]; ++k) have[a[k]] = 0;
    j = i;
  }
  return F(nb, m);
}

}  // namespace

TEST_CASE("property: fast LCS paths (trimmed ends, early-stopped runs) equal the full DP, marks included") {
  std::mt19937 rng(2026);
  int trimmed_cases = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    // Mostly near-equal lists (one is the other with a few swaps, drops and inserts), as in
    // scored records; sometimes unrelated ones.
    const std::uint32_t names = 2 + rng() % 6;
    std::vector<std::uint32_t> e(rng() % 30);
    for (auto& x : e) x = rng() % names;
    std::vector<std::uint32_t> a = e;
    if (rng() % 5 == 0) {
      a.resize(rng() % 30);
      for (auto& x : a) x = rng() % names;
    } else {
      for (int k = static_cast<int>(rng() % 4); k > 0 && !a.empty(); --k) {
        std::size_t at = rng() % a.size();
        switch (rng() % 3) {
          case 0: if (at + 1 < a.size()) std::swap(a[at], a[at + 1]); break;
          case 1: a.erase(a.begin() + static_cast<std::ptrdiff_t>(at)); break;
          default: a.insert(a.begin() + static_cast<std::ptrdiff_t>(at), rng() % names);
        }
      }
    }
    std::vector<std::uint32_t> ends;
    for (std::size_t j = 1; j <= a.size(); ++j)
      if (j == a.size() || rng() % 3) ends.push_back(static_cast<std::uint32_t>(j));
    std::vector<std::uint32_t> singles;
    for (std::size_t j = 1; j <= a.size(); ++j) singles.push_back(static_cast<std::uint32_t>(j));
    std::vector<char> ref_marks, marks, plain_marks;
    const std::uint32_t ref = reference_block_lcs(e, a, ends, names, ref_marks);
    INFO("iteration " << iter);
    CHECK(metrics::block_lcs(e, a, ends, names) == ref);
    CHECK(metrics::block_lcs(e, a, ends, names, &marks) == ref);
    CHECK(marks == ref_marks);
    // One call per block: the plain LCS.
    const std::uint32_t ref1 = reference_block_lcs(e, a, singles, names, ref_marks);
    CHECK(metrics::lcs(e, a) == ref1);
    CHECK(metrics::lcs(e, a, &plain_marks) == ref1);
    CHECK(metrics::block_lcs(e, a, singles, names) == ref1);
    CHECK(metrics::block_lcs(e, a, singles, names, &marks) == ref1);
    CHECK(marks == ref_marks);
    if (!e.empty() && !a.empty() && e.front() == a.front()) ++trimmed_cases;
  }
  CHECK(trimmed_cases > 5000);  // the trimming is exercised
}

TEST_CASE("property: swap bounds never fall below an exchange that beats the list") {
  std::mt19937 rng(31337);
  int beaten = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    const std::uint32_t names = 2 + rng() % 5;
    std::vector<std::uint32_t> e(rng() % 14), a(rng() % 14);
    for (auto& x : e) x = rng() % names;
    for (auto& x : a) x = rng() % names;
    std::vector<std::uint32_t> ends;
    for (std::size_t j = 1; j <= a.size(); ++j)
      if (j == a.size() || rng() % 3) ends.push_back(static_cast<std::uint32_t>(j));
    std::vector<std::uint32_t> bound;
    metrics::swap_bounds(e, a, ends, names, bound);
    REQUIRE(bound.size() == e.size());
    const std::uint32_t l = metrics::block_lcs(e, a, ends, names);
    for (std::size_t k = 0; k + 1 < e.size(); ++k) {
      std::vector<std::uint32_t> sw = e;
      std::swap(sw[k], sw[k + 1]);
      const std::uint32_t ls = metrics::block_lcs(sw, a, ends, names);
      INFO("iteration " << iter << " k " << k);
      if (ls > l) {
        ++beaten;
        CHECK(bound[k] >= ls);
      }
    }
  }
  CHECK(beaten > 100);
}
