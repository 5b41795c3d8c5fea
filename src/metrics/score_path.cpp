// Scoring against an expected PATH given as text: the rule-language front end parses it, and
// path_tree.cpp scores the tree.
#include <fmt/format.h>

#include "language/frontend.hpp"
#include "metrics/scorer_impl.hpp"

namespace trajcheck {

ScoreResult Scorer::score(const Trajectory& actual, std::string_view expected_path,
                          std::string_view name) {
  return impl_->score(actual, expected_path, name);
}

ScoreResult metrics::ScorerCore::score(const Trajectory& act, std::string_view expected_path,
                                       std::string_view name) {
  // Records of one suite often share their expected PATH: parse it once.
  PathCache& c = path_cache;
  if (!c.valid || c.text != expected_path) {
    c.valid = true;
    c.text.assign(expected_path);
    c.module = ir::Module{};
    c.error.clear();
    Source src{std::string(name), std::string(expected_path)};
    std::vector<Diagnostic> diags;
    c.root = language::parse_path_expression(src, c.module, diags);
    if (c.root == ir::kNone || has_errors(diags)) {
      for (const Diagnostic& d : diags) {
        if (d.severity != Severity::error) continue;
        LineCol lc = src.line_col(d.range.begin);
        c.error = fmt::format("expected PATH {}:{}: {}", lc.line, lc.column, d.message);
        break;
      }
      if (c.error.empty()) c.error = "expected PATH does not parse";
    }
  }
  if (!c.error.empty()) {
    ScoreResult r;
    r.error = c.error;
    return r;
  }
  canon.clear();
  metrics::collect_calls(act, canon, actual, actual_args);
  return metrics::score_path_tree(*this, actual, c.module, c.root);
}

ScoreResult score(const Trajectory& actual, std::string_view expected_path, const ScoreOptions& options) {
  Scorer s(options);
  return s.score(actual, expected_path);
}

}  // namespace trajcheck
