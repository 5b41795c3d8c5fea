// trajcheck/reader.hpp — reading trace files of every supported format into Trajectory.
//
// Two stages, so that `-j N` can split on one thread and parse on many:
//
//   trajcheck::RecordSource src({"traces/", "more.jsonl"});   // files, dirs (recursive,
//   trajcheck::RawRecord rec;                                 // sorted) or "-" for stdin
//   trajcheck::TraceParser parser(options);                   // immutable, share it
//   trajcheck::ToolTable tools;                               // one per thread
//   trajcheck::Trajectory t(&tools);
//   while (src.next(rec)) {
//     trajcheck::ParseOutcome o = parser.parse(rec, t, [&](trajcheck::Trajectory& tr) { … });
//     if (!o.ok()) report(o.error);                           // file:line:col: error: reason
//   }
//
// RecordSource streams: a `.jsonl` file is read line by line through a fixed buffer, so
// memory does not grow with the number of records. A `.json` file is one record or an
// array of records and is read whole, and so is a coding-agent session log (a JSONL file
// whose lines carry sessionId/uuid/parentUuid): its lines are one record, an array.
// Problems with a file itself (cannot open, not valid UTF-8, …) are reported as rejected
// records too, never thrown.
//
// A TraceParser is immutable after construction and safe to share between threads; the
// Trajectory (and its ToolTable) passed to parse() belong to the calling thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trajcheck/trace.hpp"

namespace trajcheck {

// The formats after `list` but `session` are read by the chat reader too (which reads all of
// them under auto-detection); forcing one skips the detection of the record's shape. `session`
// is a coding-agent session log: a JSONL file read whole, one trace per session.
enum class InputFormat : std::uint8_t {
  auto_detect, native, openai, anthropic, otel, list,
  agentdojo, inspect, bedrock, responses, gemini, langchain, session
};
std::string_view to_string(InputFormat f);
// Accepts the names input_format_names() lists ("auto", "native", "openai", …); false when unknown.
bool parse_input_format(std::string_view name, InputFormat* out);
// Every --input-format name, in InputFormat order.
const std::vector<std::string>& input_format_names();

struct NormalizeOptions {
  InputFormat format = InputFormat::auto_detect;
  // OBSERVED=CANONICAL, applied after trimming and case-folding both sides (unless
  // case_sensitive).
  std::vector<std::pair<std::string, std::string>> aliases;
  // RE2 patterns over a tool result's text; a match sets the step's status to `error`.
  std::vector<std::string> error_patterns;
  bool case_sensitive = false;
  // KEY -> raw JSON value, set in every trajectory's context (`--context KEY=VALUE`),
  // replacing a key the source's context already has.
  std::vector<std::pair<std::string, std::string>> context_overrides;
  // A native or chat record is validated whole (simdjson's stage 1 and one walk over its
  // token indexes) and read off those indexes, which is faster than reading it value by
  // value; false reads every record the ondemand way. Both give the same trajectories and the same errors (tests compare
  // them); the switch exists for those tests and for measuring.
  bool dom_fast_path = true;
};

// Spare bytes of capacity RecordSource leaves after a record's text: simdjson reads up to this
// far past the end of its input, so a record with them is parsed where it lies, without a copy.
// (simdjson::SIMDJSON_PADDING; a static_assert in the parser keeps them equal.)
constexpr std::size_t kRecordPadding = 64;

// Bytes RecordSource reads from a JSONL file at a time: a line that lies whole in one read can
// be lent (RawRecord::borrowed) rather than copied. (Each read(2) costs a system call, which a
// virtual machine makes dear: 256 KiB reads took 3-5 % less CPU than 64 KiB ones to check
// 500 MB, for 0.2 MB more memory.)
constexpr std::size_t kRecordReadBuffer = std::size_t{1} << 18;
// The first bytes of a JSONL file that tell whether it is a coding-agent session log (read
// whole) rather than a record a line (docs/traces.md).
constexpr std::size_t kRecordHeadBytes = std::size_t{1} << 16;

// Bytes read from an input, shared by the records lent from them (RawRecord::block): a handle
// counts the holders, and the bytes are freed with the last of them. A holder writes into
// them only while it is the only one (exclusive()), so a record lent from a block reads bytes
// that no one writes while it holds its handle.
class SharedBlock {
 public:
  SharedBlock() = default;
  // `size` bytes, not initialized. Throws std::bad_alloc.
  static SharedBlock make(std::size_t size) {
    SharedBlock b;
    b.h_ = new (::operator new(sizeof(Header) + size, std::align_val_t{alignof(Header)})) Header{{1}, size};
    return b;
  }
  SharedBlock(const SharedBlock& o) noexcept : h_(o.h_) {
    if (h_) h_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  SharedBlock(SharedBlock&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  SharedBlock& operator=(const SharedBlock& o) noexcept {
    SharedBlock(o).swap(*this);
    return *this;
  }
  SharedBlock& operator=(SharedBlock&& o) noexcept {
    SharedBlock(std::move(o)).swap(*this);
    return *this;
  }
  ~SharedBlock() { reset(); }
  void swap(SharedBlock& o) noexcept { std::swap(h_, o.h_); }
  void reset() noexcept {
    // The release orders this holder's reads before the write of whoever finds itself the
    // only holder (exclusive(), an acquire) or frees the bytes.
    if (h_ && h_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      h_->~Header();
      ::operator delete(h_, std::align_val_t{alignof(Header)});
    }
    h_ = nullptr;
  }
  explicit operator bool() const { return h_ != nullptr; }
  bool operator==(const SharedBlock& o) const { return h_ == o.h_; }
  char* data() const { return h_ ? reinterpret_cast<char*>(h_ + 1) : nullptr; }
  std::size_t size() const { return h_ ? h_->size : 0; }
  // Whether this is the only handle: the bytes may then be written.
  bool exclusive() const { return h_ && h_->refs.load(std::memory_order_acquire) == 1; }

 private:
  struct alignas(64) Header {  // the bytes start on a cache line of their own
    std::atomic<std::uint32_t> refs;
    std::size_t size;
  };
  Header* h_ = nullptr;
};

// One record's bytes and where they came from.
struct RawRecord {
  std::string text;  // reused between records; capacity() >= size() + kRecordPadding when
                     // RecordSource filled it (any other text is copied before parsing)
  // Set by a caller that is done with each record before it asks for the next (the
  // one-thread pipeline does): RecordSource may then lend it a line of its own read buffer
  // (`borrowed`) instead of copying the line into `text`.
  bool may_borrow = false;
  // Set by a caller that holds records after it asks for the next (the pipeline's batches):
  // RecordSource may then lend a line of its read block together with a handle on the block
  // (`block`), which keeps the bytes valid and unchanged for as long as the record holds it.
  bool may_share = false;
  // The record's bytes in RecordSource's read buffer, with kRecordPadding readable bytes past
  // them, when it lent them (then `text` holds nothing of this record); valid until the next
  // call to that source, or, with `block` set, until `block` is reset. Empty otherwise.
  std::string_view borrowed;
  SharedBlock block;  // the read block `borrowed` lies in, when lent with `may_share`
  // The record's bytes, wherever they are, and how many bytes from their start may be read.
  std::string_view bytes() const { return borrowed.data() ? borrowed : std::string_view(text); }
  std::size_t readable() const { return borrowed.data() ? borrowed.size() + kRecordPadding : text.capacity(); }
  RecordOrigin origin;
  // Set when the container itself failed (unreadable file, bad UTF-8 in a line that is
  // then not parsed, …): the record is rejected with this message at `origin`.
  std::string container_error;
  // Set, with `text` and `container_error` empty, for an input entry that was skipped (a
  // FIFO, socket or dangling link met inside a directory): not a record. It holds the whole
  // located warning ("path:1:1: warning: …"), which the runners write and count.
  std::string skip_warning;
  bool skipped() const { return !skip_warning.empty(); }
};

struct InputPiece;  // trajcheck/input.hpp

class RecordSource {
 public:
  // Files, directories (listed by list_input, trajcheck/input.hpp) and "-" for standard input.
  explicit RecordSource(std::vector<std::string> inputs);
  // With InputFormat::session every JSONL input (and `-`) is read whole as a session log,
  // whatever its first lines hold; any other format reads as the constructor above.
  RecordSource(std::vector<std::string> inputs, InputFormat format);
  // The records of pieces cut by split_entry (trajcheck/input.hpp), in order: what reading the
  // whole entries gives, for the lines that start in a ranged piece's bytes.
  RecordSource(std::vector<InputPiece> pieces, InputFormat format);
  ~RecordSource();
  RecordSource(RecordSource&&) noexcept;
  RecordSource& operator=(RecordSource&&) noexcept;

  // Next record; false at the end of all inputs. Blank lines of a .jsonl file are
  // skipped (they are not records).
  bool next(RawRecord& out);
  // Reads the bytes the next calls to next() will take, ahead of them: safe to call from
  // other threads while one thread calls next(). The pipeline's workers call it outside the
  // lock that lets one of them at a time take records, so that the system's copies of the
  // file's bytes (pread) are made by all of them at once rather than in turn. Reads only a
  // plain (not compressed) regular file being read as JSONL lines, at most a few blocks of
  // kRecordReadBuffer bytes ahead; otherwise it does nothing and next() reads as it goes.
  void read_ahead();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What kind of problem rejected a record, for callers that treat them apart (the message is
// for people, and its words may change).
enum class RecordErrorKind : std::uint8_t {
  content,         // JSON, but not a trace of its format (a missing or mistyped member, no known shape)
  json_structure,  // not JSON: a bracket, comma, colon or key missing or extra, a string or value unclosed, none at all
  json_token,      // not JSON: a malformed literal, number or escape, a control character, content after the value
  utf8,            // not UTF-8
  limit,           // past a limit: nesting depth, the JSON parser's size, memory
  input,           // the input around the record: a file not read, a stream cut short, a container
};

struct RecordError {
  RecordOrigin where;  // line and byte column of the error itself, not just of the record
  std::string message;
  RecordErrorKind kind = RecordErrorKind::content;
};

struct ParseOutcome {
  std::uint32_t traces = 0;          // trajectories emitted (OTLP may give several per record)
  std::vector<RecordError> errors;   // non-empty: the record was rejected
  bool ok() const { return errors.empty(); }
};

class TraceParser {
 public:
  explicit TraceParser(NormalizeOptions options);
  ~TraceParser();
  TraceParser(TraceParser&&) noexcept;
  TraceParser& operator=(TraceParser&&) noexcept;

  // Returns an error message when an option is invalid (a bad RE2 pattern, …); empty if ok.
  const std::string& option_error() const;

  using Emit = std::function<void(Trajectory&)>;
  // Parses one record into `scratch` (cleared first) and calls `emit` once per trajectory
  // it holds. Warnings (unparseable arguments, a result with no call, …) are attached to
  // the trajectory, formatted as "file:line:col: warning: …".
  ParseOutcome parse(const RawRecord& record, Trajectory& scratch, const Emit& emit) const;
  // As parse(), but the trajectory handed to `emit` may refer to the record's bytes instead of
  // copying them (Trajectory::borrow): it is valid while `emit` runs (a copy or a move of it
  // owns its text), and `scratch` is cleared before this returns. What `trajcheck check`
  // reads with: most of a record's text is then never copied.
  ParseOutcome parse_borrowing(const RawRecord& record, Trajectory& scratch, const Emit& emit) const;

  // Parses a JSON value that is one trajectory in any format (used for the `actual` and
  // `expected` sides of score records). `origin` is used for messages.
  ParseOutcome parse_value(std::string_view json, const RecordOrigin& origin, Trajectory& out) const;

  const NormalizeOptions& options() const;

 private:
  ParseOutcome parse_record(const RawRecord& record, Trajectory& scratch, const Emit& emit, bool borrow) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Joins the spans of OpenTelemetry traces that arrive in several records. An OTLP exporter
// with a batch span processor sends a trace's spans over several export requests (a file
// exporter writes each as one line; a run may leave several files), so TraceParser emits one
// trajectory per trace *per record*. The runners offer every trajectory they read to a
// joiner: an OTLP trace is held, and joined with the other parts that have its traceId,
// steps ordered by span start time, when the trace is complete: at the end of the input
// (finish), or, with `idle_ms`, once its root span has ended and no span of it arrived for
// that long (for a stream). Held spans are bounded by `max_bytes`: past it the trace held
// longest without news is joined at once, with a located warning saying that later spans of
// it form another trace (never a silent split). Safe to share between threads.
struct TraceJoinOptions {
  std::uint64_t max_bytes = std::uint64_t{256} << 20;  // text and steps held; 0: no joining at all
  std::uint64_t idle_ms = 0;  // 0: a trace is complete at the end of the input only
  // Milliseconds from a steady clock (tests give their own); null: std::chrono::steady_clock.
  std::function<std::uint64_t()> clock;
};

class TraceJoiner {
 public:
  explicit TraceJoiner(TraceJoinOptions options = {});
  ~TraceJoiner();
  TraceJoiner(const TraceJoiner&) = delete;
  TraceJoiner& operator=(const TraceJoiner&) = delete;

  // Offers a trajectory TraceParser just emitted. An OTLP trace (Trajectory::spans not empty)
  // is copied and held: true, and the caller is done with it. Anything else: false. Traces
  // this completes (idle) or lets go (max_bytes) are joined, each into `out` (whose ToolTable
  // is used), and handed to `emit`, before offer returns.
  bool offer(const Trajectory& t, Trajectory& out, const TraceParser::Emit& emit);
  // Joins every trace still held into `out` and hands it to `emit`, in the order of their
  // first records; the joiner is then empty.
  void finish(Trajectory& out, const TraceParser::Emit& emit);
  // For a stream read by a timer rather than record by record (`trajcheck serve`): joins the
  // traces that are complete by now (root span ended, idle_ms without news) into `out` and
  // hands each to `emit`, as offer does; returns how many. Nothing without idle_ms.
  std::size_t poll(Trajectory& out, const TraceParser::Emit& emit);
  // Lets go of trace `trace_id` before it is complete: joined, with the warning
  // "<file:line:col of its first part>: warning: OTLP trace <id> <why>", and handed to
  // `emit`. False when no such trace is held. Later spans of it form another trace.
  bool evict(std::string_view trace_id, std::string_view why, Trajectory& out, const TraceParser::Emit& emit);
  // The same for the trace held longest without news, when nothing of it arrived for at
  // least `min_idle_ms`; false when there is none such.
  bool evict_oldest(std::uint64_t min_idle_ms, std::string_view why, Trajectory& out,
                    const TraceParser::Emit& emit);

  std::size_t held_traces() const;
  std::uint64_t held_bytes() const;
  // Traces let go before they were complete because of max_bytes (each with its warning).
  std::uint64_t early_traces() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The normalized JSON form of docs/traces.md, one line, no trailing newline (what
// `trajcheck normalize` prints).
void write_normalized_json(const Trajectory& t, std::string& out);

}  // namespace trajcheck
