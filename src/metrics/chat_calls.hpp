// The score command's direct reader: the tool calls of one side of a score record, read
// straight from the record's own simdjson On-Demand document (no copy of the side, no second
// parse, no minified arguments), with each call's canonical arguments computed once.
//
// It covers the common shape only — an array of OpenAI chat messages, or {"messages": […]} —
// and is exact or silent: on anything else (another format, Anthropic content blocks, a
// malformed value, anything the trace readers would warn about) it returns false, and the
// caller reads the record with TraceParser as before. When it returns true, the calls, their
// turns and canonical arguments are those Scorer would collect from TraceParser's trajectory
// (tests/unit/metrics_fast_reader_test.cpp compares the two on generated and mutated records).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "json/canon.hpp"
#include "metrics/scorer_impl.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::metrics {

class ChatCallReader {
 public:
  explicit ChatCallReader(const NormalizeOptions& options);

  // False when the options need the general reader for every record (a forced input format
  // other than openai).
  bool enabled() const { return enabled_; }
  // Whether each call's `failed` is exact: a tool message's `is_error` is read (a message
  // with "status" or "error" goes to the general reader), but the error patterns, RE2s over a
  // result's decoded text, are not applied here — with patterns, `failed` is always false.
  bool reads_errors() const { return reads_errors_; }

  // Forgets the previous record (call before reading its sides). `source`: the record's
  // bytes when its messages are read one document each (read_message below); strings they
  // decode into their parser's buffer are then copied, since the next message reuses it.
  void begin_record(ArgCanon& canon, std::string_view source = {});
  // Appends the tool calls of `side` to `calls` and their canonical arguments to `args`
  // (text in `canon`). False: read this record with TraceParser instead.
  bool read_side(simdjson::ondemand::value side, ArgCanon& canon, std::vector<Call>& calls,
                 std::vector<CanonArgs>& args);
  // The same for a side given as its messages one by one (each parsed on its own, in order):
  // begin_side, read_message for the message numbered `index` (0, 1, …), then end_side with
  // the number of messages. False from either: read the record with TraceParser instead.
  void begin_side(const std::vector<Call>& calls);
  bool read_message(simdjson::ondemand::value message, std::uint32_t index, ArgCanon& canon,
                    std::vector<Call>& calls, std::vector<CanonArgs>& args) {
    return read_message(message, index, index == 0, canon, calls, args);
  }
  // Frees what reading a record's sides needed and scoring does not (the calls' ids, the
  // argument memo): for a large record, before it is scored.
  void release_scratch();
  // An empty list is a trajectory for the actual side but a tool list for the expected one.
  static bool end_side(std::uint32_t messages) { return messages > 0; }

 private:
  struct OpenCall {
    // Views into the record's document (its source, or simdjson's buffer of decoded
    // strings), which outlive the record's reading.
    std::string_view id;   // decoded call id
    std::string_view raw;  // tool name as written
    std::uint32_t prev_same_id = 0;          // 1-based index of the previous call with this id
    bool open = true;                        // no result joined yet
  };
  struct Pending {
    std::string_view name;  // normalized, interned
    std::string_view raw, id;  // as in OpenCall
    bool has_args = false;
    CanonArgs args;
  };

  bool read_messages(simdjson::ondemand::array messages, ArgCanon& canon, std::vector<Call>& calls,
                     std::vector<CanonArgs>& args);
  bool read_message(simdjson::ondemand::value message, std::uint32_t index, bool first,
                    ArgCanon& canon, std::vector<Call>& calls, std::vector<CanonArgs>& args);
  bool read_call(simdjson::ondemand::value call, ArgCanon& canon);
  std::string_view intern(std::string_view raw);
  void index_call(std::uint32_t k);
  std::uint32_t find_open(std::string_view id);  // 1-based, 0 when none
  // `s` itself when it lies in the record's source (or no source was given), else a copy
  // that lives until the next record.
  std::string_view keep(std::string_view s);

  bool enabled_ = true;
  bool case_sensitive_ = false;
  bool reads_errors_ = true;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> aliases_;
  // Normalized tool names (views stay valid: a deque's elements do not move) and a hash
  // index over them (1-based; 0 = free).
  std::deque<std::string> names_;
  std::vector<std::uint32_t> slots_;
  std::string fold_;
  std::string_view source_;            // begin_record's
  std::deque<std::string> decoded_;    // keep()'s copies
  simdjson::ondemand::parser inner_;  // arguments given as JSON text
  std::string padded_;
  // Per side: calls so far (for joining tool results), their ids and a hash index by id.
  std::vector<OpenCall> open_;
  std::vector<std::uint32_t> table_;  // open addressing: 1-based index of the latest call
  std::uint32_t indexed_ = 0;         // calls [0, indexed_) are in table_ (built on demand)
  std::vector<Pending> pending_;
  std::uint32_t first_call_ = 0;  // index in `calls` of this side's first call

  // Arguments given as text, canonicalized once per record and source text: the expected
  // side mostly repeats the actual side's calls, and a side repeats calls, byte for byte.
  // Canonicalizing is a function of those bytes (their decoding, validation and parse), so
  // a repeat takes the first result. Keys are views into the record; only successes are
  // stored (a failure sends the whole record to the general reader).
  struct Memo {
    std::string_view raw;  // the string token as written, quotes and escapes included
    CanonArgs args;
  };
  const CanonArgs* find_memo(std::string_view raw, std::size_t hash) const;
  void add_memo(std::string_view raw, std::size_t hash, const CanonArgs& args);
  std::vector<Memo> memo_;
  std::vector<std::uint32_t> memo_slots_;  // open addressing: 1-based index into memo_
};

}  // namespace trajcheck::metrics
