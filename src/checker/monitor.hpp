// One statement's monitor over one segment: a small value type with begin (reset for a
// new segment), step, finish and done. A parametric rule (§5) will keep one of these per
// binding value; a scope keeps one and resets it per segment.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checker/step_eval.hpp"
#include "compiler/program.hpp"

namespace trajcheck::detail {

// Parametric rules (§5): the steps binding nothing that matter to one statement (its
// `ignoring` applied), as sorted step indices, logged once per rule. What `a` and `b` hold
// depends on the statement kind (see Checker::Impl::log_non_binding); a slice reads a range
// of them when it catches up.
// The first element of sorted [b, e) that is >= x, searched from the back (galloping): a
// slice's catch-up asks about the steps since it was last touched, so the cost is
// logarithmic in how far back that is and touches the hot end of the log.
inline const std::uint32_t* lower_bound_from_back(const std::uint32_t* b, const std::uint32_t* e,
                                                  std::uint32_t x) {
  std::size_t step = 1;
  const std::uint32_t* hi = e;  // every element in [hi, e) is >= x
  while (hi != b) {
    const std::uint32_t* probe = static_cast<std::size_t>(hi - b) > step ? hi - step : b;
    if (*probe < x) return std::lower_bound(probe + 1, hi, x);
    hi = probe;
    step *= 2;
  }
  return b;
}

// Lazy `no duplicate` (a free alternative beside the binder): the slices whose own steps
// produced a (tool, arguments) key that no step binding nothing has had yet in their segment
// (`seg`: the step that opened it). The first step binding nothing with that key repeats it
// in each of them still in that segment, so it is handed to exactly those slices once (cost:
// the witnesses), and the waiters are forgotten. A chained hash multimap over pooled
// storage: no allocation per step once warm.
class KeyWaiters {
 public:
  void clear() {
    entries_.clear();
    arena_.clear();
    std::fill(heads_.begin(), heads_.end(), kNoId);
  }
  void add(std::string_view key, std::uint32_t slice, std::uint32_t seg) {
    if (entries_.size() >= heads_.size()) rehash();
    const std::uint64_t h = std::hash<std::string_view>{}(key);
    std::uint32_t& head = heads_[h & (heads_.size() - 1)];
    entries_.push_back({h, static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size()), slice,
                        seg, head});
    head = static_cast<std::uint32_t>(entries_.size() - 1);
    arena_.append(key);
  }
  // Calls f(slice, seg) for each slice waiting on `key`, and unlinks them.
  template <class F>
  void take(std::string_view key, F&& f) {
    if (heads_.empty()) return;
    const std::uint64_t h = std::hash<std::string_view>{}(key);
    std::uint32_t* link = &heads_[h & (heads_.size() - 1)];
    while (*link != kNoId) {
      Entry& e = entries_[*link];
      if (e.hash == h && std::string_view(arena_).substr(e.off, e.len) == key) {
        f(e.slice, e.seg);
        e.slice = kNoId;  // dead: left out of later rehashes
        *link = e.next;
      } else {
        link = &e.next;
      }
    }
  }

 private:
  struct Entry {
    std::uint64_t hash;
    std::uint32_t off, len, slice, seg, next;
  };
  void rehash() {
    heads_.assign(std::max<std::size_t>(16, heads_.size() * 2), kNoId);
    const std::size_t mask = heads_.size() - 1;
    for (std::size_t n = 0; n < entries_.size(); ++n) {
      Entry& e = entries_[n];
      if (e.slice == kNoId) continue;
      e.next = heads_[e.hash & mask];
      heads_[e.hash & mask] = static_cast<std::uint32_t>(n);
    }
  }
  std::vector<Entry> entries_;
  std::string arena_;
  std::vector<std::uint32_t> heads_;
};

// Reports the elements >= x of a range of an append-only array: maxima of aligned blocks of
// 2^k elements, each computed once when its block completes (O(1) amortized per append); a
// query splits the range into O(log n) complete blocks and descends only into blocks whose
// maximum is >= x, so it costs O(log n) per element reported. Storage is reused.
class RangeMax {
 public:
  void clear() {
    for (auto& level : levels_) level.clear();
  }
  void push(std::uint32_t v) {
    if (levels_.empty()) levels_.emplace_back();
    levels_[0].push_back(v);
    for (std::size_t k = 0; levels_[k].size() % 2 == 0; ++k) {
      if (k + 1 == levels_.size()) levels_.emplace_back();
      const std::vector<std::uint32_t>& l = levels_[k];
      levels_[k + 1].push_back(std::max(l[l.size() - 2], l.back()));
    }
  }
  std::uint32_t operator[](std::size_t j) const { return levels_[0][j]; }
  // f(j) for each j in [lo, hi) whose value is >= x, in increasing j.
  template <class F>
  void report(std::size_t lo, std::size_t hi, std::uint32_t x, F&& f) const {
    while (lo < hi) {
      std::size_t k = 0;
      while (k + 1 < levels_.size() && (lo & ((std::size_t(2) << k) - 1)) == 0 && lo + (std::size_t(2) << k) <= hi) ++k;
      visit(k, lo >> k, x, f);
      lo += std::size_t(1) << k;
    }
  }

 private:
  template <class F>
  void visit(std::size_t k, std::size_t j, std::uint32_t x, F& f) const {
    if (levels_[k][j] < x) return;
    if (k == 0) {
      f(j);
      return;
    }
    visit(k - 1, 2 * j, x, f);
    visit(k - 1, 2 * j + 1, x, f);
  }
  std::vector<std::vector<std::uint32_t>> levels_;
};

class ExpectClasses;
struct NbEvents {
  // The first step of each step's turn (StepEval::groups), for the statements that order by
  // turn; null: every step is a turn of its own.
  const std::vector<std::uint32_t>* groups = nullptr;
  std::uint32_t group_of(std::uint32_t step) const { return groups != nullptr ? (*groups)[step] : step; }
  std::vector<std::uint32_t> a, b;
  // Adjacency and `in a row` (shared prefix data: a slice's own state matters only up to
  // the first step of its range): `c` and `d` two more sorted lists, `run` the matching run
  // at the log's end. Adjacency is between turns: `turn` is the log's open turn (kNoId: none
  // or closed), `turn_a`/`turn_b` whether it had an A / a B, `prev_a` whether the turn before
  // it had an A, `turn_as`/`prev_as` the A's of it and of the turn before.
  std::vector<std::uint32_t> c, d;
  std::uint64_t run = 0;
  std::uint32_t turn = kNoId;
  bool turn_a = false, turn_b = false, prev_a = false;
  std::vector<std::uint32_t> turn_as, prev_as;
  ExpectClasses* classes = nullptr;  // `expect`: the automaton states of untouched slices
  // `no duplicate`: the keys of the steps binding nothing so far (`a`: those repeating an
  // earlier one, witnesses in every slice), and the slices waiting on their own keys.
  KeySet keys;
  KeyWaiters waiters;
  // `no duplicate` under after / between / after … until (`by_segment`): segments start at
  // different steps per slice, so `a` holds every step binding nothing whose key an earlier
  // one had, `prev` that earlier step (a slice's repeats are those with prev >= its segment
  // start), and `last_at` each key's latest such step.
  bool by_segment = false;
  RangeMax prev;
  KeySet last_at;  // per key, the last step binding nothing that had it
  // `retries`: per tool id, the calls binding nothing that match P and the successful ones
  // among them, and where the log's chain (over those calls only, from the trace start)
  // began (a rank in `calls`). `c` holds the calls that are retries past N in the log's
  // chain, `retry` where each sits: a slice's chain is the log's from its segment start
  // on, except on the tools its own calls touched, until a success binding nothing.
  struct ToolCalls {
    std::vector<std::uint32_t> calls, ok;
    std::uint32_t chain = 0;
  };
  struct Retry {
    std::uint32_t tool, rank, chain;  // ranks in tools[tool].calls
  };
  std::vector<ToolCalls> tools;
  std::vector<Retry> retry;
  // Whether c[j] (retry[j]) is a retry past `hi` in a segment that opened at `seg_start`
  // on a tool the segment's own calls did not touch: in the log's chain if that chain began
  // in the segment, else counted from the segment's first call of the tool.
  bool retry_counts(std::size_t j, std::uint32_t seg_start, std::uint64_t hi) const {
    const Retry& w = retry[j];
    const std::vector<std::uint32_t>& calls = tools[w.tool].calls;
    if (calls[w.chain] >= seg_start) return true;
    const auto first = static_cast<std::uint32_t>(std::lower_bound(calls.begin(), calls.end(), seg_start) - calls.begin());
    return w.rank - first > hi;
  }
  void clear() {
    keys.clear();
    waiters.clear();
    a.clear();
    b.clear();
    c.clear();
    d.clear();
    run = 0;
    turn = kNoId;
    turn_a = turn_b = prev_a = false;
    turn_as.clear();
    prev_as.clear();
    prev.clear();
    last_at.clear();
    for (ToolCalls& t : tools) {
      t.calls.clear();
      t.ok.clear();
      t.chain = 0;
    }
    retry.clear();
  }
};

// Parametric `expect` (lazy): the slices not touched since their last binding step, grouped
// by automaton state (started?, positions reached). A letter binding nothing advances each
// distinct state once; classes that reach the same state merge (union-find, so a slice finds
// its state by following parents) and a class whose state empties records that step as the
// witness of all its slices. Per step: O(live states × automaton words), whatever the
// number of slices. Storage is reused across traces.
class ExpectClasses {
 public:
  struct State {
    bool started = false;
    std::uint32_t dead_at = kNoId;  // the letter no word continued from, or kNoId
    const std::uint64_t* set = nullptr;
  };
  void reset(const Nfa* nfa);
  // The node of a live class in state (started, set) (set: nfa words; ignored unless started).
  std::uint32_t join(bool started, const std::uint64_t* set);
  // The current step is a letter binding nothing: every live class takes it.
  void letter(StepEval& ev);
  // A step binding nothing closes every segment: the live classes keep their state for good.
  void freeze();
  // A segment opens at step q (binding nothing): a class in the start state from there.
  void open_at(std::uint32_t q) { fresh_.emplace_back(q, join(false, nullptr)); }
  std::uint32_t fresh_at(std::uint32_t q) const;
  State state(std::uint32_t node);

 private:
  std::uint32_t find(std::uint32_t n);
  std::size_t hash(bool started, const std::uint64_t* set) const;
  bool same(std::uint32_t node, bool started, const std::uint64_t* set) const;
  void rehash();
  std::uint32_t lookup(bool started, const std::uint64_t* set) const;
  void insert(std::uint32_t node);

  const Nfa* nfa_ = nullptr;
  std::uint32_t words_ = 0;
  std::vector<std::uint32_t> parent_, dead_at_;
  std::vector<std::uint8_t> started_;
  std::vector<std::uint64_t> sets_;  // node × words
  std::vector<std::uint32_t> live_, next_live_;
  std::vector<std::uint32_t> table_;  // open addressing over live roots (kNoId: empty)
  std::vector<std::uint64_t> tmp_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fresh_;  // (step q, node)
};

class StatementMonitor {
 public:
  StatementMonitor(const StatementSpec& spec, const ProgramImpl& program);

  // A new segment, opened at step `at`.
  void begin(std::uint32_t at = 0);
  void step(StepEval& ev);
  // Parametric rules (spec().nb == lazy): applies the steps binding nothing in [from, to),
  // all inside this segment, in one step: O(log events) plus the witnesses it adds.
  void catch_up(const NbEvents& ev, std::uint32_t from, std::uint32_t to);
  // Before finish() at segment end `end`: materialises what catch_up kept as a range
  // (followed by: the pending A's that bind nothing).
  void flush_nb(const NbEvents& ev, std::uint32_t end);
  // Lazy `expect` in an open segment after a binding step: joins the class of its state.
  void join_class(ExpectClasses& classes) { node_ = classes.join(started_, cur_.data()); }
  // The segment's verdict were it to end now; a violated segment appends its witnesses to
  // `witnesses`. Changes nothing: a segment may be asked before it ends (Monitor).
  VerdictStatus finish(std::vector<std::uint32_t>& witnesses) const;
  // Guard mode (Monitor): the witnesses that are final already — no later step can undo the
  // violation they show — as a list that only grows while the segment is open and is a
  // prefix of what finish() gives: definite_count() of them, the j-th definite_at(j). Empty
  // for the statements that can only fail at the end (require, at least, followed by,
  // requires, ends with).
  std::size_t definite_count() const;
  std::uint32_t definite_at(std::size_t j) const;
  // The definite witnesses step(ev) would add, appended to `out`; the monitor's state is
  // unchanged (only scratch buffers are used). The same decisions as step() makes.
  void probe(StepEval& ev, std::vector<std::uint32_t>& out);
  // How many of the definite witnesses the Monitor has reported (0 from begin()).
  std::size_t reported() const { return reported_; }
  void set_reported(std::size_t n) { reported_ = n; }
  // Lazy `no duplicate` / `retries`: the rule's log of steps binding nothing (set on bottom,
  // copied into every slice); bottom then leaves those steps to the log.
  void share(const NbEvents* log) { shared_ = log; }
  // The canonical (tool, arguments) key of the current step (StepEval::canonical_arguments).
  std::string_view key_of(StepEval& ev) { return ev.canonical_arguments(); }
  // A step binding nothing that repeats a key of this slice's segment.
  void add_witness(std::uint32_t i) { buf_.push_back(i); }
  // The last step put a key new to this segment and to the log (last_key()); clears the flag.
  bool take_new_key() { return std::exchange(new_key_, false); }
  std::string_view last_key() const { return last_key_; }
  // Nothing a later step does can change this segment's verdict or witnesses.
  bool done() const { return done_; }
  // For the statements that react to any step only in some states (Checker::Impl's
  // Interest::watch_if_idle), whether the monitor is out of those states, where only a step
  // matching its watched patterns changes anything: no A just taken (immediately precedes),
  // no A waiting for its B (immediately followed by), no run (in a row), the first step taken
  // (starts with); for `never followed by` (Interest::b_if_busy), where then a B changes
  // nothing: no A yet and `lone_turns`, no step of the trace shares its turn (a B before the
  // first A matters only if that A may share its turn). True for the other statements.
  [[gnu::always_inline]] bool idle(bool lone_turns = false) const {  // asked after every step of a rule
    switch (core_.kind) {
      case ir::StatementKind::never_followed_by: return lone_turns && first_a_ == kNoId;
      case ir::StatementKind::immediately_precedes: return !flag_ && !turn_a_;
      case ir::StatementKind::immediately_followed_by: return turn_as_.empty() && prev_as_.empty();
      case ir::StatementKind::in_a_row: return count_ == 0;
      case ir::StatementKind::starts_with: return any_;
      // A call's success ends its tool's chain, which an inactive chain has not begun: while no
      // chain is active, only a failure changes anything (the lazy log keeps its own chains).
      case ir::StatementKind::retries: return shared_ != nullptr || active_chains_ == 0;
      default: return true;
    }
  }
  const StatementSpec& spec() const { return *spec_; }
  // spec().ignoring, read without going to the spec.
  std::uint32_t ignoring() const { return core_.ignoring; }
  // expect: the letters of one turn whose orders are all tried (2^n subsets); a turn with
  // more is a violation at its first letter past this, with the note below.
  static constexpr std::size_t kTurnLetters = 12;
  // expect: the step where a turn with more than kTurnLetters letters was met, or kNoId.
  std::uint32_t over_cap_at() const { return over_cap_ && !buf_.empty() ? buf_.back() : kNoId; }

 private:
  void step_expect(StepEval& ev);
  // expect on a trace whose calls share turns: the PATH must hold for every order of each
  // turn's calls (docs/language.md, Turns).
  void step_expect_turn(StepEval& ev);
  // Whether every automaton configuration some order can reach accepts.
  bool turn_accepts() const;
  // expect: whether the step is a letter, and if it is, next_ = the positions it reaches
  // (returns whether any).
  bool expect_next(StepEval& ev, bool* letter);
  void catch_up_retries(const NbEvents& ev, std::uint32_t from, std::uint32_t to);
  void catch_up_adjacent(const NbEvents& ev, std::uint32_t from, std::uint32_t to);
  // immediately followed by: the open turn ends (its A's now wait on the next turn's B's).
  void close_turn();

  const StatementSpec* spec_;
  // The fields of *spec_ that stepping and finishing read, kept beside the monitor's state:
  // the spec lies elsewhere (one more cache line per statement, cold at each trace's start).
  struct Core {
    ir::StatementKind kind;
    NbEffect nb;
    std::uint32_t a, b, ignoring;
    std::uint64_t lo, hi;
  };
  Core core_;
  const Nfa* nfa_ = nullptr;
  // The scalars every statement's begin() resets come first, then buf_: with spec_ and core_
  // they fill the first cache lines, the only ones most statements touch (each trace begins
  // every monitor with its state out of the cache). The containers of one kind of statement
  // come after, and begin() clears only those of its own kind (the others stay empty).
  bool done_ = false;
  bool activated_ = false;  // the statement's trigger occurred (vacuity)
  bool seen_a_ = false, seen_b_ = false, any_ = false, flag_ = false;
  // Adjacency between turns: the open turn (turn_: its first step; kNoId: none, or closed),
  // whether it has an A / a B (`flag_`: whether the turn before it had an A), and the A's of
  // it and of the turn before (turn_as_, prev_as_), waiting on a B in the next turn.
  bool turn_a_ = false, turn_b_ = false;
  // never followed by: whether the first A is itself a B (it follows another A of its turn
  // in some order; `flag_`: that was found); its turn (a_turn_), and turn_bs_ below.
  bool first_a_b_ = false;
  bool new_key_ = false;  // no duplicate: see take_new_key()
  bool started_ = false;  // expect: false means "at the start state" (cur_ below)
  // expect once a letter shared a turn (`turned_`; see dp_ below). `over_cap_`: a turn with
  // more than kTurnLetters letters, whose orders are not tried (a violation at the first
  // letter past the cap).
  bool turned_ = false, over_cap_ = false;
  std::uint32_t first_a_ = kNoId, first_b_ = kNoId, last_ = kNoId;
  std::uint32_t turn_ = kNoId;
  std::uint32_t a_turn_ = kNoId;
  // followed by, lazy: every A of NbEvents::a from this step on is pending (kNoId: none).
  std::uint32_t nb_from_ = kNoId;
  std::uint32_t active_chains_ = 0;  // retries, not lazy: the chains_ that are active
  std::uint32_t seg_start_ = 0;  // the step that opened this segment
  std::uint32_t letter_turn_ = kNoId;  // expect: the first step of the turn of dp_
  std::uint32_t node_ = kNoId;  // lazy expect: its ExpectClasses node since the last step it was fed
  std::uint64_t count_ = 0;
  std::size_t reported_ = 0;
  const NbEvents* shared_ = nullptr;
  std::vector<std::uint32_t> buf_;  // candidate witnesses of this segment
  // never followed by: the B's of the turn `turn_` met before any A (a first A in that turn
  // may come before them).
  std::vector<std::uint32_t> turn_bs_;
  std::vector<std::uint32_t> turn_as_, prev_as_;  // immediately followed by / precedes
  // retries: per local tool the chain (active, retries so far); the tools touched (lazy: the
  // tools whose chain is the slice's own, `own`, rather than the log's from seg_start_ on;
  // `sync`: during catch_up, the first success binding nothing that ends that).
  struct Chain {
    bool active = false, own = false;
    std::uint64_t n = 0;
    std::uint32_t sync = kNoId;
  };
  std::vector<Chain> chains_;
  std::vector<std::uint32_t> touched_;
  // no duplicate: canonical (tool, arguments) keys seen in this segment.
  KeySet keys_;
  std::string_view last_key_;  // the key of the step that set new_key_ (StepEval's, that step's)
  // expect: current and next position sets.
  std::vector<std::uint64_t> cur_, next_;
  // expect once a letter shared a turn: the configurations (1 + words each: word 0 whether
  // started, then the positions) that the orders of the turn so far reach, per subset of its
  // letters (`dp_`, the last one: all of them), and per letter the positions whose atom it
  // matches.
  std::vector<std::vector<std::uint64_t>> dp_;  // the first dp_used_ are the current turn's
  std::size_t dp_used_ = 0;
  std::vector<std::uint64_t> letter_masks_, next_turn_;  // letters × words; scratch
};

}  // namespace trajcheck::detail
