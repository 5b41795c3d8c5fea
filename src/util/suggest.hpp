// "Did you mean …?" for names: the candidate closest to a mistyped name. Shared by the
// compiler's name checks (unknown tool names, E202/W008) and anything else that suggests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trajcheck::detail {

// The candidate closest to `name`, or empty when none is close enough to be a likely typo.
// Names are compared ASCII case-insensitively with `_` and `-` the same character; the
// distance counts insertions, deletions, substitutions and swaps of two adjacent characters.
// Close enough: a distance of at most 1 for names of up to 4 characters, 2 up to 8, 3 beyond,
// and less than the shorter name's length (so `ab` is no typo of `xy`). A candidate equal to
// `name` as written is never suggested; one equal after folding (`Cancel-Booking` for
// `cancel_booking`) is, at distance 0. Ties go to the candidate first in `candidates`.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace trajcheck::detail
