// PATH expressions (`expect`) as position automata (Glushkov NFA), simulated bit-parallel:
// the state is the set of positions reached, one bit each. `{A, B, C}` holds a copy of each
// element per set of elements done before it (2^(n-1) copies), so the position count is capped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace trajcheck::detail {

struct Nfa {
  std::uint32_t positions = 0;
  std::uint32_t words = 0;                // bitset width in 64-bit words
  std::vector<std::uint32_t> atom;        // per position: compiled pattern id of its atom
  std::vector<std::uint32_t> atoms;       // distinct atom pattern ids (letter test of `expect`)
  std::vector<std::uint64_t> first;       // positions a word can start with
  std::vector<std::uint64_t> last;        // positions a word can end with
  std::vector<std::uint64_t> follow;      // positions × words: may come right after
  bool nullable = false;                  // the empty word is accepted

  const std::uint64_t* follow_of(std::uint32_t p) const { return follow.data() + std::size_t(p) * words; }
  std::string dump(const std::function<std::string(std::uint32_t)>& pattern_name) const;
};

// Builds the automaton of `module.paths[root]`; `map_pattern` turns an IR pattern id into
// a compiled one. False with `error` set when the positions would exceed `cap`.
bool build_nfa(const ir::Module& module, ir::Id root,
               const std::function<std::uint32_t(ir::Id)>& map_pattern, std::uint32_t cap,
               Nfa& out, std::string& error);

}  // namespace trajcheck::detail
