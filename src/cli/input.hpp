// Options shared by every command that reads traces, and the summary they all print; writing a
// command's output to -o/--output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {

// A duration as --otlp-idle and serve's --idle spell it: a whole number (at most 9 digits) with
// `ms`, `s` or `m`, or none (seconds). False when it is not one.
bool parse_duration_ms(const std::string& text, std::uint64_t* ms);

struct TraceInputOptions {
  std::vector<std::string> inputs;          // files, directories, "-"
  std::string input_format = "auto";
  std::vector<std::string> aliases;         // OBSERVED=CANONICAL
  std::vector<std::string> error_patterns;  // RE2 over result text
  std::vector<std::string> context;         // KEY=VALUE context overrides
  unsigned jobs = 0;                        // 0: all cores
  bool quiet = false;
  std::string color = "auto";               // auto|always|never
};

// Adds TRACES… (positional, required unless `inputs_required` is false), --input-format,
// --alias, --error-pattern, -j/--jobs, --quiet and --color.
void add_trace_input_options(CLI::App* sub, TraceInputOptions& o, bool inputs_required = true);
// --log-arguments masked|full and --mask-arg KEY: how a decision log shows arguments (guard, serve).
void add_log_argument_options(CLI::App* sub, std::string& log_arguments, std::vector<std::string>& mask_args);

// NormalizeOptions from the command line; false (with *error set) when invalid.
bool make_normalize_options(const TraceInputOptions& o, NormalizeOptions* out, std::string* error);

// Whether to colour output written to `f` under --color MODE (auto: only on a terminal).
bool use_color(const std::string& mode, std::FILE* f);

// Writes `text` to standard output (`path` empty or "-") or to the file `path`, replacing it.
// When the file cannot be written, says `trajcheck COMMAND: error: cannot write PATH` on
// standard error and returns false.
bool write_output(const std::string& path, std::string_view text, std::string_view command);

}  // namespace trajcheck::cli
