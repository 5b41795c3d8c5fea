#include "checker/coverage.hpp"

#include <algorithm>
#include <utility>

#include "checker/step_eval.hpp"
#include "compiler/catalog_checks.hpp"
#include "compiler/program.hpp"
#include "language/frontend.hpp"

namespace trajcheck::detail {

namespace {
// The binder patterns under pattern `id`, in order (compiler/program.cpp's collect_binders).
void collect_binders(const ProgramImpl& p, std::uint32_t id, std::vector<std::uint32_t>& out) {
  if (id == kNoId || id >= p.patterns.size() || !p.patterns[id].parametric) return;
  const PatternNode& n = p.patterns[id];
  if (n.binder) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    return;
  }
  collect_binders(p, n.a, out);
  collect_binders(p, n.b, out);
}
}  // namespace

struct CoverageProbe::Impl {
  std::shared_ptr<const ProgramImpl> program;
  std::vector<std::vector<StatementProbe>> statements;
  std::vector<std::uint8_t> parametric, scoped;
  // The derived program: one rule per split statement, and where each came from.
  std::unique_ptr<Checker> split_checker;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> split_of;
  std::vector<RuleResult> results;
  StepEval eval;
  // Followed automata: (rule, statement, nfa).
  struct Walk {
    std::uint32_t rule, statement;
    const Nfa* nfa;
    bool exact;
  };
  std::vector<Walk> walks;
  std::vector<std::uint64_t> cur, next;

  explicit Impl(std::shared_ptr<const ProgramImpl> p) : program(std::move(p)), eval(*program) {
    const ProgramImpl& pr = *program;
    if (pr.specs.empty() && pr.infos.empty()) return;
    auto split = std::make_shared<ProgramImpl>(pr);
    split->infos.clear();
    split->specs.clear();
    statements.resize(pr.specs.size());
    for (std::uint32_t r = 0; r < pr.specs.size(); ++r) {
      const RuleSpec& spec = pr.specs[r];
      const bool par = !spec.variable.empty();
      const bool global = spec.scope == ir::ScopeKind::global;
      parametric.push_back(par);
      scoped.push_back(!global);
      for (std::uint32_t k = 0; k < spec.statements.size(); ++k) {
        const StatementSpec& st = spec.statements[k];
        StatementProbe sp;
        sp.text = st.text;
        // A statement of a parametric rule is checked alone in the slices of its own binders
        // (found as the compiler finds a rule's); one that binds nothing is not measured.
        std::vector<std::uint32_t> binders;
        if (par) {
          collect_binders(pr, st.a, binders);
          collect_binders(pr, st.b, binders);
        }
        sp.split = spec.statements.size() > 1 && (!par || !binders.empty());
        sp.is_expect = st.kind == ir::StatementKind::expect || st.kind == ir::StatementKind::expect_exactly;
        sp.path = sp.is_expect && st.nfa != kNoId && global && !par;
        if (sp.path) {
          const Nfa& n = pr.nfas[st.nfa];
          for (std::uint32_t pos = 0; pos < n.positions; ++pos) sp.atoms.push_back(pr.patterns[n.atom[pos]].text);
          auto has = [&](const std::uint64_t* set, std::uint32_t q) { return (set[q / 64] >> (q % 64)) & 1; };
          for (std::uint32_t q = 0; q < n.positions; ++q)
            if (has(n.first.data(), q)) sp.transitions.emplace_back(kPathStart, q);
          if (n.nullable) sp.transitions.emplace_back(kPathStart, kPathEnd);
          for (std::uint32_t p = 0; p < n.positions; ++p) {
            for (std::uint32_t q = 0; q < n.positions; ++q)
              if (has(n.follow_of(p), q)) sp.transitions.emplace_back(p, q);
            if (has(n.last.data(), p)) sp.transitions.emplace_back(p, kPathEnd);
          }
          walks.push_back({r, k, &n, st.kind == ir::StatementKind::expect_exactly});
        }
        if (sp.split) {
          RuleSpec one = spec;
          one.statements = {st};
          one.binders = binders;
          split->specs.push_back(std::move(one));
          split->infos.push_back(pr.infos[r]);
          split_of.emplace_back(r, k);
        }
        statements[r].push_back(std::move(sp));
      }
    }
    if (!split->specs.empty()) split_checker = std::make_unique<Checker>(std::make_shared<const Program>(split));
  }

  void observe(const Trajectory& trace, std::string_view fixture, TraceCoverage& out) {
    out.violated.assign(statements.size(), {});
    out.reached.assign(statements.size(), {});
    out.taken.assign(statements.size(), {});
    for (std::size_t r = 0; r < statements.size(); ++r) {
      out.violated[r].assign(statements[r].size(), 0);
      out.reached[r].resize(statements[r].size());
      out.taken[r].resize(statements[r].size());
      for (std::size_t k = 0; k < statements[r].size(); ++k) {
        out.reached[r][k].assign(statements[r][k].atoms.size(), 0);
        out.taken[r][k].assign(statements[r][k].transitions.size(), 0);
      }
    }
    if (split_checker) {
      split_checker->set_fixture(fixture);
      split_checker->check(trace, results);
      for (const RuleResult& res : results)
        if (res.status == VerdictStatus::violated) {
          auto [r, k] = split_of[res.rule];
          out.violated[r][k] = 1;
        }
    }
    if (walks.empty()) return;
    // The walk of StatementMonitor::expect_next / step_expect, per followed automaton.
    eval.docs().set_fixture(fixture);
    eval.begin_trace(trace);
    struct State {
      std::vector<std::uint64_t> cur;
      bool started = false, done = false;
    };
    std::vector<State> states(walks.size());
    for (std::size_t w = 0; w < walks.size(); ++w) states[w].cur.assign(walks[w].nfa->words, 0);
    const auto n = static_cast<std::uint32_t>(trace.steps().size());
    for (std::uint32_t i = 0; i < n; ++i) {
      eval.begin_step(trace.steps()[i], i);
      if (!eval.is_tool_call()) continue;
      for (std::size_t w = 0; w < walks.size(); ++w) {
        State& s = states[w];
        if (s.done) continue;
        const Nfa& a = *walks[w].nfa;
        if (!walks[w].exact && std::none_of(a.atoms.begin(), a.atoms.end(), [&](std::uint32_t at) { return eval.match(at); }))
          continue;
        next.assign(a.words, 0);
        if (!s.started) {
          std::copy(a.first.begin(), a.first.end(), next.begin());
        } else {
          for (std::uint32_t x = 0; x < a.words; ++x)
            for (std::uint64_t bits = s.cur[x]; bits != 0; bits &= bits - 1) {
              const std::uint32_t p = x * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
              const std::uint64_t* f = a.follow_of(p);
              for (std::uint32_t v = 0; v < a.words; ++v) next[v] |= f[v];
            }
        }
        bool any = false;
        const StatementProbe& sp = statements[walks[w].rule][walks[w].statement];
        std::vector<std::uint8_t>& reached = out.reached[walks[w].rule][walks[w].statement];
        std::vector<std::uint8_t>& taken = out.taken[walks[w].rule][walks[w].statement];
        for (std::uint32_t x = 0; x < a.words; ++x)
          for (std::uint64_t bits = next[x]; bits != 0; bits &= bits - 1) {
            const unsigned b = static_cast<unsigned>(__builtin_ctzll(bits));
            const std::uint32_t p = x * 64 + b;
            if (!eval.match(a.atom[p])) {
              next[x] &= ~(std::uint64_t(1) << b);
            } else {
              any = true;
              reached[p] = 1;
            }
          }
        // The transitions this call took: from each current position (or the start) to each
        // position it reached that may follow it.
        for (std::size_t e = 0; e < sp.transitions.size(); ++e) {
          const auto [from, to] = sp.transitions[e];
          if (to == kPathEnd || !((next[to / 64] >> (to % 64)) & 1)) continue;
          if (from == kPathStart ? !s.started : s.started && ((s.cur[from / 64] >> (from % 64)) & 1)) taken[e] = 1;
        }
        s.started = true;
        s.cur.swap(next);
        if (!any) s.done = true;  // the checker stops this statement here (its witness)
      }
    }
    // The trace ended: an accepting position (or an empty word the PATH accepts) took its exit.
    for (std::size_t w = 0; w < walks.size(); ++w) {
      const State& s = states[w];
      if (s.done) continue;
      const StatementProbe& sp = statements[walks[w].rule][walks[w].statement];
      std::vector<std::uint8_t>& taken = out.taken[walks[w].rule][walks[w].statement];
      for (std::size_t e = 0; e < sp.transitions.size(); ++e) {
        const auto [from, to] = sp.transitions[e];
        if (to != kPathEnd) continue;
        if (from == kPathStart ? !s.started : s.started && ((s.cur[from / 64] >> (from % 64)) & 1)) taken[e] = 1;
      }
    }
  }
};

namespace {
// compile() (compiler/compile.cpp) up to the compiled tables; null when the source has errors.
std::shared_ptr<const ProgramImpl> compile_impl(const Source& source, const CompileOptions& options) {
  language::FrontendOptions fo;
  fo.max_nesting = options.max_nesting;
  language::FrontendResult fr = language::parse_rules(source, fo);
  std::vector<Diagnostic> diagnostics = std::move(fr.diagnostics);
  if (has_errors(diagnostics)) return nullptr;
  std::shared_ptr<ProgramImpl> program = build_program(fr.module, source, options, diagnostics);
  if (!program || !attach_catalog(fr.module, source, options, program.get(), diagnostics)) return nullptr;
  return program;
}
}  // namespace

CoverageProbe::CoverageProbe(const Source& source, const CompileOptions& options) {
  std::shared_ptr<const ProgramImpl> p = compile_impl(source, options);
  ok_ = p != nullptr;
  impl_ = std::make_unique<Impl>(p ? p : std::make_shared<const ProgramImpl>());
}
bool CoverageProbe::ok() const { return ok_; }
CoverageProbe::~CoverageProbe() = default;
CoverageProbe::CoverageProbe(CoverageProbe&&) noexcept = default;
CoverageProbe& CoverageProbe::operator=(CoverageProbe&&) noexcept = default;
const std::vector<std::vector<StatementProbe>>& CoverageProbe::statements() const { return impl_->statements; }
bool CoverageProbe::parametric(std::uint32_t rule) const { return impl_->parametric[rule] != 0; }
bool CoverageProbe::scoped(std::uint32_t rule) const { return impl_->scoped[rule] != 0; }
void CoverageProbe::observe(const Trajectory& trace, std::string_view fixture, TraceCoverage& out) {
  impl_->observe(trace, fixture, out);
}

}  // namespace trajcheck::detail
