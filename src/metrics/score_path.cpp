// Scoring against an expected PATH given as text: the rule-language front end parses it, and
// path_tree.cpp scores the tree.
#include <fmt/format.h>

#include "language/frontend.hpp"
#include "metrics/scorer_impl.hpp"

namespace trajcheck {


ScoreResult Scorer::score(const Trajectory& actual, std::string_view expected_path,
                          std::string_view name) {
  Source src{std::string(name), std::string(expected_path)};
  ir::Module module;
  std::vector<Diagnostic> diags;
  ir::Id root = language::parse_path_expression(src, module, diags);
  if (root == ir::kNone || has_errors(diags)) {
    ScoreResult r;
    for (const Diagnostic& d : diags) {
      if (d.severity != Severity::error) continue;
      LineCol lc = src.line_col(d.range.begin);
      r.error = fmt::format("expected PATH {}:{}: {}", lc.line, lc.column, d.message);
      break;
    }
    if (r.error.empty()) r.error = "expected PATH does not parse";
    return r;
  }
  metrics::collect_calls(actual, impl_->actual);
  return metrics::score_path_tree(*impl_, impl_->actual, module, root);
}

ScoreResult score(const Trajectory& actual, std::string_view expected_path, const ScoreOptions& options) {
  Scorer s(options);
  return s.score(actual, expected_path);
}

}  // namespace trajcheck
