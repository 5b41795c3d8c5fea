// trajcheck/rule_diff.hpp — what changed in meaning between two rules files (`trajcheck diff`,
// docs/rule-diff.md): rules paired by name, then by meaning; for each pair, whether the new
// rule accepts more traces, fewer, or different ones, with the shortest trace found that one
// accepts and the other rejects, in each direction.
//
//   trajcheck::RuleDiffResult d = trajcheck::diff_rules(old_source, new_source, options);
//   if (!d.ok()) { std::cerr << d.error; return 2; }
//   std::cout << trajcheck::format_rule_diff(d, trajcheck::RuleDiffFormat::text);
//
// The search is a bounded enumeration of traces checked by the real checker (both files
// compiled as `check` compiles them), so every counterexample is one `check` agrees with.
// "unchanged" is claimed only when both rules read the same after expanding groups; otherwise
// a search that finds nothing says "no difference found" and how far it looked. Nothing throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/diagnostic.hpp"

namespace trajcheck {

struct RuleDiffOptions {
  std::string catalog;              // a catalog for both files (overrides their `catalog` line)
  std::uint32_t max_steps = 10;     // longest trace tried
  // Traces of every combination of steps are tried while their number stays under this budget
  // (per rule pair); longer traces are tried from families (runs of one step, a run then another).
  std::uint64_t exhaustive_budget = 2100;
};

enum class RuleChange : std::uint8_t {
  unchanged,            // same meaning after expanding groups (exact)
  no_difference_found,  // searched, found no trace that tells them apart
  widened,              // NEW accepts a trace OLD rejects, and not the other way round (as far as searched)
  narrowed,             // NEW rejects a trace OLD accepts, …
  changed,              // both
};
std::string_view to_string(RuleChange c);

struct DiffTrace {
  std::vector<std::string> steps;  // one line per step: `refund_order {"order_id":"v1"}`
  std::string record;              // the trace as a native record (one JSON line), for `check`
  std::string context;             // the trace's context object (JSON), empty: none
};

struct RuleDiffEntry {
  std::string old_name, new_name;  // empty when the rule is added / removed
  std::string old_location, new_location;
  std::string paired_by;           // "name", "meaning", "position" (unnamed statements), "added", "removed"
  RuleChange change = RuleChange::unchanged;
  bool has_widening = false;       // new_accepts_old_rejects holds a trace
  bool has_narrowing = false;
  DiffTrace widening;              // NEW accepts, OLD rejects
  DiffTrace narrowing;             // OLD accepts, NEW rejects
  std::uint32_t exhaustive_steps = 0;  // every trace over the alphabet up to this length was tried
  std::uint32_t core_steps = 0;        // every trace of steps as written (conditions true) up to this length
  std::uint32_t searched_steps = 0;    // families of traces up to this length were tried
  std::uint32_t alphabet = 0;          // distinct steps the traces were built from
  std::uint64_t traces_checked = 0;
  std::vector<std::string> inexact;    // why a search that found nothing does not prove equality
  std::vector<std::string> notes;      // severity or message changes (not meaning)
  double milliseconds = 0;
};

struct RuleDiffResult {
  std::string old_file, new_file;
  std::uint32_t max_steps = 10;
  std::vector<RuleDiffEntry> rules;
  std::string error;  // the files could not be read or compiled (diagnostics text)
  bool ok() const { return error.empty(); }
};

RuleDiffResult diff_rules(const Source& old_rules, const Source& new_rules, const RuleDiffOptions& options = {});

enum class RuleDiffFormat : std::uint8_t { text, json };
// `timings`: each rule's search time in milliseconds (json only; varies from run to run).
std::string format_rule_diff(const RuleDiffResult& result, RuleDiffFormat format, bool timings = false);

}  // namespace trajcheck
