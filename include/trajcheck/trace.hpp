// trajcheck/trace.hpp — the normalized trajectory that rules and metrics see.
//
//   trajcheck::ToolTable tools;                 // one per reader/worker thread
//   trajcheck::Trajectory t(&tools);
//   reader.next(t);                             // fills t, reusing its memory
//   for (const trajcheck::Step& s : t.steps())
//     if (s.type == trajcheck::StepType::tool_call)
//       use(t.text(s.tool_name), t.text(s.arguments));
//
// Ownership: a Trajectory owns all of its text in one arena string; steps refer to it
// by `Slice` (offset, length), so the arena may grow while a trace is being built and
// `clear()` keeps every buffer's capacity for the next trace. A trajectory may instead
// borrow the bytes of the record it was read from (`borrow()`, what
// TraceParser::parse_borrowing hands its callback): its slices then refer to that record,
// which must outlive them; a copy or a move of it owns all its text. A Trajectory is not
// thread-safe; give each thread its own. A ToolTable interns normalized tool names to
// dense ids; it is shared by every trajectory of one thread (ids are only comparable
// between trajectories that use the same table).
//
// Arguments, results, context and extra fields are kept as raw JSON text (minified
// as the source wrote it): nothing is parsed for a rule that never looks at it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trajcheck {

// A byte range of a Trajectory's text. An empty slice (len == 0) means "absent". The top
// bit of `off` marks bytes in the source the trajectory borrows (Trajectory::borrow).
struct Slice {
  std::uint32_t off = 0;
  std::uint32_t len = 0;
  bool empty() const { return len == 0; }
};

enum class StepType : std::uint8_t {
  tool_call,
  user_message,
  assistant_message,
  approval_request,
  approval,
  final_answer,
  system_message,  // kept only by the native format; chat readers drop system prompts
  other,           // a native step type outside this list; its name is in Step::type_name
};
constexpr int kStepTypeCount = 8;
std::string_view to_string(StepType t);
// Parses a step-type name ("tool_call", …); returns StepType::other for any other name.
StepType step_type_from_string(std::string_view name);

enum class StepStatus : std::uint8_t { none, ok, error };  // none: not a tool call
std::string_view to_string(StepStatus s);

using ToolId = std::uint32_t;
constexpr ToolId kNoTool = 0xffffffffu;

// Interns normalized tool names. Not thread-safe: one per thread.
class ToolTable {
 public:
  ToolTable() = default;
  ToolTable(const ToolTable& other);
  ToolTable& operator=(const ToolTable& other);
  ToolTable(ToolTable&& other) noexcept;
  ToolTable& operator=(ToolTable&& other) noexcept;
  ~ToolTable() = default;

  ToolId intern(std::string_view name);
  // kNoTool when the name was never interned.
  ToolId find(std::string_view name) const;
  std::string_view name(ToolId id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }
  // A number no other table of the process has: a table only grows, so an id it gave keeps
  // naming the same name as long as the serial is the same (caches keyed by a table check
  // it instead of the name). A copy, and both sides of a move, get new serials.
  std::uint64_t serial() const { return serial_; }

 private:
  static std::uint64_t next_serial();
  std::uint64_t serial_ = next_serial();
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, ToolId, Hash, std::equal_to<>> ids_;
};

struct Step {
  StepType type = StepType::other;
  StepStatus status = StepStatus::none;
  bool arguments_invalid = false;  // source arguments were a string that is not JSON; `arguments`
                                   // then holds that string as a JSON string literal
  ToolId tool = kNoTool;           // normalized, interned (tool_call only)
  std::uint32_t turn = 0;          // calls made in one assistant message share a turn number
  Slice type_name;                 // the source's type name (set for StepType::other)
  Slice tool_name;                 // normalized tool name (text of `tool`)
  Slice raw_tool;                  // the tool name as the source wrote it
  Slice id;                        // tool call id (decoded text)
  Slice arguments;                 // raw JSON (object, normally); empty when absent
  Slice result;                    // raw JSON; a string result that is itself a JSON object or
                                   // array is stored parsed (see docs/traces.md); empty if none
  Slice content;                   // decoded message text (messages, final_answer)
  Slice extra;                     // raw JSON object of every other source field; empty if none

  // Calls fn(Slice&) for each of the slices above.
  template <class Fn>
  void for_each_slice(Fn&& fn) {
    for (Slice* s : {&type_name, &tool_name, &raw_tool, &id, &arguments, &result, &content, &extra}) fn(*s);
  }
};

// The OpenTelemetry span a step was read from (the OTLP reader sets one per step; other
// readers leave Trajectory::spans empty). What joins the fragments of a trace exported in
// several requests orders their steps by `start_ns`, and a trace's latency is its root span's.
struct SpanInfo {
  std::uint64_t start_ns = 0, end_ns = 0;  // 0: not given
  bool root = false;                       // the span has no parent span
  // A model call (gen_ai.operation.name chat / text_completion / generate_content, or the AI
  // SDK's ai.*.doGenerate / doStream spans): its usage counts toward the trace's tokens.
  bool model_call = false;
  std::int64_t input_tokens = -1, output_tokens = -1;  // -1: not given
};

// Where a record came from, for diagnostics and reports.
struct RecordOrigin {
  std::string file;         // "-" for standard input
  std::uint64_t line = 0;   // 1-based line of the record's first byte
  std::uint64_t column = 0; // 1-based byte column of the record's first byte
  std::uint64_t record = 0; // 0-based index of the record in the whole input
};

class Trajectory {
 public:
  explicit Trajectory(ToolTable* tools = nullptr) : tools_(tools) {}
  // A copy, or the trajectory moved to, owns all its text: what `other` borrowed is copied
  // (so its source must still be there).
  Trajectory(const Trajectory& other);
  Trajectory& operator=(const Trajectory& other);
  Trajectory(Trajectory&& other) noexcept;
  Trajectory& operator=(Trajectory&& other) noexcept;
  ~Trajectory() = default;

  // Forgets the trace (and the source it borrowed) but keeps every buffer's capacity.
  void clear();

  std::string_view text(Slice s) const {
    const char* at = s.off & kBorrowed ? source_.data() + (s.off & ~kBorrowed) : arena_.data() + s.off;
    return std::string_view(at, s.len);
  }
  // The slice of `bytes`: bytes lying in the borrowed source are referred to where they are,
  // others appended to the arena.
  Slice store(std::string_view bytes) {
    // (Unsigned: bytes before the source give a huge offset.)
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(bytes.data()) - reinterpret_cast<std::uintptr_t>(source_.data());
    if (at < source_.size() && bytes.size() <= source_.size() - at && !bytes.empty())
      return Slice{kBorrowed | static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(bytes.size())};
    return append(bytes);
  }
  // From now on store() refers to bytes that lie in `source` instead of copying them. The
  // caller keeps `source` alive and unchanged while the trajectory refers to it: until
  // clear() or own(). A source of 2 GiB or more is not borrowed.
  void borrow(std::string_view source);
  // Copies the borrowed bytes into the arena: the trajectory then stands alone.
  void own();
  bool borrows() const { return !source_.empty(); }
  // The arena's size, and a way back to it: keeps the first `steps` steps and the text
  // stored before arena_size() was `arena` (what was added since must not be referred to).
  std::size_t arena_size() const { return arena_.size(); }
  void truncate(std::size_t steps, std::size_t arena) {
    steps_.resize(steps);
    arena_.resize(arena);
  }

  const std::vector<Step>& steps() const { return steps_; }
  std::vector<Step>& steps() { return steps_; }
  Step& add_step(StepType type) {
    steps_.emplace_back();
    steps_.back().type = type;
    return steps_.back();
  }

  // The trace identifier (from the source, or "<file>:<line>" when the source has none).
  std::string_view trace_id() const { return text(trace_id_); }
  void set_trace_id(Slice s) { trace_id_ = s; }
  // Raw JSON object text of the trace context (`context.*` paths); empty when absent.
  std::string_view context() const { return text(context_); }
  void set_context(Slice s) { context_ = s; }
  // Raw JSON object text of the fields a record wrapped its trajectory with
  // (`id`, `case_id`, `reward`, `info`, …); empty when none.
  std::string_view metadata() const { return text(metadata_); }
  void set_metadata(Slice s) { metadata_ = s; }

  // Normalized tool name of a step (empty for non tool_call steps).
  std::string_view tool_name(const Step& s) const { return text(s.tool_name); }

  ToolTable* tools() const { return tools_; }
  void set_tools(ToolTable* t) { tools_ = t; }

  RecordOrigin origin;
  // Non-fatal problems found while reading this record (e.g. arguments that are not JSON).
  std::vector<std::string> warnings;
  // OTLP traces only: spans[i] is the span of steps()[i] (see SpanInfo); empty otherwise.
  std::vector<SpanInfo> spans;

 private:
  static constexpr std::uint32_t kBorrowed = 1u << 31;
  Slice append(std::string_view bytes);  // to the arena
  ToolTable* tools_ = nullptr;
  std::string arena_;
  std::vector<Step> steps_;
  Slice trace_id_, context_, metadata_;
  std::string_view source_;  // what store() may refer to (empty: nothing)
};

// The tool-name normalization of every reader and of the catalog: trim and (unless
// case_sensitive) ASCII case-fold.
std::string normalize_tool_name(std::string_view raw, bool case_sensitive = false);
// The same into `out` (its capacity reused: no allocation per name once warm).
void normalize_tool_name(std::string_view raw, bool case_sensitive, std::string& out);

}  // namespace trajcheck
