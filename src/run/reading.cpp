// The command-line spellings of the reading options, parsed once for every command.
#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <simdjson.h>

#include "trajcheck/run.hpp"
#include "trajcheck/json_string.hpp"

namespace trajcheck {

std::string context_value_json(std::string_view value) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (!value.empty() && !parser.parse(value.data(), value.size()).get(e)) return simdjson::minify(e);
  std::string out;
  append_json_string(out, value);
  return out;
}

bool parse_reading_spec(const ReadingSpec& spec, NormalizeOptions* out, std::string* error) {
  NormalizeOptions n;
  if (!parse_input_format(spec.input_format, &n.format)) {
    *error = fmt::format("unknown --input-format '{}'", spec.input_format);
    return false;
  }
  for (const std::string& a : spec.aliases) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      *error = fmt::format("--alias '{}': expected OBSERVED=CANONICAL", a);
      return false;
    }
    n.aliases.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  n.error_patterns = spec.error_patterns;
  for (const std::string& c : spec.context) {
    auto eq = c.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = fmt::format("--context '{}': expected KEY=VALUE", c);
      return false;
    }
    n.context_overrides.emplace_back(c.substr(0, eq), context_value_json(c.substr(eq + 1)));
  }
  *out = std::move(n);
  return true;
}

std::string format_record_error(const RecordError& e) {
  return fmt::format("{}:{}:{}: error: {}\n", e.where.file, e.where.line, e.where.column, e.message);
}

unsigned effective_jobs(unsigned jobs) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // More workers than cores only add threads and in-flight batches: the work is CPU-bound.
  return jobs == 0 ? cores : std::min(jobs, cores);
}

}  // namespace trajcheck
