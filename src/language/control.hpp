// The PEGTL control shared by the rules parser and the suite parser (which reuses the rule
// language's patterns): must<> error messages from a grammar's table, and a nesting limit
// checked before recursing, so 100 000 parentheses give a diagnostic, not a stack overflow.
#pragma once

#include <cstdint>

#include <tao/pegtl.hpp>

#include "language/grammar.hpp"

namespace trajcheck::language {

// must<> raises with Messages::message<Rule> (a variable template cannot be a template
// argument, hence the wrapper type); a failing rule elsewhere just backtracks.
template <typename Messages>
struct Errors {
  template <typename Rule>
  static constexpr const char* message = Messages::template message<Rule>;
  template <typename Rule>
  static constexpr bool raise_on_failure = false;
};

// The rules whose recursion can nest without bound.
template <typename Rule> inline constexpr bool is_nesting = false;
template <> inline constexpr bool is_nesting<grammar::pattern_paren> = true;
template <> inline constexpr bool is_nesting<grammar::pattern_not> = true;
template <> inline constexpr bool is_nesting<grammar::pattern_failed> = true;
template <> inline constexpr bool is_nesting<grammar::cond_paren> = true;
template <> inline constexpr bool is_nesting<grammar::cond_negation> = true;
template <> inline constexpr bool is_nesting<grammar::path_group> = true;
template <> inline constexpr bool is_nesting<grammar::path_all> = true;
template <> inline constexpr bool is_nesting<grammar::path_not> = true;
template <> inline constexpr bool is_nesting<grammar::path_failed> = true;

// Thrown by the control when a line nests deeper than the limit; `at` is where.
struct NestingTooDeep {
  const char* at;
};

namespace detail {
// The current line's nesting depth and its limit; one parse runs on one thread at a time.
inline thread_local std::uint32_t t_nesting_depth = 0;
inline thread_local std::uint32_t t_max_nesting = 256;
}  // namespace detail

// Call before each pegtl::parse with Control: resets the depth, sets the limit.
inline void start_nesting(std::uint32_t max_nesting) {
  detail::t_nesting_depth = 0;
  detail::t_max_nesting = max_nesting;
}

// pegtl::parse<…, Control<Messages>::type>(…); throws NestingTooDeep.
template <typename Messages>
struct Control {
  template <typename Rule>
  struct type : tao::pegtl::must_if<Errors<Messages>>::template control<Rule> {
    using Base = typename tao::pegtl::must_if<Errors<Messages>>::template control<Rule>;

    template <tao::pegtl::apply_mode A, tao::pegtl::rewind_mode M, template <typename...> class Action,
              template <typename...> class Ctrl, typename ParseInput, typename... States>
    static bool match(ParseInput& in, States&&... st) {
      if constexpr (is_nesting<Rule>) {
        if (detail::t_nesting_depth >= detail::t_max_nesting) throw NestingTooDeep{in.current()};
        ++detail::t_nesting_depth;
        struct Guard {
          ~Guard() { --detail::t_nesting_depth; }
        } guard;
        return Base::template match<A, M, Action, Ctrl>(in, st...);
      } else {
        return Base::template match<A, M, Action, Ctrl>(in, st...);
      }
    }
  };
};

}  // namespace trajcheck::language
