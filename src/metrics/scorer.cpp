// Selection, ordering, match modes, argument agreement and the explanation of one record.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "metrics/scorer_impl.hpp"

namespace trajcheck {

using metrics::Call;

std::string_view to_string(SelectionMetric m) {
  switch (m) {
    case SelectionMetric::jaccard: return "jaccard";
    case SelectionMetric::recall: return "recall";
    case SelectionMetric::precision: return "precision";
    case SelectionMetric::f1: return "f1";
  }
  return "jaccard";
}

bool parse_selection_metric(std::string_view name, SelectionMetric* out) {
  for (SelectionMetric m : {SelectionMetric::jaccard, SelectionMetric::recall,
                            SelectionMetric::precision, SelectionMetric::f1})
    if (to_string(m) == name) {
      *out = m;
      return true;
    }
  return false;
}

std::string_view to_string(ArgumentMode m) {
  switch (m) {
    case ArgumentMode::exact: return "exact";
    case ArgumentMode::ignore: return "ignore";
    case ArgumentMode::subset: return "subset";
    case ArgumentMode::superset: return "superset";
  }
  return "exact";
}

bool parse_argument_mode(std::string_view name, ArgumentMode* out) {
  for (ArgumentMode m : {ArgumentMode::exact, ArgumentMode::ignore, ArgumentMode::subset,
                         ArgumentMode::superset})
    if (to_string(m) == name) {
      *out = m;
      return true;
    }
  return false;
}

namespace metrics {

void collect_calls(const Trajectory& t, ArgCanon& canon, std::vector<Call>& out, std::vector<CanonArgs>& args) {
  out.clear();
  args.clear();
  for (const Step& s : t.steps()) {
    if (s.type != StepType::tool_call) continue;
    Call c;
    c.name = t.text(s.tool_name);
    c.has_args = !s.arguments.empty();
    c.turn = s.turn;
    c.failed = s.status == StepStatus::error;
    out.push_back(c);
    args.push_back(canon.add(t.text(s.arguments)));
  }
}

namespace {

// 0/0 is 1 when both sides are empty and 0 otherwise (see docs/metrics.md).
double ratio(double num, double den, bool both_empty) {
  if (den == 0) return both_empty ? 1.0 : 0.0;
  return num / den;
}

// Trim and ASCII case-fold, as trace readers normalize tool names by default.
std::string fold_name(std::string_view n) {
  while (!n.empty() && (n.front() == ' ' || n.front() == '\t')) n.remove_prefix(1);
  while (!n.empty() && (n.back() == ' ' || n.back() == '\t')) n.remove_suffix(1);
  std::string s(n);
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

int percent(double x) { return static_cast<int>(std::lround(x * 100)); }

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += v[i];
  }
  return s;
}

// Whether actual arguments relate to expected ones as `mode` requires.
bool args_agree(const ArgCanon& c, const CanonArgs& e, const CanonArgs& a, ArgumentMode mode) {
  switch (mode) {
    case ArgumentMode::ignore: return true;
    case ArgumentMode::exact: return c.whole(e) == c.whole(a);
    case ArgumentMode::superset:
    case ArgumentMode::subset: {
      if (!e.object || !a.object) return c.whole(e) == c.whole(a);
      const CanonArgs& small = mode == ArgumentMode::superset ? e : a;
      const CanonArgs& big = mode == ArgumentMode::superset ? a : e;
      for (std::uint32_t i = small.members_begin; i < small.members_end; ++i) {
        const CanonMember& m = c.members()[i];
        std::string_view v;
        if (!c.find(big, c.key(m), &v) || v != c.value(m)) return false;
      }
      return true;
    }
  }
  return false;
}

// Top-level keys whose values differ between two argument objects.
std::vector<std::string> differing_keys(const ArgCanon& c, const CanonArgs& e, const CanonArgs& a) {
  std::vector<std::string> keys;
  if (!e.object || !a.object) {
    keys.push_back("arguments");
    return keys;
  }
  auto& mem = c.members();
  std::uint32_t i = e.members_begin, j = a.members_begin;
  while (i < e.members_end || j < a.members_end) {
    if (j == a.members_end || (i < e.members_end && c.key(mem[i]) < c.key(mem[j]))) {
      keys.emplace_back(c.key(mem[i++]));
    } else if (i == e.members_end || c.key(mem[j]) < c.key(mem[i])) {
      keys.emplace_back(c.key(mem[j++]));
    } else {
      if (c.value(mem[i]) != c.value(mem[j])) keys.emplace_back(c.key(mem[i]));
      ++i;
      ++j;
    }
  }
  return keys;
}

}  // namespace
}  // namespace metrics

namespace metrics {
std::string fold_tool_name(std::string_view n) { return fold_name(n); }

}  // namespace metrics

ArgumentMode metrics::ScorerCore::mode_for(std::string_view tool) const {
  for (const auto& [name, mode] : opt.tool_args_for)
    if (name == tool) return mode;
  return opt.tool_args;
}

namespace {
// Counting sort of the indices i (with keep(i)) of `ids` by id (< n), in order: the members of
// id k are group[start[k] .. start[k + 1]). `fill` is scratch.
template <class Keep>
void group_by_name(const std::vector<std::uint32_t>& ids, std::size_t n, Keep keep, std::vector<std::uint32_t>& start,
                   std::vector<std::uint32_t>& group, std::vector<std::uint32_t>& fill) {
  start.assign(n + 1, 0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (keep(i)) ++start[ids[i] + 1];
  for (std::size_t k = 0; k < n; ++k) start[k + 1] += start[k];
  group.resize(start[n]);
  fill.assign(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (keep(i)) group[fill[ids[i]]++] = static_cast<std::uint32_t>(i);
}
}  // namespace

ScoreResult metrics::ScorerCore::score_canonical(const std::vector<Call>& act, const std::vector<Call>& exp,
                                          const metrics::PathOrdering* path) {
  using namespace metrics;
  ScoreResult r;
  const std::size_t na = act.size(), ne = exp.size();
  r.actual_calls = static_cast<std::uint32_t>(na);
  r.expected_steps = static_cast<std::uint32_t>(ne);

  // Local name ids shared by both sides.
  // An open-addressing table over `names` (reused; a node map allocated per name and record).
  names.clear();
  std::size_t slots = 16;
  while (slots < 2 * (ne + na)) slots *= 2;
  name_slots.assign(slots, 0);
  // Interned names (one copy per distinct name) are told apart by address alone.
  const bool by_address = names_interned;
  auto id_of = [&](std::string_view n) {
    std::size_t mask = name_slots.size() - 1;
    std::size_t hash = by_address ? (reinterpret_cast<std::uintptr_t>(n.data()) * 0x9E3779B97F4A7C15ull) >> 20
                                  : std::hash<std::string_view>{}(n);
    for (std::size_t h = hash & mask;; h = (h + 1) & mask) {
      std::uint32_t s = name_slots[h];
      if (s == 0) {
        names.push_back(n);
        name_slots[h] = static_cast<std::uint32_t>(names.size());
        return static_cast<std::uint32_t>(names.size() - 1);
      }
      if (by_address ? names[s - 1].data() == n.data() : names[s - 1] == n) return s - 1;
    }
  };
  eid.resize(ne);
  aid.resize(na);
  for (std::size_t i = 0; i < ne; ++i) eid[i] = id_of(exp[i].name);
  for (std::size_t j = 0; j < na; ++j) aid[j] = id_of(act[j].name);
  expected_count.assign(names.size(), 0);
  actual_count.assign(names.size(), 0);
  for (auto i : eid) ++expected_count[i];
  for (auto j : aid) ++actual_count[j];

  // Selection.
  double inter = 0, e_size = 0, a_size = 0, uni = 0;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (opt.multiset) {
      inter += std::min(expected_count[k], actual_count[k]);
      uni += std::max(expected_count[k], actual_count[k]);
      e_size += expected_count[k];
      a_size += actual_count[k];
    } else {
      inter += (expected_count[k] && actual_count[k]) ? 1 : 0;
      uni += (expected_count[k] || actual_count[k]) ? 1 : 0;
      e_size += expected_count[k] ? 1 : 0;
      a_size += actual_count[k] ? 1 : 0;
    }
  }
  const bool both_empty = ne == 0 && na == 0;
  double recall = ratio(inter, e_size, both_empty), precision = ratio(inter, a_size, both_empty);
  switch (opt.selection) {
    case SelectionMetric::jaccard: r.selection = ratio(inter, uni, both_empty); break;
    case SelectionMetric::recall: r.selection = recall; break;
    case SelectionMetric::precision: r.selection = precision; break;
    case SelectionMetric::f1:
      r.selection = recall + precision == 0 ? 0 : 2 * recall * precision / (recall + precision);
      break;
  }
  {
    seen.assign(names.size(), 0);
    for (auto i : eid) {
      if (seen[i]) continue;
      seen[i] = 1;
      if (opt.multiset ? expected_count[i] > actual_count[i] : actual_count[i] == 0) r.missing.emplace_back(names[i]);
    }
    std::fill(seen.begin(), seen.end(), 0);
    for (auto j : aid) {
      if (seen[j]) continue;
      seen[j] = 1;
      if (opt.multiset ? actual_count[j] > expected_count[j] : expected_count[j] == 0) r.extra.emplace_back(names[j]);
      if (actual_count[j] > 1 && actual_count[j] > expected_count[j]) r.repeated.emplace_back(names[j]);
    }
  }

  // Duplicates: score and eval share one definition (metrics/call_figures.hpp).
  call_keys.resize(na);
  for (std::size_t j = 0; j < na; ++j) call_keys[j] = {names[aid[j]], canon.whole(actual_args[j]), act[j].failed};
  r.duplicates = count_duplicates(call_keys, order);

  // Ordering.
  std::string order_note;
  const bool order_null = ne < opt.min_order_length;
  // Names what went wrong in the order: a swap of two adjacent expected tools that, undone,
  // matches more steps; else the expected tools called but outside the best in-order match.
  // `units`: the ends of the groups actual calls are ordered in (blocks of one turn, or
  // each call on its own), as the ordering used them.
  auto note_order = [&](std::uint32_t l, auto&& order_len, const std::vector<std::uint32_t>& units) {
    if (l >= ne || ne > 64) return;
    // No order of the expected names matches more than their multiset intersection with
    // the actual ones: when l reaches it no exchange can help, and when besides no name is
    // expected more often than it is called, every called expected step is in every best
    // match, so none is late either (the search and the marking would find nothing).
    std::uint32_t reach = 0;
    bool none_short = true;
    for (std::size_t k = 0; k < names.size(); ++k) {
      reach += std::min(expected_count[k], actual_count[k]);
      if (actual_count[k] > 0 && expected_count[k] > actual_count[k]) none_short = false;
    }
    if (l == reach && none_short) return;
    // Only exchanges whose bound exceeds l can match more (swap_bounds): that spares most
    // LCS recomputations.
    if (l < reach) swap_bounds(eid, aid, units, names.size(), swap_bound);
    std::vector<std::uint32_t> sw = eid;
    for (std::size_t k = 0; k + 1 < ne && order_note.empty() && l < reach; ++k) {
      if (eid[k] == eid[k + 1]) continue;
      if (swap_bound[k] <= l) continue;
      std::swap(sw[k], sw[k + 1]);
      if (order_len(sw, nullptr) > l) {
        order_note = fmt::format("swapped {} and {}", names[eid[k]], names[eid[k + 1]]);
        r.misordered = {std::string(names[eid[k]]), std::string(names[eid[k + 1]])};
      }
      std::swap(sw[k], sw[k + 1]);
    }
    if (order_note.empty()) {
      order_len(eid, &matched);  // which expected steps one best in-order match uses
      std::vector<std::string> late;
      for (std::size_t i = 0; i < ne; ++i)
        if (!matched[i] && actual_count[eid[i]] > 0) late.emplace_back(names[eid[i]]);
      if (!late.empty()) order_note = "out of order: " + join(late, ", ");
      r.misordered = std::move(late);
    }
  };
  if (path) {
    double o = ne == 0 ? 1.0 : double(path->matched) / double(ne);
    if (!order_null) r.ordering = o;
    // A form without groups is a sequence: its notes come from the LCS of the names, when
    // that agrees with the pattern-based count.
    auto plain = [&](const std::vector<std::uint32_t>& e, std::vector<char>* marks) {
      return lcs(e, aid, marks);
    };
    if (path->plain_sequence && path->matched < ne && plain(eid, nullptr) == path->matched)
    {
      unit_end.resize(na);
      for (std::size_t j = 0; j < na; ++j) unit_end[j] = static_cast<std::uint32_t>(j + 1);
      note_order(path->matched, plain, unit_end);
    }
  } else {
    // Calls of one assistant turn were issued together: their order among themselves is not
    // the agent's choice, so ordering (like strict) lets them match in any order.
    block_end.clear();
    for (std::size_t j = 1; j <= na; ++j)
      if (j == na || act[j].turn != act[j - 1].turn) block_end.push_back(static_cast<std::uint32_t>(j));
    const bool blocks = block_end.size() < na &&
                        double(block_end.size()) * double(ne) * double(ne) <= 5e7;
    auto order_len = [&](const std::vector<std::uint32_t>& e, std::vector<char>* marks) {
      return blocks ? block_lcs(e, aid, block_end, names.size(), marks) : lcs(e, aid, marks);
    };
    std::uint32_t l = order_len(eid, nullptr);
    double o = ne == 0 ? 1.0 : double(l) / double(ne);
    if (!order_null) r.ordering = o;
    if (!blocks) {
      unit_end.resize(na);
      for (std::size_t j = 0; j < na; ++j) unit_end[j] = static_cast<std::uint32_t>(j + 1);
    }
    note_order(l, order_len, blocks ? block_end : unit_end);
  }
  if (r.ordering) {
    double w = opt.selection_weight + opt.ordering_weight;
    r.overall = w > 0 ? (opt.selection_weight * r.selection + opt.ordering_weight * *r.ordering) / w
                      : r.selection;
  } else {
    r.overall = r.selection;
  }

  // Match modes: maximum pairing over compatible (expected, actual) pairs.
  // The actual calls of each name, in order (one counting sort): without a PATH only calls
  // of the same name can pair, so each expected call looks at those alone.
  const std::size_t nn = names.size();
  group_by_name(aid, nn, [](std::size_t) { return true; }, group_start_a, group_a, fill);
  cur_actual = &act;
  cur_expected = &exp;
  cur_path = path;
  if (path) {
    path_compat.clear();
    pattern_row.clear();
  }
  order.resize(std::max(ne, na));
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
  const std::size_t m = pairing(std::span(order.data(), ne), std::span(order.data(), na));
  r.match.superset = m == ne;
  r.match.subset = m == na;
  r.match.unordered = r.match.superset && r.match.subset;
  if (r.match.unordered) {
    if (path) {
      r.match.strict = path->matched == ne;
    } else {
      // Same order, except that calls of one actual turn may be permuted among themselves.
      bool ok = true;
      for (std::size_t s = 0; s < na && ok;) {
        std::size_t e = s + 1;
        while (e < na && act[e].turn == act[s].turn) ++e;
        // A call on its own: its own pair decides.
        ok = e - s == 1 ? compatible(s, s)
                        : pairing(std::span(order.data() + s, e - s), std::span(order.data() + s, e - s)) == e - s;
        s = e;
      }
      r.match.strict = ok;
    }
  }

  // Arguments: pair calls by name (as many pairs as possible, exact agreements first).
  if (!path) {
    std::uint32_t pairs = 0, exact = 0;
    // The expected calls with arguments of each name, in order (the actual ones are
    // grouped above): one counting sort instead of a scan of both sides per name.
    group_by_name(eid, nn, [&](std::size_t i) { return exp[i].has_args; }, group_start_e, group_e, fill);
    for (std::size_t k = 0; k < nn; ++k) {
      const std::span<const std::uint32_t> es(group_e.data() + group_start_e[k], group_start_e[k + 1] - group_start_e[k]);
      if (es.empty()) continue;
      const std::span<const std::uint32_t> as(group_a.data() + group_start_a[k], group_start_a[k + 1] - group_start_a[k]);
      std::size_t p = std::min(es.size(), as.size());
      pairs += std::uint32_t(p);
      // Equality is an equivalence, so pairing equal texts first is optimal. Each expected
      // call takes the first actual call left with its text (positions by text, in order).
      expected_used.assign(es.size(), 0);
      actual_used.assign(as.size(), 0);
      std::uint32_t ex = 0;
      text_positions.clear();
      for (std::size_t y = as.size(); y-- > 0;) text_positions[canon.whole(actual_args[as[y]])].push_back(std::uint32_t(y));
      for (std::size_t x = 0; x < es.size(); ++x) {
        auto it = text_positions.find(canon.whole(expected_args[es[x]]));
        if (it == text_positions.end() || it->second.empty()) continue;
        const std::uint32_t y = it->second.back();  // the lists are filled last position first
        it->second.pop_back();
        expected_used[x] = actual_used[y] = 1;
        ++ex;
      }
      exact += ex;
      // The rest, in order, for the explanation.
      std::size_t y = 0, left = p - ex;
      for (std::size_t x = 0; x < es.size() && left > 0; ++x) {
        if (expected_used[x]) continue;
        while (y < as.size() && actual_used[y]) ++y;
        if (y == as.size()) break;
        actual_used[y] = 1;
        --left;
        r.argument_differences.push_back(
            fmt::format("{}: {}", names[k],
                        join(differing_keys(canon, expected_args[es[x]], actual_args[as[y]]), ", ")));
      }
    }
    if (pairs > 0) r.arguments = double(exact) / double(pairs);
  }

  // Explanation.
  std::string ex = fmt::format("Selection {}%: called {}/{} expected tools", percent(r.selection),
                               static_cast<std::uint64_t>(inter), static_cast<std::uint64_t>(e_size));
  std::vector<std::string> parts;
  if (!r.missing.empty()) parts.push_back("missed: " + join(r.missing, ", "));
  if (!r.extra.empty()) parts.push_back("extra: " + join(r.extra, ", "));
  if (!r.repeated.empty()) parts.push_back("repeated: " + join(r.repeated, ", "));
  if (!parts.empty()) ex += " (" + join(parts, "; ") + ")";
  ex += '.';
  if (r.ordering) {
    ex += fmt::format(" Ordering {}%", percent(*r.ordering));
    if (!order_note.empty()) ex += " (" + order_note + ")";
    ex += '.';
  } else {
    ex += fmt::format(" Ordering not scored ({} expected step{}, fewer than {}).", ne,
                      ne == 1 ? "" : "s", opt.min_order_length);
  }
  if (path && !path->exact) ex += " (ordering is a lower bound: a large {…} group)";
  if (r.arguments && *r.arguments < 1.0)
    ex += fmt::format(" Arguments {}% ({}).", percent(*r.arguments), join(r.argument_differences, "; "));
  if (r.duplicates > 0)
    ex += fmt::format(" {} duplicate call{}.", r.duplicates, r.duplicates == 1 ? "" : "s");
  r.explanation = std::move(ex);
  return r;
}

bool metrics::ScorerCore::compatible(std::size_t i, std::size_t j) {
  const Call& e = (*cur_expected)[i];
  const Call& a = (*cur_actual)[j];
  if (cur_path) {
    // PATH atoms name tools only; a pattern is tried once per distinct name.
    const std::size_t nn = names.size();
    if (e.pattern >= pattern_row.size()) pattern_row.resize(e.pattern + 1, UINT32_MAX);
    std::uint32_t& row = pattern_row[e.pattern];
    if (row == UINT32_MAX) {
      row = static_cast<std::uint32_t>(path_compat.size() / std::max<std::size_t>(nn, 1));
      path_compat.resize(path_compat.size() + std::max<std::size_t>(nn, 1), -1);
    }
    signed char& c = path_compat[std::size_t(row) * nn + aid[j]];
    if (c < 0) c = pattern_matches_name(*cur_path->module, e.pattern, a.name) ? 1 : 0;
    return c != 0;
  }
  if (eid[i] != aid[j]) return false;
  // An expected call that carries no arguments (a list of names) constrains names only.
  const ArgumentMode mode = e.has_args ? mode_for(e.name) : ArgumentMode::ignore;
  return args_agree(canon, expected_args[i], actual_args[j], mode);
}

std::size_t metrics::ScorerCore::pairing(std::span<const std::uint32_t> es, std::span<const std::uint32_t> as) {
  if (cur_path) {
    return static_cast<std::size_t>(matcher.solve(static_cast<int>(es.size()), static_cast<int>(as.size()),
                                                  [&](int l, int r) { return compatible(es[l], as[r]); }));
  }
  // Both sides by name (stable), then name by name.
  auto by_name = [](const std::vector<std::uint32_t>& id, std::span<const std::uint32_t> in,
                    std::vector<std::uint32_t>& out) {
    out.assign(in.begin(), in.end());
    std::stable_sort(out.begin(), out.end(), [&](std::uint32_t x, std::uint32_t y) { return id[x] < id[y]; });
  };
  by_name(eid, es, pair_e);
  by_name(aid, as, pair_a);
  std::size_t total = 0;
  for (std::size_t x = 0, y = 0; x < pair_e.size();) {
    const std::uint32_t name = eid[pair_e[x]];
    std::size_t x_end = x;
    while (x_end < pair_e.size() && eid[pair_e[x_end]] == name) ++x_end;
    while (y < pair_a.size() && aid[pair_a[y]] < name) ++y;
    std::size_t y_end = y;
    while (y_end < pair_a.size() && aid[pair_a[y_end]] == name) ++y_end;
    const std::span<const std::uint32_t> e_t(pair_e.data() + x, x_end - x), a_t(pair_a.data() + y, y_end - y);
    x = x_end;
    y = y_end;
    if (a_t.empty()) continue;
    // Calls without arguments (or under `ignore`) pair with any call of the name; the others
    // (pair_s) are paired first, and as many as possible, which is optimal: the free ones then
    // take min(their number, the calls left).
    const ArgumentMode mode = mode_for((*cur_expected)[e_t[0]].name);
    pair_s.clear();
    std::size_t free_calls = 0;
    for (std::uint32_t i : e_t) {
      if ((*cur_expected)[i].has_args && mode != ArgumentMode::ignore) pair_s.push_back(i);
      else ++free_calls;
    }
    std::size_t paired = 0;
    if (pair_s.empty()) {
    } else if (mode == ArgumentMode::exact) {
      // Equal canonical texts: an equivalence, so counting per text is a maximum pairing.
      text_count.clear();
      for (std::uint32_t j : a_t) ++text_count[canon.whole(actual_args[j])];
      for (std::uint32_t i : pair_s) {
        auto it = text_count.find(canon.whole(expected_args[i]));
        if (it != text_count.end() && it->second > 0) {
          --it->second;
          ++paired;
        }
      }
    } else {
      paired = static_cast<std::size_t>(
          matcher.solve(static_cast<int>(pair_s.size()), static_cast<int>(a_t.size()), [&](int l, int r) {
            return args_agree(canon, expected_args[pair_s[l]], actual_args[a_t[r]], mode);
          }));
    }
    total += paired + std::min(free_calls, a_t.size() - paired);
  }
  return total;
}

metrics::ScorerCore::ScorerCore(ScoreOptions options) : opt(std::move(options)) {
  for (auto& [name, mode] : opt.tool_args_for) name = metrics::fold_tool_name(name);
}

ScoreResult metrics::ScorerCore::score(const Trajectory& act, const Trajectory& exp) {
  // Arguments of every call in canonical form, once.
  canon.clear();
  metrics::collect_calls(act, canon, actual, actual_args);
  metrics::collect_calls(exp, canon, expected, expected_args);
  return score_canonical(actual, expected, nullptr);
}

Scorer::Scorer(ScoreOptions options) : impl_(std::make_unique<metrics::ScorerCore>(std::move(options))) {}
Scorer::~Scorer() = default;
Scorer::Scorer(Scorer&&) noexcept = default;
Scorer& Scorer::operator=(Scorer&&) noexcept = default;

const ScoreOptions& Scorer::options() const { return impl_->opt; }

ScoreResult Scorer::score(const Trajectory& actual, const Trajectory& expected) {
  return impl_->score(actual, expected);
}

ScoreResult score(const Trajectory& actual, const Trajectory& expected, const ScoreOptions& options) {
  Scorer s(options);
  return s.score(actual, expected);
}

}  // namespace trajcheck
