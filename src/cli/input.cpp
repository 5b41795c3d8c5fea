// Shared trace-input options of the command line, and writing a command's output.
#include "input.hpp"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

namespace trajcheck::cli {

void add_trace_input_options(CLI::App* sub, TraceInputOptions& o, bool inputs_required) {
  auto* in = sub->add_option("traces", o.inputs, "trace files (.jsonl, .json), directories, or - for stdin");
  if (inputs_required) in->required();
  sub->add_option("--input-format", o.input_format,
                  "a trace format (default auto): " + fmt::format("{}", fmt::join(input_format_names(), "|")))
      ->check(CLI::IsMember(input_format_names()));
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

bool make_normalize_options(const TraceInputOptions& o, NormalizeOptions* out, std::string* error) {
  return parse_reading_spec(ReadingSpec{o.input_format, o.aliases, o.error_patterns, o.context}, out, error);
}

bool use_color(const std::string& mode, std::FILE* f) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return ::isatty(::fileno(f)) != 0 && std::getenv("NO_COLOR") == nullptr;
}

bool parse_duration_ms(const std::string& text, std::uint64_t* ms) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return false;
  std::uint64_t n = std::stoull(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (unit == "ms") *ms = n;
  else if (unit.empty() || unit == "s") *ms = n * 1000;
  else if (unit == "m") *ms = n * 60000;
  else return false;
  return true;
}

void add_log_argument_options(CLI::App* sub, std::string& log_arguments, std::vector<std::string>& mask_args) {
  sub->add_option("--log-arguments", log_arguments,
                  "masked (default): every argument value in the decision log is ***; full: as called, but --mask-arg keys")
      ->check(CLI::IsMember({"masked", "full"}));
  sub->add_option("--mask-arg", mask_args, "with --log-arguments full: mask this key's values (repeatable)")
      ->allow_extra_args(false);
}

bool write_output(const std::string& path, std::string_view text, std::string_view command) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) {
    fmt::print(stderr, "trajcheck {}: error: cannot write {}\n", command, path);
    return false;
  }
  return true;
}

}  // namespace trajcheck::cli
