// Rule mining (docs/mining.md): per-trace summaries folded into counters per tool and per
// pair of tools, from which every candidate's support and confidence follow.
#include "trajcheck/mine.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/condition_eval.hpp"

namespace trajcheck {

namespace {

constexpr std::size_t kMineMaxValues = 16;     // distinct values tracked per tool argument
constexpr std::size_t kMineMaxKeys = 64;       // arguments tracked per tool
constexpr std::size_t kMineMaxValueBytes = 200;
constexpr std::size_t kMineMaxLeaves = 64;          // result leaves taken per call (value flow)
constexpr std::size_t kMineMaxFlowCandidates = 100000;



struct MinePairCounts {
  std::uint64_t co = 0;      // traces with both
  std::uint64_t prec = 0;    // B occurs, an A in a turn before B's first turn
  std::uint64_t resp = 0;    // A occurs, a B in a turn after A's last turn
  std::uint64_t chainp = 0;  // B occurs, every turn of B right after a turn with an A
  std::uint64_t chainf = 0;  // A occurs, every turn of A right before a turn with a B
  void add(const MinePairCounts& o) {
    co += o.co;
    prec += o.prec;
    resp += o.resp;
    chainp += o.chainp;
    chainf += o.chainf;
  }
};

struct MineArgStat {
  std::map<std::string, std::uint64_t> unique;  // value literal -> traces where every call had it
};

// `values`: per tool argument, the values of its calls that seen() does not find (constants of
// the runs mined), each with up to two of the groups that gave it (two tell a value shared
// by groups from one a single group brought), and what cannot be written as a constant.
struct MineValueStat {
  MineCounts counts;  // traces with a call of the tool with the argument; of those, every value seen or a constant
  std::map<std::string, std::vector<std::string>> consts;  // literal -> up to 2 distinct groups
  bool overflow = false;  // more than kMineMaxValues constants: not an allow-list
  // Grouped (Miner::set_group_by): the groups activated, and those with a trace that did not hold.
  std::set<std::string> groups, bad_groups;
  void add_const(const std::string& lit, const std::string& group) {
    if (overflow) return;
    auto it = consts.find(lit);
    if (it == consts.end()) {
      if (consts.size() >= kMineMaxValues) {
        overflow = true;
        consts.clear();
        return;
      }
      it = consts.emplace(lit, std::vector<std::string>{}).first;
    }
    if (it->second.size() < 2 && std::find(it->second.begin(), it->second.end(), group) == it->second.end())
      it->second.push_back(group);
  }
  void merge(const MineValueStat& o) {
    counts.activated += o.counts.activated;
    counts.held += o.counts.held;
    groups.insert(o.groups.begin(), o.groups.end());
    bad_groups.insert(o.bad_groups.begin(), o.bad_groups.end());
    if (o.overflow) {
      overflow = true;
      consts.clear();
    }
    for (const auto& [lit, gs] : o.consts)
      for (const std::string& g : gs) add_const(lit, g);
  }
};

struct MineToolCounts {
  std::uint64_t occ = 0;  // traces with a call
  std::uint64_t min_count = 0, max_count = 0;
  std::uint64_t a_trace = 0;  // the uid of a trace with a call: the one, when occ == 1
  std::map<std::string, MineArgStat> args;  // key -> stats
  std::map<std::string, MineCounts> prov;   // key -> traces with it / where it came from the user
  std::map<std::string, MineValueStat> values;  // key -> seen or constant
};

// The sequence numbers of miners: a trace's uid (miner << 40 | its number there) tells the
// traces of merged miners apart.
std::atomic<std::uint64_t> g_mine_instances{0};

// One-sided Fisher exact test: among n groups, a of which have A and b of which have B,
// the probability that at most k have both when A and B are independent (hypergeometric).
double mine_fisher_at_most(std::uint64_t n, std::uint64_t a, std::uint64_t b, std::uint64_t k) {
  if (a > n || b > n) return 1.0;
  auto lc = [](double x, double y) { return std::lgamma(x + 1) - std::lgamma(y + 1) - std::lgamma(x - y + 1); };
  const double total = lc(static_cast<double>(n), static_cast<double>(b));
  const std::uint64_t lo = b > n - a ? b - (n - a) : 0;
  const std::uint64_t hi = std::min({a, b, k});
  double p = 0;
  for (std::uint64_t x = lo; x <= hi; ++x)
    p += std::exp(lc(static_cast<double>(a), static_cast<double>(x)) +
                  lc(static_cast<double>(n - a), static_cast<double>(b - x)) - total);
  return std::min(1.0, p);
}

bool mine_is_ident(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

const std::set<std::string, std::less<>>& mine_reserved_words() {
  static const std::set<std::string, std::less<>> words = {
      "forbid", "never", "require", "precedes", "immediately", "is", "followed", "requires", "excludes",
      "starts", "ends", "only", "no", "at", "exactly", "between", "retries", "expect", "ignoring", "after",
      "before", "until", "rule", "message", "tag", "alias", "group", "workflow", "catalog", "case", "where",
      "or", "and", "not", "failed", "any", "step", "tool_call", "user_message", "assistant_message",
      "approval_request", "approval", "final_answer", "write", "true", "false", "null"};
  return words;
}

std::string mine_quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

// Steps other than tool calls that are template symbols, by their pattern keyword. Their names
// start with \x01, which no normalized tool name has.
std::string_view mine_step_symbol(StepType t) {
  switch (t) {
    case StepType::approval_request: return "\x01" "approval_request";
    case StepType::approval: return "\x01" "approval";
    case StepType::final_answer: return "\x01" "final_answer";
    default: return {};
  }
}
bool mine_is_symbol(std::string_view name) { return !name.empty() && name[0] == '\x01'; }
// The key of a tool name among the symbols: a name that starts with \x01 or \x02 gets a \x02
// in front, so that no tool is ever taken for a step symbol (mine_tool_of undoes it).
std::string mine_tool_key(std::string_view tool) {
  if (!tool.empty() && (tool[0] == '\x01' || tool[0] == '\x02')) return "\x02" + std::string(tool);
  return std::string(tool);
}
std::string_view mine_tool_of(std::string_view key) {
  return !key.empty() && key[0] == '\x02' ? key.substr(1) : key;
}

}  // namespace

std::string mined_tool_name(std::string_view name) {
  bool bare = !name.empty();
  for (std::size_t i = 0; i < name.size() && bare; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool ok = std::isalnum(c) || c == '_' || c == '.' || c == '/' || (c == '-' && i + 1 < name.size() && name[i + 1] != '>');
    if (c == ':') ok = i + 1 < name.size() && name[i + 1] != ':' && name[i + 1] != ' ';
    bare = ok;
  }
  if (bare && (name.front() == '-' || name.front() == '.' || name.back() == ':' || name.back() == '-' ||
               std::isdigit(static_cast<unsigned char>(name.front()))))
    bare = false;
  if (bare && mine_reserved_words().count(name)) bare = false;
  return bare ? std::string(name) : mine_quote(name);
}

std::string_view to_string(MineFamily f) {
  switch (f) {
    case MineFamily::precedes: return "precedes";
    case MineFamily::response: return "response";
    case MineFamily::chain: return "chain";
    case MineFamily::count: return "count";
    case MineFamily::forbid: return "forbid";
    case MineFamily::only: return "only";
    case MineFamily::excludes: return "excludes";
    case MineFamily::args: return "args";
    case MineFamily::flow: return "flow";
    case MineFamily::provenance: return "provenance";
    case MineFamily::values: return "values";
  }
  return "?";
}

bool parse_mine_families(std::string_view list, std::uint32_t* mask, std::string* error) {
  std::uint32_t m = 0;
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view name = list.substr(at, comma - at);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    bool found = false;
    if (name == "all") {
      m |= (1u << kMineFamilyCount) - 1;
      found = true;
    }
    for (int i = 0; i < kMineFamilyCount && !found; ++i)
      if (name == to_string(static_cast<MineFamily>(i))) {
        m |= 1u << i;
        found = true;
      }
    if (!found) {
      std::string names;
      for (int i = 0; i < kMineFamilyCount; ++i) names += std::string(i ? ", " : "") + std::string(to_string(static_cast<MineFamily>(i)));
      *error = fmt::format("unknown template '{}' (known: {}, all)", name, names);
      return false;
    }
    at = comma + 1;
  }
  *mask = m;
  return true;
}

double MinedRule::separation() const {
  double bad = bad_traces ? static_cast<double>(bad_violated) / static_cast<double>(bad_traces) : 0.0;
  double good = traces ? static_cast<double>(counts.activated - counts.held) / static_cast<double>(traces) : 0.0;
  return bad - good;
}

struct Miner::Impl {
  std::uint64_t traces = 0;
  std::uint64_t instance = g_mine_instances.fetch_add(1, std::memory_order_relaxed);
  // Grouping (set_group_by): each group's tools and step symbols (ids, sorted); traces
  // without a group name.
  std::string group_root;              // "metadata" or "context"; empty: no grouping
  std::vector<std::string> group_keys;  // the keys of the path below the root
  std::unordered_map<std::string, std::vector<std::uint32_t>> group_tools;
  std::uint64_t ungrouped = 0;
  // The group name of t: its scalar at the path, as JSON text; empty when absent.
  std::string group_of(const Trajectory& t) const {
    std::string_view text = group_root == "metadata" ? t.metadata() : t.context();
    if (text.empty()) return {};
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    const nlohmann::json* at = &j;
    for (const std::string& k : group_keys) {
      if (!at->is_object()) return {};
      auto it = at->find(k);
      if (it == at->end()) return {};
      at = &*it;
    }
    if (at->is_object() || at->is_array() || at->is_null() || at->is_discarded()) return {};
    return at->dump();
  }
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<MineToolCounts> tools;
  std::unordered_map<std::uint64_t, MinePairCounts> pairs;  // (a << 32 | b)
  // Value flow. Paths are interned (`arguments.k`, `result.a.b`); a source or a target is
  // (tool << 32 | path id). flow_arg[path id] is the argument's own key for argument paths.
  struct MineFlowHash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& p) const {
      return std::hash<std::uint64_t>{}(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
    }
  };
  std::unordered_map<std::string, std::uint32_t> flow_path_ids;
  std::vector<std::string> flow_paths, flow_arg;
  std::unordered_map<std::uint64_t, std::uint64_t> flow_act;  // target -> traces with a call binding it
  std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t, MineFlowHash> flow_held;  // (source, target)
  std::uint32_t flow_pid(const std::string& path, const std::string& arg) {
    auto it = flow_path_ids.find(path);
    if (it != flow_path_ids.end()) return it->second;
    std::uint32_t id = static_cast<std::uint32_t>(flow_paths.size());
    flow_paths.push_back(path);
    flow_arg.push_back(arg);
    flow_path_ids.emplace(path, id);
    return id;
  }

  // Per-trace scratch, reused.
  std::vector<std::uint32_t> local_of;  // global id -> local index + 1 (0: absent)
  std::vector<std::uint32_t> local_ids;  // local -> global
  std::vector<std::uint32_t> first_g, last_g, count, turns_of;
  std::vector<std::uint32_t> pcount;  // k × k: adjacent turns (A's turn, then B's)
  struct ArgSeen {
    std::string value;  // literal, or empty when mixed / not a literal
    std::uint32_t calls = 0;
  };
  std::vector<std::map<std::string, ArgSeen>> arg_seen;  // per local tool
  // Provenance: per local tool and key, whether every call's value came from the user
  // (`seen(arguments.k, user)`: a substring of an earlier user message).
  std::vector<std::map<std::string, bool>> prov_seen;

  std::uint32_t intern(std::string_view name) {
    auto it = ids.find(std::string(name));
    if (it != ids.end()) return it->second;
    std::uint32_t id = static_cast<std::uint32_t>(names.size());
    names.emplace_back(name);
    ids.emplace(std::string(name), id);
    tools.emplace_back();
    local_of.push_back(0);
    return id;
  }

  static std::string literal_of(const nlohmann::json& v) {
    if (v.is_string()) {
      std::string s = v.dump();
      return s.size() > kMineMaxValueBytes ? std::string() : s;
    }
    if (v.is_boolean() || v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (!std::isfinite(d)) return {};
      return v.dump();
    }
    return {};  // null, objects, arrays: every comparison with them is false
  }

  void add(const Trajectory& t) {
    const std::uint64_t uid = instance << 40 | traces;
    ++traces;
    // The trace's group: its name at the group path, else a group of its own.
    std::string gname = group_root.empty() ? std::string() : group_of(t);
    if (!group_root.empty() && gname.empty()) ++ungrouped;
    if (gname.empty()) gname = fmt::format("\x01{}", uid);  // never a JSON text
    const std::vector<Step>& steps = t.steps();
    // Turn groups as the checker forms them: adjacent tool calls with one turn number share
    // the group of the first of them; every other step is a group of its own.
    struct Call {
      std::uint32_t local, group;
    };
    std::vector<Call> calls, symbols;  // tool calls; steps of the types that are symbols too
    calls.reserve(steps.size());
    local_ids.clear();
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      bool same = i > 0 && s.type == StepType::tool_call && steps[i - 1].type == StepType::tool_call &&
                  steps[i - 1].turn == s.turn;
      if (!same) group = static_cast<std::uint32_t>(i);
      std::string_view pseudo = mine_step_symbol(s.type);
      if (s.type != StepType::tool_call && pseudo.empty()) continue;
      std::uint32_t id = intern(pseudo.empty() ? std::string_view(mine_tool_key(t.tool_name(s))) : pseudo);
      if (local_of[id] == 0) {
        local_ids.push_back(id);
        local_of[id] = static_cast<std::uint32_t>(local_ids.size());
      }
      if (pseudo.empty()) calls.push_back({local_of[id] - 1, group});
      else symbols.push_back({local_of[id] - 1, group});
    }
    const std::size_t k = local_ids.size();
    first_g.assign(k, 0);
    last_g.assign(k, 0);
    count.assign(k, 0);
    turns_of.assign(k, 0);
    pcount.assign(k * k, 0);
    for (const std::vector<Call>* v : {&calls, &symbols})
      for (const Call& c : *v) {
        if (count[c.local]++ == 0) first_g[c.local] = c.group;
        last_g[c.local] = c.group;
      }
    // Turns of the tool-call sequence (what `ignoring not tool_call` leaves), as sets of tools.
    std::vector<std::uint32_t> prev, cur;
    auto close_turn = [&]() {
      std::sort(cur.begin(), cur.end());
      cur.erase(std::unique(cur.begin(), cur.end()), cur.end());
      for (std::uint32_t b : cur) {
        ++turns_of[b];
        for (std::uint32_t a : prev) {
          ++pcount[a * k + b];  // a turn with A right before a turn with B
        }
      }
      prev.swap(cur);
      cur.clear();
    };
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (i > 0 && calls[i].group != calls[i - 1].group) close_turn();
      cur.push_back(calls[i].local);
    }
    if (!cur.empty()) close_turn();
    for (std::size_t a = 0; a < k; ++a) {
      MineToolCounts& tc = tools[local_ids[a]];
      if (tc.occ == 0) tc.a_trace = uid;
      ++tc.occ;
      if (tc.occ == 1 || count[a] < tc.min_count) tc.min_count = count[a];
      tc.max_count = std::max<std::uint64_t>(tc.max_count, count[a]);
      for (std::size_t b = 0; b < k; ++b) {
        if (a == b) continue;
        MinePairCounts& p = pairs[(static_cast<std::uint64_t>(local_ids[a]) << 32) | local_ids[b]];
        ++p.co;
        if (first_g[a] < first_g[b]) ++p.prec;
        if (last_g[a] < last_g[b]) ++p.resp;
        if (pcount[a * k + b] == turns_of[b]) ++p.chainp;
        if (pcount[a * k + b] == turns_of[a]) ++p.chainf;
      }
    }
    if (!group_root.empty()) {
      std::vector<std::uint32_t>& gt = group_tools[gname];
      for (std::uint32_t id : local_ids) gt.push_back(id);
      std::sort(gt.begin(), gt.end());
      gt.erase(std::unique(gt.begin(), gt.end()), gt.end());
    }
    // Argument constants: per tool and key, the one value every call of the trace gave.
    arg_seen.assign(k, {});
    const bool prov_on = (families >> static_cast<int>(MineFamily::provenance)) & 1u;
    const bool values_on = (families >> static_cast<int>(MineFamily::values)) & 1u;
    if (prov_on || values_on) add_seen(t, gname, prov_on, values_on);
    std::vector<nlohmann::json> call_args;
    std::vector<std::uint32_t> call_step;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      if (s.type != StepType::tool_call) continue;
      std::uint32_t a = local_of[intern(mine_tool_key(t.tool_name(s)))] - 1;
      auto& seen = arg_seen[a];
      nlohmann::json args = s.arguments.empty() || s.arguments_invalid
                                ? nlohmann::json::object()
                                : nlohmann::json::parse(t.text(s.arguments), nullptr, false);
      if (!args.is_object()) args = nlohmann::json::object();
      for (auto it = args.begin(); it != args.end(); ++it) {
        if (seen.size() >= kMineMaxKeys && !seen.count(it.key())) continue;
        ArgSeen& as = seen[it.key()];
        std::string lit = literal_of(it.value());
        if (as.calls == 0) as.value = lit;
        else if (as.value != lit) as.value.clear();
        ++as.calls;
      }
      call_args.push_back(std::move(args));
      call_step.push_back(static_cast<std::uint32_t>(i));
    }
    for (std::size_t a = 0; a < k && prov_on; ++a) {
      MineToolCounts& tc = tools[local_ids[a]];
      for (const auto& [key, held] : prov_seen[a]) {
        MineCounts& pc = tc.prov[key];
        ++pc.activated;
        pc.held += held ? 1 : 0;
      }
    }
    for (std::size_t a = 0; a < k; ++a) {
      MineToolCounts& tc = tools[local_ids[a]];
      for (auto& [key, as] : arg_seen[a]) {
        if (as.value.empty() || as.calls != count[a]) continue;  // some call lacked it or differed
        MineArgStat& st = tc.args[key];
        auto it = st.unique.find(as.value);
        if (it != st.unique.end()) ++it->second;
        else if (st.unique.size() < kMineMaxValues) st.unique.emplace(as.value, 1);
      }
    }
    if (flow_on) add_flow(t, calls, call_args, call_step);
    for (std::uint32_t id : local_ids) local_of[id] = 0;
  }

  // Provenance and value allow-lists ask the checker's own seen() index, fed the trace's
  // context, results and user text in step order, about each call's top-level arguments:
  // provenance whether the user said every value (`seen(…, user)`); value allow-lists whether
  // seen() finds the value anywhere, else the constant it is. Per local tool and key: a value
  // no literal can name (null, object, array, a long string) makes the trace not hold; the
  // constants of the traces that hold join the list.
  struct ValSeen {
    bool bad = false;
    std::set<std::string> lits;
  };
  std::vector<std::map<std::string, ValSeen>> val_seen;
  detail::Provenance val_prov;
  simdjson::dom::parser val_parser;
  simdjson::padded_string val_buf;
  const simdjson::dom::element* val_parse(std::string_view text, simdjson::dom::element& el) {
    if (text.empty()) return nullptr;
    val_buf = simdjson::padded_string(text);
    return val_parser.parse(val_buf).get(el) ? nullptr : &el;
  }
  void add_seen(const Trajectory& t, const std::string& gname, bool prov_on, bool values_on) {
    const std::vector<Step>& steps = t.steps();
    val_seen.assign(local_ids.size(), {});
    prov_seen.assign(local_ids.size(), {});
    val_prov.clear();
    simdjson::dom::element el;
    if (val_parse(t.context(), el)) val_prov.add_leaves(el, true);
    for (const Step& s : steps) {
      if (s.type == StepType::user_message) val_prov.add_user_text(t.text(s.content));
      if (s.type != StepType::tool_call) continue;
      const std::uint32_t a = local_of[ids.at(mine_tool_key(t.tool_name(s)))] - 1;
      auto& seen = val_seen[a];
      if (!s.arguments_invalid && val_parse(t.text(s.arguments), el) && el.is_object())
        for (auto field : simdjson::dom::object(el)) {
          const std::string key(field.key);
          const detail::Value v = detail::value_of(field.value);
          if (prov_on && (prov_seen[a].size() < kMineMaxKeys || prov_seen[a].count(key))) {
            auto [ps, fresh] = prov_seen[a].try_emplace(key, true);
            ps->second = ps->second && val_prov.seen(v, ir::kSeenUser);
          }
          if (!values_on || (seen.size() >= kMineMaxKeys && !seen.count(key))) continue;
          ValSeen& vs = seen[key];
          if (vs.bad || val_prov.seen(v)) continue;
          std::string lit;
          switch (field.value.type()) {
            case simdjson::dom::element_type::ARRAY:
            case simdjson::dom::element_type::OBJECT:
            case simdjson::dom::element_type::NULL_VALUE: break;
            default: lit = simdjson::to_string(field.value);
          }
          if (lit.empty() || lit.size() > kMineMaxValueBytes) {
            vs.bad = true;
            vs.lits.clear();
          } else {
            vs.lits.insert(std::move(lit));
          }
        }
      if (val_parse(t.text(s.result), el)) val_prov.add_leaves(el);
    }
    const bool grouped = !group_root.empty();
    for (std::size_t a = 0; a < val_seen.size(); ++a)
      for (const auto& [key, vs] : val_seen[a]) {
        MineValueStat& st = tools[local_ids[a]].values[key];
        ++st.counts.activated;
        if (grouped) st.groups.insert(gname);
        if (vs.bad) {
          if (grouped) st.bad_groups.insert(gname);
          continue;
        }
        ++st.counts.held;
        for (const std::string& lit : vs.lits) st.add_const(lit, gname);
      }
  }

  bool flow_on = true;
  std::uint32_t families = (1u << kMineFamilyCount) - 1;
  // Every value a `== $x` binds (strings of any length, numbers, booleans), as JSON text.
  static std::string flow_literal(const nlohmann::json& v) {
    if (v.is_string() || v.is_boolean() || v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float() && std::isfinite(v.get<double>())) return v.dump();
    return {};
  }
  struct MineFlowSrc {
    std::uint32_t tool;
    std::string path;
  };
  static std::string path_key(std::string_view root, const std::string& key) {
    return mine_is_ident(key) && !mine_reserved_words().count(key) ? std::string(root) + "." + key
                                                                    : std::string(root) + "[" + mine_quote(key) + "]";
  }
  // Scalar leaves of a result (objects only, arrays skipped): (path, literal).
  static void leaves(const nlohmann::json& v, const std::string& path, int depth,
                     std::vector<std::pair<std::string, std::string>>& out) {
    if (out.size() >= kMineMaxLeaves) return;
    if (v.is_object()) {
      if (depth >= 4) return;
      for (auto it = v.begin(); it != v.end(); ++it) leaves(it.value(), path_key(path, it.key()), depth + 1, out);
      return;
    }
    std::string lit = flow_literal(v);
    if (!lit.empty()) out.emplace_back(path, std::move(lit));
  }
  // Value flow: for each call B with a scalar argument k, the (tool, path) of earlier turns'
  // calls whose result leaf or argument had the same value.
  template <class CallT>
  void add_flow(const Trajectory& t, const std::vector<CallT>& calls, const std::vector<nlohmann::json>& call_args,
                const std::vector<std::uint32_t>& call_step) {
    const std::vector<Step>& steps = t.steps();
    // Each value keeps its distinct sources only, so a call's work is bounded by the tools and
    // paths that gave its values, not by the length of the trace.
    auto add_unique = [](std::vector<std::uint64_t>& v, std::uint64_t x) {
      if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
    };
    std::unordered_map<std::string, std::vector<std::uint64_t>> sources, pending;
    std::unordered_map<std::uint64_t, std::uint64_t> targets;  // calls binding, per (tool, argument)
    std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t, MineFlowHash> matched;  // (source, target) -> calls
    std::vector<std::pair<std::string, std::string>> lv;
    for (std::size_t c = 0; c < calls.size(); ++c) {
      if (c > 0 && calls[c].group != calls[c - 1].group) {
        for (auto& [v, list] : pending) {
          auto& dst = sources[v];
          for (std::uint64_t x : list) add_unique(dst, x);
        }
        pending.clear();
      }
      const Step& s = steps[call_step[c]];
      const std::uint64_t b = local_ids[calls[c].local];
      for (auto it = call_args[c].begin(); it != call_args[c].end(); ++it) {
        std::string lit = flow_literal(it.value());
        if (lit.empty()) continue;
        const std::uint64_t tgt = b << 32 | flow_pid(path_key("arguments", it.key()), it.key());
        ++targets[tgt];
        auto found = sources.find(lit);
        if (found != sources.end())
          for (std::uint64_t src : found->second)
            if ((src >> 32) != b) ++matched[{src, tgt}];
        add_unique(pending[std::move(lit)], tgt);  // this value is a source for later turns
      }
      if (!s.result.empty()) {
        nlohmann::json r = nlohmann::json::parse(t.text(s.result), nullptr, false);
        lv.clear();
        if (!r.is_discarded()) leaves(r, "result", 0, lv);
        for (auto& [path, lit] : lv) add_unique(pending[lit], b << 32 | flow_pid(path, std::string()));
      }
    }
    for (const auto& [tgt, n] : targets) ++flow_act[tgt];
    for (const auto& [key, n] : matched) {
      if (n != targets[key.second]) continue;
      auto it = flow_held.find(key);
      if (it != flow_held.end()) ++it->second;
      else if (flow_held.size() < kMineMaxFlowCandidates) flow_held.emplace(key, 1);
    }
  }

  void merge(const Impl& o) {
    // (Tools are interned below; value-flow keys are translated once the names are known.)
    std::vector<std::uint32_t> path_map(o.flow_paths.size());
    for (std::size_t i = 0; i < o.flow_paths.size(); ++i) path_map[i] = flow_pid(o.flow_paths[i], o.flow_arg[i]);
    for (const std::string& n : o.names) intern(n);
    auto tr = [&](std::uint64_t x) {
      return static_cast<std::uint64_t>(ids.at(o.names[x >> 32])) << 32 | path_map[x & 0xffffffffu];
    };
    for (const auto& [key, n] : o.flow_act) flow_act[tr(key)] += n;
    for (const auto& [key, n] : o.flow_held) {
      std::pair<std::uint64_t, std::uint64_t> k2{tr(key.first), tr(key.second)};
      auto it = flow_held.find(k2);
      if (it != flow_held.end()) it->second += n;
      else if (flow_held.size() < kMineMaxFlowCandidates) flow_held.emplace(k2, n);
    }
    traces += o.traces;
    for (std::size_t i = 0; i < o.names.size(); ++i) {
      std::uint32_t id = intern(o.names[i]);
      MineToolCounts& tc = tools[id];
      const MineToolCounts& oc = o.tools[i];
      if (oc.occ > 0) {
        tc.min_count = tc.occ == 0 ? oc.min_count : std::min(tc.min_count, oc.min_count);
        tc.max_count = std::max(tc.max_count, oc.max_count);
        if (tc.occ == 0) tc.a_trace = oc.a_trace;
      }
      tc.occ += oc.occ;
      for (const auto& [key, vs] : oc.values) tc.values[key].merge(vs);
      for (const auto& [key, pc] : oc.prov) {
        MineCounts& mine = tc.prov[key];
        mine.activated += pc.activated;
        mine.held += pc.held;
      }
      for (const auto& [key, st] : oc.args) {
        MineArgStat& mine = tc.args[key];
        for (const auto& [v, n] : st.unique) {
          auto it = mine.unique.find(v);
          if (it != mine.unique.end()) it->second += n;
          else if (mine.unique.size() < kMineMaxValues) mine.unique.emplace(v, n);
        }
      }
    }
    for (const auto& [key, pc] : o.pairs) {
      std::uint32_t a = ids.at(o.names[key >> 32]), b = ids.at(o.names[key & 0xffffffffu]);
      pairs[(static_cast<std::uint64_t>(a) << 32) | b].add(pc);
    }
    ungrouped += o.ungrouped;
    for (const auto& [g, list] : o.group_tools) {
      std::vector<std::uint32_t>& gt = group_tools[g];
      for (std::uint32_t id : list) gt.push_back(ids.at(o.names[id]));
      std::sort(gt.begin(), gt.end());
      gt.erase(std::unique(gt.begin(), gt.end()), gt.end());
    }
  }

  const MinePairCounts* pair(std::uint32_t a, std::uint32_t b) const {
    auto it = pairs.find((static_cast<std::uint64_t>(a) << 32) | b);
    return it == pairs.end() ? nullptr : &it->second;
  }
};

Miner::Miner(std::uint32_t families) : impl_(std::make_unique<Impl>()) {
  impl_->families = families;
  impl_->flow_on = (families >> static_cast<int>(MineFamily::flow)) & 1u;
}
std::uint32_t Miner::families() const { return impl_->families; }
Miner::~Miner() = default;
Miner::Miner(Miner&&) noexcept = default;
Miner& Miner::operator=(Miner&&) noexcept = default;
void Miner::add(const Trajectory& t) { impl_->add(t); }
void Miner::merge(const Miner& other) { impl_->merge(*other.impl_); }
std::uint64_t Miner::traces() const { return impl_->traces; }
std::uint64_t Miner::groups() const { return impl_->group_root.empty() ? impl_->traces : impl_->group_tools.size(); }
std::uint64_t Miner::ungrouped() const { return impl_->ungrouped; }
std::string Miner::group_by() const {
  std::string p = impl_->group_root;
  for (const std::string& k : impl_->group_keys) p += "." + k;
  return p;
}

bool Miner::set_group_by(std::string_view path, std::string* error) {
  Impl& m = *impl_;
  m.group_root.clear();
  m.group_keys.clear();
  if (path.empty()) return true;
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (;;) {
    std::size_t dot = path.find('.', at);
    parts.emplace_back(path.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  if ((parts[0] != "metadata" && parts[0] != "context") || parts.size() < 2 ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    *error = fmt::format("group path '{}' is not metadata.KEY… or context.KEY… (keys joined by '.')", path);
    return false;
  }
  m.group_root = parts[0];
  m.group_keys.assign(parts.begin() + 1, parts.end());
  return true;
}

std::vector<MinedRule> Miner::rules(const MineOptions& o) const {
  const Impl& m = *impl_;
  std::vector<MinedRule> out;
  const double n = static_cast<double>(m.traces);
  auto on = [&](MineFamily f) { return (o.families >> static_cast<int>(f)) & 1u; };
  // Thresholds compare integers where they can: a share of 1 means every trace.
  auto keep = [&](const MineCounts& c) {
    if (c.activated == 0 || m.traces == 0) return false;
    if (static_cast<double>(c.activated) < o.min_support * n - 1e-9) return false;
    return static_cast<double>(c.held) >= o.min_confidence * static_cast<double>(c.activated) - 1e-9;
  };
  auto emit = [&](MineFamily f, std::string text, MineCounts c) {
    if (!keep(c)) return;
    MinedRule r;
    r.family = f;
    r.statement = std::move(text);
    r.counts = c;
    r.traces = m.traces;
    out.push_back(std::move(r));
  };
  const std::size_t T = m.names.size();
  std::vector<std::uint32_t> seen;  // tools called in some trace, by name
  for (std::uint32_t i = 0; i < T; ++i)
    if (m.tools[i].occ > 0) seen.push_back(i);
  std::sort(seen.begin(), seen.end(), [&](std::uint32_t a, std::uint32_t b) { return m.names[a] < m.names[b]; });
  auto nm = [&](std::uint32_t id) {
    return mine_is_symbol(m.names[id]) ? m.names[id].substr(1) : mined_tool_name(mine_tool_of(m.names[id]));
  };
  // Groups: per tool, the groups calling it; per pair (only for excludes), the groups calling both.
  const bool grouped = !m.group_root.empty();
  const std::uint64_t groups = grouped ? m.group_tools.size() : m.traces;
  std::vector<std::uint64_t> gocc(T, 0);
  std::unordered_map<std::uint64_t, std::uint64_t> gpair;
  if (grouped)
    for (const auto& [g, list] : m.group_tools) {
      for (std::uint32_t id : list) ++gocc[id];
      if (on(MineFamily::excludes))
        for (std::size_t i = 0; i < list.size(); ++i)
          for (std::size_t j = i + 1; j < list.size(); ++j)
            ++gpair[static_cast<std::uint64_t>(std::min(list[i], list[j])) << 32 | std::max(list[i], list[j])];
    }
  auto group_pair = [&](std::uint32_t a, std::uint32_t b) -> std::uint64_t {
    auto it = gpair.find(static_cast<std::uint64_t>(std::min(a, b)) << 32 | std::max(a, b));
    return it == gpair.end() ? 0 : it->second;
  };

  // Pair families; kept (at confidence 1) for pruning.
  std::set<std::pair<std::uint32_t, std::uint32_t>> prec1, resp1;
  struct PairRule {
    MineFamily f;
    int form;  // precedes/response: 0; chain: 0 = immediately precedes, 1 = immediately followed
    std::uint32_t a, b;
    MineCounts c;
  };
  std::vector<PairRule> pair_rules;
  for (std::uint32_t a : seen)
    for (std::uint32_t b : seen) {
      if (a == b) continue;
      const MinePairCounts* p = m.pair(a, b);
      MinePairCounts zero;
      if (!p) p = &zero;
      const MineToolCounts& ta = m.tools[a];
      const MineToolCounts& tb = m.tools[b];
      MineCounts prec{tb.occ, p->prec}, resp{ta.occ, p->resp}, cp{tb.occ, p->chainp}, cf{ta.occ, p->chainf};
      bool kp = on(MineFamily::precedes) && keep(prec), kr = on(MineFamily::response) && keep(resp);
      // Chains are over tool calls only (`ignoring not tool_call`): not for step symbols.
      const bool chain_ok = on(MineFamily::chain) && !mine_is_symbol(m.names[a]) && !mine_is_symbol(m.names[b]);
      bool kcp = chain_ok && keep(cp), kcf = chain_ok && keep(cf);
      // A chain implies the plain order of the same pair, with the same activation: the order
      // adds nothing when it holds no more often than the chain.
      if (o.prune && kcp && p->chainp == p->prec) kp = false;
      if (o.prune && kcf && p->chainf == p->resp) kr = false;
      if (kp) {
        pair_rules.push_back({MineFamily::precedes, 0, a, b, prec});
        if (prec.held == prec.activated) prec1.insert({a, b});
      }
      if (kr) {
        pair_rules.push_back({MineFamily::response, 0, a, b, resp});
        if (resp.held == resp.activated) resp1.insert({a, b});
      }
      if (kcp) pair_rules.push_back({MineFamily::chain, 0, a, b, cp});
      if (kcf) pair_rules.push_back({MineFamily::chain, 1, a, b, cf});
      if (on(MineFamily::excludes) && m.names[a] < m.names[b]) {
        std::uint64_t either = ta.occ + tb.occ - p->co;
        MineCounts c{either, either - p->co};
        if (keep(c)) {
          // Never together means something only if together was to be expected: the groups
          // with A, with B and with both, against independence.
          double pv = grouped ? mine_fisher_at_most(groups, gocc[a], gocc[b], group_pair(a, b))
                              : mine_fisher_at_most(m.traces, ta.occ, tb.occ, p->co);
          if (pv <= o.max_p + 1e-12) {
            emit(MineFamily::excludes, fmt::format("{} excludes {}", nm(a), nm(b)), c);
            out.back().p_value = pv;
          }
        }
      }
    }
  // Transitive reduction of the orders that always hold: A precedes C follows from A precedes
  // B and B precedes C (the B before each C has an A before it); likewise for is followed by.
  auto implied = [&](const std::set<std::pair<std::uint32_t, std::uint32_t>>& s, std::uint32_t a, std::uint32_t c) {
    for (std::uint32_t b : seen)
      if (b != a && b != c && s.count({a, b}) && s.count({b, c})) return true;
    return false;
  };
  for (const PairRule& r : pair_rules) {
    std::string text;
    switch (r.f) {
      case MineFamily::precedes:
        if (o.prune && r.c.held == r.c.activated && implied(prec1, r.a, r.b)) continue;
        text = fmt::format("{} precedes {}", nm(r.a), nm(r.b));
        break;
      case MineFamily::response:
        if (o.prune && r.c.held == r.c.activated && implied(resp1, r.a, r.b)) continue;
        text = fmt::format("{} is followed by {}", nm(r.a), nm(r.b));
        break;
      default:
        text = nm(r.a) + (r.form == 0 ? " immediately precedes " : " is immediately followed by ") + nm(r.b) +
               " ignoring not tool_call";
    }
    emit(r.f, std::move(text), r.c);
  }
  for (std::uint32_t a : seen) {
    const MineToolCounts& ta = m.tools[a];
    if (on(MineFamily::count)) {
      // At most the largest count seen: holds on every trace (activated where the tool occurs).
      emit(MineFamily::count, fmt::format("{} at most {}", nm(a), ta.max_count), MineCounts{ta.occ, ta.occ});
      // At least the smallest count of the traces that call it: holds where the tool occurs.
      emit(MineFamily::count, fmt::format("{} at least {}", nm(a), ta.min_count), MineCounts{m.traces, ta.occ});
    }
    if (on(MineFamily::args))
      for (const auto& [key, st] : ta.args)
        for (const auto& [value, held] : st.unique) {
          std::string path = mine_is_ident(key) && !mine_reserved_words().count(key)
                                 ? "arguments." + key
                                 : "arguments[" + mine_quote(key) + "]";
          emit(MineFamily::args, fmt::format("forbid {} where not ({} == {})", nm(a), path, value),
               MineCounts{ta.occ, held});
        }
    if (on(MineFamily::provenance))
      for (const auto& [key, c] : ta.prov) {
        std::string path = mine_is_ident(key) && !mine_reserved_words().count(key) ? "arguments." + key
                                                                                    : "arguments[" + mine_quote(key) + "]";
        emit(MineFamily::provenance, fmt::format("forbid {} where {} exists and not seen({}, user)", nm(a), path, path), c);
      }
    if (on(MineFamily::values))
      for (const auto& [key, st] : ta.values) {
        if (st.overflow) continue;
        // Held out: the rule mined without group g holds on g unless g has a trace that does
        // not hold, or a constant no other group gave.
        std::set<std::string> failing = st.bad_groups;
        for (const auto& [lit, gs] : st.consts)
          if (gs.size() == 1) failing.insert(gs[0]);
        // Without groups, each trace is one (bad traces give no constants: the two are apart).
        MineCounts held_out = grouped ? MineCounts{st.groups.size(), st.groups.size() - failing.size()}
                                      : MineCounts{st.counts.activated, st.counts.held - failing.size()};
        if (held_out.activated == 0 ||
            static_cast<double>(held_out.held) < o.min_confidence * static_cast<double>(held_out.activated) - 1e-9)
          continue;
        std::string path = mine_is_ident(key) && !mine_reserved_words().count(key) ? "arguments." + key
                                                                                    : "arguments[" + mine_quote(key) + "]";
        std::string text = fmt::format("forbid {} where {} exists and not seen({})", nm(a), path, path);
        if (!st.consts.empty()) {
          std::string list;
          for (const auto& [lit, gs] : st.consts) list += (list.empty() ? "" : ", ") + lit;
          text += fmt::format(" and not ({} in [{}])", path, list);
        }
        const std::size_t before = out.size();
        emit(MineFamily::values, std::move(text), st.counts);
        if (out.size() > before) {
          out.back().held_out = held_out;
          out.back().held_out_groups = grouped;
        }
      }
  }
  if (on(MineFamily::flow))
    for (const auto& [key, held] : m.flow_held) {
      auto act = m.flow_act.find(key.second);
      if (act == m.flow_act.end()) continue;
      emit(MineFamily::flow,
           fmt::format("{} where {} == $x precedes {} where {} == $x", nm(static_cast<std::uint32_t>(key.first >> 32)),
                       m.flow_paths[key.first & 0xffffffffu], nm(static_cast<std::uint32_t>(key.second >> 32)),
                       m.flow_paths[key.second & 0xffffffffu]),
           MineCounts{act->second, held});
    }
  if (on(MineFamily::only) &&
      std::any_of(seen.begin(), seen.end(), [&](std::uint32_t id) { return !mine_is_symbol(m.names[id]); })) {
    std::string text = "only ";
    bool first = true;
    for (std::uint32_t id : seen)
      if (!mine_is_symbol(m.names[id])) {
        text += (first ? "" : " | ") + nm(id);
        first = false;
      }
    // Held out: the rule mined without a group holds on it unless the group calls a tool
    // no other group calls.
    MineCounts held_out{groups, groups};
    if (grouped) {
      for (const auto& [g, list] : m.group_tools)
        if (std::any_of(list.begin(), list.end(),
                        [&](std::uint32_t id) { return gocc[id] == 1 && !mine_is_symbol(m.names[id]); }))
          --held_out.held;
    } else {
      std::set<std::uint64_t> lone;  // the traces with a tool no other trace calls
      for (std::uint32_t id : seen)
        if (!mine_is_symbol(m.names[id]) && m.tools[id].occ == 1) lone.insert(m.tools[id].a_trace);
      held_out.held -= lone.size();
    }
    if (static_cast<double>(held_out.held) >= o.min_confidence * static_cast<double>(held_out.activated) - 1e-9) {
      emit(MineFamily::only, std::move(text), MineCounts{m.traces, m.traces});
      if (!out.empty() && out.back().family == MineFamily::only) {
        out.back().held_out = held_out;
        out.back().held_out_groups = grouped;
      }
    }
  }
  if (on(MineFamily::forbid) && o.catalog)
    for (const CatalogTool& ct : o.catalog->tools()) {
      auto it = m.ids.find(mine_tool_key(ct.name));
      if (it != m.ids.end() && m.tools[it->second].occ > 0) continue;
      emit(MineFamily::forbid, fmt::format("forbid {}", mined_tool_name(ct.name)), MineCounts{m.traces, m.traces});
    }
  std::stable_sort(out.begin(), out.end(), [](const MinedRule& x, const MinedRule& y) {
    // confidence x.held/x.act > y.held/y.act, compared exactly
    unsigned __int128 l = static_cast<unsigned __int128>(x.counts.held) * y.counts.activated;
    unsigned __int128 r = static_cast<unsigned __int128>(y.counts.held) * x.counts.activated;
    if (l != r) return l > r;
    if (x.counts.activated != y.counts.activated) return x.counts.activated > y.counts.activated;
    return x.statement < y.statement;
  });
  return out;
}

std::string format_mined_rules(const std::vector<MinedRule>& rules, const MineOptions& o, std::uint64_t traces,
                               bool contrastive) {
  std::string out;
  out += fmt::format("# mined by `trajcheck mine` from {} trace{} (min support {:g}, min confidence {:g})\n", traces,
                     traces == 1 ? "" : "s", o.min_support, o.min_confidence);
  out += "# support: traces where the rule is activated; confidence: share of those where it holds\n";
  if (contrastive)
    out += "# contrastive: ranked by separation = share of bad traces violating it - share of good traces violating it\n";
  std::size_t named = 0;
  for (const MinedRule& r : rules) {
    double share = r.traces ? 100.0 * static_cast<double>(r.counts.activated) / static_cast<double>(r.traces) : 0.0;
    out += fmt::format("\n# {}: support {} ({:.1f}%), confidence {:.3f} ({}/{})", to_string(r.family),
                       r.counts.activated, share, r.counts.confidence(), r.counts.held, r.counts.activated);
    if (r.held_out.activated > 0)
      out += fmt::format(", held out {:.3f} ({}/{} {})", r.held_out.confidence(), r.held_out.held,
                         r.held_out.activated, r.held_out_groups ? "groups" : "traces");
    if (r.p_value >= 0) out += fmt::format(", independence p {:.3g}", r.p_value);
    if (r.contrasted) {
      std::uint64_t good_v = r.counts.activated - r.counts.held;
      out += fmt::format("; good violated {}/{} ({:.1f}%), bad violated {}/{} ({:.1f}%), separation {:.3f}", good_v,
                         r.traces, r.traces ? 100.0 * static_cast<double>(good_v) / static_cast<double>(r.traces) : 0.0,
                         r.bad_violated, r.bad_traces,
                         r.bad_traces ? 100.0 * static_cast<double>(r.bad_violated) / static_cast<double>(r.bad_traces) : 0.0,
                         r.separation());
    }
    out += "\n";
    if (r.counts.held == r.counts.activated) out += r.statement + "\n";
    else out += fmt::format("rule mined_{} [warning]: {}\n", ++named, r.statement);
  }
  return out;
}

namespace {

// A RecordInput shared by worker threads, one call at a time.
template <class Fn>
void mine_workers(unsigned jobs, Fn&& fn) {
  jobs = effective_jobs(jobs);
  if (jobs <= 1) {
    fn(0u);
    return;
  }
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j) threads.emplace_back([&fn, j] { fn(j); });
  for (std::thread& t : threads) t.join();
}

}  // namespace

MineReadStats mine_records(const RecordInput& input, const TraceParser& parser, unsigned jobs, Miner& miner,
                           std::string& err, bool warnings) {
  jobs = effective_jobs(jobs);
  std::mutex in_mu, out_mu;
  std::vector<Miner> parts;
  for (unsigned j = 0; j < jobs; ++j) {
    parts.emplace_back(miner.families());
    std::string e;
    parts.back().set_group_by(miner.group_by(), &e);  // a path the miner took: never refused
  }
  std::vector<MineReadStats> stats(jobs);
  // Errors are kept in input order: each record's text is tagged with its sequence number.
  std::map<std::uint64_t, std::string> errs;
  std::uint64_t seq = 0;
  mine_workers(jobs, [&](unsigned j) {
    RawRecord rec;
    ToolTable table;
    Trajectory scratch(&table);
    for (;;) {
      std::uint64_t my;
      {
        std::lock_guard<std::mutex> lock(in_mu);
        if (!input(rec)) return;
        my = seq++;
      }
      std::string e;
      if (rec.skipped()) {
        ++stats[j].warnings;
        if (warnings) e += rec.skip_warning + "\n";
      } else {
        ++stats[j].records;
        ParseOutcome po = parser.parse(rec, scratch, [&](Trajectory& t) {
          ++stats[j].traces;
          for (const std::string& w : t.warnings) {
            ++stats[j].warnings;
            if (warnings) e += w + "\n";
          }
          parts[j].add(t);
        });
        if (!po.ok()) {
          ++stats[j].rejected;
          for (const RecordError& re : po.errors) e += format_record_error(re);
        }
      }
      if (!e.empty()) {
        std::lock_guard<std::mutex> lock(out_mu);
        errs.emplace(my, std::move(e));
      }
    }
  });
  MineReadStats total;
  for (unsigned j = 0; j < jobs; ++j) {
    miner.merge(parts[j]);
    total.records += stats[j].records;
    total.traces += stats[j].traces;
    total.rejected += stats[j].rejected;
    total.warnings += stats[j].warnings;
  }
  for (auto& [k, e] : errs) err += e;
  return total;
}

namespace {
class MineNullWriter final : public CheckWriter {
 public:
  void trace(const Trajectory&, const TraceVerdict&, std::string&) const override {}
  void rejected(const RecordError&, std::string&) const override {}
};
}  // namespace

bool contrast_mined_rules(std::vector<MinedRule>& rules, const RecordInput& input, const NormalizeOptions& reading,
                          unsigned jobs, MineReadStats* stats, std::string* error) {
  MineOptions none;
  std::string text = format_mined_rules(rules, none, 0);
  std::vector<Source> sources;
  sources.push_back(Source{"<mined>", text});
  RuleSetResult rs = compile_rule_set(std::move(sources));
  if (!rs.ok()) {
    *error = "the mined rules did not compile:\n" + rs.format_diagnostics(false, false);
    return false;
  }
  CheckRunOptions ro;
  ro.reading = reading;
  ro.fail_on.never = true;
  ro.quiet = true;
  ro.jobs = jobs;
  CheckRunner runner(rs.rules, ro);
  if (!runner.option_error().empty()) {
    *error = runner.option_error();
    return false;
  }
  MineNullWriter writer;
  std::string errs;
  CheckStats st = runner.run(input, writer, [&](std::string_view, std::string_view e) { errs += e; });
  if (stats) {
    stats->records = st.records;
    stats->traces = st.traces;
    stats->rejected = st.rejected;
    stats->warnings = st.warnings;
  }
  if (!errs.empty()) std::fputs(errs.c_str(), stderr);
  for (std::size_t i = 0; i < rules.size() && i < st.rules.size(); ++i) {
    rules[i].contrasted = true;
    rules[i].bad_traces = st.traces;
    rules[i].bad_violated = st.rules[i].violated_traces;
  }
  return true;
}

}  // namespace trajcheck
