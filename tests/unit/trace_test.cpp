#include <doctest/doctest.h>

#include "trajcheck/trace.hpp"

using namespace trajcheck;

TEST_CASE("tool names intern to dense ids") {
  ToolTable t;
  CHECK(t.intern("order_get") == 0);
  CHECK(t.intern("refund_order") == 1);
  CHECK(t.intern("order_get") == 0);
  CHECK(t.find("refund_order") == 1);
  CHECK(t.find("nope") == kNoTool);
  CHECK(t.name(1) == "refund_order");
}

TEST_CASE("a trajectory keeps its buffers when cleared") {
  ToolTable tools;
  Trajectory tr(&tools);
  Slice s = tr.store("hello");
  tr.add_step(StepType::user_message).content = s;
  CHECK(tr.text(tr.steps()[0].content) == "hello");
  auto cap = tr.steps().capacity();
  tr.clear();
  CHECK(tr.steps().empty());
  CHECK(tr.steps().capacity() == cap);
  CHECK(tr.trace_id().empty());
}

TEST_CASE("step type names round-trip") {
  for (int i = 0; i < kStepTypeCount - 1; ++i) {
    auto t = static_cast<StepType>(i);
    CHECK(step_type_from_string(to_string(t)) == t);
  }
  CHECK(step_type_from_string("retrieval") == StepType::other);
}
