// Scoring without a size limit: the bit-parallel LCS against the plain DP (values and the
// traced-back match), the on-demand matcher against the table one, and the pairing by name
// against a maximum matching over the full table of (expected, actual) pairs, on random
// records; then records far above the size the full table allowed.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "metrics/matching.hpp"
#include "metrics/ordering.hpp"
#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"

using namespace trajcheck;

namespace {

// The plain O(|a|·|b|) DP and its traceback (equal elements matched, else up when that keeps
// the length, else left).
std::uint32_t plain_lcs(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                        std::vector<char>& marks) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::uint32_t> t((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return t[i * (m + 1) + j]; };
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j)
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
  marks.assign(n, 0);
  for (std::size_t i = n, j = m; i > 0 && j > 0;) {
    if (a[i - 1] == b[j - 1]) {
      marks[i - 1] = 1;
      --i;
      --j;
    } else if (at(i - 1, j) >= at(i, j - 1)) {
      --i;
    } else {
      --j;
    }
  }
  return at(n, m);
}

std::size_t pick_length(std::mt19937& rng) {
  // Lengths at and around multiples of 64 (word boundaries), and a few others.
  static const std::size_t around[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257};
  if (rng() % 4 == 0) return rng() % 300;
  return around[rng() % std::size(around)];
}

}  // namespace

TEST_CASE("bit-parallel LCS equals the plain DP, lengths around multiples of 64") {
  std::mt19937 rng(4242);
  for (int iter = 0; iter < 1500; ++iter) {
    // Alphabets from one symbol (every mask dense) to many (every mask sparse); ids far apart.
    static const std::uint32_t alphabets[] = {1, 2, 3, 5, 16, 70, 1000};
    const std::uint32_t k = alphabets[rng() % std::size(alphabets)];
    const std::uint32_t base = rng() % 2 ? 0 : 0xFFFFF000u;
    std::vector<std::uint32_t> a(pick_length(rng)), b(pick_length(rng));
    for (auto& x : a) x = base + rng() % k;
    for (auto& x : b) x = base + rng() % k;
    // Some pairs mostly agree (long common runs, trimmed prefix and suffix).
    if (rng() % 3 == 0 && !a.empty()) {
      b = a;
      for (int edits = static_cast<int>(rng() % 6); edits > 0 && !b.empty(); --edits) {
        const std::size_t at = rng() % b.size();
        if (rng() % 2) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
        else b[at] = base + rng() % (k + 1);
      }
    }
    std::vector<char> ref_marks, marks;
    const std::uint32_t ref = plain_lcs(a, b, ref_marks);
    INFO("iteration " << iter << ": |a| " << a.size() << ", |b| " << b.size() << ", alphabet " << k);
    CHECK(metrics::lcs(a, b) == ref);
    CHECK(metrics::lcs(a, b, &marks) == ref);
    CHECK(marks == ref_marks);
    CHECK(metrics::lcs(b, a) == ref);
  }
}

TEST_CASE("the matcher asked on demand equals the table matcher; long augmenting paths") {
  std::mt19937 rng(5150);
  metrics::BipartiteMatcher table, demand;
  for (int iter = 0; iter < 2000; ++iter) {
    const int left = static_cast<int>(rng() % 30), right = static_cast<int>(rng() % 30);
    const unsigned density = 1 + rng() % 6;
    std::vector<char> adj(static_cast<std::size_t>(left) * right);
    for (char& c : adj) c = rng() % density == 0;
    const int t = table.solve(left, right, adj);
    const int d = demand.solve(left, right, [&](int l, int r) { return adj[std::size_t(l) * right + r] != 0; });
    CHECK(t == d);
    // The partners form a matching of that size over allowed pairs.
    int size = 0;
    std::vector<char> used(right, 0);
    for (int l = 0; l < left; ++l) {
      const int r = demand.left_partner()[l];
      if (r < 0) continue;
      CHECK(adj[std::size_t(l) * right + r]);
      CHECK(!used[r]);
      used[r] = 1;
      ++size;
    }
    CHECK(size == d);
  }
  // Left l < n - 1 may pair with right l and l + 1 and takes l; the last left vertex may
  // pair with right 0 only, so its augmenting path moves every pair along: as long as the
  // list, which a recursive search would follow as deep.
  const int n = 20000;
  const int got = demand.solve(n, n, [&](int l, int r) { return l < n - 1 ? r == l || r == l + 1 : r == 0; });
  CHECK(got == n);
}

namespace {

struct RCall {
  int name;     // 0..2
  int args;     // index into kArgs; -1: no arguments
  std::uint32_t turn;
};

const char* const kNames[] = {"f", "g", "h"};
const char* const kArgs[] = {"{}", "{\"a\":1}", "{\"a\":1,\"b\":2}", "{\"a\":1,\"c\":3}", "{\"b\":2}", "[1]"};

bool members_include(int big, int small) {
  // kArgs as member sets; "[1]" is not an object (then only equal texts agree).
  static const std::vector<std::vector<std::string>> sets = {{}, {"a"}, {"a", "b"}, {"a", "c"}, {"b"}};
  const auto& b = sets[big];
  for (const std::string& m : sets[small])
    if (std::find(b.begin(), b.end(), m) == b.end()) return false;
  return true;
}

bool ref_compat(const RCall& e, const RCall& a, ArgumentMode mode) {
  if (e.name != a.name) return false;
  if (e.args < 0 || mode == ArgumentMode::ignore) return true;
  const int ea = e.args, aa = a.args < 0 ? 0 : a.args;  // absent arguments are {}
  if (mode == ArgumentMode::exact || ea == 5 || aa == 5) return ea == aa;
  return mode == ArgumentMode::superset ? members_include(aa, ea) : members_include(ea, aa);
}

void fill(Trajectory& t, const std::vector<RCall>& calls) {
  t.clear();
  for (const RCall& c : calls) {
    Step& s = t.add_step(StepType::tool_call);
    s.tool_name = t.store(kNames[c.name]);
    if (c.args >= 0) t.steps().back().arguments = t.store(kArgs[c.args]);
    t.steps().back().turn = c.turn;
  }
}

}  // namespace

TEST_CASE("pairing by name equals a maximum matching over the full table of pairs") {
  std::mt19937 rng(8086);
  ToolTable tools;
  Trajectory te(&tools), ta(&tools);
  metrics::BipartiteMatcher matcher;
  for (int iter = 0; iter < 1500; ++iter) {
    ScoreOptions o;
    o.tool_args = static_cast<ArgumentMode>(rng() % 4);
    if (rng() % 2) o.tool_args_for.emplace_back(kNames[rng() % 3], static_cast<ArgumentMode>(rng() % 4));
    auto mode_of = [&](int name) {
      for (const auto& [n, m] : o.tool_args_for)
        if (n == kNames[name]) return m;
      return o.tool_args;
    };
    const std::size_t ne = rng() % 40, na = rng() % 40;
    std::vector<RCall> e(ne), a(na);
    std::uint32_t turn = 0;
    for (auto& c : e) c = {int(rng() % 3), int(rng() % 7) - 1, turn++};
    turn = 0;
    for (auto& c : a) {
      if (rng() % 3) ++turn;  // a third of the calls share their predecessor's turn
      c = {int(rng() % 3), int(rng() % 7) - 1, turn};
    }
    // Half the records are the expected list reordered within turns, so strict is reached.
    if (rng() % 2) {
      a.clear();
      turn = 0;
      for (const RCall& c : e) a.push_back({c.name, c.args, rng() % 2 ? ++turn : turn});
      for (std::size_t s = 0; s < a.size();) {
        std::size_t x = s + 1;
        while (x < a.size() && a[x].turn == a[s].turn) ++x;
        std::shuffle(a.begin() + std::ptrdiff_t(s), a.begin() + std::ptrdiff_t(x), rng);
        s = x;
      }
    }
    // The reference: the full table and one maximum matching over it.
    std::vector<char> adj(ne * a.size());
    for (std::size_t i = 0; i < ne; ++i)
      for (std::size_t j = 0; j < a.size(); ++j) adj[i * a.size() + j] = ref_compat(e[i], a[j], mode_of(e[i].name));
    const int best = matcher.solve(int(ne), int(a.size()), adj);
    bool strict = best == int(ne) && ne == a.size();
    for (std::size_t s = 0; strict && s < a.size();) {
      std::size_t x = s + 1;
      while (x < a.size() && a[x].turn == a[s].turn) ++x;
      const std::size_t len = x - s;
      std::vector<char> block(len * len);
      for (std::size_t i = 0; i < len; ++i)
        for (std::size_t j = 0; j < len; ++j) block[i * len + j] = adj[(s + i) * a.size() + s + j];
      strict = matcher.solve(int(len), int(len), block) == int(len);
      s = x;
    }
    fill(te, e);
    fill(ta, a);
    const ScoreResult r = Scorer(o).score(ta, te);
    INFO("iteration " << iter);
    CHECK(r.match.superset == (best == int(ne)));
    CHECK(r.match.subset == (best == int(a.size())));
    CHECK(r.match.unordered == (best == int(ne) && ne == a.size()));
    CHECK(r.match.strict == strict);
  }
}

TEST_CASE("records far above a million pairs are scored") {
  ToolTable tools;
  Trajectory te(&tools), ta(&tools);
  // 20 000 expected calls over 3 tools; the actual run is the same with two neighbours
  // exchanged, one call dropped and one tool added.
  const std::size_t n = 20000;
  std::vector<RCall> e, a;
  for (std::size_t i = 0; i < n; ++i) e.push_back({int(i % 3), int(i % 5), std::uint32_t(i)});
  a = e;
  std::swap(a[100], a[101]);
  a.erase(a.begin() + 5000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i].turn = std::uint32_t(i);
  fill(te, e);
  fill(ta, a);
  Step& extra = ta.add_step(StepType::tool_call);
  extra.tool_name = ta.store("z");
  ta.steps().back().turn = 1u << 30;
  const ScoreResult r = Scorer().score(ta, te);
  CHECK(r.error.empty());
  REQUIRE(r.ordering.has_value());
  // The plain DP's value, one row at a time.
  std::vector<std::uint32_t> prev(a.size() + 1, 0), cur(a.size() + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 1; j <= a.size(); ++j)
      cur[j] = e[i].name == a[j - 1].name ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  CHECK(prev[a.size()] < n - 1);
  CHECK(*r.ordering == double(prev[a.size()]) / double(n));
  CHECK(r.selection == doctest::Approx(3.0 / 4.0));
  CHECK(!r.match.superset);
  CHECK(!r.match.subset);
  REQUIRE(r.arguments.has_value());
  CHECK(*r.arguments == 1.0);
  CHECK(r.duplicates == n - 1 - 15);  // 15 distinct (name, arguments) calls, the rest repeats
}
