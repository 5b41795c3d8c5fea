// The native and chat readers' fast path (readers/tape_value.hpp: one DOM parse validates the
// record, the reader walks that parse) against the ondemand path it replaces: the same
// trajectories, errors and warnings on hand-picked records, on generated ones (blanks,
// escapes, numbers of every form, all step fields; OpenAI, Anthropic and tau-bench chat
// messages) and on byte-level mutations of them. The generated records are also read through
// the fast path directly, so the comparison cannot pass by the fast path quietly declining
// everything.
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <set>
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

// Reads `text` through a reader over TapeValue directly (the native reader, or the chat
// reader for an object or array record), with default options: the normalized trace and its
// warnings; false when the reader declines the record.
enum class Reader { native, chat };
bool read_fast(std::string_view text, Reader reader, std::string* normalized) {
  detail::CompiledOptions c;
  std::string padded(text);
  padded.append(kRecordPadding, ' ');
  static detail::Scratch s;  // one for every record, as a reading thread keeps it
  detail::TapeDoc doc;
  std::string_view in(padded.data(), text.size());
  if (!doc.parse(s.tape, in)) return false;
  ToolTable tools;
  Trajectory t(&tools);
  t.origin = RecordOrigin{"mem", 1, 1, 0};
  ParseOutcome outcome;
  detail::ParseCtx ctx(c, in, t.origin, t, s, outcome);
  detail::TapeValue root(&doc, 0);
  bool ok = reader == Reader::native ? !doc.root_is_array() && detail::read_native(ctx, detail::TapeObject(root))
            : doc.root_is_array()    ? detail::read_chat_array(ctx, detail::TapeArray(root))
                                     : detail::read_chat_object(ctx, detail::TapeObject(root));
  if (!ok || !outcome.ok()) return false;
  if (doc.root_is_array()) t.set_trace_id(t.store("mem:1"));
  normalized->clear();
  write_normalized_json(t, *normalized);
  for (const std::string& w : t.warnings) *normalized += "\nwarning " + w;
  return true;
}

// Whether `reader` takes `record` directly; when it does, the ondemand path (forced to
// `format`) must give the same trace and warnings. Counts records with warnings in *warned.
bool taken_and_agrees(const std::string& record, Reader reader, InputFormat format, int* warned) {
  std::string direct;
  if (!read_fast(record, reader, &direct)) return false;
  ReadResult slow = read_text(record, options(false, format, false));
  REQUIRE(slow.normalized.size() == 1);
  std::string expected = slow.normalized[0];
  for (const std::string& w : slow.warnings) expected += "\nwarning " + w;
  if (warned) *warned += !slow.warnings.empty();
  CHECK(direct == expected);
  return true;
}

const InputFormat kNativeFormats[] = {InputFormat::auto_detect, InputFormat::native};
const InputFormat kChatFormats[] = {InputFormat::auto_detect, InputFormat::openai, InputFormat::anthropic,
                                    InputFormat::native};

// Both paths, every format that may take the record, with and without patterns and aliases.
template <std::size_t N = 2>
void check_same(const std::string& record, const InputFormat (&formats)[N] = kNativeFormats) {
  CAPTURE(record);
  for (InputFormat f : formats)
    for (bool patterns : {false, true}) {
      CAPTURE(static_cast<int>(f));
      std::string fast = describe(read_text(record, options(true, f, patterns)));
      std::string slow = describe(read_text(record, options(false, f, patterns)));
      CHECK(fast == slow);
      // What `check` reads with: the trajectory refers to the record's bytes.
      CHECK(describe(read_text(record, options(true, f, patterns), true)) == slow);
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
    if (!pick(4)) f.push_back(field("a\\n\\\"b", value(2)));  // a name with canonical escapes
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

  // ---- chat records ----
  // `json` as a JSON string literal (arguments and results given as text).
  static std::string quote(const std::string& json) {
    std::string q = "\"";
    for (char ch : json) {
      if (ch == '"' || ch == '\\') q += '\\', q += ch;
      else if (ch == '\n') q += "\\n";
      else if (ch == '\t') q += "\\t";
      else if (ch == '\r') q += "\\r";
      else q += ch;
    }
    return q + "\"";
  }
  std::string object(std::vector<std::string> f) {
    std::shuffle(f.begin(), f.end(), rng);
    std::string s = "{" + sp();
    for (std::size_t i = 0; i < f.size(); ++i) s += (i ? "," + sp() : "") + f[i] + sp();
    return s + "}";
  }
  std::string array(const std::vector<std::string>& e) {
    std::string s = "[" + sp();
    for (std::size_t i = 0; i < e.size(); ++i) s += (i ? "," + sp() : "") + e[i] + sp();
    return s + "]";
  }
  std::string tool_name() {
    static const char* tools[] = {"\"get_order_details\"", "\" Order_Get \"", "\"refund_order\"", "\"t\\u00e9l\"",
                                  "\"a\""};
    return tools[pick(5)];
  }
  // Ids from a small pool, so that results sometimes answer a call and sometimes none.
  std::string call_id() {
    static const char* ids[] = {"\"call_1\"", "\"call_2\"", "\"toolu_1\"", "\"toolu_\\u0032\"", "7"};
    return ids[pick(5)];
  }
  std::string text_value() {
    static const char* texts[] = {"\"Error: gateway timeout\"", "\" {\\\"status\\\": \\\"ok\\\"}\"", "\"[1, 2]\"",
                                  "\"plain text\\nresult\"", "\"\"", "\"{bad\""};
    return pick(3) ? texts[pick(6)] : str();
  }
  std::string arguments() {
    switch (pick(8)) {
      case 0: return "\"\"";
      case 1: return "\"  \"";
      case 2: return "\"{\\\"order_id\\\": \\\"#W1\"";  // not JSON: warned about
      case 3: return value(1);                              // not a string: stored as is
      case 4: return str();
      default: return quote(value(1));
    }
  }
  std::string extra_field() {
    static const char* keys[] = {"x\\u0041", "latency_ms", "cache_control", "name", "a\\t\\\\b"};
    return field(keys[pick(5)], value(2));
  }
  std::string openai_call() {
    std::vector<std::string> fn;
    if (pick(12)) fn.push_back(field("name", tool_name()));
    if (pick(6)) fn.push_back(field("arguments", arguments()));
    if (!pick(8)) fn.push_back(extra_field());
    std::vector<std::string> f;
    if (pick(4)) f.push_back(field("id", call_id()));
    if (pick(3)) f.push_back(field("type", pick(6) ? "\"function\"" : "\"custom\""));
    f.push_back(field("function", object(fn)));
    if (!pick(8)) f.push_back(field("index", num()));
    return object(f);
  }
  std::string block(bool tools) {
    switch (tools ? pick(6) : pick(3)) {
      case 0: case 1: {
        std::vector<std::string> f{field("type", "\"text\""), field("text", str())};
        if (!pick(6)) f.push_back(field("cache_control", value(2)));
        return object(f);
      }
      case 2: return pick(3) ? object({field("type", "\"image\""), field("source", value(2))}) : str();
      case 3: {
        std::vector<std::string> f{field("type", "\"tool_use\""), field("name", tool_name())};
        if (pick(4)) f.push_back(field("id", call_id()));
        if (pick(5)) f.push_back(field("input", pick(4) ? value(1) : arguments()));
        return object(f);
      }
      default: {
        std::vector<std::string> f{field("type", "\"tool_result\"")};
        if (pick(4)) f.push_back(field("tool_use_id", call_id()));
        if (pick(4)) {
          std::vector<std::string> inner;
          for (int i = pick(3); i > 0; --i) inner.push_back(block(false));
          f.push_back(field("content", pick(2) ? text_value() : array(inner)));
        }
        if (!pick(3)) f.push_back(field("is_error", pick(2) ? "true" : "false"));
        return object(f);
      }
    }
  }
  std::string content(bool tools) {
    if (!pick(6)) return "null";
    if (pick(2)) return text_value();
    std::vector<std::string> b;
    for (int i = pick(4); i > 0; --i) b.push_back(block(tools));
    return array(b);
  }
  std::string message() {
    static const char* roles[] = {"\"system\"", "\"user\"", "\"assistant\"", "\"tool\"", "\"critic\"",
                                  "\"developer\"", "\"function\"", "\"human\""};
    int r = pick(8);
    std::string role = roles[r];
    std::vector<std::string> f{field("role", role)};
    bool tool = r == 3 || r == 6;
    if (pick(8)) f.push_back(field("content", content(!tool)));
    if (r == 2 && pick(2)) {
      std::vector<std::string> calls;
      for (int i = 1 + pick(3); i > 0; --i) calls.push_back(openai_call());
      f.push_back(field("tool_calls", pick(10) ? array(calls) : "null"));
    }
    if (r == 2 && !pick(8)) {
      std::vector<std::string> fn{field("name", tool_name())};
      if (pick(4)) fn.push_back(field("arguments", arguments()));
      f.push_back(field("function_call", pick(6) ? object(fn) : "null"));
    }
    if (tool) {
      if (pick(4)) f.push_back(field("tool_call_id", call_id()));
      if (pick(2)) f.push_back(field("name", tool_name()));
      if (!pick(6)) f.push_back(field("is_error", pick(2) ? "true" : "false"));
      if (!pick(6)) f.push_back(field("error", value(2)));
    }
    if (!pick(6)) f.push_back(extra_field());
    return object(f);
  }
  std::string chat_record() {
    std::vector<std::string> m;
    for (int i = pick(9); i > 0; --i) m.push_back(message());
    std::string messages = array(m);
    std::string s;
    switch (pick(5)) {
      case 0: s = messages; break;  // a bare message array
      case 1: {  // tau-bench
        std::vector<std::string> f{field("traj", messages), field("task_id", num()), field("reward", num())};
        if (pick(2)) f.push_back(field("info", value(2)));
        s = object(f);
        break;
      }
      case 2: {  // Anthropic: the system prompt beside the messages
        std::vector<std::string> f{field("messages", messages)};
        if (pick(2)) f.push_back(field("system", pick(2) ? str() : value(2)));
        if (pick(2)) f.push_back(field("model", "\"claude\""));
        s = object(f);
        break;
      }
      default: {
        std::vector<std::string> f{field("messages", messages)};
        if (pick(2)) f.push_back(field("trace_id", pick(3) ? str() : num()));
        if (!pick(3)) f.push_back(field("context", value(2)));
        if (!pick(4)) f.push_back(field("metadata", value(2)));
        if (!pick(8)) f.push_back(field("traj", "[]"));
        s = object(f);
      }
    }
    return sp() + s + sp();
  }
};

// Applies 1 to 3 byte-level mutations.
void mutate(std::string& record, std::mt19937& rng) {
  static const char bytes[] = "{}[],:\"\\ 0123456789eE+-.tfnulxa\xff\x01";
  for (int m = 1 + static_cast<int>(rng() % 3); m > 0 && !record.empty(); --m) {
    std::size_t at = rng() % record.size();
    char b = bytes[rng() % (sizeof bytes - 1)];
    switch (rng() % 3) {
      case 0: record[at] = b; break;
      case 1: record.insert(record.begin() + static_cast<std::ptrdiff_t>(at), b); break;
      default: record.erase(at, 1);
    }
  }
}

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
    ++total;
    fast += taken_and_agrees(record, Reader::native, InputFormat::native, nullptr);
  }
  // Only records the DOM parser rejects (numbers beyond its range) or with shape errors decline.
  CHECK(fast > total / 2);
}

TEST_CASE("tape: byte-level mutations of native records are read or rejected the same way") {
  Gen g(11);
  std::mt19937 rng(5);
  for (int i = 0; i < 1500; ++i) {
    g.blanks = i % 3 == 0;
    std::string record = g.record();
    mutate(record, rng);
    check_same(record);
  }
}

TEST_CASE("tape: hand-picked chat records read the same on both paths") {
  const char* records[] = {
      R"({"task_id":3,"reward":1.0,"info":{"x":[1,2]},"traj":[{"role":"system","content":"policy"},{"role":"user","content":"refund #W1"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_order_details","arguments":"{"order_id": "#W1"}"}}]},{"role":"tool","tool_call_id":"call_1","name":"get_order_details","content":"{"status": "delivered"}"},{"role":"assistant","content":"Done."}]})",
      R"([{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}])",
      R"([])",
      R"(  [ ]  )",
      R"(["order_get","refund"])",
      R"([{"steps":[],"role":"user","content":"x"}])",
      R"([{"role":"user","steps":[],"content":"x"}])",
      R"([{"role":"user","messages":[]}])",
      R"([{"role":"user","content":"x"},"order_get"])",
      R"([1])",
      R"({"role":"user","content":"a lone message"})",
      R"({"messages":[{"role":"user","content":"x"}]})",
      R"({"messages":[{"role":"user","role":"assistant","content":"x"}]})",
      R"({"messages":[{"content":"x","role":"assistant","extra":{"k":[1,{"a":null}]}}]})",
      R"({"messages":[{"role":"user","content":"escaped role"}]})",
      R"({"messages":[{"role":5,"content":"x"}]})",
      R"({"messages":[{"content":"no role"}]})",
      R"({"messages":[{"role":"tool","content":"orphan result"}]})",
      R"({"messages":[{"role":"tool","tool_call_id":"call_9","content":"{"a": 1}"}]})",
      R"({"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"arguments":"{bad json","name":"t"}}]}]})",
      R"({"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"t","arguments":""}},{"id":"c1","function":{"name":"t","arguments":"[1,
 2]"}}]},{"role":"tool","tool_call_id":"c1","content":"r1"},{"role":"tool","tool_call_id":"c1","content":"r2"},{"role":"tool","tool_call_id":"c1","content":"r3"}]})",
      R"({"messages":[{"role":"assistant","function_call":{"name":"lookup","arguments":"{"q":"caf\u00e9"}"}},{"role":"function","name":"lookup","content":"Error: not found"}]})",
      R"({"messages":[{"role":"assistant","tool_calls":null,"function_call":null,"content":"plain"}]})",
      R"({"messages":[{"role":"assistant","tool_calls":{}}]})",
      R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}"}}]}]})",
      R"({"messages":[{"role":"assistant","tool_calls":[{"function":[]}]}]})",
      R"({"messages":[{"role":"assistant","tool_calls":[5]}]})",
      R"({"system":"be brief","messages":[{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"found","cache_control":{"type":"ephemeral"}}],"is_error":true}]}]})",
      R"({"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"image","source":{"data":"café \/"}},"plain string block",{"type":"tool_result","content":"{"a": [1, 2]}"}]}]})",
      R"({"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_use","name":"nested"}]}]}]})",
      R"({"messages":[{"role":"user","content":[{"type":"tool_result","is_error":"yes"}]}]})",
      R"({"messages":[{"role":"user","content":[{"type":5}]}]})",
      R"({"messages":[{"role":"user","content":[{"text":"no type"}]}]})",
      R"({"messages":[{"role":"user","content":5}]})",
      R"({"messages":[{"role":"tool","tool_call_id":"c","error":{"code":1},"is_error":false,"content":null}]})",
      R"({"messages":[{"role":"tool","tool_call_id":{},"content":"x"}]})",
      R"({"messages":[],"traj":[{"role":"user","content":"second array goes to metadata"}]})",
      R"({"messages":{}})",
      R"({"model":"gpt"})",
      R"({"messages":[],"resourceSpans":[]})",
      R"({"messages":[],"steps":[]})",
      R"({"trace_id":12,"id":"r1","metadata":{"m":1},"context":{"user":"u"},"messages":[{"role":"critic","content":"fine"}]})",
      R"({"traj":[{"role":"user","content":"x"}],"reward":1e400})",
      R"({"traj":[{"role":"user","content":"x"}]} trailing)",
      "\xEF\xBB\xBF{\"messages\":[{\"role\":\"user\",\"content\":\"after a BOM\"}]}",
      "{\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}",
      "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"t\",\"arguments\":\"{\\\"k\\\": \\\"\xc3\xa9\\\"\"}}]}]}",
      R"({"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"t","arguments":"{\"k\": 1} x"}}]}]})",
  };
  for (const char* r : records) check_same(r, kChatFormats);
}

TEST_CASE("tape: chat records nested deeper than the readers allow are reported the same way") {
  for (int depth : {510, 511, 512, 513, 1100}) {
    CAPTURE(depth);
    std::string deep = std::string(depth, '[') + std::string(depth, ']');
    check_same(R"({"system":)" + deep + R"(,"messages":[]})", kChatFormats);
    check_same(R"({"messages":[{"role":"user","content":[{"type":"image","source":)" + deep + "}]}]}", kChatFormats);
    check_same(R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"t","arguments":)" + deep + "}}]}]}",
               kChatFormats);
  }
}

TEST_CASE("tape: generated chat records, with and without blanks, take the fast path and agree") {
  Gen g(13);
  int fast = 0, total = 0, warned = 0;
  for (int i = 0; i < 800; ++i) {
    g.blanks = i % 2 == 1;
    std::string record = g.chat_record();
    check_same(record, kChatFormats);
    ++total;
    fast += taken_and_agrees(record, Reader::chat, InputFormat::openai, &warned);
  }
  MESSAGE("chat records read by the fast path: " << fast << " of " << total << ", " << warned << " with warnings");
  // Declined: numbers beyond the DOM parser's range, and records with shape errors.
  CHECK(fast > total * 2 / 3);
  CHECK(warned > total / 10);
}

TEST_CASE("tape: byte-level mutations of chat records are read or rejected the same way") {
  Gen g(17);
  std::mt19937 rng(19);
  for (int i = 0; i < 1500; ++i) {
    g.blanks = i % 3 == 0;
    std::string record = g.chat_record();
    mutate(record, rng);
    check_same(record, kChatFormats);
  }
}

// TapeDoc::parse declines a record in which an object names a member twice. Names are told
// apart by a fingerprint of their first and last eight bytes and their length, then by their
// bytes: objects of 2 to 40 members (both ways of comparing: by pairs up to 8 names, sorted
// above), nested, with names that share a prefix, a suffix, both, or only a length, each
// against a set of the names written.
TEST_CASE("tape: a member named twice is found in objects of every size, however alike the names") {
  std::mt19937 rng(23);
  const std::vector<std::string> stems = {"", "a", "ab", "id", "item_id", "options", "order_id_",
                                          "abcdefgh", "abcdefghi", "abcdefgh_abcdefgh", "abcdefgh-abcdefgh"};
  auto name = [&] {
    std::string s = stems[rng() % stems.size()];
    switch (rng() % 4) {
      case 0: break;
      case 1: s += static_cast<char>('0' + rng() % 3); break;                      // same suffix length
      case 2: s.insert(s.begin(), static_cast<char>('x' + rng() % 2)); break;     // a new first byte
      default: s.insert(s.size() / 2, 1, static_cast<char>('m' + rng() % 2));     // a middle byte only
    }
    return s;
  };
  // {"steps":[{"tool":"a","arguments":OBJECT}]}; OBJECT may hold a nested object of its own.
  auto object = [&](auto& self, int depth, bool& duplicate) -> std::string {
    std::size_t n = 2 + rng() % (rng() % 2 ? 8 : 40);
    std::set<std::string> seen;
    std::string out = "{";
    for (std::size_t i = 0; i < n; ++i) {
      std::string k = name();
      duplicate |= !seen.insert(k).second;
      if (i) out += ",";
      out += "\"" + k + "\":";
      out += depth < 2 && rng() % 5 == 0 ? self(self, depth + 1, duplicate) : std::to_string(i);
    }
    return out + "}";
  };
  int declined = 0, read = 0;
  detail::Scratch s;  // one for every record, as a reading thread keeps it
  for (int i = 0; i < 3000; ++i) {
    bool duplicate = false;
    std::string text = R"({"steps":[{"tool":"a","arguments":)" + object(object, 0, duplicate) + "}]}";
    CAPTURE(text);
    std::string padded = text + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    bool parsed = doc.parse(s.tape, std::string_view(padded.data(), text.size()));
    CHECK(parsed == !duplicate);
    (parsed ? read : declined) += 1;
  }
  // Both outcomes are common, so neither half of the check is vacuous.
  CHECK(declined > 300);
  CHECK(read > 300);
}

// Large objects fill the walk's name filter, so every one of them is compared whole: the
// repeat is found wherever it is, one scratch serving objects of every size in turn (its table
// is given back after the largest), and distinct names still pass.
TEST_CASE("tape: in objects of thousands of members a repeat is found, distinct names pass") {
  detail::Scratch s;
  for (std::size_t n : {9u, 100u, 5000u, 40000u, 12u}) {
    for (int repeat : {-1, 0, 1}) {  // none; the first name again at the end; the last twice
      std::string object = "{";
      for (std::size_t i = 0; i < n; ++i) object += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
      if (repeat == 0) object += ",\"k0\":2";
      if (repeat == 1) object += ",\"k" + std::to_string(n - 1) + "\":2";
      object += "}";
      std::string text = R"({"steps":[{"tool":"a","arguments":{"x":)" + object + "}}]}";
      CAPTURE(n);
      CAPTURE(repeat);
      std::string padded = text + std::string(kRecordPadding, ' ');
      detail::TapeDoc doc;
      CHECK(doc.parse(s.tape, std::string_view(padded.data(), text.size())) == (repeat < 0));
    }
  }
}

namespace {

// Whether simdjson's DOM parser accepts `text` and no object in it names a member twice.
bool dom_accepts(const std::string& text) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) return false;
  auto unique_names = [](auto& self, simdjson::dom::element e) -> bool {
    if (e.is_object()) {
      std::set<std::string_view> names;
      simdjson::dom::object o = e.get_object().value_unsafe();
      for (auto field : o)
        if (!names.insert(field.key).second || !self(self, field.value)) return false;
    } else if (e.is_array()) {
      simdjson::dom::array a = e.get_array().value_unsafe();
      for (auto v : a)
        if (!self(self, v)) return false;
    }
    return true;
  };
  return unique_names(unique_names, root);
}

// What TapeDoc::parse leaves to the ondemand reader on purpose although the DOM parser takes
// it: a number whose magnitude it does not judge (more than 18 digits, a three-digit
// exponent). Looked for in the whole text, strings included, so it may excuse too much,
// never too little.
bool has_long_number(const std::string& text) {
  static const std::regex long_number("[0-9]{19,}|[eE][+-]?[0-9]{3,}|[0-9.eE+-]{41,}");
  return std::regex_search(text, long_number);
}

}  // namespace

// TapeDoc::parse checks the grammar itself over stage 1's indexes: it must never accept what
// simdjson's DOM parser rejects (or an object naming a member twice), and must decline
// nothing else the DOM parser accepts but numbers it leaves to the ondemand reader. Over
// generated native and chat records and byte-level mutations of them.
TEST_CASE("tape: the walk accepts exactly what the DOM parser accepts") {
  Gen g(29);
  std::mt19937 rng(31);
  int accepted = 0, rejected = 0;
  detail::Scratch s;  // one for every record, as a reading thread keeps it
  for (int i = 0; i < 6000; ++i) {
    g.blanks = i % 2 == 1;
    std::string record = i % 3 == 2 ? g.chat_record() : g.record();
    if (i % 4) mutate(record, rng);
    CAPTURE(record);
    std::string padded = record + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    bool walked = doc.parse(s.tape, std::string_view(padded.data(), record.size()));
    bool dom = dom_accepts(record);
    if (walked) CHECK(dom);
    if (dom && !walked) {
      bool top = record.find_first_not_of(" \t\r\n") != std::string::npos &&
                 (record[record.find_first_not_of(" \t\r\n")] == '{' || record[record.find_first_not_of(" \t\r\n")] == '[');
      CHECK((has_long_number(record) || !top));
    }
    (walked ? accepted : rejected) += 1;
  }
  CHECK(accepted > 1000);
  CHECK(rejected > 1000);
}

// Every escape simdjson decodes, and every malformed one it rejects, on both sides: the
// decoded value is what the DOM parser decodes.
TEST_CASE("tape: strings with escapes decode as the DOM parser decodes them") {
  const char* strings[] = {R"("a\nb")", R"("\"\\\/\b\f\n\r\t")", R"("caf\u00e9")", R"("\ud83d\ude00 x")", R"("\u0000")",
                           R"("\ud83d")", R"("\ude00")", R"("\ud83dx")", R"("\u12")", R"("\u12G4")", R"("\x")",
                           R"("a\")", R"("\\")", R"("\\\"")", R"("\uD83D\uDE00")", R"("€ \u20ac")"};
  detail::Scratch s;  // one for every record, as a reading thread keeps it
  for (const char* str : strings) {
    std::string record = std::string("{\"k\":") + str + ",\"" + str + "\":1}";
    // A key equal to "k" would be a duplicate: none of the strings decodes to it.
    CAPTURE(record);
    std::string padded = record + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    bool walked = doc.parse(s.tape, std::string_view(padded.data(), record.size()));
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    bool dom = !parser.parse(record).get(root);
    CHECK(walked == dom);
    if (!walked || !dom) continue;
    std::string_view expected = root["k"].get_string().value_unsafe();
    detail::TapeValue v(&doc, 3);
    CHECK(v.get_string().value_unsafe() == expected);
    std::string_view key;
    doc.for_keys(0, [&](std::string_view k) {
      key = k;
      return true;
    });
    CHECK(key == expected);
  }
}

// Values whose escapes are all canonical ones (no \/ or \u) are decoded only when read, after
// the strings the walk decoded (names, \/ and \u escapes): in any order, more than once, beside
// strings decoded at once, each reads as the DOM parser decodes it and keeps its canonical size.
TEST_CASE("tape: values decoded when first read agree with the DOM parser, in any order") {
  std::mt19937 rng(7);
  const char* pieces[] = {"a", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\b\\f\\r", "xyz ", "\\u00e9", "é"};
  detail::Scratch s;  // one for every record, as a reading thread keeps it
  for (int round = 0; round < 200; ++round) {
    std::string record = "{";
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      std::string value;
      for (unsigned j = rng() % 40; j > 0; --j) value += pieces[rng() % std::size(pieces)];
      // The names hold escapes too (decoded by the walk), so the two kinds interleave.
      record += (i ? ",\"k" : "\"k") + std::to_string(i) + (i % 3 ? "\\n" : "") + "\":\"" + value + "\"";
    }
    record += "}";
    CAPTURE(record);
    std::string padded = record + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    REQUIRE(doc.parse(s.tape, std::string_view(padded.data(), record.size())));
    simdjson::dom::parser parser;
    simdjson::dom::object root;
    REQUIRE(!parser.parse(record).get_object().get(root));
    std::vector<std::string_view> expected;
    for (auto field : root) expected.push_back(field.value.get_string().value_unsafe());
    std::vector<int> order(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (int twice = 0; twice < 2; ++twice) {
      for (int i : order) {
        const std::uint32_t value_token = static_cast<std::uint32_t>(3 + 4 * i);
        detail::TapeValue v(&doc, value_token);
        CHECK(v.get_string().value_unsafe() == expected[static_cast<std::size_t>(i)]);
        // Canonical (what append_json_string writes) exactly when the source holds no \/ or \u.
        std::string_view source = json::trim_ws(doc.token(value_token));
        const bool plain = source.find("\\/") == std::string_view::npos && source.find("\\u") == std::string_view::npos;
        CHECK((doc.canonical_string_size(value_token) == (plain ? source.size() : 0)));
      }
    }
  }
}

// Records of any size take the fast path: one far over the buffers' usual size, then small
// ones again (the buffers shrink back), then a large one again, all read as the ondemand path
// reads them.
TEST_CASE("tape: records larger than the usual size take the fast path and agree") {
  Gen g(41);
  // Steps the fast path takes on their own (no number out of its range, no shape error).
  auto big = [&] {
    std::string record = R"({"trace_id":"big","steps":[)", normalized;
    while (record.size() < 3 * detail::TapeDoc::kUsualRecord) {
      std::string step = g.step();
      if (!read_fast(R"({"steps":[)" + step + "]}", Reader::native, &normalized)) continue;
      if (record.back() != '[') record += ",";
      record += step;
    }
    return record + "]}";
  };
  std::vector<std::string> records = {big(), g.record(), g.record(), big(), g.record()};
  for (std::size_t i = 0; i < records.size(); ++i) {
    CAPTURE(records[i].size());
    bool taken = taken_and_agrees(records[i], Reader::native, InputFormat::native, nullptr);
    if (i == 0 || i == 3) CHECK(taken);  // the large ones
  }
  // One TapeScratch through all of them, as a reading thread keeps it.
  detail::TapeScratch s;
  for (const std::string& record : records) {
    std::string padded = record + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    bool walked = doc.parse(s, std::string_view(padded.data(), record.size()));
    CHECK(walked == dom_accepts(record));
  }
}

// What lies past the record (simdjson's padding) is never read as part of it, whatever it
// holds: records cut short end in the padding, which here is brackets, commas and quotes.
TEST_CASE("tape: the walk's verdict does not depend on the bytes past the record") {
  Gen g(43);
  std::mt19937 rng(47);
  detail::Scratch s;  // one for every record, as a reading thread keeps it
  for (int i = 0; i < 1500; ++i) {
    std::string record = i % 2 ? g.chat_record() : g.record();
    record.resize(rng() % (record.size() + 1));  // cut anywhere, often mid-value
    if (i % 3 == 0) mutate(record, rng);
    CAPTURE(record);
    std::string spaces = record + std::string(kRecordPadding, ' ');
    detail::TapeDoc doc;
    bool expected = !record.empty() && doc.parse(s.tape, std::string_view(spaces.data(), record.size()));
    for (char pad : std::string("]}[{,:\"0")) {
      std::string padded = record + std::string(kRecordPadding, pad);
      detail::TapeDoc other;
      bool walked = !record.empty() && other.parse(s.tape, std::string_view(padded.data(), record.size()));
      CHECK(walked == expected);
    }
  }
}
