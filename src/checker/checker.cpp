// The Checker: one pass over a trace's steps, feeding each rule's scope tracker, which
// opens and closes segments (§4, §4a) around its statement monitors; then a finish step.
#include <algorithm>
#include <fmt/format.h>
#include <string>

#include "checker/monitor.hpp"
#include "checker/step_eval.hpp"
#include "compiler/program.hpp"
#include "trajcheck/monitor.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

namespace {

using detail::StatementMonitor;
using detail::StepEval;

// Parametric rules with a scope that may close and reopen: the segments `bottom` closed,
// so a slice that missed them takes their verdicts over in one step (Parametric::catch_up).
struct SegmentLog {
  struct Entry {
    std::uint32_t close;          // the step that closed it
    std::uint32_t witness_begin;  // its witnesses in bottom's `witnesses`
    std::uint32_t violated_before;  // count over the earlier entries
  };
  // Only violations are taken over: bottom binds nothing, so none of its segments is
  // satisfied for a slice (RuleState::bound).
  std::vector<Entry> entries;
  std::uint32_t violated = 0;
};

// One rule's per-trace state: the segment tracker and its statements' monitors.
struct RuleState {
  const detail::RuleSpec* spec = nullptr;
  // spec's scope and its patterns, read at every step: kept here, not a pointer away (set_spec).
  ir::ScopeKind scope = ir::ScopeKind::global;
  std::uint32_t q = detail::kNoId, r = detail::kNoId;
  std::vector<StatementMonitor> monitors;
  bool open = false;      // a segment is open
  bool opened_once = false;  // `after Q` opens at the first Q only
  bool settled = false;   // single-segment scope whose monitors are all done
  bool idle = true;       // every monitor done or idle(): see Checker::Impl::busy
  bool violated = false, satisfied = false;
  // Parametric slices (§5): a segment counts as satisfied only if one of its steps bound
  // the slice's value (`bound`); one where it never was is vacuous, as a rule nothing binds.
  bool needs_binding = false, bound = false;
  std::uint32_t seg_start = 0;  // the step that opened the current segment
  std::vector<std::uint32_t> witnesses;
  // Lazy parametric rules: the rule's logs of steps binding nothing (per statement), and,
  // for `bottom` only, where its closed segments are recorded.
  const std::vector<detail::NbEvents>* nb = nullptr;
  SegmentLog* seg_log = nullptr;
  // Guard mode (Monitor::observe): where the step being taken puts the witnesses it makes
  // final when it closes a segment, and whether it made a violation final; null otherwise.
  std::vector<std::uint32_t>* newly = nullptr;
  bool newly_violated = false;
  std::vector<std::uint32_t> scratch;

  void set_spec(const detail::RuleSpec& s) {
    spec = &s;
    scope = s.scope;
    q = s.q;
    r = s.r;
  }
  void begin_segment(std::uint32_t at) {
    open = true;
    bound = false;
    seg_start = at;
    idle = true;
    for (StatementMonitor& m : monitors) {
      m.begin(at);
      idle = idle && m.idle();
    }
  }
  // `end`: the step that closes the segment (excluded), or the trace length.
  void end_segment(std::uint32_t end) {
    if (newly != nullptr) newly_violated = close_report(*newly) || newly_violated;
    open = false;
    const auto witness_begin = static_cast<std::uint32_t>(witnesses.size());
    bool seg_violated = false, seg_satisfied = false;
    for (std::size_t k = 0; k < monitors.size(); ++k) {
      StatementMonitor& m = monitors[k];
      if (nb != nullptr) m.flush_nb((*nb)[k], end);
      switch (m.finish(witnesses)) {
        case VerdictStatus::violated: seg_violated = true; break;
        case VerdictStatus::satisfied: seg_satisfied = true; break;
        case VerdictStatus::vacuous: break;
      }
    }
    if (needs_binding && !bound) seg_satisfied = false;
    violated = violated || seg_violated;
    satisfied = satisfied || seg_satisfied;
    if (seg_log != nullptr) {
      seg_log->entries.push_back({end, witness_begin, seg_log->violated});
      seg_log->violated += seg_violated;
    }
  }
  // What statement `m`'s verdict, were its segment to end now, adds to what the Monitor
  // reported: true when it is violated; its witnesses not reported yet are appended to `out`.
  bool unreported(const StatementMonitor& m, std::vector<std::uint32_t>& out) {
    scratch.clear();
    if (m.finish(scratch) != VerdictStatus::violated) return false;
    out.insert(out.end(), scratch.begin() + static_cast<std::ptrdiff_t>(m.reported()), scratch.end());
    return true;
  }
  // What closing the open segment now makes final (Monitor): true when the segment's verdict
  // is a violation that was not known yet (nothing of it reported) or names witnesses not
  // reported yet; those are appended to `out`.
  bool close_report(std::vector<std::uint32_t>& out) {
    bool violated = false, known = false;
    const std::size_t before = out.size();
    for (const StatementMonitor& m : monitors) {
      violated = unreported(m, out) || violated;
      known = known || m.reported() > 0;
    }
    return violated && (!known || out.size() > before);
  }
  // After a step (Monitor): the open segment's witnesses that became definite since the last
  // report, appended to `out` and marked reported. A `between` segment counts only once an R
  // closes it, so nothing in it is final before.
  bool open_report(std::vector<std::uint32_t>& out) {
    if (!open || scope == ir::ScopeKind::between) return false;
    bool added = false;
    for (StatementMonitor& m : monitors) {
      const std::size_t d = m.definite_count();
      for (std::size_t j = m.reported(); j < d; ++j) out.push_back(m.definite_at(j));
      if (d > m.reported()) {
        added = true;
        m.set_reported(d);
      }
    }
    return added;
  }
  // The open obligations (Monitor::pending): per statement, what finish_trace would report
  // beyond what was reported.
  void obligations(std::uint32_t rule, const std::vector<std::pair<std::string, std::string>>& binding,
                   std::vector<Obligation>& out) {
    if (!open || scope == ir::ScopeKind::between) return;
    for (std::size_t k = 0; k < monitors.size(); ++k) {
      Obligation o;
      if (!unreported(monitors[k], o.steps) || (monitors[k].reported() > 0 && o.steps.empty())) continue;
      o.rule = rule;
      o.statement = static_cast<std::uint32_t>(k);
      o.binding = binding;
      out.push_back(std::move(o));
    }
  }
  // Monitor::check: what feeding the step would make definite, the state unchanged.
  bool probe_feed(StepEval& ev, std::vector<std::uint32_t>& out) {
    if (scope == ir::ScopeKind::between) return false;
    const std::size_t before = out.size();
    for (StatementMonitor& m : monitors) {
      if (m.done()) continue;
      std::uint32_t ign = m.ignoring();
      if (ign == detail::kNoId || !ev.match(ign)) m.probe(ev, out);
    }
    return out.size() > before;
  }
  // Monitor::check on a step that opens a segment: the monitors of a closed segment are
  // read by nothing until it opens again, which begins them anew.
  void begin_monitors(std::uint32_t at) {
    for (StatementMonitor& m : monitors) m.begin(at);
  }
  void start_trace() {
    open = opened_once = settled = violated = satisfied = false;
    idle = true;  // a closed segment reacts only to its scope's patterns, which are watched
    witnesses.clear();
    if (scope == ir::ScopeKind::global || scope == ir::ScopeKind::before) begin_segment(0);
  }
  // The finish step (`end`: the trace length): a segment still open is checked, except in `between`.
  void finish_trace(std::uint32_t end) {
    if (open && scope != ir::ScopeKind::between) end_segment(end);
  }
  bool single_segment() const {
    return scope == ir::ScopeKind::global || scope == ir::ScopeKind::after ||
           scope == ir::ScopeKind::before;
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
  // Inlined into Checker::Impl::step, itself inlined where the rules are stepped: most rules
  // take few steps, so the calls' entries and exits were a good part of a step's cost.
  [[gnu::always_inline]] void feed(StepEval& ev) {
    bool all_done = true, all_idle = true;
    for (StatementMonitor& m : monitors) {
      if (!m.done()) {
        std::uint32_t ign = m.ignoring();
        if (ign == detail::kNoId || !ev.match(ign)) m.step(ev);
      }
      all_done = all_done && m.done();
      all_idle = all_idle && (m.done() || m.idle(ev.lone_turns()));
    }
    idle = all_idle;
    // Only scopes with one segment can stop early; between/after-until may open again.
    settled = all_done && single_segment();
  }
  // Lazy parametric rules: the steps binding nothing in [from, to), all in the open segment.
  void advance(std::uint32_t from, std::uint32_t to) {
    if (settled || from >= to) return;
    bool all_done = true;
    for (std::size_t k = 0; k < monitors.size(); ++k) {
      monitors[k].catch_up((*nb)[k], from, to);
      all_done = all_done && monitors[k].done();
    }
    settled = all_done && single_segment();
  }
};

// Bound values of one trace, interned once for all parametric rules: a step's value is
// hashed once per step, and each rule finds its slice by array index, not by its own map.
// The keys are kept in one text and found through an open-addressing table (linear probing),
// all reused from trace to trace: once warm, a value new to the trace allocates nothing (a
// node-based map allocated one node per value, in the step that first bound it).
struct ValueIds {
  std::vector<std::pair<std::string_view, std::uint32_t>> step_cache;  // this step's values

  std::uint32_t id(std::string_view key) {
    for (const auto& [k, v] : step_cache)
      if (k == key) return v;
    if (table_.empty()) grow();
    const std::size_t h = hash(key);
    std::size_t at = slot(key, h);
    if (table_[at] == detail::kNoId) {
      if (2 * (entries_.size() + 1) > table_.size()) {
        grow();
        at = slot(key, h);
      }
      table_[at] = static_cast<std::uint32_t>(entries_.size());
      entries_.push_back({static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(key.size()),
                          static_cast<std::uint32_t>(at), h});
      text_.append(key);
    }
    const std::uint32_t v = table_[at];
    step_cache.emplace_back(key, v);
    return v;
  }
  // The value's id, or kNoId when no step bound it yet (adds nothing).
  std::uint32_t find(std::string_view key) const {
    return table_.empty() ? detail::kNoId : table_[slot(key, hash(key))];
  }
  // Forgets the trace's values, keeping the storage (O(values of the trace)).
  void clear() {
    for (const Entry& e : entries_) table_[e.slot] = detail::kNoId;
    entries_.clear();
    text_.clear();
  }

 private:
  struct Entry {
    std::uint32_t offset, size, slot;  // the key in text_, and its slot in table_
    std::size_t hash;
  };
  static std::size_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }
  std::string_view key_of(const Entry& e) const { return std::string_view(text_).substr(e.offset, e.size); }
  // The slot holding `key`, or the empty slot where it would go. The table is never full.
  std::size_t slot(std::string_view key, std::size_t h) const {
    const std::size_t mask = table_.size() - 1;
    for (std::size_t at = h & mask;; at = (at + 1) & mask) {
      const std::uint32_t v = table_[at];
      if (v == detail::kNoId || (entries_[v].hash == h && key_of(entries_[v]) == key)) return at;
    }
  }
  void grow() {
    table_.assign(table_.empty() ? 64 : 2 * table_.size(), detail::kNoId);
    const std::size_t mask = table_.size() - 1;
    for (std::uint32_t v = 0; v < entries_.size(); ++v) {
      std::size_t at = entries_[v].hash & mask;
      while (table_[at] != detail::kNoId) at = (at + 1) & mask;
      table_[at] = v;
      entries_[v].slot = static_cast<std::uint32_t>(at);
    }
  }
  std::string text_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> table_;  // value id per slot, kNoId when empty; a power of two in size
};

// A parametric rule (§5): one RuleState per bound value (its slice), plus `bottom`, the
// state of a value not bound yet: it has seen exactly the steps that bind nothing, so a
// new value's slice starts as a copy of it. States are pooled and reused across traces.
// A step binding nothing is fed to `bottom` only and logged; a slice catches up on the steps
// it missed when it is next touched or at the end.
struct Parametric {
  struct SliceState {
    std::string key;
    RuleState state;
    std::uint32_t seen_upto = 0;  // fed (or caught up on) every step before this
    std::uint32_t vid = 0;        // its value's id (ValueIds)
  };
  RuleState bottom;
  // Per statement, the steps binding nothing that matter to it (NbEvents); the
  // steps binding nothing that would open (`q_events`: Q, and not R where R closes) or
  // close (`r_events`) a segment; the segments bottom closed.
  std::vector<detail::NbEvents> logs;
  std::vector<detail::ExpectClasses> classes;  // per statement; used by lazy `expect` ones
  std::vector<std::uint32_t> q_events, r_events;
  SegmentLog segments;
  std::uint64_t dropped = 0;  // bindings of values not given a slice (the bindings limit)
  std::vector<SliceState> slices;
  std::size_t used = 0;
  // Slice of each value id of the trace (ValueIds), kNoId when the value has none here.
  std::vector<std::uint32_t> slice_of;
  std::vector<std::string_view> step_keys;
  std::vector<std::string> mentioned;  // keys of slices a mention found (step_keys views them)
  bool has_no_duplicate = false;  // a lazy `no duplicate` statement (NbEvents::waiters)
  bool lazy_expect = false;       // a lazy `expect` statement (see Checker::Impl::begin_trace)
  // A global rule whose statements a step binding nothing never changes (NbEffect::none):
  // such a step changes no slice, so guard mode need not feed them.
  bool inert = false;
  // Lazy `no duplicate` in a scope whose segments open per slice: waiter `j` from the
  // segment opened at `seg` still counts at the current step (a step binding nothing, not
  // an R) iff the slice is still in that segment: no R binding nothing since its last step.
  bool still_in_segment(std::uint32_t j, std::uint32_t seg) const {
    const SliceState& sl = slices[j];
    return sl.state.open && sl.state.seg_start == seg && (r_events.empty() || r_events.back() < sl.seen_upto);
  }

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
    slices[used].state.seg_log = nullptr;  // only bottom records its segments
    slice_of[vid] = static_cast<std::uint32_t>(used);
    return static_cast<std::uint32_t>(used++);
  }

  void start_trace() {
    for (std::size_t j = 0; j < used; ++j) slice_of[slices[j].vid] = detail::kNoId;
    used = 0;
    dropped = 0;
    for (detail::NbEvents& e : logs) e.clear();
    q_events.clear();
    r_events.clear();
    segments.entries.clear();
    segments.violated = 0;
    bottom.start_trace();
  }

  static std::uint32_t first_in(const std::vector<std::uint32_t>& v, std::uint32_t from, std::uint32_t to) {
    const std::uint32_t* end = v.data() + v.size();
    const std::uint32_t* it = detail::lower_bound_from_back(v.data(), end, from);
    return it != end && *it < to ? *it : detail::kNoId;
  }

  // Brings slice `sl` up to step `to` (excluded): the steps binding nothing it missed, in
  // O(log steps) per statement plus the witnesses added, whatever their number. Inside a
  // segment the monitors summarise the run (StatementMonitor::catch_up). A step binding
  // nothing that matches R closes the segment in every slice, so from there on the slice
  // is in bottom's state: it takes over the verdicts of the segments bottom closed since,
  // and bottom's open segment, if any, is caught up from its opening step.
  void catch_up(SliceState& sl, std::uint32_t to) {
    std::uint32_t from = sl.seen_upto;
    // Eager slices (guard mode, no logs) were fed every step in them as it came.
    if (from >= to || sl.state.nb == nullptr) return;
    sl.seen_upto = to;
    RuleState& rs = sl.state;
    switch (rs.scope) {
      case ir::ScopeKind::global:
        rs.advance(from, to);
        break;
      case ir::ScopeKind::before: {
        if (!rs.open) break;  // closed by the first R for good
        std::uint32_t r = first_in(r_events, from, to);
        if (r == detail::kNoId) {
          rs.advance(from, to);
        } else {
          rs.advance(from, r);
          rs.end_segment(r);
        }
        break;
      }
      case ir::ScopeKind::after:
        if (!rs.opened_once) {
          std::uint32_t q = first_in(q_events, from, to);
          if (q == detail::kNoId) break;
          rs.opened_once = true;
          rs.begin_segment(q);
          from = q;  // the opening step belongs to the segment
        }
        rs.advance(from, to);
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until: {
        std::uint32_t r = first_in(r_events, from, to);
        std::uint32_t until = r == detail::kNoId ? to : r;
        if (!rs.open) {
          std::uint32_t q = first_in(q_events, from, until);
          if (q != detail::kNoId) {
            rs.begin_segment(q);
            from = q;
          }
        }
        if (rs.open) {
          rs.advance(from, until);
          if (r != detail::kNoId) rs.end_segment(r);
        }
        if (r != detail::kNoId) sync_with_bottom(rs, r, to);
        break;
      }
    }
  }

  // After a step `r` binding nothing that matches R, slice and bottom are both closed and
  // have seen the same steps since: the slice takes over bottom's segments closed after r.
  void sync_with_bottom(RuleState& rs, std::uint32_t r, std::uint32_t to) {
    const auto& es = segments.entries;
    auto it = std::upper_bound(es.begin(), es.end(), r,
                               [](std::uint32_t v, const SegmentLog::Entry& e) { return v < e.close; });
    if (it != es.end()) {
      if (segments.violated > it->violated_before) {
        rs.violated = true;
        rs.witnesses.insert(rs.witnesses.end(), bottom.witnesses.begin() + it->witness_begin,
                            bottom.witnesses.end());
      }
    }
    if (bottom.open) {
      rs.begin_segment(bottom.seg_start);
      rs.advance(bottom.seg_start, to);
    }
  }
};

}  // namespace

namespace {

// A scope on a trace whose calls share turns (docs/language.md, Turns): a tool call issued
// in the turn of a step that opens or closes a segment may come before or after that step,
// so its side of the boundary is unknown. When the rule looks at such a call, the rule is
// violated, with the call as witness. The segments are followed here from the scope's
// patterns over the whole trace (for every step, once the trace has shared turns).
struct TurnScope {
  struct Call {
    std::uint32_t step;
    bool q, r, looked_at, reported;
  };
  struct Bound {
    std::uint32_t step;
    bool opens;
  };
  const detail::RuleSpec* spec = nullptr;
  std::vector<std::uint32_t> looks;  // the statements' patterns (PATH atoms included)
  bool every_call = false;           // a statement looks at every tool call (or a variable: see below)
  bool open = false, opened_once = false;
  std::uint32_t turn = detail::kNoId;  // the current turn (its first step)
  std::vector<Call> calls;             // the current turn's tool calls
  std::vector<Bound> bounds;           // the current turn's boundary steps
  std::vector<std::uint32_t> witnesses;
  std::vector<std::string> notes;  // per witness, why

  void init(const detail::RuleSpec& s, const detail::ProgramImpl& program) {
    using K = ir::StatementKind;
    spec = &s;
    // A rule with a variable looks at every call: which calls are in a slice depends on the
    // values, and the boundary is the rule's, whatever the value.
    every_call = !s.binders.empty();
    for (const detail::StatementSpec& st : s.statements) {
      switch (st.kind) {
        case K::immediately_precedes:
        case K::immediately_followed_by:
        case K::starts_with:
        case K::ends_with:
        case K::only:
        case K::in_a_row:
        case K::expect_exactly: every_call = true; break;
        default: break;
      }
      for (std::uint32_t p : {st.a, st.b})
        if (p != detail::kNoId) looks.push_back(p);
      if (st.nfa != detail::kNoId)
        for (std::uint32_t a : program.nfas[st.nfa].atoms) looks.push_back(a);
    }
  }
  void start_trace() {
    open = spec->scope == ir::ScopeKind::before;
    opened_once = false;
    turn = detail::kNoId;
    calls.clear();
    bounds.clear();
    witnesses.clear();
    notes.clear();
  }
  // Whether `c` shares the turn of boundary `b` on an unknown side that matters: another Q
  // of an opening turn is inside in every order, another R of a closing turn outside.
  static bool ambiguous(const Call& c, const Bound& b) {
    if (c.step == b.step) return false;
    return b.opens ? !(c.q && !c.r) && (c.looked_at || c.r) : !c.r && (c.looked_at || c.q);
  }
  // Monitor::check: the calls step() would report at the current step, appended to `out`;
  // nothing changes.
  template <class Eval>
  void probe(Eval& eval, std::vector<std::uint32_t>& out) const {
    const detail::RuleSpec& s = *spec;
    if (s.scope == ir::ScopeKind::global || !eval.is_tool_call()) return;
    const std::uint32_t i = eval.index();
    const bool same = eval.group() == turn;
    const bool q = s.q != detail::kNoId && eval.match(s.q), r = s.r != detail::kNoId && eval.match(s.r);
    bool is_bound = false, opens = false;
    switch (s.scope) {
      case ir::ScopeKind::global: return;
      case ir::ScopeKind::before: is_bound = open && r; break;
      case ir::ScopeKind::after: is_bound = opens = !opened_once && q; break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        is_bound = open ? r : q && !r;
        opens = !open && is_bound;
        break;
    }
    bool looked_at = every_call;
    for (std::size_t k = 0; k < looks.size() && !looked_at; ++k) looked_at = eval.match(looks[k]);
    const Call c{i, q, r, looked_at, false};
    if (!same) return;  // the first call of its turn: nothing shares it yet
    for (const Bound& b : bounds)
      if (ambiguous(c, b)) {
        out.push_back(i);
        break;
      }
    if (is_bound)
      for (const Call& o : calls)
        if (!o.reported && ambiguous(o, Bound{i, opens})) out.push_back(o.step);
  }
  // Step i (eval's current step); what it makes ambiguous goes to the witnesses and to `out`.
  template <class Eval>
  void step(Eval& eval, std::vector<std::uint32_t>* out) {
    const detail::RuleSpec& s = *spec;
    const std::uint32_t i = eval.index();
    if (eval.group() != turn) {
      turn = eval.group();
      calls.clear();
      bounds.clear();
    }
    const bool q = s.q != detail::kNoId && eval.match(s.q), r = s.r != detail::kNoId && eval.match(s.r);
    bool is_bound = false, opens = false;
    switch (s.scope) {
      case ir::ScopeKind::global: return;
      case ir::ScopeKind::before:
        if (open && r) is_bound = true, open = false;
        break;
      case ir::ScopeKind::after:
        if (!opened_once && q) is_bound = opens = opened_once = open = true;
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        if (open && r) is_bound = true, open = false;
        else if (!open && q && !r) is_bound = opens = open = true;
        break;
    }
    if (!eval.is_tool_call()) return;  // a turn of its own: nothing shares it
    bool looked_at = every_call;
    for (std::size_t k = 0; k < looks.size() && !looked_at; ++k) looked_at = eval.match(looks[k]);
    calls.push_back({i, q, r, looked_at, false});
    auto report = [&](Call& c, const Bound& b) {
      if (c.reported || !ambiguous(c, b)) return;
      c.reported = true;
      witnesses.push_back(c.step);
      notes.push_back(fmt::format("issued in one turn with step {}, which {} the scope's segment: it may come "
                                  "before or after it",
                                  b.step, b.opens ? "opens" : "closes"));
      if (out != nullptr) out->push_back(c.step);
    };
    for (const Bound& b : bounds) report(calls.back(), b);
    if (is_bound) {
      bounds.push_back({i, opens});
      for (Call& c : calls) report(c, bounds.back());
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
  // Interest: an ordinary rule whose statements all change state only on a step matching
  // one of their patterns (`quiet`), and whose scope reacts only to its own patterns, has
  // nothing to do on a step of a class (StepEval::step_class) on which all those patterns
  // are false. Per class, the rules that may have something to do, listed the first time
  // the class occurs — kept per row slot of the StepEval (so bounded like its rows) and
  // dropped when the StepEval empties its slots. A rule with a statement that reacts to
  // every step only in some states (StatementMonitor::idle) is marked on the other classes
  // as "if not idle": it is skipped there while it is idle, its step changing nothing (so in
  // guard mode it has nothing to report either, nor would a probe find anything).
  // The rules are bit sets of `words` words: per class `may` then `if_idle`
  // (by_class, 2 * words per slot), and per trace `busy` (the rules not idle) and `dead`
  // (ordinary rules whose step can change nothing more in this trace: Impl::is_dead), so a
  // step visits only the rules it concerns, in rule order.
  std::vector<std::vector<std::uint32_t>> watched;  // per rule: its patterns; quiet rules only
  std::vector<std::vector<std::uint32_t>> outside;  // per rule: `only`'s patterns (any other call counts)
  std::vector<std::vector<std::uint32_t>> failures;  // per rule: patterns watched on failed calls only
  std::vector<std::vector<std::uint32_t>> busy_watched;  // per rule: patterns watched while not idle only
  std::vector<std::uint8_t> quiet, if_idle;
  std::size_t words = 0;
  std::vector<std::uint64_t> by_class;
  std::vector<std::uint8_t> by_class_built;
  std::uint64_t by_class_generation = 0;
  std::vector<std::uint64_t> busy, dead;
  // Ordinary rules stepped or finished since start_trace (batch mode): begin_trace resets only
  // those, and a rule no step of a trace concerned has the result of its untouched state,
  // the same for every trace (`pristine`, made the first time).
  std::vector<std::uint64_t> touched;
  struct Pristine {
    bool known = false;
    VerdictStatus status = VerdictStatus::vacuous;
    std::vector<std::uint32_t> steps;
  };
  std::vector<Pristine> pristine;

  // Guard mode (Monitor): a step binding nothing is fed to every slice at once, so what it
  // makes final is known at that step (the batch checker leaves it to a lazy catch-up).
  bool eager = false;
  // Scoped rules on traces whose calls share turns (TurnScope), per rule; `shared_turns`:
  // the trace has such a turn (guard mode: may have), so they are followed.
  std::vector<TurnScope> turn_scopes;
  std::vector<std::uint32_t> scoped;
  bool shared_turns = false;
  // Monitor::observe / check: where the violations of the current step go (null: batch).
  std::vector<Violation>* report = nullptr;
  std::vector<std::uint32_t> newly;

  Impl(std::shared_ptr<const detail::ProgramImpl> p, bool eager_slices)
      : program(std::move(p)), eval(*program), eager(eager_slices) {
    rules.resize(program->specs.size());
    for (std::size_t r = 0; r < rules.size(); ++r) {
      rules[r].set_spec(program->specs[r]);
      rules[r].monitors.reserve(program->specs[r].statements.size());
      for (const detail::StatementSpec& s : program->specs[r].statements)
        rules[r].monitors.emplace_back(s, *program);
    }
    parametric.resize(rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r)
      if (!program->specs[r].binders.empty()) {
        Parametric& pm = *(parametric[r] = std::make_unique<Parametric>());
        pm.bottom = rules[r];
        pm.bottom.needs_binding = true;
        pm.inert = program->specs[r].scope == ir::ScopeKind::global;
        for (const detail::StatementSpec& st : program->specs[r].statements)
          pm.inert = pm.inert && st.nb == detail::NbEffect::none;
        if (eager) continue;
        pm.logs.resize(program->specs[r].statements.size());
        pm.classes.resize(pm.logs.size());
        for (std::size_t k = 0; k < pm.logs.size(); ++k) {
          const detail::StatementSpec& st = program->specs[r].statements[k];
          pm.logs[k].groups = &eval.groups();
          if (is_lazy_expect(st)) pm.logs[k].classes = &pm.classes[k];
          if (st.nb != detail::NbEffect::lazy) continue;
          if (st.kind == ir::StatementKind::no_duplicate) {
            pm.bottom.monitors[k].share(&pm.logs[k]);
            pm.has_no_duplicate = true;
            pm.logs[k].by_segment = program->specs[r].scope != ir::ScopeKind::global &&
                                    program->specs[r].scope != ir::ScopeKind::before;
          } else if (st.kind == ir::StatementKind::retries) {
            pm.bottom.monitors[k].share(&pm.logs[k]);
          }
        }
        pm.bottom.nb = &pm.logs;  // copied into every slice
        pm.bottom.seg_log = &pm.segments;
        // Lazy `expect` keeps one automaton state per class of slices; on a trace whose calls
        // share turns each turn is taken in all its orders, so the slices are fed eagerly.
        for (const detail::StatementSpec& st : program->specs[r].statements)
          pm.lazy_expect = pm.lazy_expect || is_lazy_expect(st);
      }
    turn_scopes.resize(rules.size());
    for (std::uint32_t r = 0; r < rules.size(); ++r)
      if (program->specs[r].scope != ir::ScopeKind::global) {
        turn_scopes[r].init(program->specs[r], *program);
        scoped.push_back(r);
      }
    init_interest();
  }

  // What makes a statement change state (see `quiet`), and the patterns that tell.
  enum class Interest : std::uint8_t {
    watch,          // only a step matching one of the patterns
    watch_if_idle,  // that while the monitor is idle(), any step while it is not
    calls_outside,  // only a tool call the pattern does not match (`only`)
    watch_atoms,    // only a step matching one of its automaton's atoms (`expect`)
    failures_if_idle,  // while idle(), only a failed call matching the pattern; any step while not
    b_if_busy,      // a step matching A; one matching B only while the monitor is not idle()
    every_step,     // ends with, expect exactly: any step
  };
  struct Watch {
    Interest interest;
    bool a, b;  // which of the statement's patterns are watched
  };
  static Watch interest_of(ir::StatementKind k) {
    using K = ir::StatementKind;
    switch (k) {
      case K::forbid: case K::require: case K::count: case K::precedes: case K::followed_by:
      case K::requires_: case K::excludes: case K::no_duplicate:
        return {Interest::watch, true, true};
      case K::never_followed_by:  // a B before the first A matters only if it may share its turn
        return {Interest::b_if_busy, true, false};
      case K::retries:  // a success matters only to an active chain (idle: none is)
        return {Interest::failures_if_idle, true, false};
      case K::immediately_precedes:
        return {Interest::watch_if_idle, true, true};
      case K::immediately_followed_by: case K::in_a_row:
        return {Interest::watch_if_idle, true, false};  // B matters only once an A was met
      case K::starts_with:
        return {Interest::watch_if_idle, false, false};  // idle once the first step is taken
      case K::only:
        return {Interest::calls_outside, true, false};
      case K::expect:  // a step matching none of its atoms is not a letter (expect_next): no move
        return {Interest::watch_atoms, false, false};
      default:
        return {Interest::every_step, false, false};
    }
  }

  void init_interest() {
    words = (rules.size() + 63) / 64;
    busy.assign(words, 0);
    dead.assign(words, 0);
    touched.assign(words, ~std::uint64_t(0));
    pristine.resize(rules.size());
    watched.resize(rules.size());
    outside.resize(rules.size());
    failures.resize(rules.size());
    busy_watched.resize(rules.size());
    quiet.assign(rules.size(), 0);
    if_idle.assign(rules.size(), 0);
    for (std::size_t r = 0; r < rules.size(); ++r) {
      const detail::RuleSpec& spec = program->specs[r];
      if (parametric[r]) continue;
      bool q = true;
      for (const detail::StatementSpec& st : spec.statements)
        q = q && interest_of(st.kind).interest != Interest::every_step;
      if (!q) continue;
      quiet[r] = 1;
      for (const detail::StatementSpec& st : spec.statements) {
        const Watch w = interest_of(st.kind);
        if_idle[r] = if_idle[r] || w.interest == Interest::watch_if_idle || w.interest == Interest::failures_if_idle;
        auto& to = w.interest == Interest::calls_outside      ? outside[r]
                   : w.interest == Interest::failures_if_idle ? failures[r]
                                                              : watched[r];
        if (w.interest == Interest::b_if_busy && st.b != detail::kNoId) busy_watched[r].push_back(st.b);
        if (w.a && st.a != detail::kNoId) to.push_back(st.a);
        if (w.b && st.b != detail::kNoId) to.push_back(st.b);
        if (w.interest == Interest::watch_atoms && st.nfa != detail::kNoId)
          to.insert(to.end(), program->nfas[st.nfa].atoms.begin(), program->nfas[st.nfa].atoms.end());
      }
      for (std::uint32_t id : {spec.q, spec.r})
        if (id != detail::kNoId) watched[r].push_back(id);
    }
  }

  // The rules the current step may concern (see `quiet`): `words` words of rules that may,
  // then `words` of rules that may only while not idle.
  const std::uint64_t* interested() {
    const std::uint32_t c = eval.row_slot();
    if (by_class_generation == eval.row_generation() && c < by_class_built.size() && by_class_built[c])
      return by_class.data() + std::size_t(c) * 2 * words;
    return build_interest(c);
  }
  // interested() the first time the current step's class occurs (since its slots emptied).
  const std::uint64_t* build_interest(std::uint32_t c) {
    if (by_class_generation != eval.row_generation()) {
      by_class_generation = eval.row_generation();
      std::fill(by_class_built.begin(), by_class_built.end(), 0);
    }
    if (c >= by_class_built.size()) {
      const std::size_t n = std::min<std::size_t>(eval.row_slots(), std::max<std::size_t>(c + 1, by_class_built.size() * 2));
      by_class.resize(n * 2 * words);
      by_class_built.resize(n, 0);
    }
    std::uint64_t* bits = by_class.data() + std::size_t(c) * 2 * words;
    if (!by_class_built[c]) {
      by_class_built[c] = 1;
      std::fill(bits, bits + 2 * words, 0);
      const std::uint8_t* row = eval.row();
      const bool call = eval.is_tool_call();
      const bool failed = call && eval.step().status == StepStatus::error;  // a class of its own
      for (std::uint32_t r = 0; r < rules.size(); ++r) {
        bool may = !quiet[r];
        for (std::uint32_t id : watched[r]) may = may || row[id] != 0;
        if (call)
          for (std::uint32_t id : outside[r]) may = may || row[id] != 1;
        if (failed)
          for (std::uint32_t id : failures[r]) may = may || row[id] != 0;
        bool if_busy = if_idle[r];
        for (std::uint32_t id : busy_watched[r]) if_busy = if_busy || row[id] != 0;
        const std::uint64_t bit = std::uint64_t(1) << (r % 64);
        if (may) bits[r / 64] |= bit;
        else if (if_busy) bits[words + r / 64] |= bit;
      }
    }
    return bits;
  }

  // An ordinary rule whose step() is a no-op from now on in this trace: its single segment
  // is settled, or a `before` segment was closed by its R.
  static bool is_dead(const RuleState& rs) {
    switch (rs.scope) {
      case ir::ScopeKind::global: return rs.settled;
      case ir::ScopeKind::after: return rs.opened_once && rs.settled;
      case ir::ScopeKind::before: return !rs.open;
      default: return false;
    }
  }

  static bool is_lazy_expect(const detail::StatementSpec& st) {
    return st.nb == detail::NbEffect::lazy &&
           (st.kind == ir::StatementKind::expect || st.kind == ir::StatementKind::expect_exactly);
  }

  // The distinct values the current step binds for a parametric rule (p.step_keys), and
  // those of the values bound so far (at this step or before) that a mention finds in it:
  // the step is in their slices too. A mention costs one search per value bound so far, on
  // the steps that match its pattern otherwise.
  void bound_keys(const detail::RuleSpec& spec, Parametric& p) {
    p.step_keys.clear();
    auto add = [&](std::string_view k) {
      if (std::find(p.step_keys.begin(), p.step_keys.end(), k) == p.step_keys.end()) p.step_keys.push_back(k);
    };
    for (std::uint32_t b : spec.binders)
      if (eval.binds(b)) add(eval.bound_key(b));
    if (spec.mentions.empty()) return;  // (a value bound here is in step_keys already)
    // Copies: a slice made for a value bound here may move the slices' keys.
    std::size_t found = 0;
    for (std::uint32_t m : spec.mentions)
      for (std::size_t j = 0; j < p.used; ++j)
        if (eval.mentions(m, p.slices[j].key)) {
          if (found == p.mentioned.size()) p.mentioned.emplace_back();
          p.mentioned[found++].assign(p.slices[j].key);
        }
    for (std::size_t k = 0; k < found; ++k) add(p.mentioned[k]);
  }

  void step_parametric(std::uint32_t r, const detail::RuleSpec& spec, Parametric& p) {
    bound_keys(spec, p);
    const std::uint32_t i = eval.index();
    if (p.step_keys.empty()) {  // binds nothing: the step is in every slice
      eval.clear_binding();
      step(p.bottom);
      if (!eager && p.bottom.nb != nullptr) {
        log_non_binding(spec, p);  // O(1): the slices catch up when next touched
      } else if (!p.inert) {
        for (std::size_t j = 0; j < p.used; ++j) {
          Parametric::SliceState& sl = p.slices[j];
          eval.set_binding(sl.key);
          step_reporting(sl.state, r, &sl.key);
        }
      }
    } else {  // only in the slices of the values it binds
      for (std::string_view k : p.step_keys) {
        const std::size_t slices_before = p.used;
        std::uint32_t j = p.slice_for(values.id(k), k, i, program->max_bindings);
        if (j == detail::kNoId) continue;
        Parametric::SliceState& sl = p.slices[j];
        p.catch_up(sl, i);
        eval.set_binding(sl.key);
        step_reporting(sl.state, r, &sl.key, p.used != slices_before);
        if (sl.state.open) sl.state.bound = true;  // the step is in the open segment
        sl.seen_upto = i + 1;
        if (p.has_no_duplicate && p.bottom.nb != nullptr)  // a key new to the slice and the log waits for a free step
          for (std::size_t k = 0; k < p.logs.size(); ++k)
            if (sl.state.monitors[k].take_new_key())
              p.logs[k].waiters.add(sl.state.monitors[k].last_key(), j, sl.state.seg_start);
        if (sl.state.open && p.bottom.nb != nullptr)  // untouched from here on: its expect state joins a class
          for (std::size_t k = 0; k < p.logs.size(); ++k)
            if (p.logs[k].classes != nullptr && !sl.state.monitors[k].done())
              sl.state.monitors[k].join_class(*p.logs[k].classes);
      }
    }
    eval.clear_binding();
  }

  // `immediately followed by`'s log: its open turn ends, so the A's of the turn before it
  // that it gave no B are found; its own A's wait on the next turn.
  static void close_logged_turn(detail::NbEvents& e) {
    if (!e.turn_b) e.b.insert(e.b.end(), e.prev_as.begin(), e.prev_as.end());
    e.prev_as.assign(e.turn_as.begin(), e.turn_as.end());  // not swap: each keeps its capacity
    e.turn_as.clear();
    e.turn_b = false;
    e.turn = detail::kNoId;
  }

  // Records what a step binding nothing does, for the slices' catch-up: once per rule,
  // whatever the number of slices. What each NbEvents list holds, per statement kind, is
  // what StatementMonitor::catch_up reads.
  void log_non_binding(const detail::RuleSpec& spec, Parametric& p) {
    using K = ir::StatementKind;
    const std::uint32_t i = eval.index();
    bool opens = false, closes = false;
    switch (spec.scope) {
      case ir::ScopeKind::global: break;
      case ir::ScopeKind::after: opens = eval.match(spec.q); break;
      case ir::ScopeKind::before: closes = eval.match(spec.r); break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        closes = eval.match(spec.r);
        opens = !closes && eval.match(spec.q);
        break;
    }
    if (opens) p.q_events.push_back(i);
    if (closes) p.r_events.push_back(i);
    for (detail::NbEvents& e : p.logs) {
      if (e.classes == nullptr) continue;
      if (closes) e.classes->freeze();      // no segment contains this step
      else if (opens) e.classes->open_at(i);  // before its letter: the opening step counts
    }
    for (std::size_t k = 0; k < spec.statements.size(); ++k) {
      const detail::StatementSpec& st = spec.statements[k];
      if (st.nb != detail::NbEffect::lazy) continue;
      if (st.ignoring != detail::kNoId && eval.match(st.ignoring)) continue;
      detail::NbEvents& e = p.logs[k];
      switch (st.kind) {
        case K::forbid: case K::require: case K::count:
          if (eval.match(st.a)) e.a.push_back(i);
          break;
        case K::precedes: case K::followed_by: case K::requires_: case K::never_followed_by:
        case K::excludes:
          if (eval.match(st.a)) e.a.push_back(i);
          if (eval.match(st.b)) e.b.push_back(i);
          break;
        case K::immediately_precedes: {  // b: B's with no A in the logged turn before; c: B's; d: A's
          if (eval.group() != e.turn) {
            e.prev_a = e.turn_a;
            e.turn_a = false;
            e.turn = eval.group();
          }
          if (eval.match(st.b)) {
            e.c.push_back(i);
            if (!e.prev_a) e.b.push_back(i);
          }
          if (eval.match(st.a)) {
            e.turn_a = true;
            e.d.push_back(i);
          }
          e.a.push_back(i);
          break;
        }
        case K::immediately_followed_by: {  // b: A's with no B in the logged turn after; c: A's; d: B's
          if (eval.group() != e.turn) {
            if (e.turn != detail::kNoId) close_logged_turn(e);
            e.turn = eval.group();
          }
          if (eval.match(st.b)) {
            e.turn_b = true;
            e.d.push_back(i);
          }
          if (eval.match(st.a)) {
            e.c.push_back(i);
            e.turn_as.push_back(i);
          }
          e.a.push_back(i);
          if (eval.turn_ends()) close_logged_turn(e);
          break;
        }
        case K::starts_with: case K::ends_with:
          e.a.push_back(i);
          if (eval.match(st.a)) e.b.push_back(i);
          break;
        case K::only:
          if (eval.is_tool_call() && !eval.match(st.a)) e.a.push_back(i);
          break;
        case K::in_a_row:  // a: tool calls; b: those not matching P; c: matches past N in the log's run
          if (!eval.is_tool_call()) break;
          e.a.push_back(i);
          if (eval.match(st.a)) {
            if (++e.run > st.hi) e.c.push_back(i);
          } else {
            e.run = 0;
            e.b.push_back(i);
          }
          break;
        case K::expect: case K::expect_exactly: {
          if (closes || !eval.is_tool_call()) break;
          bool letter = st.kind == K::expect_exactly;
          for (std::uint32_t atom : program->nfas[st.nfa].atoms) letter = letter || eval.match(atom);
          if (letter) e.classes->letter(eval);
          break;
        }
        case K::no_duplicate: {
          if (e.by_segment) {
            log_no_duplicate_by_segment(p, k, closes);
            break;
          }
          // Scopes of one segment from step 0 only: while bottom is open, so is every slice
          // not closed by its own R, and their segments hold the same steps binding nothing.
          if (!p.bottom.open || !eval.is_tool_call() || !eval.match(st.a)) break;
          StatementMonitor& bm = p.bottom.monitors[k];
          std::string_view key = bm.key_of(eval);
          if (!e.keys.insert(key)) {  // repeats an earlier step binding nothing: in every slice
            e.a.push_back(i);
            bm.add_witness(i);  // slices created later copy it
            break;
          }
          e.waiters.take(key, [&](std::uint32_t j, std::uint32_t) {
            RuleState& rs = p.slices[j].state;
            if (rs.open) rs.monitors[k].add_witness(i);
          });
          break;
        }
        case K::retries: {  // per tool: the calls, the successes, the log's retries past N
          if (!eval.is_tool_call() || !eval.match(st.a)) break;
          const std::uint32_t t = eval.tool();
          if (t >= e.tools.size()) e.tools.resize(std::size_t(t) + 1);
          detail::NbEvents::ToolCalls& tc = e.tools[t];
          const auto rank = static_cast<std::uint32_t>(tc.calls.size());
          tc.calls.push_back(i);
          if (rank - tc.chain > st.hi) {
            e.c.push_back(i);
            e.retry.push_back({t, rank, tc.chain});
            // Bottom's segment (slices created later copy its witnesses).
            if (p.bottom.open && e.retry_counts(e.retry.size() - 1, p.bottom.seg_start, st.hi))
              p.bottom.monitors[k].add_witness(i);
          }
          if (eval.step().status != StepStatus::error) {
            tc.ok.push_back(i);
            tc.chain = rank + 1;
          }
          break;
        }
      }
    }
  }

  // `no duplicate` under after / between / after … until: every call binding nothing that
  // matches P is logged with the step that last had its key (a repeat in the slices whose
  // segment opened at or before that step: StatementMonitor::catch_up), and is handed to the
  // slices whose own call had the key first in their still-open segment (waiters).
  void log_no_duplicate_by_segment(Parametric& p, std::size_t k, bool closes) {
    const detail::StatementSpec& st = p.bottom.spec->statements[k];
    // An R binding nothing is in no segment of any slice: it repeats nothing that counts.
    if (closes || !eval.is_tool_call() || !eval.match(st.a)) return;
    detail::NbEvents& e = p.logs[k];
    const std::uint32_t i = eval.index();
    StatementMonitor& bm = p.bottom.monitors[k];
    std::string_view key = bm.key_of(eval);
    const std::uint32_t prev = e.last_at.exchange(key, i);
    if (prev != detail::kNoId) {
      e.a.push_back(i);
      e.prev.push(prev);
      if (p.bottom.open && prev >= p.bottom.seg_start) bm.add_witness(i);  // slices created later copy it
    }
    e.waiters.take(key, [&](std::uint32_t j, std::uint32_t seg) {
      if (p.still_in_segment(j, seg)) p.slices[j].state.monitors[k].add_witness(i);
    });
  }

  // The next result of this trace: element `used` of `out`, whose elements are reused from
  // trace to trace (their vectors keep their storage), reset to a RuleResult{} of `rule`
  // field by field. finish() trims `out` to the results it made.
  [[gnu::always_inline]] static RuleResult& next_result(std::vector<RuleResult>& out, std::size_t& used,
                                                       std::uint32_t rule) {
    if (used == out.size()) out.emplace_back();
    RuleResult& res = out[used++];
    res.rule = rule;
    res.status = VerdictStatus::satisfied;
    res.steps.clear();
    res.binding.clear();
    res.bindings_dropped = 0;
    res.details.clear();
    return res;
  }

  void results_parametric(std::uint32_t r, std::uint32_t n, Parametric& p, std::vector<RuleResult>& out,
                          std::size_t& used) {
    bool violated = false, satisfied = false;
    const std::size_t first = used;
    for (std::size_t j = 0; j < p.used; ++j) {
      RuleState& rs = p.slices[j].state;
      p.catch_up(p.slices[j], n);
      rs.finish_trace(n);
      if (rs.violated) {
        violated = true;
        RuleResult& res = next_result(out, used, r);
        rs.result(res);
        res.binding.emplace_back(rules[r].spec->variable, detail::binding_json(p.slices[j].key.substr(0)));
      }
      satisfied = satisfied || rs.satisfied;
    }
    if (!violated)  // one entry: satisfied if any binding was, else vacuous
      next_result(out, used, r).status = satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
    if (p.dropped != 0)
      for (std::size_t k = first; k < used; ++k) out[k].bindings_dropped = p.dropped;
  }

  // step(rs), and in guard mode the violation it made final, if any, into `report`.
  // `fresh`: rs is a slice made at this step (a copy of bottom).
  void step_reporting(RuleState& rs, std::uint32_t r, const std::string* key, bool fresh = false) {
    if (report == nullptr) {
      step(rs);
      return;
    }
    newly.clear();
    const bool before = fresh && inherited(rs, newly);
    rs.newly = &newly;
    rs.newly_violated = false;
    step(rs);
    rs.newly = nullptr;
    const bool opened = rs.open_report(newly);
    if (before || rs.newly_violated || opened) add_violation(r, key);
  }

  // A slice made at this step starts as a copy of bottom: what bottom holds final already
  // (violated closed segments, the open segment's definite witnesses) becomes final for the
  // new value at this step.
  static bool inherited(const RuleState& rs, std::vector<std::uint32_t>& out) {
    bool any = rs.violated;
    if (any) out.insert(out.end(), rs.witnesses.begin(), rs.witnesses.end());
    if (rs.open && rs.scope != ir::ScopeKind::between)
      for (const StatementMonitor& m : rs.monitors)
        for (std::size_t j = 0, d = m.definite_count(); j < d; ++j) {
          out.push_back(m.definite_at(j));
          any = true;
        }
    return any;
  }

  void add_violation(std::uint32_t r, const std::string* key) {
    if (spare.empty()) spare.emplace_back();
    Violation& v = report->emplace_back(std::move(spare.back()));
    spare.pop_back();
    v.rule = r;
    v.binding.resize(key != nullptr ? 1 : 0);
    if (key != nullptr) {
      v.binding[0].first.assign(program->specs[r].variable);
      detail::binding_json(*key, v.binding[0].second);
    }
    std::sort(newly.begin(), newly.end());
    newly.erase(std::unique(newly.begin(), newly.end()), newly.end());
    v.steps = newly;
  }
  // Monitor::observe / check empty `out` before reporting into it: its elements are kept
  // aside (`spare`) and reused by add_violation, storage and all, so a caller that passes the
  // same vector each step allocates nothing once warm, violations included.
  void clear_report(std::vector<Violation>& out) {
    for (Violation& v : out) spare.push_back(std::move(v));
    out.clear();
  }
  std::vector<Violation> spare;

  // What step(rs) would make final (as step_reporting sees it), appended to `out`; the
  // rule's state is left as it is (a closed segment's monitors may be begun: see
  // RuleState::begin_monitors).
  bool probe(RuleState& rs, std::vector<std::uint32_t>& out) {
    const RuleState& s = rs;  // its scope, q and r
    const std::uint32_t i = eval.index();
    switch (s.scope) {
      case ir::ScopeKind::global:
        return !rs.settled && rs.probe_feed(eval, out);
      case ir::ScopeKind::before:
        if (!rs.open) return false;
        if (eval.match(s.r)) return rs.close_report(out);
        return !rs.settled && rs.probe_feed(eval, out);
      case ir::ScopeKind::after:
        if (!rs.opened_once && eval.match(s.q)) {
          rs.begin_monitors(i);
          return rs.probe_feed(eval, out);
        }
        return rs.open && !rs.settled && rs.probe_feed(eval, out);
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        if (rs.open) return eval.match(s.r) ? rs.close_report(out) : rs.probe_feed(eval, out);
        if (eval.match(s.q) && !eval.match(s.r)) {
          rs.begin_monitors(i);
          return rs.probe_feed(eval, out);
        }
        return false;
    }
    return false;
  }

  void probe_reporting(RuleState& rs, std::uint32_t r, const std::string* key, bool fresh = false) {
    newly.clear();
    const bool before = fresh && inherited(rs, newly);
    if (probe(rs, newly) || before) add_violation(r, key);
  }

  // Guard mode only (eager slices): step_parametric as a question.
  void probe_parametric(std::uint32_t r, const detail::RuleSpec& spec, Parametric& p) {
    bound_keys(spec, p);
    if (p.step_keys.empty()) {
      for (std::size_t j = 0; j < (p.inert ? 0 : p.used); ++j) {
        eval.set_binding(p.slices[j].key);
        probe_reporting(p.slices[j].state, r, &p.slices[j].key);
      }
    } else {
      std::size_t made = 0;  // slices this step would make
      for (std::string_view k : p.step_keys) {
        const std::uint32_t vid = values.find(k);
        const std::uint32_t j = vid < p.slice_of.size() ? p.slice_of[vid] : detail::kNoId;
        if (j == detail::kNoId && p.used + made++ >= program->max_bindings) continue;  // would get no slice
        probe_key.assign(k);
        eval.set_binding(probe_key);
        // A value without a slice yet would get a copy of bottom.
        if (j != detail::kNoId) probe_reporting(p.slices[j].state, r, &probe_key);
        else probe_reporting(p.bottom, r, &probe_key, true);
      }
    }
    eval.clear_binding();
  }
  std::string probe_key;

  [[gnu::always_inline]] void step(RuleState& rs) {
    const RuleState& s = rs;  // its scope, q and r
    const std::uint32_t i = eval.index();
    switch (s.scope) {
      case ir::ScopeKind::global:
        if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::before:
        if (!rs.open) break;  // closed by the first R: nothing more to check
        if (eval.match(s.r)) rs.end_segment(i);
        else if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::after:
        if (!rs.opened_once && eval.match(s.q)) {
          rs.opened_once = true;
          rs.begin_segment(i);
        }
        if (rs.open && !rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        if (rs.open) {
          if (eval.match(s.r)) rs.end_segment(i);
          else rs.feed(eval);
        } else if (eval.match(s.q) && !eval.match(s.r)) {
          rs.begin_segment(i);
          rs.feed(eval);
        }
        break;
    }
  }

  void check(const Trajectory& trace, std::vector<RuleResult>& out) {
    begin_trace(trace);
    const auto n = static_cast<std::uint32_t>(trace.steps().size());
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i + 1 == n) eval.set_turn_ends(true);  // the trace is whole: its last step ends its turn
      take_step(trace, i);
    }
    eval.set_turn_ends(std::nullopt);
    finish(trace, out);
  }

  void begin_trace(const Trajectory& trace) {
    eval.begin_trace(trace);
    values.clear();
    shared_turns = eager;
    for (std::size_t i = 1; i < trace.steps().size() && !shared_turns; ++i)
      shared_turns = detail::same_turn(trace.steps()[i - 1], trace.steps()[i]);
    eval.set_lone_turns(!shared_turns);
    for (std::uint32_t r : scoped) turn_scopes[r].start_trace();
    for (std::size_t r = 0; r < rules.size(); ++r) {
      if (parametric[r]) {
        Parametric& p = *parametric[r];
        if (!eager && p.lazy_expect) {  // fed eagerly on a trace with shared turns: no log
          p.bottom.nb = shared_turns ? nullptr : &p.logs;
          for (std::size_t k = 0; k < p.logs.size(); ++k) {
            const ir::StatementKind kind = rules[r].spec->statements[k].kind;
            if (rules[r].spec->statements[k].nb == detail::NbEffect::lazy &&
                (kind == ir::StatementKind::no_duplicate || kind == ir::StatementKind::retries))
              p.bottom.monitors[k].share(shared_turns ? nullptr : &p.logs[k]);
          }
        }
        p.start_trace();
        for (std::size_t k = 0; k < p.logs.size(); ++k)
          if (p.logs[k].classes != nullptr) p.logs[k].classes->reset(&program->nfas[rules[r].spec->statements[k].nfa]);
      } else {
        const std::uint64_t bit = std::uint64_t(1) << (r % 64);
        std::uint64_t& touched_w = touched[r / 64];
        if (!eager && !(touched_w & bit)) continue;  // as start_trace left it: its bits hold too
        touched_w &= ~bit;
        rules[r].start_trace();
        busy[r / 64] = rules[r].idle ? busy[r / 64] & ~bit : busy[r / 64] | bit;
        dead[r / 64] = is_dead(rules[r]) ? dead[r / 64] | bit : dead[r / 64] & ~bit;
      }
    }
  }

  void take_step(const Trajectory& trace, std::uint32_t i) {
    eval.begin_step(trace.steps()[i], i);
    values.step_cache.clear();
    const std::uint64_t* bits = interested();
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t busy_w = busy[w], dead_w = dead[w], touched_w = touched[w];
      for (std::uint64_t m = (bits[w] | (bits[words + w] & busy_w)) & ~dead_w; m != 0; m &= m - 1) {
        const auto r = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m)));
        if (parametric[r]) {
          step_parametric(r, *rules[r].spec, *parametric[r]);
          continue;
        }
        RuleState& rs = rules[r];
        if (report == nullptr) step(rs);
        else step_reporting(rs, r, nullptr);
        const std::uint64_t bit = m & (~m + 1);
        touched_w |= bit;
        busy_w = (busy_w & ~bit) | (rs.idle ? 0 : bit);
        if ((rs.settled || !rs.open) && is_dead(rs)) dead_w |= bit;  // for the rest of the trace
      }
      busy[w] = busy_w;
      dead[w] = dead_w;
      touched[w] = touched_w;
    }
    if (shared_turns) step_turn_scopes(true);
  }

  // TurnScope of every scoped rule at the current step; in guard mode what it makes
  // ambiguous is a violation of the rule (no binding) that this step makes final.
  void step_turn_scopes(bool commit) {
    for (std::uint32_t r : scoped) {
      newly.clear();
      eval.clear_binding();
      if (commit) turn_scopes[r].step(eval, report != nullptr ? &newly : nullptr);
      else turn_scopes[r].probe(eval, newly);
      if (report != nullptr && !newly.empty()) add_violation(r, nullptr);
    }
  }

  // Monitor::check: take_step as a question.
  void probe_step(const Trajectory& trace, std::uint32_t i) {
    eval.begin_step(trace.steps()[i], i);
    const std::uint64_t* bits = interested();
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t m = (bits[w] | (bits[words + w] & busy[w])) & ~dead[w]; m != 0; m &= m - 1) {
        const auto r = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m)));
        if (parametric[r]) probe_parametric(r, *rules[r].spec, *parametric[r]);
        else probe_reporting(rules[r], r, nullptr);
      }
    if (shared_turns) step_turn_scopes(false);
  }

  void pending(std::vector<Obligation>& out) {
    static const std::vector<std::pair<std::string, std::string>> none;
    std::vector<std::pair<std::string, std::string>> binding;
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      if (!parametric[r]) {
        rules[r].obligations(r, none, out);
        continue;
      }
      Parametric& p = *parametric[r];
      for (std::size_t j = 0; j < p.used; ++j) {
        binding.assign(1, {rules[r].spec->variable, detail::binding_json(p.slices[j].key)});
        p.slices[j].state.obligations(r, binding, out);
      }
    }
  }

  void finish(const Trajectory& trace, std::vector<RuleResult>& out) {
    std::size_t used = 0;
    const auto n = static_cast<std::uint32_t>(trace.steps().size());
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      const std::size_t first = used;
      if (parametric[r]) {
        results_parametric(r, n, *parametric[r], out, used);
      } else {
        RuleState& rs = rules[r];
        RuleResult& res = next_result(out, used, r);
        const std::uint64_t bit = std::uint64_t(1) << (r % 64);
        std::uint64_t& touched_w = touched[r / 64];
        const bool untouched = !eager && !(touched_w & bit);
        if (untouched && pristine[r].known) {  // as every trace that left it alone
          res.status = pristine[r].status;
          res.steps.assign(pristine[r].steps.begin(), pristine[r].steps.end());
        } else {
          rs.finish_trace(n);
          rs.result(res);
          touched_w |= bit;
          if (untouched) pristine[r] = {true, res.status, res.steps};
        }
      }
      if (shared_turns) add_turn_notes(r, out, first, used);
    }
    out.resize(used);
    if (program->catalog)
      for (RuleResult& res : out) add_details(trace, res);
  }

  // On a trace whose calls share turns: the calls whose side of a scope boundary is unknown
  // (TurnScope) and the PATH turns too large to try in every order, as violations with a
  // note per such witness. A rule with a variable gets them as an entry without a binding.
  void add_turn_notes(std::uint32_t r, std::vector<RuleResult>& out, std::size_t first, std::size_t& used) {
    std::vector<std::pair<std::uint32_t, std::string>> notes;
    if (rules[r].spec->scope != ir::ScopeKind::global) {
      const TurnScope& ts = turn_scopes[r];
      for (std::size_t k = 0; k < ts.witnesses.size(); ++k) notes.emplace_back(ts.witnesses[k], ts.notes[k]);
    }
    auto capped = [&](const RuleState& rs, std::vector<std::pair<std::uint32_t, std::string>>& into) {
      for (const StatementMonitor& m : rs.monitors)
        if (const std::uint32_t at = m.over_cap_at(); at != detail::kNoId)
          into.emplace_back(at, fmt::format("a turn with more than {} calls of the PATH: its orders are not tried",
                                            StatementMonitor::kTurnLetters));
    };
    if (!parametric[r]) {
      capped(rules[r], notes);
    } else {  // a slice's capped turn is noted on that slice's entry
      Parametric& p = *parametric[r];
      for (std::size_t j = 0; j < p.used; ++j) {
        std::vector<std::pair<std::uint32_t, std::string>> mine;
        capped(p.slices[j].state, mine);
        if (mine.empty()) continue;
        const std::string key = detail::binding_json(p.slices[j].key);
        for (std::size_t e = first; e < used; ++e)
          if (out[e].binding.size() == 1 && out[e].binding[0].second == key) add_notes(out[e], mine);
      }
    }
    if (notes.empty()) return;
    RuleResult* res = &out[first];
    if (parametric[r] && (used - first > 1 || res->status == VerdictStatus::violated)) res = &next_result(out, used, r);
    add_notes(*res, notes);
  }

  // Witnesses with a note each: the result is violated, its witnesses stay sorted without
  // repeats, and each note goes in `details` beside its witness.
  static void add_notes(RuleResult& res, const std::vector<std::pair<std::uint32_t, std::string>>& notes) {
    res.status = VerdictStatus::violated;
    for (const auto& nt : notes) res.steps.push_back(nt.first);
    std::sort(res.steps.begin(), res.steps.end());
    res.steps.erase(std::unique(res.steps.begin(), res.steps.end()), res.steps.end());
    res.details.assign(res.steps.size(), std::string());
    for (const auto& [step, note] : notes) {
      const auto k = static_cast<std::size_t>(std::lower_bound(res.steps.begin(), res.steps.end(), step) - res.steps.begin());
      if (res.details[k].empty()) res.details[k] = note;
    }
  }

  // A violated rule using valid(…): each witness's catalog error, so a report can say why.
  void add_details(const Trajectory& trace, RuleResult& res) const {
    if (res.status != VerdictStatus::violated || !program->specs[res.rule].uses_valid) return;
    if (!res.details.empty() && res.details.size() != res.steps.size()) res.details.clear();
    bool any = false;
    res.details.resize(res.steps.size());
    for (std::size_t k = 0; k < res.steps.size(); ++k) {
      if (res.details[k].empty())  // a turn's note (add_notes) stays
        res.details[k] = detail::catalog_detail(*program->catalog, &program->aliases, trace, trace.steps()[res.steps[k]]);
      any = any || !res.details[k].empty();
    }
    if (!any) res.details.clear();
  }
};

namespace {
// A Checker given no program (a failed compile) checks against no rules instead of crashing.
const std::shared_ptr<const detail::ProgramImpl>& empty_program() {
  static const auto empty = std::make_shared<const detail::ProgramImpl>();
  return empty;
}
}  // namespace

Checker::Checker(std::shared_ptr<const Program> program)
    : impl_(std::make_unique<Impl>(program ? program->compiled_ : empty_program(), false)) {}
Checker::~Checker() = default;
Checker::Checker(Checker&&) noexcept = default;
Checker& Checker::operator=(Checker&&) noexcept = default;

void Checker::check(const Trajectory& trace, std::vector<RuleResult>& out) { impl_->check(trace, out); }
void Checker::set_fixture(std::string_view fixture) { impl_->eval.docs().set_fixture(fixture); }

// The monitored trace is a Trajectory of its own, grown one step at a time; the checker's
// Impl runs over it step by step (take_step), so the verdicts are check()'s by construction.
// A step check() asks about is appended, probed and taken off again.
struct Monitor::Impl {
  std::shared_ptr<const Program> program;
  ToolTable tools;
  Trajectory trace{&tools};
  Checker::Impl checker;
  bool case_sensitive = false;
  bool finished = false;
  std::string name;      // the normalized name of `raw_name` (named: there is one yet), interned as `tool`
  std::string raw_name;
  ToolId tool = kNoTool;
  bool named = false;
  const Trajectory* last_from = nullptr;  // where the last step was copied from, and its index
  std::size_t last_index = 0;

  Impl(std::shared_ptr<const Program> p, std::string_view context)
      : program(std::move(p)),
        checker(program ? program->compiled_ : empty_program(), true),
        case_sensitive(program && program->case_sensitive_names()) {
    reset(context);
  }

  void reset(std::string_view context) {
    trace.clear();
    if (!context.empty()) trace.set_context(trace.store(context));
    checker.begin_trace(trace);
    finished = false;
    last_from = nullptr;
  }

  void append(const MonitorStep& in) {
    Step& st = trace.add_step(in.type);
    auto put = [&](std::string_view text) { return text.empty() ? Slice{} : trace.store(text); };
    if (in.type == StepType::tool_call) {
      st.raw_tool = put(in.tool);
      // A call asked about is taken next, and agents call few tools: the name is normalized
      // and interned once per change of name.
      if (in.tool != raw_name || !named) {
        normalize_tool_name(in.tool, case_sensitive, name);
        tool = tools.intern(name);
        raw_name.assign(in.tool);
        named = true;
      }
      st.tool_name = name == in.tool ? st.raw_tool : trace.store(name);
      st.tool = tool;
      st.status = in.failed ? StepStatus::error : StepStatus::ok;
    }
    st.arguments = put(in.arguments);
    st.result = put(in.result);
    st.content = put(in.content);
    st.extra = put(in.extra);
    st.id = put(in.id);
    // A step without a turn has one of its own, which it ends; what follows a numbered one
    // is not known yet.
    st.turn = in.turn ? *in.turn : fresh_turn();
    checker.eval.set_turn_ends(in.turn ? std::nullopt : std::optional<bool>(true));
    last_from = nullptr;
  }

  // A turn number the step before the last one does not have.
  std::uint32_t fresh_turn() const {
    const std::size_t n = trace.steps().size();
    return n < 2 ? 0 : trace.steps()[n - 2].turn + 1;
  }

  void append(const Trajectory& from, std::size_t index) {
    const Step& src = from.steps().at(index);
    Step st = src;
    st.for_each_slice([&](Slice& s) { s = s.empty() ? Slice{} : trace.store(from.text(s)); });
    st.tool = src.type == StepType::tool_call ? tools.intern(from.text(src.tool_name)) : kNoTool;
    trace.steps().push_back(st);
    // Turns are numbered by the monitor: a step shares the turn of the step before only when
    // both are steps of one trajectory given in order (a replayed history), one after the
    // other and in one turn there. So the step ends its turn unless its trajectory's next
    // step continues it: a step read alone is a turn of its own.
    const bool shares = last_from == &from && index > 0 && index == last_index + 1 &&
                        detail::same_turn(from.steps()[index - 1], src);
    trace.steps().back().turn = shares ? trace.steps()[trace.steps().size() - 2].turn : fresh_turn();
    checker.eval.set_turn_ends(index + 1 >= from.steps().size() || !detail::same_turn(src, from.steps()[index + 1]));
    last_from = &from;
    last_index = index;
  }

  template <class... A>
  void observe(std::vector<Violation>& out, const A&... step) {
    checker.clear_report(out);
    if (finished) return;
    append(step...);
    checker.report = &out;
    checker.take_step(trace, static_cast<std::uint32_t>(trace.steps().size() - 1));
    checker.report = nullptr;
  }

  template <class... A>
  void check(std::vector<Violation>& out, const A&... step) {
    checker.clear_report(out);
    if (finished) return;
    const std::size_t arena = trace.arena_size();
    const Trajectory* from = last_from;
    const std::size_t index = last_index;
    append(step...);
    checker.report = &out;
    checker.probe_step(trace, static_cast<std::uint32_t>(trace.steps().size() - 1));
    checker.report = nullptr;
    trace.truncate(trace.steps().size() - 1, arena);
    last_from = from;  // the step was not taken
    last_index = index;
  }
};

Monitor::Monitor(std::shared_ptr<const Program> program, std::string_view context)
    : impl_(std::make_unique<Impl>(std::move(program), context)) {}
Monitor::~Monitor() = default;
Monitor::Monitor(Monitor&&) noexcept = default;
Monitor& Monitor::operator=(Monitor&&) noexcept = default;

void Monitor::reset(std::string_view context) { impl_->reset(context); }
void Monitor::observe(const MonitorStep& step, std::vector<Violation>& out) { impl_->observe(out, step); }
void Monitor::observe(const Trajectory& from, std::size_t index, std::vector<Violation>& out) {
  impl_->observe(out, from, index);
}
void Monitor::check(const MonitorStep& step, std::vector<Violation>& out) { impl_->check(out, step); }
void Monitor::check(const Trajectory& from, std::size_t index, std::vector<Violation>& out) {
  impl_->check(out, from, index);
}
void Monitor::pending(std::vector<Obligation>& out) {
  out.clear();
  if (!impl_->finished) impl_->checker.pending(out);
}
void Monitor::finish(std::vector<RuleResult>& out) {
  if (impl_->finished) {
    out.clear();
    return;
  }
  impl_->finished = true;
  impl_->checker.finish(impl_->trace, out);
}
const Trajectory& Monitor::trace() const { return impl_->trace; }
const Program& Monitor::program() const {
  static const Program none(empty_program());  // a Monitor given no program has no rules
  return impl_->program ? *impl_->program : none;
}

}  // namespace trajcheck
