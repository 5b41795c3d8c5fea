// Shared trace-input options of the command line.
#include "cli/input.hpp"

#include <unistd.h>

#include <thread>

#include <fmt/format.h>
#include <simdjson.h>

#include "util/json_escape.hpp"

namespace trajcheck::cli {

void add_trace_input_options(CLI::App* sub, TraceInputOptions& o, bool inputs_required) {
  auto* in = sub->add_option("traces", o.inputs, "trace files (.jsonl, .json), directories, or - for stdin");
  if (inputs_required) in->required();
  sub->add_option("--input-format", o.input_format, "auto|native|openai|anthropic|otel|list")
      ->check(CLI::IsMember({"auto", "native", "openai", "anthropic", "otel", "list"}));
  // One value per occurrence, so that `--error-pattern '^Error' traces.json` leaves the
  // trace file to TRACES….
  sub->add_option("--alias", o.aliases, "OBSERVED=CANONICAL tool-name alias (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--error-pattern", o.error_patterns,
                  "RE2 pattern over a tool result's text that marks the call failed (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--context", o.context,
                  "KEY=VALUE set in every trace's context, overriding the trace's own (repeatable; "
                  "VALUE is JSON if it parses as JSON, else a string)")
      ->allow_extra_args(false);
  sub->add_option("-j,--jobs", o.jobs, "worker threads (default: all cores)");
  sub->add_flag("-q,--quiet", o.quiet, "print only failures and the summary");
  sub->add_option("--color", o.color, "auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

std::string context_value_json(std::string_view value) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (!value.empty() && !parser.parse(value.data(), value.size()).get(e)) return simdjson::minify(e);
  std::string out;
  append_json_string(out, value);
  return out;
}

bool make_normalize_options(const TraceInputOptions& o, NormalizeOptions* out, std::string* error) {
  NormalizeOptions n;
  if (!parse_input_format(o.input_format, &n.format)) {
    *error = fmt::format("unknown --input-format '{}'", o.input_format);
    return false;
  }
  for (const std::string& a : o.aliases) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      *error = fmt::format("--alias '{}': expected OBSERVED=CANONICAL", a);
      return false;
    }
    n.aliases.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  n.error_patterns = o.error_patterns;
  for (const std::string& c : o.context) {
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

unsigned effective_jobs(unsigned jobs) {
  if (jobs > 0) return jobs;
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

bool use_color(const std::string& mode, std::FILE* f) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return ::isatty(::fileno(f)) != 0 && std::getenv("NO_COLOR") == nullptr;
}

std::string format_record_error(const RecordError& e) {
  return fmt::format("{}:{}:{}: error: {}\n", e.where.file, e.where.line, e.where.column, e.message);
}

}  // namespace trajcheck::cli
