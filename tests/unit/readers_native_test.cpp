#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "readers/tape_value.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

TEST_CASE("native: the docs/traces.md example reads step by step") {
  ReadResult r = read_file("formats/native.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "trace_204");
  CHECK(t.context() == R"({"user_id":"u_17","tenant":"acme"})");
  CHECK(t.metadata().empty());
  REQUIRE(t.steps().size() == 7);
  CHECK(t.steps()[0].type == StepType::user_message);
  CHECK(content_of(t, 0) == "My order ord_81ks92 is late, I want a refund.");
  CHECK(t.steps()[0].status == StepStatus::none);

  CHECK(t.steps()[1].type == StepType::tool_call);
  CHECK(id_of(t, 1) == "call_1");
  CHECK(tool_of(t, 1) == "order_get");
  CHECK(args_of(t, 1) == R"({"order_id":"ord_81ks92"})");
  CHECK(result_of(t, 1) == R"({"status":"delayed","total":42.5})");
  CHECK(t.steps()[1].status == StepStatus::ok);
  CHECK(extra_of(t, 1) == R"({"latency_ms":184})");

  CHECK(t.steps()[2].type == StepType::approval_request);
  CHECK(extra_of(t, 2) == R"({"policy":"replacement-v2","tool_call_id":"call_2"})");
  CHECK(t.steps()[3].type == StepType::approval);

  // Trimmed and case-folded; the source spelling stays in raw_tool.
  const Step& refund = t.steps()[4];
  CHECK(tool_of(t, 4) == "refund_order");
  CHECK(t.text(refund.raw_tool) == "Refund_Order ");
  CHECK(refund.status == StepStatus::error);
  CHECK(result_of(t, 4) == R"("Error: payment gateway timeout")");
  CHECK(extra_of(t, 4) == R"({"parent_id":"call_1","tokens":312,"cost":0.0041})");
  CHECK(refund.tool == r.traces[0].tools()->find("refund_order"));

  CHECK(t.steps()[6].type == StepType::assistant_message);
  CHECK(content_of(t, 6) == "Done.");
}

TEST_CASE("native: unknown step types, JSON results in strings, final answers") {
  ReadResult r = read_file("formats/native.jsonl");
  REQUIRE(r.traces.size() == 2);
  const Trajectory& t = r.traces[1];
  CHECK(t.trace_id() == "trace_205");
  REQUIRE(t.steps().size() == 4);
  // A string result holding a JSON object is stored parsed (so result.status works).
  CHECK(result_of(t, 1) == R"({"order_id":"ord_9","status":"cancelled"})");
  CHECK(t.steps()[2].type == StepType::other);
  CHECK(t.text(t.steps()[2].type_name) == "retrieval");
  CHECK(extra_of(t, 2) == R"({"query":"cancellation policy","documents":3})");
  CHECK(t.steps()[3].type == StepType::final_answer);
}

TEST_CASE("native: normalized output reads back unchanged") {
  for (const char* file : {"formats/native.jsonl", "formats/openai.json", "formats/anthropic.json",
                           "formats/otel.json", "formats/list.jsonl", "tau-bench-retail/trajectories.json"}) {
    CAPTURE(file);
    ReadResult first = read_file(file);
    REQUIRE(first.rejected == 0);
    REQUIRE(!first.normalized.empty());
    for (const std::string& line : first.normalized) {
      ReadResult again = read_text(line, NormalizeOptions{InputFormat::native, {}, {}, false});
      REQUIRE(again.rejected == 0);
      REQUIRE(again.normalized.size() == 1);
      CHECK(again.normalized[0] == line);
    }
  }
}

TEST_CASE("native: status from explicit fields and from error patterns") {
  NormalizeOptions opts;
  opts.error_patterns = {"^Error:", "timed? ?out"};
  ReadResult r = read_text(R"({"trace_id":"s","steps":[
    {"type":"tool_call","tool":"a","result":"Error: nope"},
    {"type":"tool_call","tool":"b","result":{"msg":"request timed out"}},
    {"type":"tool_call","tool":"c","result":"fine","is_error":true},
    {"type":"tool_call","tool":"d","result":"fine","error":"boom"},
    {"type":"tool_call","tool":"e","result":"fine","error":null},
    {"type":"tool_call","tool":"f","result":"fine","status":"failed"},
    {"type":"tool_call","tool":"g","result":"fine","status":"weird"},
    {"type":"tool_call","tool":"h","status":"ERROR"},
    {"type":"tool_call","tool":"i","status":" Failed "},
    {"type":"tool_call","tool":"j","status":"Completed"}]})", opts);
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  std::vector<StepStatus> want = {StepStatus::error, StepStatus::error, StepStatus::error, StepStatus::error,
                                  StepStatus::ok,    StepStatus::error, StepStatus::ok,    StepStatus::error,
                                  StepStatus::error, StepStatus::ok};
  REQUIRE(t.steps().size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(t.steps()[i].status == want[i]);
  }
  CHECK(extra_of(t, 3) == R"({"error":"boom"})");
  CHECK(extra_of(t, 6) == R"({"source_status":"weird"})");
}

TEST_CASE("native: aliases map observed names to canonical ones after folding") {
  NormalizeOptions opts;
  opts.aliases = {{"Lookup_Order", "Order_Get"}};
  ReadResult r = read_text(R"({"trace_id":"a","steps":[{"type":"tool_call","tool":" LOOKUP_order"}]})", opts);
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  CHECK(tool_of(t, 0) == "order_get");
  CHECK(t.text(t.steps()[0].raw_tool) == " LOOKUP_order");
  CHECK(r.normalized[0] == R"({"trace_id":"a","steps":[{"type":"tool_call","tool":"order_get","raw_tool":" LOOKUP_order","status":"ok"}]})");

  opts.case_sensitive = true;
  ReadResult cs = read_text(R"({"trace_id":"a","steps":[{"type":"tool_call","tool":"Lookup_Order"}]})", opts);
  CHECK(tool_of(cs.traces[0], 0) == "Order_Get");
}

TEST_CASE("aliases chain as a rules file's do; a name renamed two ways or a cycle is an option error") {
  NormalizeOptions opts;
  opts.aliases = {{"a", "b"}, {"b", "c"}, {"x", "x"}, {"a", "B"}};  // a repeat naming the same target is no conflict
  ReadResult r = read_text(R"({"trace_id":"t","steps":[{"type":"tool_call","tool":"a"},{"type":"tool_call","tool":"b"},)"
                           R"({"type":"tool_call","tool":"x"}]})", opts);
  REQUIRE(r.rejected == 0);
  CHECK(tool_of(r.traces[0], 0) == "c");
  CHECK(tool_of(r.traces[0], 1) == "c");
  CHECK(tool_of(r.traces[0], 2) == "x");
  opts.aliases = {{"a", "b"}, {"a", "c"}};
  CHECK(TraceParser(opts).option_error() == "conflicting aliases: 'a' is renamed to 'b' and to 'c'");
  opts.aliases = {{"a", "b"}, {"b", "c"}, {"c", "a"}};
  CHECK(TraceParser(opts).option_error().rfind("alias cycle through '", 0) == 0);
}

TEST_CASE("native: missing trace ids fall back to file:line; wrapper fields become metadata") {
  ReadResult r = read_text(R"({"steps":[],"reward":1,"info":{"k":[1,2]}})");
  REQUIRE(r.rejected == 0);
  CHECK(r.traces[0].trace_id() == "mem:1");
  CHECK(r.traces[0].metadata() == R"({"reward":1,"info":{"k":[1,2]}})");
}

TEST_CASE("native: shape errors name the field and its position") {
  ReadResult r = read_text(R"({"trace_id":"x","steps":[{"content":"no type"}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "step has no \"type\" (and no \"tool\" to make it a tool_call)");
  CHECK(r.errors[0].where.column == 26);

  r = read_text(R"({"trace_id":"x","steps":[{"type":"tool_call","id":"c"}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "tool_call step has no \"tool\"");

  r = read_text(R"({"trace_id":"x","steps":[{"type":7}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "step \"type\" must be a string");
  CHECK(r.errors[0].where.column == 34);
}

TEST_CASE("tool names: trim and ASCII case-fold") {
  CHECK(normalize_tool_name("  Order_Get\t") == "order_get");
  CHECK(normalize_tool_name("Ünïcode_X") == "Ünïcode_x");
  CHECK(normalize_tool_name(" Keep ", true) == "Keep");
  CHECK(normalize_tool_name("") == "");
}

TEST_CASE("input format names round-trip") {
  for (InputFormat f : {InputFormat::auto_detect, InputFormat::native, InputFormat::openai, InputFormat::anthropic,
                        InputFormat::otel, InputFormat::list}) {
    InputFormat back = InputFormat::native;
    REQUIRE(parse_input_format(to_string(f), &back));
    CHECK(back == f);
  }
  InputFormat x = InputFormat::list;
  CHECK(!parse_input_format("langsmith", &x));
  CHECK(x == InputFormat::list);
  CHECK(to_string(InputFormat::auto_detect) == "auto");
}

TEST_CASE("invalid error patterns are reported, not thrown") {
  NormalizeOptions opts;
  opts.error_patterns = {"(unclosed"};
  TraceParser p(opts);
  CHECK(p.option_error().find("invalid --error-pattern '(unclosed'") == 0);
  CHECK(TraceParser(NormalizeOptions{}).option_error().empty());
}

TEST_CASE("native: values are stored canonical whatever escapes the source used") {
  // Canonical source text is copied as it is; \u and \/ escapes are decoded and re-escaped.
  ReadResult r = read_text(
      R"({"steps":[{"tool":"t","arguments":{"a":"x\ny\"z\\","b":"caf\u00e9 \/ \u0001","c":[1.50,-2e3,true,null]},)"
      R"("result":"line 1\nline \"2\""},)"
      R"({"tool":"t","result":"\n {\"status\": \"ok\"}"},)"
      R"({"tool":"t","result":"  [1, 2]"},)"
      R"({"tool":"t","result":"caf\u00e9\n"}]})");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces.at(0);
  CHECK(args_of(t, 0) == R"({"a":"x\ny\"z\\","b":"café / \u0001","c":[1.50,-2e3,true,null]})");
  CHECK(result_of(t, 0) == R"("line 1\nline \"2\"")");
  CHECK(result_of(t, 1) == R"({"status":"ok"})");  // text holding JSON is stored parsed
  CHECK(result_of(t, 2) == "[1,2]");
  CHECK(result_of(t, 3) == "\"café\\n\"");
}

TEST_CASE("native: a record read in place and a copied one give the same trajectory") {
  // RecordSource leaves spare capacity (parsed in place); read_text's string has none (copied).
  std::string record = R"({"trace_id":"p","steps":[{"tool":"a","arguments":{"k":"v\n"},"result":"r"},{"type":"user_message","content":"hi"}]})";
  std::string path = (std::filesystem::temp_directory_path() / ("trajcheck-inplace-" + std::to_string(::getpid()) + ".jsonl")).string();
  {
    std::ofstream f(path);
    f << record << "\n" << record;  // the second line has no newline after it
  }
  ReadResult from_file = read_inputs({path});
  ReadResult from_text = read_text(record);
  REQUIRE(from_file.normalized.size() == 2);
  REQUIRE(from_text.normalized.size() == 1);
  CHECK(from_file.normalized[0] == from_text.normalized[0]);
  CHECK(from_file.normalized[1] == from_text.normalized[0]);
  std::filesystem::remove(path);
}

TEST_CASE("native: invalid escapes and literals inside values are rejected with their position") {
  ReadResult r = read_text(R"({"steps":[{"tool":"a","arguments":{"k":"bad \x escape"}}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "invalid JSON: invalid escape in string");
  CHECK(r.errors[0].where.column == 40);
  r = read_text(R"({"steps":[{"tool":"a","result":"bad \q"}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "invalid JSON: invalid escape in string");
  r = read_text(R"({"steps":[{"tool":"a","arguments":{"k":tru}}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].where.column == 40);
}

TEST_CASE("native: a wrapped steps array may be a tool list") {
  ReadResult r = read_text(
      R"({"trace_id":"t1","steps":["Search ",{"name":"ANALYZE"},{"function":"transform","arguments":{"k":1}}],"reward":1})");
  REQUIRE(r.errors.empty());
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "t1");
  CHECK(t.metadata() == R"({"reward":1})");
  REQUIRE(t.steps().size() == 3);
  CHECK(tool_of(t, 0) == "search");
  CHECK(tool_of(t, 1) == "analyze");
  CHECK(tool_of(t, 2) == "transform");
  CHECK(args_of(t, 2) == R"({"k":1})");
  // Steps that are steps stay steps, whatever their order of keys.
  r = read_text(R"({"trace_id":"t2","steps":[{"name":"x","type":"tool_call","tool":"order_get"}]})");
  REQUIRE(r.errors.empty());
  CHECK(tool_of(r.traces[0], 0) == "order_get");
}

TEST_CASE("lists: an entry with no name or a blank one is skipped with a located warning") {
  ReadResult r = read_text(R"({"trace_id":"t1","steps":["a",{"name":"  "},{"x":1},"\t","b"]})");
  REQUIRE(r.errors.empty());
  REQUIRE(r.traces.size() == 1);
  REQUIRE(r.traces[0].steps().size() == 2);
  CHECK(tool_of(r.traces[0], 0) == "a");
  CHECK(tool_of(r.traces[0], 1) == "b");
  REQUIRE(r.warnings.size() == 3);
  CHECK(r.warnings[0] == "mem:1:31: warning: tool list entry has a blank name; skipped");
  CHECK(r.warnings[1] == "mem:1:45: warning: tool list entry has no \"name\" or \"function\"; skipped");
  CHECK(r.warnings[2] == "mem:1:53: warning: tool list entry has a blank name; skipped");
  // A bare list too; a blank name beside a real one names the call.
  r = read_text(R"([{"name":" ","function":"c"},{"arguments":{}}])");
  REQUIRE(r.errors.empty());
  REQUIRE(r.traces[0].steps().size() == 1);
  CHECK(tool_of(r.traces[0], 0) == "c");
  CHECK(r.warnings.size() == 1);
}

// A reading thread remembers the tool names it normalized lately; what it remembers must
// never leak from one parser's options to another's (parsers made one after the other may
// even share an address), nor an id from one tool table to another.
TEST_CASE("native: tool names are normalized afresh under each parser's options and for each table") {
  const std::string rec =
      R"({"steps":[{"tool":" Order_Get "},{"tool":"Order_Get"},{"tool":"refund"},{"tool":" Order_Get "},{"tool":"REFUND"}]})";
  auto tools = [](const ReadResult& r) {
    REQUIRE(r.traces.size() == 1);
    std::string out;
    for (std::size_t i = 0; i < r.traces[0].steps().size(); ++i) {
      out += tool_of(r.traces[0], i) + "#" + std::to_string(r.traces[0].steps()[i].tool) + " ";
      CHECK(r.traces[0].steps()[i].tool == r.tools->find(tool_of(r.traces[0], i)));
    }
    return out;
  };
  for (int round = 0; round < 3; ++round) {
    NormalizeOptions aliased;
    aliased.aliases = {{"order_get", "lookup_order"}};
    CHECK(tools(read_text(rec, aliased)) == "lookup_order#0 lookup_order#0 refund#1 lookup_order#0 refund#1 ");
    NormalizeOptions exact;
    exact.case_sensitive = true;
    CHECK(tools(read_text(rec, exact)) == "Order_Get#0 Order_Get#0 refund#1 Order_Get#0 REFUND#2 ");
    CHECK(tools(read_text(rec)) == "order_get#0 order_get#0 refund#1 order_get#0 refund#1 ");
  }
  // Many names that normalizing changes: storing each normalized name grows the trace's
  // arena, which holds the raw name just read (ASan finds a read of it after the move).
  std::string many = R"({"steps":[)";
  for (int i = 0; i < 300; ++i) many += (i ? "," : "") + std::string(R"({"tool":" Tool_)") + std::to_string(i % 150) + R"( "})";
  many += "]}";
  ReadResult r = read_text(many);
  REQUIRE(r.traces.size() == 1);
  for (int i = 0; i < 300; ++i) CHECK(tool_of(r.traces[0], i) == "tool_" + std::to_string(i % 150));
  // One parser, two tables that number the same names differently.
  TraceParser parser(NormalizeOptions{});
  ToolTable first, second;
  second.intern("refund");
  second.intern("x");
  for (ToolTable* table : {&first, &second, &first, &second}) {
    Trajectory t(table);
    RawRecord raw;
    raw.text = rec;
    raw.origin = RecordOrigin{"mem", 1, 1, 0};
    std::vector<ToolId> ids;
    parser.parse(raw, t, [&](Trajectory& tr) {
      for (const Step& s : tr.steps()) ids.push_back(s.tool);
    });
    REQUIRE(ids.size() == 5);
    CHECK(ids[0] == table->find("order_get"));
    CHECK(ids[2] == table->find("refund"));
    CHECK(ids[4] == table->find("refund"));
    CHECK(ids[0] == ids[3]);
  }
  CHECK(first.find("refund") != second.find("refund"));
  // Two parsers with different options, one table: each name is normalized its parser's way.
  ToolTable shared;
  NormalizeOptions aliased;
  aliased.aliases = {{"order_get", "lookup_order"}};
  NormalizeOptions exact;
  exact.case_sensitive = true;
  TraceParser a(aliased), b(exact);
  for (TraceParser* p : {&a, &b, &a, &b}) {
    Trajectory t(&shared);
    RawRecord raw;
    raw.text = rec;
    raw.origin = RecordOrigin{"mem", 1, 1, 0};
    std::string names;
    p->parse(raw, t, [&](Trajectory& tr) {
      for (std::size_t i = 0; i < tr.steps().size(); ++i) names += tool_of(tr, i) + " ";
    });
    CHECK(names == (p == &a ? "lookup_order lookup_order refund lookup_order refund " : "Order_Get Order_Get refund Order_Get REFUND "));
  }
}

TEST_CASE("native: each step keeps its own extra members, whatever else the record stores between them") {
  // The steps' extra objects are written one after another and stored once the steps are read;
  // other stores (names of unknown types, normalized tool names, rewritten values, the trace id)
  // fall between them. A step without extra members keeps none.
  const std::string steps =
      R"([{"type":"tool_call","tool":"Order_Get ","id":7,"arguments":{"a": 1},"latency_ms":12},)"
      R"({"type":"retrieval","query":"q","documents":3},)"
      R"({"type":"user_message","content":"hi"},)"
      R"({"type":"tool_call","tool":"pay","status":"weird","error":true,"note":{"k": [1, 2]},"x":"\u00e9"},)"
      R"({"type":"approval","tool":"Refund_Order","raw_tool":"refund","decision":"approved"},)"
      R"({"type":"tool_call","tool":"order_get","result":"ok","latency_ms":3}])";
  const std::vector<std::string> want = {
      R"({"latency_ms":12})",
      R"({"query":"q","documents":3})",
      "",
      R"({"source_status":"weird","error":true,"note":{"k":[1,2]},"x":"é"})",
      R"({"decision":"approved","tool":"Refund_Order","raw_tool":"refund"})",  // the source spelling: data
      R"({"latency_ms":3})",
  };
  detail::ParseCounts& n = detail::t_parse_counts;
  // A wrapper number the fast path leaves to the general reader (over 18 digits) sends the same
  // steps the other way: both ways store the same extras.
  for (const std::string tail : {R"(})", R"(,"reward":1234567890123456789012})"}) {
    for (bool borrow : {false, true}) {
      CAPTURE(tail);
      CAPTURE(borrow);
      const detail::ParseCounts before = n;
      ReadResult r = read_text(std::string(R"({"trace_id":"x\u0031","steps":)") + steps + tail, {}, borrow);
      CHECK(n.general - before.general == (tail == "}" ? 0 : 1));
      REQUIRE(r.rejected == 0);
      REQUIRE(r.traces.size() == 1);
      const Trajectory& t = r.traces[0];
      CHECK(t.trace_id() == "x1");
      REQUIRE(t.steps().size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i);
        CHECK(extra_of(t, i) == want[i]);
      }
      CHECK(tool_of(t, 0) == "order_get");
      CHECK(t.text(t.steps()[1].type_name) == "retrieval");
      CHECK(args_of(t, 0) == R"({"a":1})");
    }
  }
}
