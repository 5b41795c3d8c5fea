// trajcheck/mine.hpp — rules learned from traces (`trajcheck mine`, docs/mining.md).
//
//   trajcheck::Miner miner;                                  // counters, no trace kept
//   for (each trajectory t) miner.add(t);                    // one pass, streaming
//   trajcheck::MineOptions o;                                 // thresholds, templates
//   std::vector<trajcheck::MinedRule> rules = miner.rules(o); // kept, pruned, ranked
//   std::string text = trajcheck::format_mined_rules(rules, o, miner.traces());
//
// A Miner counts, per trace, which candidate rules of each template family are activated
// and which hold, with the checker's turn semantics (docs/language.md, "Turns"). Its memory
// is bounded by the number of distinct tool names (pair counters) and, for argument
// constants, by a fixed number of values per tool argument. Miners of parts of a corpus
// merge (merge()) into the miner of the whole. Not thread-safe: one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trajcheck/catalog.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {

enum class MineFamily : std::uint8_t {
  precedes,   // A precedes B
  response,   // A is followed by B
  chain,      // A immediately precedes B / A is immediately followed by B (tool calls only)
  count,      // A at most N / A at least N
  forbid,     // forbid T, T a catalog tool never called
  only,       // only T1 | T2 | …
  excludes,   // A excludes B (never together in one trace)
  args,       // forbid T where not (arguments.k == V)
  flow,       // A where result.p == $x precedes B where arguments.k == $x (also from A's arguments)
  provenance,  // forbid A where arguments.k exists and not seen(arguments.k, user)
  values,      // forbid A where arguments.k exists and not seen(arguments.k) and not (arguments.k in [constants])
};
constexpr int kMineFamilyCount = 11;
std::string_view to_string(MineFamily f);
// Parses a comma-separated list of family names (also "all"); false with *error on an unknown one.
bool parse_mine_families(std::string_view list, std::uint32_t* mask, std::string* error);

struct MineOptions {
  double min_support = 0.1;     // share of traces where a rule is activated
  double min_confidence = 1.0;  // share of activated traces where it holds
  std::uint32_t families = (1u << kMineFamilyCount) - 1;  // bit i: MineFamily(i)
  std::shared_ptr<const Catalog> catalog;  // for `forbid` of tools never called
  bool prune = true;                       // drop rules implied by kept ones
  // `A excludes B` is kept only when never (or so rarely) seeing A and B together is unlikely
  // for independent tools: the one-sided Fisher exact test over groups (traces without
  // grouping) gives a p-value at most this.
  double max_p = 0.05;
};

struct MineCounts {
  std::uint64_t activated = 0;  // traces where the rule is not vacuous
  std::uint64_t held = 0;       // of those, traces where it holds
  double confidence() const { return activated ? static_cast<double>(held) / static_cast<double>(activated) : 0.0; }
};

struct MinedRule {
  MineFamily family = MineFamily::precedes;
  std::string statement;  // one statement of the rule language
  MineCounts counts;      // on the mined (good) traces
  std::uint64_t traces = 0;  // traces mined
  // `only`, `values`: the groups (traces without grouping) on which the rule mined from the
  // other groups holds, out of all groups (`values`: the groups where it is activated) — what
  // it is likely to do on a group not mined. Kept when its share reaches the minimum
  // confidence too. `held_out.activated == 0`: not used.
  MineCounts held_out;
  bool held_out_groups = false;  // held_out counts groups (Miner::set_group_by), else traces
  // `excludes`: the p-value of its independence test (MineOptions::max_p); < 0: not used.
  double p_value = -1;
  // Contrastive mode: on the bad traces, as `check` evaluates the statement.
  bool contrasted = false;
  std::uint64_t bad_traces = 0, bad_violated = 0;
  double separation() const;  // bad violated share − good violated share
};

class Miner {
 public:
  // `families`: the families that will be asked for (value flow, the costliest to count, is
  // only counted when its bit is set).
  explicit Miner(std::uint32_t families = (1u << kMineFamilyCount) - 1);
  // Groups of traces that are one unit of evidence (runs of one task by several agents):
  // the held-out estimate of `only` and the independence test of `excludes` count groups,
  // not traces. `path`: `metadata.K…` or `context.K…`, the group's name in each trace; a
  // trace without it is a group of its own and is counted (ungrouped()). Empty: every trace
  // is a group. False with *error for a path of another root.
  bool set_group_by(std::string_view path, std::string* error);
  std::string group_by() const;  // the path given, or empty
  std::uint64_t groups() const;
  std::uint64_t ungrouped() const;
  std::uint32_t families() const;
  ~Miner();
  Miner(Miner&&) noexcept;
  Miner& operator=(Miner&&) noexcept;

  void add(const Trajectory& t);
  void merge(const Miner& other);
  std::uint64_t traces() const;
  // The candidates above the thresholds, pruned (options.prune), ranked by confidence, then
  // support, then text.
  std::vector<MinedRule> rules(const MineOptions& options) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A `.rules` file of `rules`, each preceded by a `#` comment with its figures. Rules below
// confidence 1 are written as named rules of severity warning (`rule mined_N [warning]: …`).
std::string format_mined_rules(const std::vector<MinedRule>& rules, const MineOptions& options,
                               std::uint64_t traces, bool contrastive = false);

// Quotes a normalized tool name for the rule language when it is not a plain bare name.
std::string mined_tool_name(std::string_view name);

// Reads every record of `input` with `parser` and adds its trajectories to `miner`, with
// `jobs` threads (0: one per core). Rejected records, and warnings unless `warnings` is false
// (they are counted either way), are written to `err` in input order (located,
// "file:line:col: …"). Returns the counters of what was read.
struct MineReadStats {
  std::uint64_t records = 0, traces = 0, rejected = 0, warnings = 0;
};
MineReadStats mine_records(const RecordInput& input, const TraceParser& parser, unsigned jobs, Miner& miner,
                           std::string& err, bool warnings = true);

// Contrastive mode: checks `rules` (mined on good traces) over the bad traces of `input`
// with the checker and fills their bad_* figures. Returns false with *error when the rules
// do not compile (which would be a bug of the miner).
bool contrast_mined_rules(std::vector<MinedRule>& rules, const RecordInput& input, const NormalizeOptions& reading,
                          unsigned jobs, MineReadStats* stats, std::string* error);

}  // namespace trajcheck
