// The PEGTL control shared by the rules parser and the suite parser (which reuses the rule
// language's patterns): must<> error messages from a grammar's table, a nesting limit
// checked before recursing, so 100 000 parentheses give a diagnostic, not a stack overflow,
// and parse_line, which parses one line under both and says how it failed.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "language/grammar.hpp"
#include "trajcheck/diagnostic.hpp"

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

// How parsing one line failed; each parser turns it into a diagnostic with its own codes.
struct LineFailure {
  enum class Kind : std::uint8_t {
    no_match,  // the line rule did not match (range: the line)
    raised,    // a must<> failed: `message` is the grammar's, `range` the offending word
    nesting,   // deeper than the limit (range: one byte where)
    internal,  // a parse-tree shape the caller did not expect: `message` is what was thrown
  };
  Kind kind = Kind::no_match;
  SourceRange range;
  std::string message;
};

// Parses source.text()[b, e) with Rule into a parse tree (Selector picks the stored nodes)
// under Control<Messages>, and calls fill(root). Returns the failure, if any; a failure
// thrown by fill is one too.
template <typename Rule, template <typename...> class Selector, typename Messages, typename Fill>
std::optional<LineFailure> parse_line(const Source& source, std::uint32_t b, std::uint32_t e,
                                      std::uint32_t max_nesting, Fill&& fill) {
  namespace pegtl = tao::pegtl;
  const char* base = source.text().data();
  start_nesting(max_nesting);
  try {
    pegtl::memory_input<> in(base + b, base + e, source.name());
    auto root = pegtl::parse_tree::parse<Rule, Selector, pegtl::nothing, Control<Messages>::template type>(in);
    if (!root) return LineFailure{LineFailure::Kind::no_match, {b, e}, "syntax error"};
    fill(*root);
    return std::nullopt;
  } catch (const pegtl::parse_error& err) {
    auto off = static_cast<std::uint32_t>(b + (err.positions().empty() ? 0 : err.positions().front().byte));
    // Underline the offending word, not just one byte.
    std::uint32_t end = off;
    const std::string& t = source.text();
    while (end < e && end - off < 40 && t[end] != ' ' && t[end] != '\t') ++end;
    return LineFailure{LineFailure::Kind::raised, {off, end}, std::string(err.message())};
  } catch (const std::exception& err) {
    return LineFailure{LineFailure::Kind::internal, {b, e}, err.what()};
  } catch (const NestingTooDeep& err) {
    auto off = static_cast<std::uint32_t>(err.at - base);
    return LineFailure{LineFailure::Kind::nesting, {off, off + 1}, {}};
  }
}

}  // namespace trajcheck::language
