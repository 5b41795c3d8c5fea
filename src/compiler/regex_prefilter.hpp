// A necessary condition for an RE2 regex to match a text, from RE2's own prefilter
// (re2::FilteredRE2): the lowercased literal strings ("atoms") every match contains, joined by
// AND / OR. The checker scans a text for the atoms before it runs the regex, so a text that
// cannot match never reaches RE2 (a `matches` condition on every user message, say, where most
// messages lack the word asked for).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace trajcheck::detail {

class RegexPrefilter {
 public:
  // At most this many atoms: the prefilter's AND/OR tree is tabulated over every subset of them.
  static constexpr std::size_t kMaxAtoms = 10;

  // The prefilter of `re` (compiled, ok), or null when there is none worth running: RE2 finds
  // no literal every match must contain (`.`, `^\w+$`, an empty pattern), or more than
  // kMaxAtoms of them.
  static std::shared_ptr<const RegexPrefilter> build(const re2::RE2& re);

  // False only when `re` cannot match `text`. A text with a byte above 0x7f may match an atom
  // through RE2's Unicode lowercasing (U+212A KELVIN SIGN lowers to `k`), which this scan
  // does not do: such a text always passes to the regex.
  bool may_match(std::string_view text) const;

  const std::vector<std::string>& atoms() const { return atoms_; }

 private:
  std::vector<std::string> atoms_;   // lowercase, distinct
  std::vector<std::uint64_t> pass_;  // bit m: the regex may match when exactly the atoms of m are found
};

}  // namespace trajcheck::detail
