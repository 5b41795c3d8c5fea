// `trajcheck mine TRACES…`: candidate rules learned from traces, written as a rules file
// (docs/mining.md). `--good PATHS --bad PATHS`: the rules that hold on the good traces and
// are violated on the bad ones, ranked by how well they separate them.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/mine.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {
namespace {

struct MineArgs {
  TraceInputOptions input;
  std::vector<std::string> good, bad;
  double min_support = 0.1;
  double min_confidence = 1.0;
  std::string templates = "all";
  std::string catalog;
  std::string out;
  std::string group_by;
  double max_p = 0.05;
  bool no_prune = false;
};

void mine_print_read(const char* what, const MineReadStats& s) {
  fmt::print(stderr, "mine: {}{} records read, {} traces, {} rejected, {} warnings\n", what, s.records, s.traces,
             s.rejected, s.warnings);
}

int run_mine(MineArgs& a) {
  const bool contrastive = !a.good.empty() || !a.bad.empty();
  if (contrastive && (a.good.empty() || a.bad.empty())) {
    fmt::print(stderr, "trajcheck mine: --good and --bad go together\n");
    return kBadInput;
  }
  if (contrastive && !a.input.inputs.empty()) {
    fmt::print(stderr, "trajcheck mine: with --good/--bad, give no other TRACES\n");
    return kBadInput;
  }
  if (!contrastive && a.input.inputs.empty()) {
    fmt::print(stderr, "trajcheck mine: no TRACES given\n");
    return kBadInput;
  }
  if (!(a.min_support >= 0 && a.min_support <= 1) || !(a.min_confidence >= 0 && a.min_confidence <= 1)) {
    fmt::print(stderr, "trajcheck mine: --min-support and --min-confidence are shares between 0 and 1\n");
    return kBadInput;
  }
  MineOptions mo;
  mo.min_support = a.min_support;
  mo.min_confidence = a.min_confidence;
  mo.prune = !a.no_prune;
  mo.max_p = a.max_p;
  if (!(a.max_p >= 0 && a.max_p <= 1)) {
    fmt::print(stderr, "trajcheck mine: --max-p is a probability between 0 and 1\n");
    return kBadInput;
  }
  std::string error;
  if (!parse_mine_families(a.templates, &mo.families, &error)) {
    fmt::print(stderr, "trajcheck mine: --templates: {}\n", error);
    return kBadInput;
  }
  if (!a.catalog.empty()) {
    CatalogLoad cl = load_catalog(a.catalog);
    if (!cl.ok()) {
      fmt::print(stderr, "{}", format_diagnostics(cl.source, cl.diagnostics, false));
      fmt::print(stderr, "trajcheck mine: the catalog {} could not be loaded\n", a.catalog);
      return kBadInput;
    }
    mo.catalog = cl.catalog;
  } else if (mo.families != ((1u << kMineFamilyCount) - 1) && ((mo.families >> static_cast<int>(MineFamily::forbid)) & 1u)) {
    fmt::print(stderr, "trajcheck mine: the forbid template needs --catalog (the tools that could have been called)\n");
    return kBadInput;
  }
  NormalizeOptions reading;
  if (!make_normalize_options(a.input, &reading, &error)) {
    fmt::print(stderr, "trajcheck mine: {}\n", error);
    return kBadInput;
  }
  TraceParser parser(reading);
  if (!parser.option_error().empty()) {
    fmt::print(stderr, "trajcheck mine: {}\n", parser.option_error());
    return kBadInput;
  }
  Miner miner(mo.families);
  if (!miner.set_group_by(a.group_by, &error)) {
    fmt::print(stderr, "trajcheck mine: --group-by: {}\n", error);
    return kBadInput;
  }
  std::string err;
  RecordSource source(contrastive ? a.good : a.input.inputs, reading.format);
  MineReadStats read =
      mine_records([&](RawRecord& r) { return source.next(r); }, parser, a.input.jobs, miner, err, !a.input.quiet);
  std::fputs(err.c_str(), stderr);  // rejected records always; warnings unless --quiet
  mine_print_read(contrastive ? "good: " : "", read);
  if (!a.group_by.empty()) {
    fmt::print(stderr, "mine: {} groups by {}\n", miner.groups(), a.group_by);
    if (miner.ungrouped() > 0)
      fmt::print(stderr, "trajcheck mine: warning: {} trace{} without {}: each is a group of its own\n", miner.ungrouped(),
                 miner.ungrouped() == 1 ? "" : "s", a.group_by);
  }
  if (read.traces == 0) {
    fmt::print(stderr, "trajcheck mine: no trace was read; nothing to mine\n");
    return kBadInput;
  }
  std::vector<MinedRule> rules = miner.rules(mo);
  if (contrastive) {
    RecordSource bad(a.bad, reading.format);
    MineReadStats bs;
    if (!contrast_mined_rules(rules, [&](RawRecord& r) { return bad.next(r); }, reading, a.input.jobs, &bs, &error)) {
      fmt::print(stderr, "trajcheck mine: internal error: {}\n", error);
      return kInternal;
    }
    mine_print_read("bad: ", bs);
    if (bs.traces == 0) {
      fmt::print(stderr, "trajcheck mine: no bad trace was read; nothing to contrast\n");
      return kBadInput;
    }
    std::vector<MinedRule> kept;
    for (MinedRule& r : rules)
      if (r.bad_violated > 0 && r.separation() > 0) kept.push_back(std::move(r));
    std::stable_sort(kept.begin(), kept.end(), [](const MinedRule& x, const MinedRule& y) {
      if (x.separation() != y.separation()) return x.separation() > y.separation();
      return x.bad_violated > y.bad_violated;
    });
    rules = std::move(kept);
  }
  std::string text = format_mined_rules(rules, mo, read.traces, contrastive);
  if (a.out.empty() || a.out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::FILE* f = std::fopen(a.out.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      fmt::print(stderr, "trajcheck mine: cannot write {}\n", a.out);
      return kInternal;
    }
  }
  fmt::print(stderr, "mine: {} rule{} kept\n", rules.size(), rules.size() == 1 ? "" : "s");
  return read.rejected > 0 ? kBadInput : kPass;
}

const bool mine_registered = register_command({"mine", 75, [](CLI::App& app) {
  auto a = std::make_shared<MineArgs>();
  CLI::App* sub = app.add_subcommand("mine", "learn candidate rules from traces and write them as a rules file");
  add_trace_input_options(sub, a->input, /*inputs_required=*/false);
  sub->add_option("--min-support", a->min_support, "share of traces where a rule must be activated (default 0.1)");
  sub->add_option("--min-confidence", a->min_confidence,
                  "share of its activated traces where a rule must hold (default 1)");
  sub->add_option("--templates", a->templates,
                  "comma-separated families: precedes, response, chain, count, forbid, only, excludes, args, flow, provenance, values "
                  "(default all)");
  sub->add_option("--group-by", a->group_by,
                  "metadata.KEY or context.KEY: traces with one value are one group (runs of one task), the unit "
                  "of the held-out estimate of `only` and `values` and of the independence test of `excludes`");
  sub->add_option("--max-p", a->max_p,
                  "keep `A excludes B` only when independent tools would be seen together this rarely with at "
                  "most this probability (default 0.05)");
  sub->add_option("--catalog", a->catalog, "tool catalog: its tools never called are mined as `forbid`");
  sub->add_option("-o,--out", a->out, "write the rules file here (default: standard output)");
  sub->add_option("--good", a->good, "contrastive mode: traces that behave as wanted")->expected(1, -1);
  sub->add_option("--bad", a->bad, "contrastive mode: traces that do not")->expected(1, -1);
  sub->add_flag("--no-prune", a->no_prune, "keep rules implied by other kept rules");
  return std::function<int()>([a] { return run_mine(*a); });
}});

}  // namespace
}  // namespace trajcheck::cli
