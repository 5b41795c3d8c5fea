// The score command's direct chat reader (metrics/chat_calls.hpp) against the general path
// (TraceParser + collect_calls + ArgCanon::add): whenever it accepts a side, it must yield
// the same calls — names, turns, whether arguments were given, whether the result was an
// error, canonical arguments and their members — and the general reader must accept that
// side without a warning. Checked on generated chat sides and on byte-level mutations of them.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <simdjson.h>

#include "json/text.hpp"
#include "metrics/chat_calls.hpp"
#include "metrics/scorer_impl.hpp"
#include "trajcheck/reader.hpp"

using namespace trajcheck;
using metrics::ArgCanon;
using metrics::CanonArgs;

namespace {

struct Seen {
  std::string name;
  std::uint32_t turn = 0;
  bool has_args = false;
  bool object = true;
  bool failed = false;  // its result is an error (is_error; "status"/"error" go the general way)
  std::string whole;
  std::vector<std::pair<std::string, std::string>> members;
  bool operator==(const Seen&) const = default;
};

Seen describe(const metrics::Call& c, const ArgCanon& canon, const CanonArgs& a) {
  Seen s{std::string(c.name), c.turn, c.has_args, a.object, c.failed, std::string(canon.whole(a)), {}};
  for (std::uint32_t i = a.members_begin; i < a.members_end; ++i)
    s.members.emplace_back(canon.key(canon.members()[i]), canon.value(canon.members()[i]));
  return s;
}

// Both paths see the side inside a record, as `trajcheck score` does; the record's loop runs
// to its end, since a malformed side can also surface as an error after it.
std::string record_of(const std::string& side) { return "{\"id\":1,\"actual\":" + side + ",\"x\":0}"; }

// The general path: the side's text as score's general reader cuts it out of the record,
// TraceParser, Scorer's collect_calls and ArgCanon::add.
bool general(const NormalizeOptions& opt, const std::string& side, std::vector<Seen>& out) {
  simdjson::padded_string record(record_of(side));
  simdjson::ondemand::parser json;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (json.iterate(record).get(doc) || doc.get_object().get(obj)) return false;
  std::string raw;
  for (auto field : obj) {
    std::string_view key;
    simdjson::ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return false;
    if (key != "actual") continue;
    simdjson::ondemand::json_type type;
    if (v.type().get(type)) return false;
    std::string_view text;
    if (type == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array a;
      if (v.get_array().get(a) || a.raw_json().get(text)) return false;
    } else {
      simdjson::ondemand::object o;
      if (v.get_object().get(o) || o.raw_json().get(text)) return false;
    }
    raw.assign(text);
  }
  TraceParser parser(opt);
  ToolTable tools;
  Trajectory t(&tools);
  RecordOrigin origin{"side", 1, 1, 0};
  ParseOutcome o = parser.parse_value(raw, origin, t);
  if (!o.ok() || !t.warnings.empty()) return false;
  std::vector<metrics::Call> calls;
  std::vector<CanonArgs> args;
  ArgCanon canon;
  metrics::collect_calls(t, canon, calls, args);
  for (std::size_t i = 0; i < calls.size(); ++i) out.push_back(describe(calls[i], canon, args[i]));
  return true;
}

// The direct reader on the side in the record's own document.
bool fast(metrics::ChatCallReader& reader, const std::string& side, std::vector<Seen>& out) {
  simdjson::padded_string record(record_of(side));
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (parser.iterate(record).get(doc) || doc.get_object().get(obj)) return false;
  ArgCanon canon;
  std::vector<metrics::Call> calls;
  std::vector<CanonArgs> args;
  reader.begin_record(canon);
  bool read = false;
  for (auto field : obj) {
    std::string_view key;
    simdjson::ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return false;
    if (key != "actual") continue;
    if (!reader.read_side(v, canon, calls, args)) return false;
    read = true;
  }
  if (!read) return false;
  for (std::size_t i = 0; i < calls.size(); ++i) out.push_back(describe(calls[i], canon, args[i]));
  return true;
}

// Random chat sides: every construct the direct reader handles, and several it leaves to
// the general reader.
struct Gen {
  std::mt19937 rng;
  explicit Gen(unsigned seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }

  std::string value(int depth) {
    switch (pick(depth > 2 ? 8 : 11)) {
      case 0: return "1";
      case 1: { const char* n[] = {"1.0", "-0", "1e2", "100", "2.50", "-7", "1E+2", "0.1", "18446744073709551615", "123456789012345678901234"}; return n[pick(10)]; }
      case 2: return "\"x\"";
      case 3: { const char* s[] = {"\"a\\u0041\"", "\"aA\"", "\"\\n\"", "\"\\/\"", "\"/\"", "\"\"", "\"\\\"q\"", "\"\xc3\xa9\""}; return s[pick(8)]; }
      case 4: return pick(2) ? "true" : "false";
      case 5: return "null";
      case 6: return "\"1\"";
      case 7: return "\"order_1\"";
      case 8: return "[" + value(depth + 1) + (pick(2) ? "," + value(depth + 1) : "") + "]";
      case 9: case 10: return object(depth + 1);
    }
    return "0";
  }
  std::string object(int depth) {
    const char* keys[] = {"a", "b", "id", "B", "\\u0061", "z", "a b"};
    int n = pick(4);
    std::string s = pick(4) ? "{" : "{ ";
    for (int i = 0; i < n; ++i) {
      if (i) s += pick(3) ? "," : ", ";
      s += "\"" + std::string(keys[pick(7)]) + "\":" + (pick(3) ? "" : " ") + value(depth);
    }
    return s + "}";
  }
  static std::string quote(const std::string& raw) {
    std::string q = "\"";
    for (char c : raw) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  }
  std::string arguments() {
    switch (pick(30)) {
      case 0: return "\"\"";
      case 1: return "\"  \"";
      case 2: return "\"not json\"";
      case 3: return quote(object(0) + " x");
      case 4: return quote("[1,2]");
      case 5: return "null";
      case 6: case 7: return object(0);
      default: return quote((pick(3) ? "" : " ") + object(0));
    }
  }
  std::string id() {
    switch (pick(8)) {
      case 0: return "\"\"";
      case 1: return "7";
      case 2: return "true";
      default: return "\"c" + std::to_string(pick(4)) + "\"";
    }
  }
  std::string call() {
    std::string s = "{";
    if (pick(8)) s += "\"id\":" + id() + ",";
    if (pick(8)) s += pick(10) ? "\"type\":\"function\"," : "\"type\":\"custom\",";
    if (!pick(10)) s += "\"index\":" + value(1) + ",";
    s += "\"function\":{";
    const char* names[] = {"search", " Search ", "order_get", "ORDER_GET", "lookup", "f"};
    if (pick(40)) s += "\"name\":\"" + std::string(names[pick(6)]) + "\"";
    else s += "\"nom\":1";
    if (pick(6)) s += ",\"arguments\":" + arguments();
    if (!pick(10)) s += ",\"extra\":" + value(1);
    return s + "}}";
  }
  std::string message(bool first) {
    const char* roles[] = {"user", "assistant", "assistant", "assistant", "tool", "tool", "system", "developer", "critic", "ai"};
    std::string role = roles[pick(10)];
    std::string s = "{";
    bool role_first = pick(4) != 0;
    if (!pick(100)) role_first = false, role = "";
    if (role_first) s += "\"role\":\"" + role + "\",";
    switch (pick(8)) {
      case 0: s += "\"content\":null,"; break;
      case 1: if (!pick(4)) s += "\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],"; break;
      case 2: break;
      case 3: s += "\"content\":\"{\\\"status\\\":\\\"ok\\\"}\","; break;
      default: s += "\"content\":\"some text\\nmore\",";
    }
    if (role == "tool" || !pick(10)) {
      if (pick(6)) s += "\"tool_call_id\":" + id() + ",";
      if (!pick(4)) s += "\"name\":\"" + std::string(pick(2) ? "search" : "f") + "\",";
      if (!pick(6)) s += "\"is_error\":" + std::string(pick(3) ? (pick(2) ? "true" : "false") : "1") + ",";
      if (!pick(20)) s += "\"status\":\"" + std::string(pick(2) ? "error" : "success") + "\",";
      if (!pick(10)) s += "\"error\":" + value(1) + ",";
    }
    if (role != "tool" || !pick(10)) {
      int n = pick(4);
      if (n > 0) {
        s += "\"tool_calls\":[";
        for (int i = 0; i < n; ++i) s += (i ? "," : "") + call();
        s += "],";
      } else if (!pick(5)) {
        s += "\"tool_calls\":null,";
      }
    }
    if (!pick(12)) s += "\"meta\":" + value(1) + ",";
    if (first && !pick(30)) s += "\"messages\":[],";
    if (!role_first && !role.empty()) s += "\"role\":\"" + role + "\",";
    if (s.back() == ',') s.pop_back();
    return s + "}";
  }
  std::string side() {
    int n = 1 + pick(6);
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? "," : "") + message(i == 0);
    s += "]";
    if (!pick(5)) s = "{\"messages\":" + s + (pick(2) ? ",\"id\":\"t\"" : "") + "}";
    return s;
  }
  std::string mutate(std::string s) {
    const char bytes[] = "{}[],:\"\\ 01e-tnx.";
    int k = 1 + pick(2);
    for (int i = 0; i < k && !s.empty(); ++i) {
      std::size_t at = rng() % s.size();
      switch (pick(3)) {
        case 0: s[at] = bytes[pick(sizeof bytes - 1)]; break;
        case 1: s.erase(at, 1); break;
        default: s.insert(at, 1, bytes[pick(sizeof bytes - 1)]);
      }
    }
    return s;
  }
};

}  // namespace

TEST_CASE("direct chat reader: same calls as the general reader, or none") {
  for (bool mutated : {false, true}) {
    for (const char* variant : {"default", "aliases", "case"}) {
      NormalizeOptions opt;
      if (std::string(variant) == "aliases") opt.aliases = {{"Lookup", "ORDER_get"}};
      if (std::string(variant) == "case") opt.case_sensitive = true;
      metrics::ChatCallReader reader(opt);
      Gen g(mutated ? 97 : 13);
      int accepted = 0, calls = 0, total = mutated ? 20000 : 5000;
      for (int i = 0; i < total; ++i) {
        std::string side = g.side();
        if (mutated) side = g.mutate(side);
        std::vector<Seen> f, s;
        if (!fast(reader, side, f)) continue;
        ++accepted;
        calls += static_cast<int>(f.size());
        INFO("side: " << side);
        REQUIRE(general(opt, side, s));
        REQUIRE(f.size() == s.size());
        for (std::size_t k = 0; k < f.size(); ++k) {
          INFO("call " << k << ": fast " << f[k].name << " " << f[k].whole << " / general " << s[k].name
                       << " " << s[k].whole);
          CHECK(f[k] == s[k]);
        }
      }
      // Not vacuous: the common shapes take the direct path.
      std::string summary = std::string(variant) + (mutated ? " mutated" : " clean") + ": accepted " +
                            std::to_string(accepted) + " of " + std::to_string(total);
      MESSAGE(summary);
      CHECK(accepted > total / (mutated ? 100 : 20));
      CHECK(calls > accepted / 2);
    }
  }
}

TEST_CASE("direct chat reader: a tool message's is_error marks its call failed, as the general reader does") {
  NormalizeOptions opt;
  metrics::ChatCallReader reader(opt);
  REQUIRE(reader.reads_errors());
  const std::string side =
      R"([{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"search","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"a","content":"timeout","is_error":true},)"
      R"({"role":"assistant","tool_calls":[{"id":"b","type":"function","function":{"name":"search","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"b","is_error":false,"content":"ok"}])";
  std::vector<Seen> f, s;
  REQUIRE(fast(reader, side, f));
  REQUIRE(general(opt, side, s));
  REQUIRE(f.size() == 2);
  CHECK(f[0].failed);
  CHECK_FALSE(f[1].failed);
  CHECK(f == s);
  // "status" and "error" on a tool message are the general reader's to judge.
  std::string with_status = side;
  with_status.replace(with_status.find(R"("is_error":true)"), 15, R"("status":"error")");
  CHECK_FALSE(fast(reader, with_status, f));
  REQUIRE(general(opt, with_status, s));
  CHECK(s[0].failed);
  // With error patterns the direct reader does not judge results.
  NormalizeOptions patterns;
  patterns.error_patterns = {"timeout"};
  CHECK_FALSE(metrics::ChatCallReader(patterns).reads_errors());
}

TEST_CASE("direct chat reader: the agentevals shape, and what it leaves to the general reader") {
  NormalizeOptions opt;
  metrics::ChatCallReader reader(opt);
  std::vector<Seen> f, s;
  const std::string side =
      R"([{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[)"
      R"({"id":"1","type":"function","function":{"name":"F","arguments":"{\"b\": 1.0, \"a\": [1e0, {\"y\":1,\"x\":2}]}"}},)"
      R"({"id":"2","type":"function","function":{"name":"g","arguments":""}}]},)"
      R"({"role":"tool","tool_call_id":"2","content":"{\"ok\":true}"},{"role":"tool","tool_call_id":"1","content":"x"},)"
      R"({"role":"assistant","content":"done"}])";
  REQUIRE(fast(reader, side, f));
  REQUIRE(general(opt, side, s));
  REQUIRE(f.size() == 2);
  CHECK(f == s);
  CHECK(f[0].name == "f");
  CHECK(f[0].whole == R"({"a":[1,{"x":2,"y":1}],"b":1})");
  CHECK(f[1].whole == "{}");
  CHECK(f[1].has_args);
  // Left to the general reader: a result for no open call (it becomes a call, with a
  // warning), arguments that are not JSON, content blocks, an expected tool list.
  for (const char* other : {
           R"([{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"2","content":""}])",
           R"([{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"1"},{"role":"tool","tool_call_id":"1"}])",
           R"([{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{x"}}]}])",
           R"([{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"f","input":{}}]}])",
           R"(["f","g"])", R"([])", R"({"steps":[],"messages":[]})"}) {
    std::vector<Seen> none;
    CHECK_FALSE(fast(reader, other, none));
  }
}

TEST_CASE("direct chat reader: joining results by id stays linear and exact") {
  // 3000 calls in separate messages, then their results newest first: each result must
  // close its own call, so a repeated id later finds no open call.
  std::string side = "[";
  for (int i = 0; i < 3000; ++i)
    side += (i ? "," : "") + std::string(R"({"role":"assistant","tool_calls":[{"id":"c)") + std::to_string(i % 1500) +
            R"(","function":{"name":"f","arguments":"{}"}}]})";
  for (int i = 2999; i >= 0; --i)
    side += std::string(R"(,{"role":"tool","tool_call_id":"c)") + std::to_string(i % 1500) + R"(","content":"r"})";
  side += "]";
  NormalizeOptions opt;
  metrics::ChatCallReader reader(opt);
  std::vector<Seen> f, s;
  REQUIRE(fast(reader, side, f));
  REQUIRE(general(opt, side, s));
  CHECK(f.size() == 3000);
  CHECK(f == s);
  std::string extra = side;
  extra.back() = ',';
  extra += R"({"role":"tool","tool_call_id":"c5","content":"r"}])";
  std::vector<Seen> none;
  CHECK_FALSE(fast(reader, extra, none));
}

TEST_CASE("canonical arguments from On-Demand equal those from the DOM, or are refused") {
  simdjson::ondemand::parser parser;
  std::string padded;
  for (const char* text :
       {R"({"n":18446.744073709551615})", R"({"n":-0})", R"({"n":-0.0})", R"({"n":18446744073709551615})",
        R"({"n":9223372036854775807})", R"({"n":9223372036854775808})", R"({"n":-9223372036854775808})",
        R"({"n":1.5e300,"m":1E2,"k":100.0})", R"({"b":{"y":[1,{"b":2,"a":1}],"x":null},"a":true})",
        R"({"a":1,"s":"\u0041\n\/"})", R"({"k\u0041":"\ud83d\ude00"})", R"( {"a" : [ ] , "b" : { } } )"}) {
    INFO(text);
    ArgCanon dom, od;
    CanonArgs expected = dom.add(text);
    CanonArgs got;
    REQUIRE(od.add_object_text(json::trim_ws(text), parser, padded, &got));
    CHECK(od.whole(got) == dom.whole(expected));
    CHECK(got.members_end - got.members_begin == expected.members_end - expected.members_begin);
  }
  // Refused (the caller reads the record with the general reader): what the DOM rejects or
  // the readers keep as text.
  for (const char* text : {R"({"n":123456789012345678901234})", R"({"n":1e400})", R"({"a":1} x)", "[1]", "1",
                           R"({"a":01})", R"({"a":tru})", R"({"a":"\x"})", R"({"a":1,"a":2})",
                           R"({"b":{"x":1,"\u0078":2}})"}) {
    INFO(text);
    ArgCanon c;
    CanonArgs got;
    CHECK_FALSE(c.add_object_text(text, parser, padded, &got));
    CHECK(c.members().empty());  // nothing was left behind
  }
}
