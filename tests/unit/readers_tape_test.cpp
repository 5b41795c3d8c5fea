// The native reader's fast path (readers/tape_value.hpp: one DOM parse validates the record,
// the reader walks that parse) against the ondemand path it replaces for native records:
// the same trajectories, errors and warnings on hand-picked records, on generated ones
// (blanks, escapes, numbers of every form, all step fields) and on byte-level mutations of
// them. The generated records are also read through the fast path directly, so the
// comparison cannot pass by the fast path quietly declining everything.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "readers/parser_impl.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {

// Everything a parse yields, field by field.
std::string describe(const ReadResult& r) {
  std::string out = "records " + std::to_string(r.records) + " rejected " + std::to_string(r.rejected) + "\n";
  for (const Trajectory& t : r.traces) {
    out += "trace ";
    out += t.trace_id();
    out += " | ";
    out += t.context();
    out += " | ";
    out += t.metadata();
    out += "\n";
    for (const Step& s : t.steps()) {
      out += std::string(to_string(s.type)) + " " + std::string(to_string(s.status)) + " turn " + std::to_string(s.turn) +
             (s.arguments_invalid ? " invalid" : "") + " tool " + std::string(t.text(s.tool_name)) + "/" +
             std::string(t.text(s.raw_tool)) + " type_name " + std::string(t.text(s.type_name)) + " id " +
             std::string(t.text(s.id)) + " args " + std::string(t.text(s.arguments)) + " result " +
             std::string(t.text(s.result)) + " content " + std::string(t.text(s.content)) + " extra " +
             std::string(t.text(s.extra)) + "\n";
    }
  }
  for (const std::string& n : r.normalized) out += n + "\n";
  for (const std::string& w : r.warnings) out += "warning " + w + "\n";
  for (const RecordError& e : r.errors)
    out += "error " + std::to_string(e.where.line) + ":" + std::to_string(e.where.column) + " " + e.message + "\n";
  return out;
}

NormalizeOptions options(bool fast, InputFormat format, bool patterns) {
  NormalizeOptions o;
  o.format = format;
  o.dom_fast_path = fast;
  if (patterns) {
    o.error_patterns = {"^Error", "(?i)timeout"};
    o.aliases = {{"Order_Get", "lookup_order"}};
  }
  return o;
}

// Reads `text` through the fast path itself (TapeDoc + read_native over TapeValue), with
// default options; false when it declines the record.
bool read_fast(std::string_view text, std::string* normalized) {
  detail::CompiledOptions c;
  std::string padded(text);
  padded.append(kRecordPadding, ' ');
  detail::Scratch s;
  detail::TapeDoc doc;
  if (!doc.parse(s.dom_parser, std::string_view(padded.data(), text.size()))) return false;
  ToolTable tools;
  Trajectory t(&tools);
  ParseOutcome outcome;
  detail::ParseCtx ctx(c, std::string_view(padded.data(), text.size()), RecordOrigin{"mem", 1, 1, 0}, t, s, outcome);
  if (!detail::read_native(ctx, detail::TapeObject(detail::TapeValue(&doc, 0, 1))) || !outcome.ok()) return false;
  normalized->clear();
  write_normalized_json(t, *normalized);
  return true;
}

// Both paths, both formats that take native records, with and without patterns and aliases.
void check_same(const std::string& record) {
  CAPTURE(record);
  for (InputFormat f : {InputFormat::auto_detect, InputFormat::native})
    for (bool patterns : {false, true}) {
      std::string fast = describe(read_text(record, options(true, f, patterns)));
      std::string slow = describe(read_text(record, options(false, f, patterns)));
      CHECK(fast == slow);
    }
}

// A random JSON value in the styles producers write: any escape, number form and nesting.
struct Gen {
  std::mt19937 rng;
  bool blanks = false;
  explicit Gen(unsigned seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }
  std::string sp() {
    if (!blanks || pick(3)) return "";
    static const char* ws[] = {" ", "  ", "\t", "\n ", "\r\n"};
    return ws[pick(5)];
  }
  std::string str() {
    static const char* parts[] = {"order", "ord_81ks92", "Café", "\\n", "\\\"", "\\\\", "\\t", "\\u00e9",
                                  "\\/", "\\u0001", "\\ud83d\\ude00", " ", "{", "[", "Error: x", "TIMEOUT"};
    std::string s = "\"";
    for (int i = pick(5); i > 0; --i) s += parts[pick(16)];
    return s + "\"";
  }
  std::string num() {
    // Beyond the DOM parser's range (the ondemand reader keeps them as text): rare, as
    // each one sends its record down the ondemand path.
    if (!pick(40)) return pick(2) ? "12345678901234567890123" : "1e400";
    static const char* nums[] = {"0", "-0", "1.50", "42", "-2e3", "1E+2", "0.000001", "9007199254740993", "184"};
    return nums[pick(9)];
  }
  std::string value(int depth) {
    int k = depth > 3 ? pick(4) : pick(7);
    switch (k) {
      case 0: return str();
      case 1: return num();
      case 2: return pick(2) ? "true" : "false";
      case 3: return "null";
      case 4: case 5: {
        std::string o = "{" + sp();
        for (int i = pick(4); i > 0; --i) {
          o += str() + sp() + ":" + sp() + value(depth + 1) + sp();
          if (i > 1) o += "," + sp();
        }
        return o + "}";
      }
      default: {
        std::string a = "[" + sp();
        for (int i = pick(4); i > 0; --i) {
          a += value(depth + 1) + sp();
          if (i > 1) a += "," + sp();
        }
        return a + "]";
      }
    }
  }
  std::string field(const std::string& key, const std::string& v) { return "\"" + key + "\"" + sp() + ":" + sp() + v; }
  std::string step() {
    static const char* types[] = {"tool_call", "user_message", "assistant_message", "approval", "approval_request",
                                  "final_answer", "retrieval", "system_message"};
    static const char* tools[] = {"order_get", " Order_Get ", "refund_order", "t\\u00e9l", "a"};
    std::vector<std::string> f;
    if (pick(4)) f.push_back(field("type", "\"" + std::string(types[pick(8)]) + "\""));
    if (pick(4)) f.push_back(field("tool", "\"" + std::string(tools[pick(5)]) + "\""));
    if (!pick(6)) f.push_back(field("raw_tool", str()));
    if (pick(2)) f.push_back(field("id", pick(2) ? str() : num()));
    if (pick(2)) f.push_back(field("arguments", pick(5) ? value(1) : str()));
    if (pick(2)) {
      static const char* texts[] = {"\"Error: gateway timeout\"", "\" {\\\"status\\\": \\\"ok\\\"}\"", "\"[1, 2]\"",
                                    "\"plain text\\nresult\""};
      f.push_back(field("result", pick(2) ? texts[pick(4)] : value(1)));
    }
    if (!pick(3)) f.push_back(field("content", pick(5) ? str() : "null"));
    if (!pick(4)) {
      static const char* st[] = {"\"ok\"", "\"error\"", "\"failed\"", "\"pending\"", "null", "3"};
      f.push_back(field("status", st[pick(6)]));
    }
    if (!pick(6)) f.push_back(field("is_error", pick(2) ? "true" : "false"));
    if (!pick(6)) f.push_back(field("error", value(2)));
    if (!pick(5)) f.push_back(field("turn", num()));
    if (!pick(3)) f.push_back(field("latency_ms", num()));
    if (!pick(5)) f.push_back(field("arguments_invalid", pick(2) ? "true" : "false"));
    if (!pick(4)) f.push_back(field("x\\u0041", value(2)));
    std::shuffle(f.begin(), f.end(), rng);
    std::string s = "{" + sp();
    for (std::size_t i = 0; i < f.size(); ++i) s += (i ? "," + sp() : "") + f[i] + sp();
    return s + "}";
  }
  std::string record() {
    std::vector<std::string> f;
    std::string steps = "[" + sp();
    for (int i = pick(8); i > 0; --i) steps += step() + sp() + (i > 1 ? "," + sp() : "");
    f.push_back(field("steps", steps + "]"));
    if (pick(2)) f.push_back(field("trace_id", pick(3) ? str() : num()));
    if (!pick(3)) f.push_back(field("context", value(3)));
    if (!pick(3)) f.push_back(field("id", pick(2) ? str() : "null"));
    if (!pick(4)) f.push_back(field("case_id", num()));
    if (!pick(4)) f.push_back(field("metadata", value(3)));
    if (!pick(4)) f.push_back(field("reward", num()));
    if (!pick(8)) f.push_back(field("messages", "[]"));
    std::shuffle(f.begin(), f.end(), rng);
    std::string s = sp() + "{" + sp();
    for (std::size_t i = 0; i < f.size(); ++i) s += (i ? "," + sp() : "") + f[i] + sp();
    return s + "}" + sp();
  }
};

}  // namespace

TEST_CASE("tape: hand-picked native records read the same on both paths") {
  const char* records[] = {
      R"({"trace_id":"trace_204","context":{"user_id":"u_17"},"steps":[{"type":"tool_call","id":"call_1","tool":"order_get","arguments":{"order_id":"ord_81ks92"},"result":{"status":"delayed","total":42.50},"status":"ok","latency_ms":184}]})",
      R"({ "steps" : [ { "tool" : "a" , "arguments" : { "k" : [ 1 , 2.0 ] } } ] })",
      R"({"steps":[{"tool":"t","arguments":{"a":"x\ny\"z\\","b":"caf\u00e9 \/ \u0001"}},{"tool":"t","result":"\n {\"s\": 1}"}]})",
      R"({"steps":[{"tool":"a","arguments":{"big":12345678901234567890123,"huge":1e400}}]})",
      R"({"steps":[],"steps":[{"tool":"a"}]})",
      R"({"steps":{}})",
      R"({"steps":[1]})",
      R"({"steps":[{"type":3}]})",
      R"({"steps":[{"type":"tool_call"}]})",
      R"({"trace_id":{},"steps":[]})",
      R"({"metadata":{"a":1},"id":7,"steps":[{"type":"approval","tool":"refund_order","raw_tool":"R"}]})",
      R"({"messages":[],"steps":[]})",
      R"({"steps":[{"tool":"a","arguments":{"k":"bad \x escape"}}]})",
      R"({"steps":[{"tool":"a","arguments":{"k":tru}}]})",
      R"({"steps":[{"tool":"a"}]} x)",
      "{\"steps\":[{\"tool\":\"a\",\"content\":\"\xff\"}]}",
      R"({"steps":[{"tool":"a","error":{"code":1},"status":"weird","turn":7}]})",
  };
  for (const char* r : records) check_same(r);
}

TEST_CASE("tape: nesting deeper than the readers allow is reported the same way") {
  for (int depth : {500, 511, 512, 513, 1023, 1024, 1100}) {
    CAPTURE(depth);
    std::string record = R"({"steps":[{"tool":"a","arguments":)" + std::string(depth, '[') + std::string(depth, ']') + "}]}";
    check_same(record);
  }
}

TEST_CASE("tape: generated native records, with and without blanks, take the fast path and agree") {
  Gen g(7);
  int fast = 0, total = 0;
  for (int i = 0; i < 600; ++i) {
    g.blanks = i % 2 == 1;
    std::string record = g.record();
    check_same(record);
    std::string direct;
    ++total;
    if (read_fast(record, &direct)) {
      ++fast;
      ReadResult slow = read_text(record, options(false, InputFormat::native, false));
      REQUIRE(slow.normalized.size() == 1);
      CHECK(direct == slow.normalized[0]);
    }
  }
  // Only records the DOM parser rejects (numbers beyond its range) or with shape errors decline.
  CHECK(fast > total / 2);
}

TEST_CASE("tape: byte-level mutations of native records are read or rejected the same way") {
  Gen g(11);
  std::mt19937 rng(5);
  static const char bytes[] = "{}[],:\"\\ 0123456789eE+-.tfnulxa\xff\x01";
  for (int i = 0; i < 1500; ++i) {
    g.blanks = i % 3 == 0;
    std::string record = g.record();
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0 && !record.empty(); --m) {
      std::size_t at = rng() % record.size();
      char b = bytes[rng() % (sizeof bytes - 1)];
      switch (rng() % 3) {
        case 0: record[at] = b; break;
        case 1: record.insert(record.begin() + static_cast<std::ptrdiff_t>(at), b); break;
        default: record.erase(at, 1);
      }
    }
    check_same(record);
  }
}
