// The Checker: one pass over a trace's steps, feeding each rule's scope tracker, which
// opens and closes segments (§4, §4a) around its statement monitors; then a finish step.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "checker/monitor.hpp"
#include "checker/step_eval.hpp"
#include "compiler/program.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

namespace {

using detail::StatementMonitor;
using detail::StepEval;

// One rule's per-trace state: the segment tracker and its statements' monitors.
struct RuleState {
  const detail::RuleSpec* spec = nullptr;
  std::vector<StatementMonitor> monitors;
  bool open = false;      // a segment is open
  bool opened_once = false;  // `after Q` opens at the first Q only
  bool settled = false;   // single-segment scope whose monitors are all done
  bool violated = false, satisfied = false;
  std::vector<std::uint32_t> witnesses;

  void begin_segment() {
    open = true;
    for (StatementMonitor& m : monitors) m.begin();
  }
  void end_segment() {
    open = false;
    for (StatementMonitor& m : monitors) {
      switch (m.finish(witnesses)) {
        case VerdictStatus::violated: violated = true; break;
        case VerdictStatus::satisfied: satisfied = true; break;
        case VerdictStatus::vacuous: break;
      }
    }
  }
  void start_trace() {
    open = opened_once = settled = violated = satisfied = false;
    witnesses.clear();
    if (spec->scope == ir::ScopeKind::global || spec->scope == ir::ScopeKind::before) begin_segment();
  }
  // The finish step: a segment still open is checked, except in `between`.
  void finish_trace() {
    if (open && spec->scope != ir::ScopeKind::between) end_segment();
  }
  void result(RuleResult& res) {
    if (violated) {
      res.status = VerdictStatus::violated;
      std::sort(witnesses.begin(), witnesses.end());
      witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());
      res.steps = witnesses;
    } else {
      res.status = satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
    }
  }
  void feed(StepEval& ev) {
    bool all_done = true;
    for (StatementMonitor& m : monitors) {
      if (!m.done()) {
        std::uint32_t ign = m.spec().ignoring;
        if (ign == detail::kNoId || !ev.match(ign)) m.step(ev);
      }
      all_done = all_done && m.done();
    }
    // Only scopes with one segment can stop early; between/after-until may open again.
    settled = all_done && (spec->scope == ir::ScopeKind::global ||
                           spec->scope == ir::ScopeKind::after ||
                           spec->scope == ir::ScopeKind::before);
  }
};

// Bound values of one trace, interned once for all parametric rules: a step's value is
// hashed once per step, and each rule finds its slice by array index, not by its own map.
struct ValueIds {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> ids;
  std::vector<std::pair<std::string_view, std::uint32_t>> step_cache;  // this step's values

  std::uint32_t id(std::string_view key) {
    for (const auto& [k, v] : step_cache)
      if (k == key) return v;
    auto it = ids.find(key);
    std::uint32_t v;
    if (it != ids.end()) {
      v = it->second;
    } else {
      v = static_cast<std::uint32_t>(ids.size());
      ids.emplace(std::string(key), v);
    }
    step_cache.emplace_back(key, v);
    return v;
  }
};

// A parametric rule (§5): one RuleState per bound value (its slice), plus `bottom`, the
// state of a value not bound yet: it has seen exactly the steps that bind nothing, so a
// new value's slice starts as a copy of it. States are pooled and reused across traces.
struct Parametric {
  struct SliceState {
    std::string key;
    RuleState state;
    std::uint32_t seen_upto = 0;  // lazy rules: fed (or caught up on) every step before this
    std::uint32_t vid = 0;        // its value's id (ValueIds)
  };
  RuleState bottom;
  // Lazy rules: per statement, the last step binding nothing that matters to it (NbEffect).
  std::vector<std::uint32_t> last_event;
  std::uint64_t dropped = 0;  // bindings of values not given a slice (the bindings limit)
  std::vector<SliceState> slices;
  std::size_t used = 0;
  // Slice of each value id of the trace (ValueIds), kNoId when the value has none here.
  std::vector<std::uint32_t> slice_of;
  std::vector<std::string_view> step_keys;

  // The slice of value `vid` (text `key`), created from bottom at step `i` the first time;
  // kNoId when the value is new and `limit` slices exist already.
  std::uint32_t slice_for(std::uint32_t vid, std::string_view key, std::uint32_t i, std::uint64_t limit) {
    if (vid >= slice_of.size()) slice_of.resize(std::size_t(vid) + 1, detail::kNoId);
    if (slice_of[vid] != detail::kNoId) return slice_of[vid];
    if (used >= limit) {
      ++dropped;
      return detail::kNoId;
    }
    if (used == slices.size()) {
      slices.push_back(SliceState{std::string(key), bottom, i, vid});
    } else {  // reuse the pooled state's storage (copy-assignment keeps capacity)
      SliceState& sl = slices[used];
      sl.key.assign(key);
      sl.state = bottom;
      sl.seen_upto = i;
      sl.vid = vid;
    }
    slice_of[vid] = static_cast<std::uint32_t>(used);
    return static_cast<std::uint32_t>(used++);
  }

  void start_trace() {
    for (std::size_t j = 0; j < used; ++j) slice_of[slices[j].vid] = detail::kNoId;
    used = 0;
    dropped = 0;
    bottom.start_trace();
  }

  // Applies the steps binding nothing that slice `sl` missed (lazy rules, global scope).
  void catch_up(SliceState& sl) {
    RuleState& rs = sl.state;
    if (rs.settled) return;
    for (std::size_t s = 0; s < rs.monitors.size(); ++s) {
      std::uint32_t e = last_event[s];
      if (e != detail::kNoId && e >= sl.seen_upto && !rs.monitors[s].done()) rs.monitors[s].catch_up(e);
    }
  }
};

}  // namespace

struct Checker::Impl {
  std::shared_ptr<const detail::ProgramImpl> program;
  StepEval eval;
  std::vector<RuleState> rules;
  std::vector<std::unique_ptr<Parametric>> parametric;  // null for ordinary rules
  ValueIds values;

  explicit Impl(std::shared_ptr<const detail::ProgramImpl> p) : program(std::move(p)), eval(*program) {
    rules.resize(program->specs.size());
    for (std::size_t r = 0; r < rules.size(); ++r) {
      rules[r].spec = &program->specs[r];
      rules[r].monitors.reserve(program->specs[r].statements.size());
      for (const detail::StatementSpec& s : program->specs[r].statements)
        rules[r].monitors.emplace_back(s, *program);
    }
    parametric.resize(rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r)
      if (!program->specs[r].binders.empty()) {
        parametric[r] = std::make_unique<Parametric>();
        parametric[r]->bottom = rules[r];
      }
  }

  void step_parametric(const detail::RuleSpec& spec, Parametric& p) {
    p.step_keys.clear();
    for (std::uint32_t b : spec.binders)
      if (eval.binds(b)) {
        std::string_view k = eval.bound_key(b);
        if (std::find(p.step_keys.begin(), p.step_keys.end(), k) == p.step_keys.end()) p.step_keys.push_back(k);
      }
    const std::uint32_t i = eval.index();
    if (p.step_keys.empty()) {  // binds nothing: the step is in every slice
      eval.clear_binding();
      step(p.bottom);
      if (spec.lazy) {  // O(1): the slices catch up when next touched
        for (std::size_t s = 0; s < spec.statements.size(); ++s) {
          const detail::StatementSpec& st = spec.statements[s];
          if (st.nb == detail::NbEffect::none) continue;
          if (st.ignoring != detail::kNoId && eval.match(st.ignoring)) continue;
          bool event = false;
          switch (st.nb) {
            case detail::NbEffect::last_step: event = true; break;
            case detail::NbEffect::last_tool: event = eval.is_tool_call(); break;
            case detail::NbEffect::last_a: event = eval.match(st.a); break;
            case detail::NbEffect::last_b: event = eval.match(st.b); break;
            case detail::NbEffect::none:
            case detail::NbEffect::eager: break;
          }
          if (event) p.last_event[s] = i;
        }
      } else {
        for (std::size_t j = 0; j < p.used; ++j) {
          eval.set_binding(p.slices[j].key);
          step(p.slices[j].state);
        }
      }
    } else {  // only in the slices of the values it binds
      for (std::string_view k : p.step_keys) {
        std::uint32_t j = p.slice_for(values.id(k), k, i, program->max_bindings);
        if (j == detail::kNoId) continue;
        Parametric::SliceState& sl = p.slices[j];
        if (spec.lazy) p.catch_up(sl);
        eval.set_binding(sl.key);
        step(sl.state);
        sl.seen_upto = i + 1;
      }
    }
    eval.clear_binding();
  }

  void results_parametric(std::uint32_t r, Parametric& p, std::vector<RuleResult>& out) {
    bool violated = false, satisfied = false;
    const std::size_t first = out.size();
    const bool lazy = rules[r].spec->lazy;
    for (std::size_t j = 0; j < p.used; ++j) {
      RuleState& rs = p.slices[j].state;
      if (lazy) p.catch_up(p.slices[j]);
      rs.finish_trace();
      if (rs.violated) {
        violated = true;
        RuleResult res;
        res.rule = r;
        rs.result(res);
        res.binding.emplace_back(rules[r].spec->variable, detail::binding_json(p.slices[j].key.substr(0)));
        out.push_back(std::move(res));
      }
      satisfied = satisfied || rs.satisfied;
    }
    if (!violated) {  // one entry: satisfied if any binding was, else vacuous
      RuleResult res;
      res.rule = r;
      res.status = satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
      out.push_back(std::move(res));
    }
    if (p.dropped != 0)
      for (std::size_t k = first; k < out.size(); ++k) out[k].bindings_dropped = p.dropped;
  }

  void step(RuleState& rs) {
    const detail::RuleSpec& s = *rs.spec;
    switch (s.scope) {
      case ir::ScopeKind::global:
        if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::before:
        if (!rs.open) break;  // closed by the first R: nothing more to check
        if (eval.match(s.r)) rs.end_segment();
        else if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::after:
        if (!rs.opened_once && eval.match(s.q)) {
          rs.opened_once = true;
          rs.begin_segment();
        }
        if (rs.open && !rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        if (rs.open) {
          if (eval.match(s.r)) rs.end_segment();
          else rs.feed(eval);
        } else if (eval.match(s.q) && !eval.match(s.r)) {
          rs.begin_segment();
          rs.feed(eval);
        }
        break;
    }
  }

  void check(const Trajectory& trace, std::vector<RuleResult>& out) {
    eval.begin_trace(trace);
    values.ids.clear();
    for (std::size_t r = 0; r < rules.size(); ++r) {
      if (parametric[r]) {
        Parametric& p = *parametric[r];
        p.start_trace();
        p.last_event.assign(rules[r].monitors.size(), detail::kNoId);
      } else {
        rules[r].start_trace();
      }
    }
    const std::vector<Step>& steps = trace.steps();
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      eval.begin_step(steps[i], i);
      values.step_cache.clear();
      for (std::size_t r = 0; r < rules.size(); ++r) {
        if (parametric[r]) step_parametric(*rules[r].spec, *parametric[r]);
        else step(rules[r]);
      }
      eval.end_step();
    }
    out.clear();
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      if (parametric[r]) {
        results_parametric(r, *parametric[r], out);
        continue;
      }
      RuleState& rs = rules[r];
      rs.finish_trace();
      RuleResult res;
      res.rule = r;
      rs.result(res);
      out.push_back(std::move(res));
    }
  }
};

namespace {
// A Checker given no program (a failed compile) checks against no rules instead of crashing.
std::shared_ptr<const detail::ProgramImpl> program_or_empty(std::shared_ptr<const Program> p) {
  if (p) return std::static_pointer_cast<const detail::ProgramImpl>(p);
  static const auto empty = std::make_shared<const detail::ProgramImpl>();
  return empty;
}
}  // namespace

Checker::Checker(std::shared_ptr<const Program> program)
    : impl_(std::make_unique<Impl>(program_or_empty(std::move(program)))) {}
Checker::~Checker() = default;
Checker::Checker(Checker&&) noexcept = default;
Checker& Checker::operator=(Checker&&) noexcept = default;

void Checker::check(const Trajectory& trace, std::vector<RuleResult>& out) { impl_->check(trace, out); }

}  // namespace trajcheck
