// The statement monitors of §3 with the fine print of §4a: counters and small state
// machines stepped once per step of a segment, and a Glushkov automaton for `expect`.
#include "checker/monitor.hpp"

#include <algorithm>

namespace trajcheck::detail {

using K = ir::StatementKind;

StatementMonitor::StatementMonitor(const StatementSpec& spec, const ProgramImpl& program)
    : spec_(&spec), core_{spec.kind, spec.nb, spec.a, spec.b, spec.ignoring, spec.lo, spec.hi} {
  if (spec.nfa != kNoId) {
    nfa_ = &program.nfas[spec.nfa];
    cur_.assign(nfa_->words, 0);
    next_.assign(nfa_->words, 0);
  }
  begin();
}

void StatementMonitor::begin(std::uint32_t at) {
  seg_start_ = at;
  done_ = activated_ = seen_a_ = seen_b_ = any_ = flag_ = false;
  first_a_ = first_b_ = last_ = nb_from_ = turn_ = kNoId;
  turn_a_ = turn_b_ = false;
  count_ = 0;
  reported_ = 0;
  buf_.clear();
  active_chains_ = 0;
  new_key_ = false;
  started_ = false;
  node_ = kNoId;
  turned_ = over_cap_ = false;
  letter_turn_ = kNoId;
  a_turn_ = kNoId;
  first_a_b_ = false;
  // The containers only one kind of statement fills (the others' stay empty).
  switch (core_.kind) {
    case K::never_followed_by: turn_bs_.clear(); break;
    case K::immediately_precedes:
    case K::immediately_followed_by:
      turn_as_.clear();
      prev_as_.clear();
      break;
    case K::retries:
      for (std::uint32_t t : touched_) chains_[t] = Chain{};
      touched_.clear();
      break;
    case K::no_duplicate: keys_.clear(); break;
    case K::expect:
    case K::expect_exactly: letter_masks_.clear(); break;
    default: break;
  }
}

void StatementMonitor::step(StepEval& ev) {
  const Core& s = core_;
  const std::uint32_t i = ev.index();
  switch (s.kind) {
    case K::forbid:
      if (ev.match(s.a)) buf_.push_back(i);
      break;
    case K::require:
      if (ev.match(s.a)) seen_a_ = done_ = true;
      break;
    case K::count:
      if (ev.match(s.a)) {
        ++count_;
        // "at most N" names the (N+1)th and later; the other forms name every match.
        bool at_most = s.lo == 0 && s.hi != ir::kUnbounded;
        if (!at_most || count_ > s.hi) buf_.push_back(i);
      }
      break;
    case K::precedes:  // an A counts for the B's of later turns only
      if (ev.match(s.b)) {
        activated_ = true;
        if (first_a_ == kNoId || first_a_ >= ev.group()) buf_.push_back(i);
      }
      if (first_a_ == kNoId && ev.match(s.a)) first_a_ = i;
      break;
    case K::immediately_precedes:  // a B needs an A in the turn just before its own
      if (ev.group() != turn_) {
        flag_ = turn_a_;
        turn_a_ = false;
        turn_ = ev.group();
      }
      if (ev.match(s.b)) {
        activated_ = true;
        if (!flag_) buf_.push_back(i);
      }
      if (ev.match(s.a)) turn_a_ = true;
      break;
    case K::followed_by:
      if (ev.match(s.b)) {  // every A of an earlier turn now has a later B
        const std::uint32_t g = ev.group();
        buf_.erase(buf_.begin(), std::lower_bound(buf_.begin(), buf_.end(), g));
        if (nb_from_ != kNoId) {  // lazy: so do the pending A's binding nothing before its turn
          nb_from_ = std::max(nb_from_, g);
          if (nb_from_ >= i) nb_from_ = kNoId;
        }
      }
      if (ev.match(s.a)) {
        activated_ = true;
        buf_.push_back(i);
      }
      break;
    case K::immediately_followed_by:  // an A needs a B in the turn just after its own
      if (ev.group() != turn_) {
        if (turn_ != kNoId) close_turn();
        turn_ = ev.group();
      }
      if (ev.match(s.b)) turn_b_ = true;
      if (ev.match(s.a)) {
        activated_ = true;
        turn_as_.push_back(i);
      }
      if (ev.turn_ends()) close_turn();
      break;
    case K::requires_:
      if (ev.match(s.a) && first_a_ == kNoId) first_a_ = i;
      if (ev.match(s.b)) seen_b_ = true;
      done_ = first_a_ != kNoId && seen_b_;
      break;
    case K::never_followed_by: {  // a B of the first A's own turn may follow it
      const bool a = ev.match(s.a), b = ev.match(s.b);
      if (first_a_ != kNoId) {
        if (b) buf_.push_back(i);
        // Another A of the first A's turn: the first A, if a B, may follow it.
        if (a && first_a_b_ && !flag_ && ev.group() == a_turn_) {
          flag_ = true;
          buf_.push_back(first_a_);
        }
      } else if (a) {
        first_a_ = i;
        a_turn_ = ev.group();
        first_a_b_ = b;
        if (turn_ == a_turn_) buf_.insert(buf_.end(), turn_bs_.begin(), turn_bs_.end());
        turn_bs_.clear();
      } else if (b) {
        if (turn_ != ev.group()) turn_bs_.clear();
        turn_ = ev.group();
        turn_bs_.push_back(i);
      }
      break;
    }
    case K::excludes:
      if (first_a_ == kNoId && ev.match(s.a)) first_a_ = i;
      if (first_b_ == kNoId && ev.match(s.b)) first_b_ = i;
      done_ = first_a_ != kNoId && first_b_ != kNoId;
      break;
    case K::starts_with:
      if (!any_) {
        any_ = done_ = true;
        first_a_ = i;
        flag_ = ev.match(s.a);
      }
      break;
    case K::ends_with:
      any_ = true;
      last_ = i;
      flag_ = ev.match(s.a);
      break;
    case K::only:
      if (ev.is_tool_call() && !ev.match(s.a)) buf_.push_back(i);
      break;
    case K::no_duplicate:
      // Lazy: bottom's steps (binding nothing) are the log's (Checker::log_non_binding); a
      // slice's own step repeats a key of its own or of an earlier step binding nothing in
      // its segment.
      if (shared_ != nullptr && !ev.has_binding()) break;
      if (ev.is_tool_call() && ev.match(s.a)) {
        const std::string_view key = ev.canonical_arguments();
        bool fresh = keys_.insert(key);
        if (fresh && shared_ != nullptr) {
          last_key_ = key;
          if (shared_->by_segment) {
            const std::uint32_t last = shared_->last_at.get(key);
            fresh = last == kNoId || last < seg_start_;
          } else {
            fresh = !shared_->keys.contains(key);
          }
          new_key_ = fresh;
        }
        if (!fresh) buf_.push_back(i);
      }
      break;
    case K::in_a_row:
      if (ev.is_tool_call()) {
        if (ev.match(s.a)) {
          if (++count_ > s.hi) buf_.push_back(i);
        } else {
          count_ = 0;
        }
      }
      break;
    case K::retries:
      if (shared_ != nullptr && !ev.has_binding()) break;  // lazy: bottom's steps are the log's
      if (ev.is_tool_call() && ev.match(s.a)) {
        std::uint32_t t = ev.tool();
        if (t >= chains_.size()) chains_.resize(std::size_t(t) + 1);
        Chain& ch = chains_[t];
        if (shared_ != nullptr && !ch.own) {
          // Lazy: the chain so far is the log's calls of t since the segment opened or the
          // last success binding nothing, whichever is later (all failures, the first starts it).
          std::uint64_t m = 0;
          if (t < shared_->tools.size()) {
            const NbEvents::ToolCalls& tc = shared_->tools[t];
            std::uint32_t since = seg_start_;
            if (!tc.ok.empty() && tc.ok.back() >= since) since = tc.ok.back() + 1;
            m = static_cast<std::uint64_t>(tc.calls.end() - std::lower_bound(tc.calls.begin(), tc.calls.end(), since));
          }
          ch.active = m > 0;
          ch.n = m > 0 ? m - 1 : 0;
          ch.own = true;
          touched_.push_back(t);
        }
        if (ch.active && ++ch.n > s.hi) buf_.push_back(i);
        if (ev.step().status == StepStatus::error) {
          if (!ch.active && shared_ == nullptr) {
            touched_.push_back(t);
            ++active_chains_;
          }
          ch.active = true;
        } else {
          if (ch.active && shared_ == nullptr) --active_chains_;
          ch.active = false;  // a success ends the chain (having counted as a retry)
          ch.n = 0;
        }
      }
      break;
    case K::expect:
    case K::expect_exactly:
      step_expect(ev);
      break;
  }
}

namespace {
// The events of `v` in [from, to).
std::pair<const std::uint32_t*, const std::uint32_t*> events(const std::vector<std::uint32_t>& v,
                                                             std::uint32_t from, std::uint32_t to) {
  const std::uint32_t* e = lower_bound_from_back(v.data(), v.data() + v.size(), to);
  return {lower_bound_from_back(v.data(), e, from), e};
}
}  // namespace

// Each case is StatementMonitor::step folded over a run of steps binding nothing, on which
// binder-only patterns are false: what is left depends on the first or last event of a
// kind, or adds every event of a kind as a witness (output, so linear in the result).
void StatementMonitor::catch_up(const NbEvents& ev, std::uint32_t from, std::uint32_t to) {
  if (done_ || from >= to || core_.nb != NbEffect::lazy) return;
  const Core& s = core_;
  auto [a0, a1] = events(ev.a, from, to);
  auto [b0, b1] = events(ev.b, from, to);
  const bool any_a = a0 != a1, any_b = b0 != b1;
  switch (s.kind) {
    case K::forbid:
    case K::only:  // a: the matches (forbid) / the tool calls outside the list (only)
      buf_.insert(buf_.end(), a0, a1);
      break;
    case K::require:
      if (any_a) seen_a_ = done_ = true;
      break;
    case K::count: {
      const bool at_most = s.lo == 0 && s.hi != ir::kUnbounded;
      const std::uint64_t n = static_cast<std::uint64_t>(a1 - a0);
      // "at most N" keeps the (N+1)th onward: skip the matches that stay within N.
      std::uint64_t skip = !at_most || count_ >= s.hi ? 0 : std::min<std::uint64_t>(n, s.hi - count_);
      buf_.insert(buf_.end(), a0 + skip, a1);
      count_ += n;
      break;
    }
    case K::precedes:
      if (any_b) activated_ = true;
      if (first_a_ == kNoId && any_a) first_a_ = *a0;
      // A B whose turn began at or before the first A has no A before it (B is checked
      // first); the B's are in step order, so their turns' first steps are too.
      buf_.insert(buf_.end(), b0,
                  first_a_ == kNoId ? b1
                                    : std::partition_point(b0, b1, [&](std::uint32_t b) { return ev.group_of(b) <= first_a_; }));
      break;
    case K::immediately_precedes:
    case K::immediately_followed_by:
      catch_up_adjacent(ev, from, to);
      break;
    case K::followed_by:
      if (any_a) activated_ = true;
      if (any_b) {  // the last B answers every A of an earlier turn; those of its own are pending
        const std::uint32_t g = ev.group_of(*(b1 - 1));
        buf_.erase(buf_.begin(), std::lower_bound(buf_.begin(), buf_.end(), g));
        // With none pending before the range, a turn begun before it holds no pending A.
        nb_from_ = nb_from_ == kNoId ? std::max(g, from) : std::max(nb_from_, g);
      } else if (nb_from_ == kNoId) {
        nb_from_ = from;
      }
      break;
    case K::requires_:
      if (first_a_ == kNoId && any_a) first_a_ = *a0;
      if (any_b) seen_b_ = true;
      done_ = first_a_ != kNoId && seen_b_;
      break;
    case K::never_followed_by:
      if (first_a_ == kNoId && any_a) {
        first_a_ = *a0;
        a_turn_ = ev.group_of(first_a_);
        first_a_b_ = std::binary_search(b0, b1, first_a_);
        // This slice's own B's of that turn, met before it.
        if (turn_ == a_turn_) buf_.insert(buf_.end(), turn_bs_.begin(), turn_bs_.end());
        turn_bs_.clear();
      }
      if (first_a_ == kNoId) {  // the B's of the range's last turn may share it with a first A to come
        if (any_b) {
          const std::uint32_t g = ev.group_of(*(b1 - 1));
          if (turn_ != g) turn_bs_.clear();
          turn_ = g;
          turn_bs_.insert(turn_bs_.end(), std::lower_bound(b0, b1, g), b1);
        }
        break;
      }
      {  // the B's of the first A's turn and of later turns, the first A excepted
        const std::uint32_t* from_b = std::lower_bound(b0, b1, a_turn_);
        for (const std::uint32_t* b = from_b; b != b1; ++b)
          if (*b != first_a_) buf_.push_back(*b);
      }
      if (first_a_b_ && !flag_) {  // another A of the first A's turn
        const std::uint32_t* a = std::lower_bound(a0, a1, a_turn_);
        for (; a != a1 && ev.group_of(*a) == a_turn_ && !flag_; ++a)
          if (*a != first_a_) {
            flag_ = true;
            buf_.push_back(first_a_);
          }
      }
      break;
    case K::excludes:
      if (first_a_ == kNoId && any_a) first_a_ = *a0;
      if (first_b_ == kNoId && any_b) first_b_ = *b0;
      done_ = first_a_ != kNoId && first_b_ != kNoId;
      break;
    case K::starts_with:  // a: every step, b: the steps matching P
      if (!any_ && any_a) {
        any_ = done_ = true;
        first_a_ = *a0;
        flag_ = std::binary_search(ev.b.begin(), ev.b.end(), *a0);
      }
      break;
    case K::ends_with:
      if (any_a) {
        any_ = true;
        last_ = *(a1 - 1);
        flag_ = std::binary_search(ev.b.begin(), ev.b.end(), last_);
      }
      break;
    case K::in_a_row: {  // a: tool calls; b: those not matching P; c: matches past N in the log's run
      if (!any_a) break;
      // The slice's count runs on only up to the first non-match; after it the runs are the log's.
      const std::uint32_t* brk = any_b ? std::lower_bound(a0, a1, *b0) : a1;
      const auto head = static_cast<std::uint64_t>(brk - a0);
      const std::uint64_t skip = count_ >= s.hi ? 0 : std::min<std::uint64_t>(head, s.hi - count_);
      buf_.insert(buf_.end(), a0 + skip, brk);
      if (!any_b) {
        count_ += head;
        break;
      }
      auto [c0, c1] = events(ev.c, *b0, to);
      buf_.insert(buf_.end(), c0, c1);
      count_ = static_cast<std::uint64_t>(a1 - (std::lower_bound(brk, a1, *(b1 - 1)) + 1));
      break;
    }
    case K::expect:
    case K::expect_exactly: {
      // The state of its class now (a segment opened at `from`: the class started there).
      if (ev.classes == nullptr || nfa_ == nullptr) break;
      std::uint32_t node = node_ != kNoId ? node_ : ev.classes->fresh_at(from);
      node_ = kNoId;
      if (node == kNoId) break;
      ExpectClasses::State st = ev.classes->state(node);
      if (st.dead_at != kNoId) {
        buf_.push_back(st.dead_at);
        done_ = true;
      } else {
        started_ = st.started;
        if (started_) std::copy(st.set, st.set + nfa_->words, cur_.begin());
      }
      break;
    }
    case K::no_duplicate:  // a: the steps repeating an earlier step binding nothing
      if (!ev.by_segment) {
        buf_.insert(buf_.end(), a0, a1);
      } else {  // those whose earlier step is in this segment
        ev.prev.report(static_cast<std::size_t>(a0 - ev.a.data()), static_cast<std::size_t>(a1 - ev.a.data()),
                       seg_start_, [&](std::size_t j) { buf_.push_back(ev.a[j]); });
      }
      break;
    case K::retries:
      catch_up_retries(ev, from, to);
      break;
  }
}

// Lazy `retries` over calls binding nothing in [from, to). On a tool its own calls touched
// (`own`), the slice's chain runs on up to and including the first success binding nothing
// in the range; after it, and on every other tool, the slice's chain is the log's from the
// segment start on, so its retries past N are the log's `c` (NbEvents::retry_counts).
// Cost: O(log) per own tool plus the log's retries in the range (the slice's witnesses,
// and at most N+1 per tool more).
void StatementMonitor::catch_up_retries(const NbEvents& ev, std::uint32_t from, std::uint32_t to) {
  const std::uint64_t hi = core_.hi;
  bool synced = false;
  for (std::uint32_t t : touched_) {
    Chain& ch = chains_[t];
    ch.sync = kNoId;
    if (t >= ev.tools.size()) continue;
    const NbEvents::ToolCalls& tc = ev.tools[t];
    auto [c0, c1] = events(tc.calls, from, to);
    if (c0 == c1) continue;
    auto [o0, o1] = events(tc.ok, from, to);
    const std::uint32_t* head_end = c1;
    if (o0 != o1) {
      ch.sync = *o0;
      head_end = std::lower_bound(c0, c1, *o0) + 1;
      synced = true;
    }
    // An active chain with n retries: the k-th call is one more; an inactive one starts at
    // the first call (a failure, or the success that ends the head at once).
    const std::uint64_t skip = ch.active ? (ch.n >= hi ? 0 : hi - ch.n) : (hi == ir::kUnbounded ? hi : hi + 1);
    if (skip < static_cast<std::uint64_t>(head_end - c0)) buf_.insert(buf_.end(), c0 + skip, head_end);
    if (o0 == o1) {  // all failures: the chain runs on
      const auto m = static_cast<std::uint64_t>(c1 - c0);
      if (ch.active) {
        ch.n += m;
      } else {
        ch.active = true;
        ch.n = m - 1;
      }
    }
  }
  auto [w0, w1] = events(ev.c, from, to);
  for (const std::uint32_t* w = w0; w != w1; ++w) {
    const std::size_t j = static_cast<std::size_t>(w - ev.c.data());
    const std::uint32_t t = ev.retry[j].tool;
    if (t < chains_.size() && chains_[t].own) {
      if (chains_[t].sync != kNoId && *w > chains_[t].sync) buf_.push_back(*w);  // the log's chain again
    } else if (ev.retry_counts(j, seg_start_, hi)) {
      buf_.push_back(*w);
    }
  }
  if (!synced) return;
  // A success binding nothing reset these chains: the log's from here on.
  std::size_t keep = 0;
  for (std::uint32_t t : touched_) {
    if (chains_[t].sync != kNoId) chains_[t] = Chain{};
    else touched_[keep++] = t;
  }
  touched_.resize(keep);
}

void StatementMonitor::close_turn() {
  if (!turn_b_) buf_.insert(buf_.end(), prev_as_.begin(), prev_as_.end());
  // Copied, not swapped: each list keeps its own capacity, so a pooled slice reused for a
  // trace with a different number of turns does not find an empty one where it pushes.
  prev_as_.assign(turn_as_.begin(), turn_as_.end());
  turn_as_.clear();
  turn_b_ = false;
  turn_ = kNoId;
}

// Lazy adjacency between turns over the steps binding nothing in [from, to): ev.a every
// such step, ev.c the B's (precedes) / A's (followed by), ev.d the A's / B's, ev.b what the
// log found violated between its own turns (B's whose previous turn had no A / A's whose
// next turn had no B). The slice's own steps lie outside the range, so only the range's
// first turn (which may go on from the slice's open turn) and the turn after it see them;
// from there on the log's findings are the slice's. Cost: O(log) plus the witnesses, and
// the A's of the range's last two turns (followed by) that stay pending.
void StatementMonitor::catch_up_adjacent(const NbEvents& ev, std::uint32_t from, std::uint32_t to) {
  const std::uint32_t* a0 = lower_bound_from_back(ev.a.data(), ev.a.data() + ev.a.size(), from);
  const std::uint32_t* a1 = lower_bound_from_back(a0, ev.a.data() + ev.a.size(), to);
  if (a0 == a1) return;
  auto at = [&](const std::uint32_t* p) { return p == a1 ? to : *p; };
  // The first logged step of a later turn than *p's (or a1).
  auto turn_end = [&](const std::uint32_t* p) {
    const std::uint32_t g = ev.group_of(*p);
    return std::partition_point(p, a1, [&](std::uint32_t x) { return ev.group_of(x) == g; });
  };
  auto any_in = [](const std::vector<std::uint32_t>& v, std::uint32_t lo, std::uint32_t hi) {
    auto [x, y] = events(v, lo, hi);
    return x != y;
  };
  auto add = [&](std::vector<std::uint32_t>& out, const std::vector<std::uint32_t>& v, std::uint32_t lo, std::uint32_t hi) {
    auto [x, y] = events(v, lo, hi);
    out.insert(out.end(), x, y);
  };
  const std::uint32_t* e1 = turn_end(a0);
  if (core_.kind == K::immediately_precedes) {  // c: B's, d: A's, b: B's with no A in the turn before
    activated_ = activated_ || any_in(ev.c, from, to);
    const std::uint32_t g1 = ev.group_of(*a0);
    const bool before1 = g1 == turn_ ? flag_ : turn_a_;
    const bool in1 = (g1 == turn_ && turn_a_) || any_in(ev.d, *a0, at(e1));
    if (!before1) add(buf_, ev.c, *a0, at(e1));
    if (e1 == a1) {
      turn_ = g1;
      flag_ = before1;
      turn_a_ = in1;
      return;
    }
    const std::uint32_t* e2 = turn_end(e1);
    const bool in2 = any_in(ev.d, *e1, at(e2));
    if (!in1) add(buf_, ev.c, *e1, at(e2));
    if (e2 == a1) {
      turn_ = ev.group_of(*e1);
      flag_ = in1;
      turn_a_ = in2;
      return;
    }
    add(buf_, ev.b, *e2, to);  // the turns after: the turn before each is all in the range
    const std::uint32_t gl = ev.group_of(*(a1 - 1));
    const std::uint32_t* sl = std::lower_bound(e2, a1, gl);  // the last turn's first logged step
    const std::uint32_t gp = ev.group_of(*(sl - 1));
    turn_ = gl;
    turn_a_ = any_in(ev.d, *sl, to);
    flag_ = gp == ev.group_of(*e1) ? in2 : any_in(ev.d, gp, gl);
    return;
  }
  // immediately followed by: c: A's, d: B's, b: A's with no B in the turn after.
  activated_ = activated_ || any_in(ev.c, from, to);
  // Takes the turn of the logged steps [p, q) as step() would, closing it when it ended
  // before `to`.
  auto take_turn = [&](const std::uint32_t* p, const std::uint32_t* q) {
    const std::uint32_t g = ev.group_of(*p);
    if (g != turn_) {
      if (turn_ != kNoId) close_turn();
      turn_ = g;
    }
    turn_b_ = turn_b_ || any_in(ev.d, *p, at(q));
    add(turn_as_, ev.c, *p, at(q));
    if (q != a1 || (to < ev.groups->size() && ev.group_of(to) != g)) close_turn();
  };
  if (ev.groups == nullptr) return;
  take_turn(a0, e1);
  if (e1 == a1) return;
  const std::uint32_t* e2 = turn_end(e1);
  take_turn(e1, e2);
  if (e2 == a1) return;
  const std::uint32_t gl = ev.group_of(*(a1 - 1));
  const std::uint32_t* sl = std::lower_bound(e2, a1, gl);  // the last turn's first logged step
  if (sl != e2) {
    // The A's of the turns from e1's up to the one before the last are all answered (or not)
    // inside the range: the log's findings. The one before the last waits on the last.
    const std::uint32_t* sp = std::lower_bound(e2, sl, ev.group_of(*(sl - 1)));
    add(buf_, ev.b, *e1, *sp);
    prev_as_.clear();
    add(prev_as_, ev.c, *sp, *sl);
    turn_as_.clear();
    turn_b_ = false;
    turn_ = kNoId;
  }
  take_turn(sl, a1);
}

void ExpectClasses::reset(const Nfa* nfa) {
  nfa_ = nfa;
  words_ = nfa != nullptr ? nfa->words : 0;
  parent_.clear();
  dead_at_.clear();
  started_.clear();
  sets_.clear();
  live_.clear();
  fresh_.clear();
  tmp_.assign(words_, 0);
  table_.assign(16, kNoId);
}

std::size_t ExpectClasses::hash(bool started, const std::uint64_t* set) const {
  std::uint64_t h = started ? 0x9e3779b97f4a7c15ull : 1;
  if (started)
    for (std::uint32_t w = 0; w < words_; ++w) h = (h ^ set[w]) * 0x100000001b3ull;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

bool ExpectClasses::same(std::uint32_t node, bool started, const std::uint64_t* set) const {
  if (bool(started_[node]) != started) return false;
  return !started || std::equal(set, set + words_, sets_.data() + std::size_t(node) * words_);
}

std::uint32_t ExpectClasses::lookup(bool started, const std::uint64_t* set) const {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t h = hash(started, set) & mask;; h = (h + 1) & mask) {
    std::uint32_t n = table_[h];
    if (n == kNoId || same(n, started, set)) return n;
  }
}

void ExpectClasses::insert(std::uint32_t node) {
  const std::size_t mask = table_.size() - 1;
  std::size_t h = hash(started_[node], sets_.data() + std::size_t(node) * words_) & mask;
  while (table_[h] != kNoId) h = (h + 1) & mask;
  table_[h] = node;
}

void ExpectClasses::rehash() {
  std::size_t size = table_.size();
  while (size < 2 * live_.size() + 2) size *= 2;
  table_.assign(size, kNoId);
  for (std::uint32_t n : live_) insert(n);
}

std::uint32_t ExpectClasses::join(bool started, const std::uint64_t* set) {
  std::uint32_t n = lookup(started, set);
  if (n != kNoId) return n;
  n = static_cast<std::uint32_t>(parent_.size());
  parent_.push_back(n);
  dead_at_.push_back(kNoId);
  started_.push_back(started);
  if (started) sets_.insert(sets_.end(), set, set + words_);
  else sets_.resize(sets_.size() + words_, 0);
  live_.push_back(n);
  if (2 * live_.size() + 2 > table_.size()) rehash();
  else insert(n);
  return n;
}

// StatementMonitor::step_expect on each live class's state.
void ExpectClasses::letter(StepEval& ev) {
  if (nfa_ == nullptr || live_.empty()) return;
  const Nfa& n = *nfa_;
  next_live_.clear();
  for (std::uint32_t r : live_) {
    std::uint64_t* set = sets_.data() + std::size_t(r) * words_;
    std::fill(tmp_.begin(), tmp_.end(), 0);
    if (!started_[r]) {
      std::copy(n.first.begin(), n.first.end(), tmp_.begin());
    } else {
      for (std::uint32_t w = 0; w < words_; ++w)
        for (std::uint64_t bits = set[w]; bits != 0; bits &= bits - 1) {
          std::uint32_t p = w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
          const std::uint64_t* f = n.follow_of(p);
          for (std::uint32_t v = 0; v < words_; ++v) tmp_[v] |= f[v];
        }
    }
    bool any = false;
    for (std::uint32_t w = 0; w < words_; ++w)
      for (std::uint64_t bits = tmp_[w]; bits != 0; bits &= bits - 1) {
        unsigned b = static_cast<unsigned>(__builtin_ctzll(bits));
        if (!ev.match(n.atom[w * 64 + b])) tmp_[w] &= ~(std::uint64_t(1) << b);
        else any = true;
      }
    if (!any) {
      dead_at_[r] = ev.index();
      continue;
    }
    std::copy(tmp_.begin(), tmp_.end(), set);
    started_[r] = 1;
    next_live_.push_back(r);
  }
  // Classes that reached the same state merge.
  std::fill(table_.begin(), table_.end(), kNoId);
  live_.clear();
  for (std::uint32_t r : next_live_) {
    std::uint32_t s = lookup(true, sets_.data() + std::size_t(r) * words_);
    if (s != kNoId) {
      parent_[r] = s;
    } else {
      insert(r);
      live_.push_back(r);
    }
  }
}

void ExpectClasses::freeze() {
  live_.clear();
  std::fill(table_.begin(), table_.end(), kNoId);
}

std::uint32_t ExpectClasses::fresh_at(std::uint32_t q) const {
  auto it = std::lower_bound(fresh_.begin(), fresh_.end(), std::make_pair(q, std::uint32_t(0)));
  return it != fresh_.end() && it->first == q ? it->second : kNoId;
}

std::uint32_t ExpectClasses::find(std::uint32_t n) {
  std::uint32_t root = n;
  while (parent_[root] != root) root = parent_[root];
  while (parent_[n] != root) {
    std::uint32_t next = parent_[n];
    parent_[n] = root;
    n = next;
  }
  return root;
}

ExpectClasses::State ExpectClasses::state(std::uint32_t node) {
  std::uint32_t r = find(node);
  return {bool(started_[r]), dead_at_[r], sets_.data() + std::size_t(r) * words_};
}

void StatementMonitor::flush_nb(const NbEvents& ev, std::uint32_t end) {
  if (nb_from_ == kNoId) return;
  auto [a0, a1] = events(ev.a, nb_from_, end);
  buf_.insert(buf_.end(), a0, a1);
  nb_from_ = kNoId;
}

bool StatementMonitor::expect_next(StepEval& ev, bool* letter) {
  *letter = false;
  if (!ev.is_tool_call() || nfa_ == nullptr) return false;
  const Nfa& n = *nfa_;
  if (core_.kind == K::expect && std::none_of(n.atoms.begin(), n.atoms.end(), [&](std::uint32_t a) { return ev.match(a); }))
    return false;
  *letter = true;
  // Candidates are the positions reachable by one more letter; keep those whose atom matches.
  std::fill(next_.begin(), next_.end(), 0);
  if (!started_) {
    std::copy(n.first.begin(), n.first.end(), next_.begin());
  } else {
    for (std::uint32_t w = 0; w < n.words; ++w)
      for (std::uint64_t bits = cur_[w]; bits != 0; bits &= bits - 1) {
        std::uint32_t p = w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
        const std::uint64_t* f = n.follow_of(p);
        for (std::uint32_t v = 0; v < n.words; ++v) next_[v] |= f[v];
      }
  }
  bool any = false;
  for (std::uint32_t w = 0; w < n.words; ++w)
    for (std::uint64_t bits = next_[w]; bits != 0; bits &= bits - 1) {
      unsigned b = static_cast<unsigned>(__builtin_ctzll(bits));
      if (!ev.match(n.atom[w * 64 + b])) next_[w] &= ~(std::uint64_t(1) << b);
      else any = true;
    }
  return any;
}

void StatementMonitor::step_expect(StepEval& ev) {
  // A letter that shares its turn with another call (or follows one that did) is taken in
  // every order of its turn; on a trace without shared turns this is never reached.
  if (turned_ || (ev.is_tool_call() && (ev.group() != ev.index() || !ev.turn_ends()))) {
    step_expect_turn(ev);
    return;
  }
  bool letter = false;
  const bool any = expect_next(ev, &letter);
  if (!letter) return;
  started_ = true;
  cur_.swap(next_);
  if (!any) {  // no word continues with this call: it is the witness
    buf_.push_back(ev.index());
    done_ = true;
  }
}

void StatementMonitor::step_expect_turn(StepEval& ev) {
  if (!ev.is_tool_call() || nfa_ == nullptr) return;
  const Nfa& n = *nfa_;
  if (core_.kind == K::expect && std::none_of(n.atoms.begin(), n.atoms.end(), [&](std::uint32_t a) { return ev.match(a); }))
    return;
  const std::size_t cw = std::size_t(n.words) + 1;  // one configuration: started, then the positions
  if (dp_.empty()) dp_.resize(1);
  if (!turned_) {  // the one configuration the steps so far reached
    turned_ = true;
    dp_[0].assign(cw, 0);
    dp_[0][0] = started_;
    if (started_) std::copy(cur_.begin(), cur_.end(), dp_[0].begin() + 1);
    dp_used_ = 1;
    letter_turn_ = kNoId;
  }
  if (ev.group() != letter_turn_) {  // a new turn starts from what every order of the last reached
    if (dp_used_ > 1) std::swap(dp_[0], dp_[dp_used_ - 1]);
    dp_used_ = 1;
    letter_masks_.clear();
    letter_turn_ = ev.group();
  }
  const std::size_t k = letter_masks_.size() / std::max<std::size_t>(n.words, 1);
  if (k >= kTurnLetters) {  // 2^k orders' worth of subsets: not tried, and not passed either
    buf_.push_back(ev.index());
    over_cap_ = done_ = true;
    return;
  }
  letter_masks_.resize(letter_masks_.size() + n.words, 0);
  std::uint64_t* mask = letter_masks_.data() + k * n.words;
  for (std::uint32_t p = 0; p < n.positions; ++p)
    if (ev.match(n.atom[p])) mask[p / 64] |= std::uint64_t(1) << (p % 64);
  dp_used_ = std::size_t(1) << (k + 1);
  if (dp_.size() < dp_used_) dp_.resize(dp_used_);
  // dp_[S]: the configurations some order of the letters in S reaches, from dp_[0]. The
  // subsets holding letter k, in increasing order: each one less a letter is computed before.
  bool stuck = false;
  std::vector<std::uint64_t>& next = next_turn_;
  next.resize(cw);
  for (std::size_t set = std::size_t(1) << k; set < dp_used_; ++set) {
    std::vector<std::uint64_t>& out = dp_[set];
    out.clear();
    for (std::size_t j = 0; j <= k; ++j) {
      if (!(set >> j & 1)) continue;
      const std::vector<std::uint64_t>& from = dp_[set ^ (std::size_t(1) << j)];
      const std::uint64_t* m = letter_masks_.data() + j * n.words;
      for (std::size_t c = 0; c < from.size(); c += cw) {
        std::fill(next.begin(), next.end(), 0);
        if (from[c] == 0) {
          std::copy(n.first.begin(), n.first.end(), next.begin() + 1);
        } else {
          for (std::uint32_t w = 0; w < n.words; ++w)
            for (std::uint64_t bits = from[c + 1 + w]; bits != 0; bits &= bits - 1) {
              const std::uint64_t* f = n.follow_of(w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits)));
              for (std::uint32_t v = 0; v < n.words; ++v) next[1 + v] |= f[v];
            }
        }
        bool any = false;
        for (std::uint32_t w = 0; w < n.words; ++w) {
          next[1 + w] &= m[w];
          any = any || next[1 + w] != 0;
        }
        if (!any) {
          stuck = true;
          continue;
        }
        next[0] = 1;
        bool known = false;
        for (std::size_t o = 0; o < out.size() && !known; o += cw) known = std::equal(next.begin(), next.end(), out.begin() + o);
        if (!known) out.insert(out.end(), next.begin(), next.end());
      }
    }
  }
  started_ = true;
  if (stuck) {  // some order of the turn's calls so far has no word continuing it
    buf_.push_back(ev.index());
    done_ = true;
  }
}

bool StatementMonitor::turn_accepts() const {
  const Nfa& n = *nfa_;
  const std::size_t cw = std::size_t(n.words) + 1;
  const std::vector<std::uint64_t>& confs = dp_[dp_used_ - 1];
  for (std::size_t c = 0; c < confs.size(); c += cw) {
    bool accept = confs[c] == 0 && n.nullable;
    for (std::uint32_t w = 0; w < n.words && confs[c] != 0; ++w) accept = accept || (confs[c + 1 + w] & n.last[w]);
    if (!accept) return false;
  }
  return true;
}

std::size_t StatementMonitor::definite_count() const {
  switch (core_.kind) {
    case K::require:
    case K::followed_by:
    case K::requires_:
    case K::ends_with:
      return 0;
    case K::count:  // past the upper bound: every match is a witness (at most: those past N)
      return core_.hi != ir::kUnbounded && count_ > core_.hi ? buf_.size() : 0;
    case K::never_followed_by: return buf_.empty() ? 0 : buf_.size() + 1;
    case K::excludes: return first_a_ == kNoId || first_b_ == kNoId ? 0 : first_a_ == first_b_ ? 1 : 2;
    case K::starts_with: return any_ && !flag_ ? 1 : 0;
    default: return buf_.size();
  }
}

std::uint32_t StatementMonitor::definite_at(std::size_t j) const {
  switch (core_.kind) {
    case K::never_followed_by: return j == 0 ? first_a_ : buf_[j - 1];
    case K::excludes: return j == 0 ? std::min(first_a_, first_b_) : std::max(first_a_, first_b_);
    case K::starts_with: return first_a_;
    default: return buf_[j];
  }
}

// step() restated as a question: each case adds what the same case of step() would make
// definite (definite_count()), reading the state only.
void StatementMonitor::probe(StepEval& ev, std::vector<std::uint32_t>& out) {
  const Core& s = core_;
  const std::uint32_t i = ev.index();
  switch (s.kind) {
    case K::forbid:
      if (ev.match(s.a)) out.push_back(i);
      break;
    case K::count:
      if (s.hi != ir::kUnbounded && count_ + 1 > s.hi && ev.match(s.a)) {
        if (count_ == s.hi) out.insert(out.end(), buf_.begin(), buf_.end());  // the bound is crossed now
        out.push_back(i);
      }
      break;
    case K::precedes:
      if ((first_a_ == kNoId || first_a_ >= ev.group()) && ev.match(s.b)) out.push_back(i);
      break;
    case K::immediately_precedes:
      if (!(ev.group() != turn_ ? turn_a_ : flag_) && ev.match(s.b)) out.push_back(i);
      break;
    case K::immediately_followed_by: {
      const std::vector<std::uint32_t>* waiting = &prev_as_;  // on a B of this step's turn
      bool b = turn_b_;
      if (ev.group() != turn_) {
        if (turn_ != kNoId) {  // the step closes the open turn
          if (!turn_b_) out.insert(out.end(), prev_as_.begin(), prev_as_.end());
          waiting = &turn_as_;
        }
        b = false;
      }
      if (ev.turn_ends() && !b && !ev.match(s.b)) out.insert(out.end(), waiting->begin(), waiting->end());
      break;
    }
    case K::never_followed_by: {
      const std::size_t before = out.size();
      if (first_a_ != kNoId) {
        if (ev.match(s.b)) out.push_back(i);
        if (first_a_b_ && !flag_ && ev.group() == a_turn_ && ev.match(s.a)) out.push_back(first_a_);
      } else if (ev.match(s.a) && turn_ == ev.group() && !turn_bs_.empty()) {
        out.insert(out.end(), turn_bs_.begin(), turn_bs_.end());
      }
      if (buf_.empty() && out.size() > before) out.push_back(first_a_ != kNoId ? first_a_ : i);
      break;
    }
    case K::excludes: {
      if (first_a_ != kNoId && first_b_ != kNoId) break;
      const std::uint32_t fa = first_a_ != kNoId ? first_a_ : ev.match(s.a) ? i : kNoId;
      const std::uint32_t fb = first_b_ != kNoId ? first_b_ : ev.match(s.b) ? i : kNoId;
      if (fa == kNoId || fb == kNoId) break;
      out.push_back(std::min(fa, fb));
      if (fa != fb) out.push_back(std::max(fa, fb));
      break;
    }
    case K::starts_with:
      if (!any_ && !ev.match(s.a)) out.push_back(i);
      break;
    case K::only:
      if (ev.is_tool_call() && !ev.match(s.a)) out.push_back(i);
      break;
    case K::no_duplicate:
      if (shared_ != nullptr) break;  // the Monitor runs no lazy slices
      if (ev.is_tool_call() && ev.match(s.a)) {
        if (keys_.contains(ev.canonical_arguments())) out.push_back(i);
      }
      break;
    case K::in_a_row:
      if (ev.is_tool_call() && count_ + 1 > s.hi && ev.match(s.a)) out.push_back(i);
      break;
    case K::retries:
      if (shared_ != nullptr) break;
      if (ev.is_tool_call() && ev.match(s.a)) {
        const std::uint32_t t = ev.tool();
        if (t < chains_.size() && chains_[t].active && chains_[t].n + 1 > s.hi) out.push_back(i);
      }
      break;
    case K::expect:
    case K::expect_exactly: {
      if (turned_ || (ev.is_tool_call() && (ev.group() != ev.index() || !ev.turn_ends()))) {
        StatementMonitor taken = *this;  // guard mode only: the turn's orders, tried on a copy
        taken.step_expect_turn(ev);
        if (taken.buf_.size() > buf_.size()) out.push_back(i);
        break;
      }
      bool letter = false;
      if (!expect_next(ev, &letter) && letter) out.push_back(i);
      break;
    }
    case K::require:
    case K::followed_by:
    case K::requires_:
    case K::ends_with:
      break;
  }
}

VerdictStatus StatementMonitor::finish(std::vector<std::uint32_t>& witnesses) const {
  const Core& s = core_;
  bool violated = false;
  bool vacuous = false;
  const std::size_t at = witnesses.size();
  auto take_buf = [&] { witnesses.insert(witnesses.end(), buf_.begin(), buf_.end()); };
  switch (s.kind) {
    case K::forbid:
    case K::only:
    case K::no_duplicate:
    case K::in_a_row:
    case K::retries:
      violated = !buf_.empty();
      take_buf();
      break;
    case K::count:
      violated = count_ < s.lo || count_ > s.hi;
      take_buf();
      break;
    case K::require: violated = !seen_a_; break;
    case K::precedes:
    case K::immediately_precedes:
    case K::followed_by:
      violated = !buf_.empty();
      vacuous = !activated_;
      take_buf();
      break;
    case K::immediately_followed_by:
      take_buf();
      // The A's of the last turn have no next turn; those of the one before, unless it had a B.
      if (turn_ == kNoId || !turn_b_) witnesses.insert(witnesses.end(), prev_as_.begin(), prev_as_.end());
      if (turn_ != kNoId) witnesses.insert(witnesses.end(), turn_as_.begin(), turn_as_.end());
      violated = witnesses.size() != at;
      vacuous = !activated_;
      break;
    case K::requires_:
      violated = first_a_ != kNoId && !seen_b_;
      if (violated) witnesses.push_back(first_a_);
      vacuous = first_a_ == kNoId;
      break;
    case K::never_followed_by:
      violated = !buf_.empty();
      if (violated) witnesses.push_back(first_a_);
      take_buf();
      vacuous = first_a_ == kNoId;
      break;
    case K::excludes:
      violated = first_a_ != kNoId && first_b_ != kNoId;
      if (violated) {
        witnesses.push_back(std::min(first_a_, first_b_));
        if (first_a_ != first_b_) witnesses.push_back(std::max(first_a_, first_b_));
      }
      vacuous = first_a_ == kNoId && first_b_ == kNoId;
      break;
    case K::starts_with:
    case K::ends_with:
      violated = !any_ || !flag_;
      if (any_ && !flag_) witnesses.push_back(s.kind == K::starts_with ? first_a_ : last_);
      break;
    case K::expect:
    case K::expect_exactly: {
      if (!buf_.empty() || nfa_ == nullptr) {
        violated = true;
        take_buf();
        break;
      }
      bool accept = false;
      if (turned_) {
        accept = turn_accepts();
      } else if (!started_) {
        accept = nfa_->nullable;
      } else {
        for (std::uint32_t w = 0; w < nfa_->words; ++w) accept = accept || (cur_[w] & nfa_->last[w]);
      }
      violated = !accept;  // the trace ended early: no witness
      break;
    }
  }
  if (violated) return VerdictStatus::violated;
  witnesses.resize(at);
  return vacuous ? VerdictStatus::vacuous : VerdictStatus::satisfied;
}

}  // namespace trajcheck::detail
