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

TEST_CASE("a tool table's serial is its own: kept while it grows, new for copies and both sides of a move") {
  ToolTable a;
  const std::uint64_t s = a.serial();
  a.intern("x");
  a.intern("y");
  CHECK(a.serial() == s);
  ToolTable copy = a;
  CHECK(copy.serial() != s);
  CHECK(copy.name(1) == "y");
  ToolTable assigned;
  const std::uint64_t before = assigned.serial();
  assigned = a;
  CHECK(assigned.serial() != before);
  CHECK(assigned.serial() != s);
  ToolTable moved(std::move(a));
  CHECK(moved.find("y") == 1);
  CHECK(moved.serial() != s);
  CHECK(a.serial() != s);  // NOLINT(bugprone-use-after-move): emptied, and says so
  CHECK(a.size() == 0);
  CHECK(a.intern("z") == 0);
  ToolTable target;
  const std::uint64_t t0 = target.serial(), m0 = moved.serial();
  target = std::move(moved);
  CHECK(target.serial() != t0);
  CHECK(moved.serial() != m0);  // NOLINT(bugprone-use-after-move)
  CHECK(target.name(0) == "x");
  CHECK(ToolTable().serial() != ToolTable().serial());
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

TEST_CASE("a borrowing trajectory refers to its source; copies, moves and own() stand alone") {
  std::string record = R"({"arguments":{"order_id":"ord_1"},"content":"hi"})";
  Trajectory tr;
  tr.borrow(record);
  std::string_view text = record;
  Step& st = tr.add_step(StepType::tool_call);
  st.arguments = tr.store(text.substr(13, 20));  // in the source: not copied
  st.content = tr.store("elsewhere");            // not in it: copied
  tr.set_trace_id(tr.store(text.substr(0, 1)));
  CHECK(tr.borrows());
  CHECK(tr.arena_size() == 9);
  CHECK(tr.text(st.arguments) == R"({"order_id":"ord_1"})");
  CHECK(tr.text(st.arguments).data() == record.data() + 13);
  CHECK(tr.text(st.content) == "elsewhere");
  // A slice at the end of the source; bytes running past its end, or starting before it,
  // are copied.
  Trajectory part;
  part.borrow(text.substr(1, text.size() - 2));
  CHECK(part.text(part.store(text.substr(text.size() - 2, 1))).data() == record.data() + record.size() - 2);
  CHECK(part.arena_size() == 0);
  CHECK(part.text(part.store(text.substr(text.size() - 2))) == "\"}");
  CHECK(part.text(part.store(text.substr(0, 2))) == "{\"");
  CHECK(part.arena_size() == 4);

  Trajectory copy = tr;
  Trajectory assigned;
  assigned = tr;
  Trajectory source_moved(std::move(tr));
  for (Trajectory* t : {&copy, &assigned, &source_moved}) {
    CHECK_FALSE(t->borrows());
    CHECK(t->text(t->steps()[0].arguments) == R"({"order_id":"ord_1"})");
    CHECK(t->text(t->steps()[0].content) == "elsewhere");
    CHECK(t->trace_id() == "{");
  }
  std::fill(record.begin(), record.end(), 'x');  // the source is gone
  CHECK(copy.text(copy.steps()[0].arguments) == R"({"order_id":"ord_1"})");
  CHECK(source_moved.text(source_moved.steps()[0].arguments) == R"({"order_id":"ord_1"})");

  // own() in place; clear() forgets the source.
  std::string again = "abcdef";
  Trajectory t2;
  t2.borrow(again);
  Slice s = t2.store(std::string_view(again).substr(2, 3));
  t2.add_step(StepType::user_message).content = s;
  t2.own();
  again = "zzzzzz";
  CHECK_FALSE(t2.borrows());
  CHECK(t2.text(t2.steps()[0].content) == "cde");
  t2.borrow(again);
  t2.clear();
  CHECK_FALSE(t2.borrows());
  CHECK(t2.text(t2.store(std::string_view(again).substr(0, 2))) == "zz");
  CHECK(t2.arena_size() == 2);
}
