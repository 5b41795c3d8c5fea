// The decision log of `trajcheck guard` and `trajcheck serve` (docs/guard.md, "Modes and the
// decision log"): one JSON object a line per decision, flushed as it is written.
//
//   detail::Decision d;
//   d.decision_id = "run-1:3"; d.trace_id = "run-1"; d.verdict = "deny"; …
//   nlohmann::json line = detail::decision_record(d);   // "time" is now (UTC, milliseconds)
//   detail::write_decision(log, line);          // or decision_line(line): the text
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trajcheck::detail {

struct Decision {
  std::string decision_id, trace_id;
  nlohmann::json call_id, tool, arguments;  // the call decided on; null for none
  std::string_view verdict = "allow";       // "allow" or "deny": what the rules say
  std::string_view mode = "enforce";        // "enforce" or "observe"
  bool forwarded = true;                    // the call went on to run
  nlohmann::json rule, message;             // the violated rule's name and message; null when allowed
  std::string rules_digest;
};

// The line's object, its "time" the present moment.
nlohmann::json decision_record(const Decision& d);
// `record` as one line, with its newline.
std::string decision_line(const nlohmann::json& record);
// `record` as one line on `log`, flushed. False when it could not be written.
bool write_decision(std::FILE* log, const nlohmann::json& record);

// Arguments as the decision log shows them: with `keys` null every scalar value replaced by
// "***" (keys and shape kept); otherwise as they are, but the values of those keys (at any depth).
nlohmann::json masked_arguments(const nlohmann::json& v, const std::vector<std::string>* keys);

// The present moment in UTC as `format` (fmt's chrono format of a std::tm, then the milliseconds).
std::string utc_now(const char* format);

}  // namespace trajcheck::detail
