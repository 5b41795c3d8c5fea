// TraceJoiner: OTLP traces exported in several requests, joined by traceId; the memory bound
// and the idle time of a stream. The files are what the OpenTelemetry JS SDK and the Vercel AI
// SDK wrote (tests/producers/otel).
#include <doctest/doctest.h>

#include <filesystem>

#include <fmt/format.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {

struct Joined {
  std::shared_ptr<ToolTable> tools = std::make_shared<ToolTable>();
  std::vector<Trajectory> traces;
  std::uint64_t records = 0, early = 0;
};

// Every record of `inputs`, each trajectory offered to one joiner; the joined traces (and
// the others) in the order they come out.
Joined join_inputs(const std::vector<std::string>& inputs, TraceJoinOptions o = {}) {
  Joined j;
  RecordSource src(inputs);
  TraceParser parser(NormalizeOptions{});
  TraceJoiner joiner(std::move(o));
  Trajectory t(j.tools.get()), out(j.tools.get());
  auto keep = [&](Trajectory& tr) { j.traces.push_back(tr); };
  RawRecord rec;
  while (src.next(rec)) {
    ++j.records;
    ParseOutcome po = parser.parse(rec, t, [&](Trajectory& tr) {
      if (!joiner.offer(tr, out, keep)) keep(tr);
    });
    REQUIRE(po.ok());
  }
  joiner.finish(out, keep);
  CHECK(joiner.held_traces() == 0);
  CHECK(joiner.held_bytes() == 0);
  j.early = joiner.early_traces();
  return j;
}

std::vector<std::string> tools_of(const Trajectory& t) {
  std::vector<std::string> v;
  for (const Step& s : t.steps())
    if (s.type == StepType::tool_call) v.emplace_back(t.tool_name(s));
  return v;
}

std::string span_line(std::string_view trace, std::string_view span, std::string_view parent, int start, int end,
                      std::string_view tool) {
  return fmt::format(
      R"({{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{}","spanId":"{}","parentSpanId":"{}",)"
      R"("startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.tool.name","value":{{"stringValue":"{}"}}}}]}}]}}]}}]}})",
      trace, span, parent, start, end, tool);
}

}  // namespace

TEST_CASE("otlp join: a batched export gives one trace per traceId, as the same spans in one request do") {
  ReadResult split = read_file("producers/otel/batched.jsonl");
  REQUIRE(split.rejected == 0);
  CHECK(split.records == 6);
  CHECK(split.traces.size() > 2);  // one per trace *per request*, before joining

  Joined batched = join_inputs({data_path("producers/otel/batched.jsonl")});
  Joined whole = join_inputs({std::string(TRAJCHECK_TEST_DIR) + "/golden/check/otlp-one-request/one-request.json"});
  REQUIRE(batched.traces.size() == 2);
  REQUIRE(whole.traces.size() == 2);
  CHECK(batched.early == 0);
  for (std::size_t i = 0; i < 2; ++i) {
    std::string a, b;
    write_normalized_json(batched.traces[i], a);
    write_normalized_json(whole.traces[i], b);
    CHECK(a == b);
    CHECK(batched.traces[i].spans.size() == batched.traces[i].steps().size());
  }
  CHECK(batched.traces[0].trace_id() != batched.traces[1].trace_id());
  CHECK(tools_of(batched.traces[0]) == std::vector<std::string>{"get_order_details", "refund_order"});
  CHECK(tools_of(batched.traces[1]) == std::vector<std::string>{"refund_order", "get_order_details"});
  // The refused refund's span has status code 2.
  const Trajectory& bad = batched.traces[1];
  for (const Step& s : bad.steps())
    if (s.type == StepType::tool_call) CHECK(s.status == (bad.tool_name(s) == "refund_order" ? StepStatus::error : StepStatus::ok));
}

TEST_CASE("otlp join: the latency of a trace is its root span's, its tokens the model calls'") {
  // A 2000 ms root with two children of 200 and 100 ms, in two requests.
  std::string text = span_line("t1", "c1", "r", 1000000000, 1200000000, "a") + "\n" +
                     span_line("t1", "c2", "r", 1300000000, 1400000000, "b") + "\n" +
                     R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"r","name":"invoke_agent",)"
                     R"("startTimeUnixNano":"900000000","endTimeUnixNano":"2900000000","attributes":[)"
                     R"({"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]},)"
                     R"({"traceId":"t1","spanId":"m1","parentSpanId":"r","name":"chat m","startTimeUnixNano":"950000000",)"
                     R"("endTimeUnixNano":"990000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},)"
                     R"({"key":"gen_ai.usage.input_tokens","value":{"intValue":"100"}},{"key":"gen_ai.usage.output_tokens","value":{"intValue":7}}]}]}]}]})" "\n";
  std::string path = (std::filesystem::temp_directory_path() / "trajcheck_otlp_join_latency.jsonl").string();
  {
    std::ofstream f(path);
    f << text;
  }
  Joined j = join_inputs({path});
  REQUIRE(j.traces.size() == 1);
  const Trajectory& t = j.traces[0];
  CHECK(t.metadata() == R"({"latency_ms":2000,"tokens":107,"input_tokens":100,"output_tokens":7})");
  REQUIRE(t.steps().size() == 4);
  CHECK(t.text(t.steps()[0].type_name) == "invoke_agent");  // by start time, across the requests
  CHECK(tools_of(t) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("otlp join: past max_bytes the trace held longest is let go, with a located warning") {
  std::string path = (std::filesystem::temp_directory_path() / "trajcheck_otlp_join_limit.jsonl").string();
  {
    std::ofstream f(path);
    f << span_line("A", "a1", "ra", 1, 2, "x") << "\n"
      << span_line("B", "b1", "rb", 3, 4, "y") << "\n"
      << span_line("A", "a2", "ra", 5, 6, "z") << "\n";
  }
  TraceJoinOptions o;
  o.max_bytes = 1;  // every part is over it: each is let go as soon as it comes
  Joined j = join_inputs({path}, o);
  REQUIRE(j.traces.size() == 3);
  CHECK(j.early == 3);
  CHECK(j.traces[0].trace_id() == "A");
  CHECK(j.traces[2].trace_id() == "A");  // a second trace with A's id: said in the warning
  REQUIRE(j.traces[0].warnings.size() == 1);
  CHECK(j.traces[0].warnings[0].rfind(path + ":1:1: warning: OTLP trace A is checked before the end of the input", 0) == 0);

  // A bound two traces fit in: nothing is let go.
  o.max_bytes = 1 << 20;
  Joined k = join_inputs({path}, o);
  REQUIRE(k.traces.size() == 2);
  CHECK(k.early == 0);
  CHECK(tools_of(k.traces[0]) == std::vector<std::string>{"x", "z"});
  CHECK(k.traces[0].warnings.empty());

  // max_bytes 0: no joining, one trace per record.
  o.max_bytes = 0;
  CHECK(join_inputs({path}, o).traces.size() == 3);
}

TEST_CASE("otlp join: a stream's trace is complete once its root ended and it was idle") {
  std::uint64_t now = 0;
  TraceJoinOptions o;
  o.idle_ms = 1000;
  o.clock = [&] { return now; };
  TraceJoiner joiner(o);
  TraceParser parser(NormalizeOptions{});
  ToolTable tools;
  Trajectory t(&tools), out(&tools);
  std::vector<std::string> done;
  auto keep = [&](Trajectory& tr) { done.emplace_back(tr.trace_id()); };
  auto feed = [&](const std::string& line, std::uint64_t record) {
    RawRecord rec;
    rec.text = line;
    rec.origin = RecordOrigin{"-", record + 1, 1, record};
    REQUIRE(parser.parse(rec, t, [&](Trajectory& tr) { CHECK(joiner.offer(tr, out, keep)); }).ok());
  };
  feed(span_line("A", "a1", "ra", 1, 2, "x"), 0);  // a child: A's root has not ended
  now = 5000;
  feed(span_line("B", "b1", "", 3, 4, "y"), 1);  // B's root; A idle, but without its root
  CHECK(done.empty());
  now = 5500;
  feed(span_line("A", "ra", "", 1, 9, "w"), 2);  // A's root ends
  CHECK(done.empty());
  now = 6600;  // both idle for 1000 ms and more, with their roots ended
  feed(span_line("C", "c1", "rc", 10, 11, "v"), 3);
  CHECK(done == std::vector<std::string>{"B", "A"});
  joiner.finish(out, keep);
  CHECK(done == std::vector<std::string>{"B", "A", "C"});
}

TEST_CASE("otel: the Vercel AI SDK's ai.toolCall spans are tool calls; its usage and root latency are the trace's") {
  Joined j = join_inputs({data_path("producers/otel/vercel-legacy.jsonl")});
  REQUIRE(j.traces.size() == 2);
  const Trajectory& ok = j.traces[0];
  CHECK(tools_of(ok) == std::vector<std::string>{"get_order_details", "refund_order"});
  const Trajectory& bad = j.traces[1];
  CHECK(tools_of(bad) == std::vector<std::string>{"refund_order", "get_order_details"});
  for (const Trajectory* t : {&ok, &bad}) {
    CHECK(t->warnings.empty());
    // Three model calls of 100+12, 110+12 and 120+12 tokens; ai.generateText's total of the
    // same is not added again.
    CHECK(t->metadata().find(R"("tokens":366,"input_tokens":330,"output_tokens":36)") != std::string_view::npos);
    for (const Step& s : t->steps()) {
      if (s.type == StepType::tool_call) {
        CHECK(t->text(s.id).substr(0, 5) == "call_");
        CHECK(!s.arguments.empty());
        // The refund of an unknown order threw: status code 2, no result.
        CHECK(s.status == (t == &bad && t->tool_name(s) == "refund_order" ? StepStatus::error : StepStatus::ok));
      } else {
        CHECK(t->text(s.type_name).substr(0, 15) == "ai.generateText");
      }
    }
  }
  // The root span (ai.generateText) spans the whole run.
  std::uint64_t first = UINT64_MAX, last = 0, root = 0;
  for (const SpanInfo& sp : ok.spans) {
    first = std::min(first, sp.start_ns);
    last = std::max(last, sp.end_ns);
    if (sp.root) root = sp.end_ns - sp.start_ns;
  }
  CHECK(root == last - first);
  CHECK(ok.metadata().find(fmt::format(R"("latency_ms":{})", root / 1e6)) != std::string_view::npos);
}

TEST_CASE("otel: a span that looks like a tool call but names no tool is kept, with a located warning") {
  ReadResult r = read_text(R"({"resourceSpans":[{"scopeSpans":[{"spans":[
    {"traceId":"t","spanId":"s1","name":"ai.toolCall","startTimeUnixNano":"1","endTimeUnixNano":"2",
     "attributes":[{"key":"ai.toolCall.id","value":{"stringValue":"call_9"}},
                   {"key":"ai.toolCall.args","value":{"stringValue":"{}"}}]}]}]}]})");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  REQUIRE(r.traces[0].steps().size() == 1);
  CHECK(r.traces[0].steps()[0].type == StepType::other);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "mem:2:5: warning: span \"ai.toolCall\" looks like a tool call but names no tool "
                         "(gen_ai.tool.name, ai.toolCall.name): kept as a step of type \"span\", not a tool call");
}

TEST_CASE("otel: tool calls named only by gen_ai.output.messages are read; with execute_tool spans, once") {
  // The AI SDK's GenAI spans: execute_tool spans and the chat spans' messages name the same calls.
  Joined both = join_inputs({data_path("producers/otel/vercel-genai.jsonl")});
  REQUIRE(both.traces.size() == 2);
  CHECK(tools_of(both.traces[0]) == std::vector<std::string>{"get_order_details", "refund_order"});
  CHECK(tools_of(both.traces[1]) == std::vector<std::string>{"refund_order", "get_order_details"});
  for (const Trajectory& t : both.traces)
    for (const Step& s : t.steps())
      if (s.type == StepType::tool_call) CHECK(t.text(s.extra).find("gen_ai.output.messages") == std::string_view::npos);

  // The same without the execute_tool spans: the calls come from the messages, their results
  // from later model calls' input messages (some exported in other requests).
  Joined only = join_inputs({std::string(TRAJCHECK_TEST_DIR) + "/golden/check/otlp-vercel-messages/traces.jsonl"});
  REQUIRE(only.traces.size() == 2);
  CHECK(tools_of(only.traces[0]) == std::vector<std::string>{"get_order_details", "refund_order"});
  const Trajectory& bad = only.traces[1];
  REQUIRE(tools_of(bad) == std::vector<std::string>{"refund_order", "get_order_details"});
  for (const Step& s : bad.steps()) {
    if (s.type != StepType::tool_call) continue;
    CHECK(bad.text(s.extra).rfind(R"({"source":"gen_ai.output.messages","span_id":")", 0) == 0);
    CHECK(!s.arguments.empty());
    if (bad.tool_name(s) == "refund_order") {
      CHECK(bad.text(s.id) == "call_b1");
      CHECK(bad.text(s.result) == R"("Error: order ord_92 not found")");
    } else {
      CHECK(bad.text(s.result) == R"({"status":"unknown"})");
    }
  }
  CHECK(bad.spans.size() == bad.steps().size());
}

TEST_CASE("otlp join: poll completes idle traces without a new record; evictions say why") {
  std::uint64_t now = 0;
  TraceJoinOptions o;
  o.idle_ms = 1000;
  o.clock = [&] { return now; };
  TraceJoiner joiner(o);
  TraceParser parser(NormalizeOptions{});
  ToolTable tools;
  Trajectory t(&tools), out(&tools);
  std::vector<std::string> done, warnings;
  auto keep = [&](Trajectory& tr) {
    done.emplace_back(tr.trace_id());
    warnings.insert(warnings.end(), tr.warnings.begin(), tr.warnings.end());
  };
  auto feed = [&](const std::string& line, std::uint64_t record) {
    RawRecord rec;
    rec.text = line;
    rec.origin = RecordOrigin{"POST /v1/traces", record + 1, 1, record};
    REQUIRE(parser.parse(rec, t, [&](Trajectory& tr) { CHECK(joiner.offer(tr, out, keep)); }).ok());
  };
  feed(span_line("A", "ra", "", 1, 9, "x"), 0);  // A's root, ended
  feed(span_line("B", "b1", "rb", 3, 4, "y"), 1);  // B's child only
  now = 999;
  CHECK(joiner.poll(out, keep) == 0);
  now = 1000;
  CHECK(joiner.poll(out, keep) == 1);  // A; B has no ended root: held
  CHECK(done == std::vector<std::string>{"A"});
  CHECK(joiner.held_traces() == 1);
  // The oldest is let go only once it has been idle long enough.
  CHECK_FALSE(joiner.evict_oldest(2000, "is evicted: too many open traces", out, keep));
  now = 3000;
  CHECK(joiner.evict_oldest(2000, "is evicted: too many open traces", out, keep));
  CHECK(done == std::vector<std::string>{"A", "B"});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "POST /v1/traces:2:1: warning: OTLP trace B is evicted: too many open traces");
  CHECK(joiner.held_traces() == 0);
  CHECK(joiner.held_bytes() == 0);
  // evict by id
  feed(span_line("C", "c1", "rc", 10, 11, "v"), 2);
  CHECK_FALSE(joiner.evict("D", "x", out, keep));
  CHECK(joiner.evict("C", "is evicted: more spans than allowed", out, keep));
  CHECK(done.back() == "C");
  CHECK(joiner.held_traces() == 0);
  CHECK_FALSE(joiner.evict_oldest(0, "x", out, keep));
  // Without idle_ms, poll completes nothing.
  TraceJoiner plain;
  CHECK(plain.poll(out, keep) == 0);
}
