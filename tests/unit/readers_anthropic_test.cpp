#include <doctest/doctest.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

TEST_CASE("anthropic: content blocks become steps; tool_result joins tool_use; is_error sets status") {
  ReadResult r = read_file("formats/anthropic.json");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "msg_run_88");
  // "system" is a prompt, not a step, and not metadata either.
  CHECK(t.metadata() == R"({"id":"msg_run_88","model":"claude-sonnet-4"})");
  REQUIRE(t.steps().size() == 7);
  CHECK(t.steps()[0].type == StepType::user_message);
  CHECK(t.steps()[1].type == StepType::assistant_message);
  CHECK(content_of(t, 1) == "I'll check the weather and the restaurant availability.");
  // The thinking block is kept whole on the message's first step.
  CHECK(extra_of(t, 1) ==
        R"({"content_blocks":[{"type":"thinking","thinking":"Need weather first, then booking.","signature":"sig_1"}]})");

  CHECK(tool_of(t, 2) == "get_weather");
  CHECK(id_of(t, 2) == "toolu_01A");
  CHECK(args_of(t, 2) == R"({"city":"Paris","unit":"celsius"})");
  CHECK(result_of(t, 2) == R"({"temp_c":14,"sky":"cloudy"})");
  CHECK(t.steps()[2].status == StepStatus::ok);

  CHECK(tool_of(t, 3) == "book_table");
  CHECK(result_of(t, 3) == R"("No tables available at 20:00")");
  CHECK(t.steps()[3].status == StepStatus::error);
  CHECK(t.steps()[2].turn == t.steps()[3].turn);

  // A user message made only of tool results is no user_message step.
  CHECK(t.steps()[4].type == StepType::assistant_message);
  CHECK(t.steps()[5].type == StepType::user_message);
  CHECK(content_of(t, 5) == "Try 9pm then.");
  CHECK(tool_of(t, 6) == "book_table");
  CHECK(result_of(t, 6) == R"("Booked: confirmation R-5521")");
}

TEST_CASE("anthropic: text beside tool results, multiple text blocks, unknown block fields") {
  ReadResult r = read_text(R"({"messages":[
    {"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"x","input":{},"cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"thanks"}]}]})");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  REQUIRE(t.steps().size() == 3);
  CHECK(content_of(t, 0) == "a\nb");
  CHECK(extra_of(t, 1) == R"({"cache_control":{"type":"ephemeral"}})");
  CHECK(result_of(t, 1) == R"("ok")");
  CHECK(t.steps()[2].type == StepType::user_message);
  CHECK(content_of(t, 2) == "thanks");
}

TEST_CASE("anthropic: forced format and shape errors") {
  NormalizeOptions opts;
  opts.format = InputFormat::anthropic;
  ReadResult r = read_text(R"({"trace_id":"x","steps":[]})", opts);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "chat record has no \"messages\" (or \"traj\") array");

  r = read_text(R"({"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","input":{}}]}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "tool_use block has no \"name\"");
  CHECK(r.errors[0].where.column == 45);

  r = read_text(R"({"messages":[{"role":"user","content":42}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "\"content\" must be a string, an array of content blocks, or null");
  CHECK(r.errors[0].where.column == 39);
}
