// One JSON document parsed into nlohmann::json, and on failure where and why. nlohmann throws
// a syntax error as parse_error (which carries its byte) but a number too large for a double as
// out_of_range (which does not); both pass through the SAX interface with their position, so
// parsing through it gives every failure a place a diagnostic can name.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trajcheck::json {

struct ParseFailure {
  std::size_t offset = 0;  // byte in the text: the offending character, or a number's first digit
  std::string reason;      // nlohmann's reason, without its "[json.exception…] … column N: " prefix
};

// Parses `text` (strict RFC 8259, no comments) into `out`. nullopt on success; on failure
// `out` is unspecified.
std::optional<ParseFailure> parse_located(std::string_view text, nlohmann::json& out);

}  // namespace trajcheck::json
