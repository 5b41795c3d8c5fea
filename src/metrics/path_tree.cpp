// Scoring against an expected PATH tree: expand it into forms, keep the form with the best
// ordering, then score its atoms like an expected list of calls.
#include <algorithm>

#include "metrics/scorer_impl.hpp"

namespace trajcheck {

namespace metrics {

// Shared with tests: score against an already-built PATH tree.
ScoreResult score_path_tree(ScorerCore& impl, const std::vector<Call>& actual,
                            const ir::Module& module, ir::Id root) {
  PathOrdering po;
  po.module = &module;
  std::vector<Form> forms = expand_path(module, root, &po.truncated);
  std::vector<std::string_view> names;
  for (const Call& c : actual) names.push_back(c.name);

  std::size_t best = 0;
  double best_ratio = -1;
  std::uint32_t best_count = 0;
  bool best_exact = true;
  for (std::size_t f = 0; f < forms.size(); ++f) {
    bool exact = true;
    std::uint32_t count = impl.evaluator.evaluate(module, forms[f], names, &exact);
    double ratio = forms[f].steps == 0 ? 1.0 : double(count) / forms[f].steps;
    // Best ratio; then more matched steps; then fewer steps.
    bool better = ratio > best_ratio ||
                  (ratio == best_ratio && (count > best_count ||
                                           (count == best_count && forms[f].steps < forms[best].steps)));
    if (better) {
      best = f;
      best_ratio = ratio;
      best_count = count;
      best_exact = exact;
    }
  }
  std::vector<Call> expected;
  std::vector<std::string> labels;
  if (!forms.empty()) {
    std::vector<ir::Id> atoms;
    form_atoms(forms[best], atoms);
    bool plain = true;
    for (const FormNode& n : forms[best].nodes)
      if (n.kind == FormNode::Kind::group) plain = false;
    po.plain_sequence = plain;
    // A glob or `any` atom is named after the first actual call it matches, so that the
    // name-based selection sees it as called.
    labels.reserve(atoms.size());
    for (ir::Id a : atoms) {
      const ir::Pattern* p = a < module.patterns.size() ? &module.patterns[a] : nullptr;
      std::string label;
      if (p && p->kind == ir::Pattern::Kind::tool) {
        label = p->name;
      } else {
        for (const Call& c : actual)
          if (pattern_matches_name(module, a, c.name)) {
            label = std::string(c.name);
            break;
          }
        if (label.empty()) label = pattern_label(module, a);
      }
      labels.push_back(std::move(label));
    }
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      Call c;
      c.name = labels[i];
      c.pattern = atoms[i];
      expected.push_back(c);
    }
  }
  // An atom has no arguments: each counts as the empty object.
  impl.expected_args.assign(expected.size(), impl.canon.add({}));
  po.matched = best_count;
  po.exact = best_exact && !po.truncated;
  return impl.score_canonical(actual, expected, &po);
}

}  // namespace metrics

}  // namespace trajcheck
