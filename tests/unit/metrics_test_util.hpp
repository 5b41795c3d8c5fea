// Helpers shared by the metrics unit tests: trajectories built by hand.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "trajcheck/trace.hpp"

namespace trajcheck::test {

struct CallSpec {
  std::string name;
  std::string args;       // raw JSON, "" = absent
  std::uint32_t turn = ~0u;  // ~0u: a turn of its own
};

inline void build(Trajectory& t, std::initializer_list<CallSpec> calls) {
  t.clear();
  std::uint32_t turn = 0;
  for (const CallSpec& c : calls) {
    Step& s = t.add_step(StepType::tool_call);
    Slice name = t.store(c.name);
    s.tool_name = name;
    s.raw_tool = name;
    if (t.tools()) s.tool = t.tools()->intern(c.name);
    if (!c.args.empty()) t.steps().back().arguments = t.store(c.args);
    t.steps().back().turn = c.turn == ~0u ? 1000 + turn : c.turn;
    ++turn;
  }
}

}  // namespace trajcheck::test
