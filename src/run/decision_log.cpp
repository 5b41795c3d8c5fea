// The decision log's lines (run/decision_log.hpp) and the rules digest they name.
#include "run/decision_log.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include "trajcheck/run.hpp"
#include "util/sha256.hpp"

namespace trajcheck {

std::string rules_digest(const RuleSetResult& compiled) {
  Sha256 h;
  for (const RuleFile& f : compiled.files) {
    const std::string_view text = f.source.text();
    h.update(std::to_string(text.size()) + ":");
    h.update(text);
  }
  return "sha256:" + h.hex();
}

namespace detail {

using Json = nlohmann::json;

std::string utc_now(const char* format) {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format(fmt::runtime(format), fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

Json masked_arguments(const Json& v, const std::vector<std::string>* keys) {
  if (v.is_object()) {
    Json r = Json::object();
    for (const auto& [k, x] : v.items())
      r[k] = keys && std::find(keys->begin(), keys->end(), k) != keys->end() ? Json("***") : masked_arguments(x, keys);
    return r;
  }
  if (v.is_array()) {
    Json r = Json::array();
    for (const Json& x : v) r.push_back(masked_arguments(x, keys));
    return r;
  }
  return keys ? v : Json("***");
}

Json decision_record(const Decision& d) {
  return Json{{"decision_id", d.decision_id},
              {"time", utc_now("{:%Y-%m-%dT%H:%M:%S}.{:03}Z")},
              {"trace_id", d.trace_id},
              {"call_id", d.call_id},
              {"tool", d.tool},
              {"arguments", d.arguments},
              {"verdict", d.verdict},
              {"mode", d.mode},
              {"forwarded", d.forwarded},
              {"rule", d.rule},
              {"message", d.message},
              {"rules_digest", d.rules_digest}};
}

std::string decision_line(const Json& record) {
  // What the log quotes might not be valid UTF-8 (a trace's text): replaced.
  std::string line = record.dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  return line;
}

bool write_decision(std::FILE* log, const Json& record) {
  const std::string line = decision_line(record);
  const bool written = std::fwrite(line.data(), 1, line.size(), log) == line.size();
  return std::fflush(log) == 0 && written;
}

}  // namespace detail
}  // namespace trajcheck
