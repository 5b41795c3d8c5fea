// The bad-input corpus of tests/data/bad/: each case asserts the message, its position and
// the counts (records read == traces + rejected; warnings do not reject).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {
void check_error(const RecordError& e, const std::string& file_suffix, std::uint64_t line, std::uint64_t column,
                 const std::string& message) {
  CAPTURE(e.where.file);
  CAPTURE(e.message);
  CHECK(e.where.file.size() >= file_suffix.size());
  CHECK(e.where.file.compare(e.where.file.size() - file_suffix.size(), file_suffix.size(), file_suffix) == 0);
  CHECK(e.where.line == line);
  CHECK(e.where.column == column);
  CHECK(e.message == message);
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  auto path = std::filesystem::temp_directory_path() / ("trajcheck_bad_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}
}  // namespace

TEST_CASE("bad: truncated JSON is rejected at the end of the input") {
  ReadResult r = read_file("bad/truncated.jsonl");
  CHECK(r.records == 1);
  CHECK(r.rejected == 1);
  CHECK(r.traces.empty());
  REQUIRE(r.errors.size() == 1);
  check_error(r.errors[0], "bad/truncated.jsonl", 1, 71, "invalid JSON: unexpected end of input (']' expected)");
}

TEST_CASE("bad: JSON values of the wrong shape") {
  ReadResult r = read_file("bad/wrong_shape.jsonl");
  CHECK(r.records == 5);
  CHECK(r.rejected == 4);
  CHECK(r.traces.size() == 1);
  REQUIRE(r.errors.size() == 4);
  const std::string unknown =
      "not a known trace shape: expected an object with \"steps\" (native), \"messages\" or \"traj\" (OpenAI/Anthropic "
      "chat), \"resourceSpans\" (OpenTelemetry) or \"tool_calls\", or an array of messages or tool names";
  check_error(r.errors[0], "wrong_shape.jsonl", 2, 1, unknown);
  check_error(r.errors[1], "wrong_shape.jsonl", 3, 1, unknown + ": the record is a JSON number");
  check_error(r.errors[2], "wrong_shape.jsonl", 4, 29, "\"steps\" must be an array");
  check_error(r.errors[3], "wrong_shape.jsonl", 5, 1,
              "a single chat message, not a trajectory: expected an array of messages or {\"messages\": [...]}");
}

TEST_CASE("bad: function.arguments that are not JSON are a warning, not a rejection") {
  ReadResult r = read_file("bad/bad_arguments.jsonl");
  CHECK(r.records == 1);
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("bad_arguments.jsonl:1:175: warning: arguments of 'refund' are not valid JSON") !=
        std::string::npos);
  const Trajectory& t = r.traces[0];
  CHECK(t.steps()[1].arguments_invalid);
  CHECK(args_of(t, 1) == R"("{order_id: 7}")");
  CHECK(result_of(t, 1) == R"("done")");
}

TEST_CASE("bad: invalid UTF-8 rejects that record only, at the bad byte") {
  ReadResult r = read_file("bad/invalid_utf8.jsonl");
  CHECK(r.records == 2);
  CHECK(r.rejected == 1);
  REQUIRE(r.traces.size() == 1);
  CHECK(r.traces[0].trace_id() == "u2");
  REQUIRE(r.errors.size() == 1);
  check_error(r.errors[0], "invalid_utf8.jsonl", 1, 70, "invalid UTF-8");
}

TEST_CASE("bad: a UTF-8 BOM is skipped, and columns after it still count its bytes") {
  ReadResult r = read_file("bad/bom.jsonl");
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  CHECK(r.traces[0].trace_id() == "bom");

  std::string path = temp_file("bom_error.jsonl", "\xEF\xBB\xBF{\"steps\": 5}\n");
  ReadResult e = read_inputs({path});
  REQUIRE(e.errors.size() == 1);
  check_error(e.errors[0], "bom_error.jsonl", 1, 14, "\"steps\" must be an array");
  std::filesystem::remove(path);

  std::string json = temp_file("bom.json", "\xEF\xBB\xBF[{\"trace_id\":\"j\",\"steps\":[]}]");
  ReadResult j = read_inputs({json});
  CHECK(j.rejected == 0);
  REQUIRE(j.traces.size() == 1);
  CHECK(j.traces[0].origin.column == 5);
  std::filesystem::remove(json);
}

TEST_CASE("bad: CRLF line endings are accepted") {
  ReadResult r = read_file("bad/crlf.jsonl");
  CHECK(r.records == 2);
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  CHECK(content_of(r.traces[1], 0) == "x");
  CHECK(r.traces[1].origin.line == 2);
}

TEST_CASE("bad: empty files") {
  ReadResult jl = read_file("bad/empty.jsonl");
  CHECK(jl.records == 0);
  CHECK(jl.rejected == 0);
  ReadResult js = read_file("bad/empty.json");
  CHECK(js.records == 1);
  CHECK(js.rejected == 1);
  REQUIRE(js.errors.size() == 1);
  check_error(js.errors[0], "bad/empty.json", 1, 1, "empty file: no JSON value");
}

TEST_CASE("bad: blank lines are not records") {
  ReadResult r = read_file("bad/blank_lines.jsonl");
  CHECK(r.records == 2);
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  CHECK(r.traces[0].origin.line == 2);
  CHECK(r.traces[1].origin.line == 5);
}

TEST_CASE("bad: nesting 100000 levels deep is a clean error") {
  ReadResult r = read_file("bad/deep.jsonl");
  CHECK(r.records == 1);
  CHECK(r.rejected == 1);
  REQUIRE(r.errors.size() == 1);
  check_error(r.errors[0], "bad/deep.jsonl", 1, 80 + 512, "JSON nested deeper than 512 levels");

  // Deep nesting inside a string that looks like JSON is not parsed deeply either.
  std::string deep_args = "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"x\",\"arguments\":\"" +
                          std::string(100000, '[') + std::string(100000, ']') + "\"}}]}]}";
  ReadResult s = read_text(deep_args);
  CHECK(s.rejected == 0);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("JSON nested deeper than 512 levels") != std::string::npos);
  CHECK(s.traces[0].steps()[0].arguments_invalid);
}

TEST_CASE("bad: numbers beyond 64 bits keep their source text") {
  ReadResult r = read_file("bad/big_numbers.jsonl");
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  CHECK(args_of(r.traces[0], 0) == R"({"amount":123456789012345678901234567890,"ratio":1e400,"small":-0.5e-10})");

  ReadResult bad = read_text(R"({"steps":[{"type":"tool_call","tool":"x","arguments":{"n":01}}]})");
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message == "invalid JSON: malformed number");
  CHECK(bad.errors[0].where.column == 59);
}

TEST_CASE("bad: errors inside a .json array carry their own line numbers") {
  ReadResult r = read_file("bad/array_errors.json");
  CHECK(r.records == 3);
  CHECK(r.rejected == 2);
  REQUIRE(r.traces.size() == 1);
  CHECK(r.traces[0].trace_id() == "a1");
  CHECK(r.traces[0].origin.line == 2);
  CHECK(r.traces[0].origin.column == 3);
  REQUIRE(r.errors.size() == 2);
  check_error(r.errors[0], "array_errors.json", 4, 41, "step \"content\" must be a string");
  check_error(r.errors[1], "array_errors.json", 6, 32, "invalid JSON: '}' where ']' was expected");
}

TEST_CASE("bad: trailing content after the value") {
  ReadResult r = read_file("bad/trailing.jsonl");
  REQUIRE(r.errors.size() == 1);
  check_error(r.errors[0], "trailing.jsonl", 1, 72, "invalid JSON: unexpected content after the value");
}

TEST_CASE("bad: literals, escapes and strings") {
  struct Case {
    std::string json;
    std::uint64_t column;
    std::string message;
  };
  std::vector<Case> cases = {
      {R"({"steps":[],"x":tru})", 17, "invalid JSON: unexpected literal"},
      {R"({"steps":[tru]})", 11, "invalid JSON: unexpected literal"},
      // A record that is not JSON is reported as such, not by its shape.
      {"nonsense", 1, "invalid JSON: unexpected literal"},
      {"  tru", 3, "invalid JSON: unexpected literal"},
      {"[1,]", 1, "invalid JSON: unexpected character (a missing or extra comma, colon, bracket or key)"},
      {R"({"steps":[],"x":"a\qb"})", 17, "invalid JSON: invalid escape in string"},
      {R"({"steps":[],"x":"abc})", 17, "invalid JSON: unclosed string"},
      {R"({"steps":[],,"x":1})", 13, "invalid JSON: unexpected character (a missing or extra comma, colon, bracket or key)"},
      // A control character is reported at its own byte, also after an escaped quote.
      {"{\"steps\":[],\"x\":\"a\x01b\"}", 19, "invalid JSON: control character in string"},
      {"{\"steps\":[],\"x\":\"q\\\"\tb\"}", 21, "invalid JSON: control character in string"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    ReadResult r = read_text(c.json);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].message == c.message);
    CHECK(r.errors[0].where.column == c.column);
  }
}

TEST_CASE("bad: container errors are rejected records too") {
  ReadResult r = read_inputs({data_path("bad/no_such_file.jsonl"), "/dev/null", data_path("bad/crlf.jsonl")});
  CHECK(r.records == 4);
  CHECK(r.rejected == 2);
  CHECK(r.traces.size() == 2);
  REQUIRE(r.errors.size() == 2);
  check_error(r.errors[0], "bad/no_such_file.jsonl", 1, 1, "cannot open file: No such file or directory");
  check_error(r.errors[1], "/dev/null", 1, 1, "not a regular file");
}

TEST_CASE("bad: a member named twice rejects the record, wherever the object is") {
  const std::string why = ": a JSON object may name each member once (which of the two counts is not defined)";
  struct Case {
    std::string json;
    std::uint64_t column;
    std::string key;
  };
  std::vector<Case> cases = {
      // the record's own fields: "last trace_id wins" and "two steps arrays joined" are gone
      {R"({"trace_id":"a","trace_id":"b","steps":[]})", 17, "trace_id"},
      {R"({"steps":[{"tool":"a"}],"steps":[{"tool":"b"}]})", 25, "steps"},
      // a step's fields, and values rules read (arguments, nested objects, escaped names)
      {R"({"steps":[{"tool":"a","tool":"b"}]})", 23, "tool"},
      {R"({"steps":[{"tool":"a","arguments":{"id":1,"id":2}}]})", 43, "id"},
      {R"({"steps":[{"tool":"a","arguments":{"o":{"id":1,"\u0069d":2}}}]})", 48, "id"},
      // chat messages
      {R"({"messages":[{"role":"user","role":"assistant","content":"x"}]})", 29, "role"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    // Both readers: the validating DOM path declines such a record to the ondemand one.
    for (bool fast : {true, false}) {
      NormalizeOptions opts;
      opts.dom_fast_path = fast;
      ReadResult r = read_text(c.json, opts);
      CHECK(r.traces.empty());
      REQUIRE(r.errors.size() == 1);
      CHECK(r.errors[0].message == "duplicate key \"" + c.key + "\"" + why);
      CHECK(r.errors[0].where.column == c.column);
    }
  }
  // The same names in different objects are fine.
  ReadResult ok = read_text(R"({"steps":[{"tool":"a","arguments":{"id":1,"o":{"id":2}}},{"tool":"a"}]})");
  CHECK(ok.errors.empty());
  CHECK(ok.traces.size() == 1);
}

TEST_CASE("bad: JSON with a member named twice inside a string is kept as text, with a warning") {
  ReadResult r = read_text(R"({"steps":[{"tool":"a","result":"{\"x\":1,\"x\":2}"}]})");
  REQUIRE(r.traces.size() == 1);
  CHECK(r.traces[0].text(r.traces[0].steps()[0].result) == R"("{\"x\":1,\"x\":2}")");
  REQUIRE(r.traces[0].warnings.size() == 1);
  CHECK(r.traces[0].warnings[0].find("tool result kept as a string: its JSON has a duplicate key \"x\"") !=
        std::string::npos);
  // OpenAI chat arguments are JSON text: such text is kept as a string, as invalid arguments are.
  ReadResult args = read_text(R"({"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"1",)"
                              R"("type":"function","function":{"name":"a","arguments":"{\"x\":1,\"x\":2}"}}]}]})");
  REQUIRE(args.traces.size() == 1);
  CHECK(args.traces[0].steps()[0].arguments_invalid);
  REQUIRE(args.traces[0].warnings.size() == 1);
  CHECK(args.traces[0].warnings[0].find("duplicate key \"x\"") != std::string::npos);
}

// Stage 1 of simdjson checks only a record's structure (quotes, brackets); a missing colon or
// a comma in the wrong place is found while the record is read, and once crashed a reader that
// went on with the document simdjson had given up. Every ':' and ',' of every sample of every
// input format, dropped or swapped for the other, one at a time: outside strings that is never
// valid JSON (but for a comma between two digits, which joins them into one number), so the
// record must be rejected, located on the line of the change or after it; inside strings the
// JSON stays valid and the record may be read. Either way nothing crashes, and every position
// stays inside the file.
TEST_CASE("bad: every colon and comma of every format sample, dropped or swapped, is a located rejection") {
  namespace fs = std::filesystem;
  std::vector<fs::path> samples;
  for (const auto& e : fs::directory_iterator(data_path("formats"))) {
    std::string ext = e.path().extension().string();
    if (ext == ".json" || ext == ".jsonl") samples.push_back(e.path());
  }
  for (const char* f : {"refund_ok.jsonl", "refund_violations.jsonl", "refund_approval_reused.jsonl"})
    samples.push_back(fs::path(TRAJCHECK_SOURCE_DIR) / "examples" / "traces" / f);
  std::sort(samples.begin(), samples.end());
  REQUIRE(samples.size() >= 15);
  std::size_t mutants = 0, outside = 0;
  for (const fs::path& sample : samples) {
    std::ifstream in(sample, std::ios::binary);
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const bool jsonl = sample.extension() == ".jsonl";
    const std::uint64_t lines = static_cast<std::uint64_t>(std::count(original.begin(), original.end(), '\n')) + 1;
    bool in_string = false, escaped = false;
    std::uint64_t line = 1;
    for (std::size_t i = 0; i < original.size(); ++i) {
      const char c = original[i];
      if (c == '\n') ++line;
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      }
      if (c != ':' && c != ',') continue;
      const bool between_digits = i > 0 && i + 1 < original.size() && std::isdigit(static_cast<unsigned char>(original[i - 1])) &&
                                  std::isdigit(static_cast<unsigned char>(original[i + 1]));
      for (int kind = 0; kind < 2; ++kind) {
        std::string mutant = original;
        if (kind == 0) mutant.erase(i, 1);
        else mutant[i] = c == ':' ? ',' : ':';
        const bool must_reject = !in_string && !(kind == 0 && c == ',' && between_digits);
        const std::string path = temp_file("mutant" + sample.extension().string(), mutant);
        for (bool fast : {true, false}) {
          CAPTURE(sample.filename().string());
          CAPTURE(i);
          CAPTURE(kind);
          CAPTURE(fast);
          NormalizeOptions opts;
          opts.dom_fast_path = fast;
          ReadResult r = read_inputs({path}, opts);
          CHECK(r.rejected <= r.records);
          for (const RecordError& e : r.errors) {
            CAPTURE(e.message);
            CHECK(e.where.line >= 1);
            CHECK(e.where.line <= lines);
            CHECK(e.where.column >= 1);
          }
          if (!must_reject) continue;
          CHECK(r.rejected >= 1);
          const bool located = std::any_of(r.errors.begin(), r.errors.end(), [&](const RecordError& e) {
            return jsonl ? e.where.line == line : e.where.line >= line;
          });
          CHECK(located);
        }
        ++mutants;
        outside += must_reject;
      }
    }
  }
  MESSAGE(mutants << " mutants, " << outside << " outside strings");
  CHECK(outside > 1000);
}
