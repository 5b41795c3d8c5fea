// trajcheck/diagnostic.hpp — source text with positions, and compiler-style diagnostics.
//
//   trajcheck::Source src = trajcheck::Source::from_file("rules/refunds.rules");
//   std::vector<trajcheck::Diagnostic> diags = …;      // from compile() or a reader
//   std::cerr << trajcheck::format_diagnostics(src, diags, /*color=*/false);
//
// Positions are byte offsets into the source; lines and columns printed to users are
// 1-based, columns counted in bytes (a tab is one column, a UTF-8 'é' is two). A Source
// is immutable after construction and may be shared between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trajcheck {

struct SourceRange {
  std::uint32_t begin = 0;  // byte offset, inclusive
  std::uint32_t end = 0;    // byte offset, exclusive (== begin for a point)
};

struct LineCol {
  std::uint32_t line = 1;    // 1-based
  std::uint32_t column = 1;  // 1-based, in bytes
};

class Source {
 public:
  Source() = default;
  Source(std::string name, std::string text);
  // Reads a file; on failure returns std::nullopt and sets *error to a message.
  static std::optional<Source> from_file(const std::string& path, std::string* error);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  LineCol line_col(std::uint32_t offset) const;
  // The text of a 1-based line, without its line terminator.
  std::string_view line_text(std::uint32_t line) const;
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(line_starts_.size()); }

 private:
  std::string name_;
  std::string text_;
  std::vector<std::uint32_t> line_starts_;
};

enum class Severity : std::uint8_t { note, warning, error };
std::string_view to_string(Severity s);

struct Note {
  std::optional<SourceRange> range;
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::error;
  std::string code;  // stable, e.g. "E012"; documented in docs/language.md
  SourceRange range;
  std::string message;
  std::vector<Note> notes;
};

// Sorts by position, then code (stable for equal keys).
void sort_diagnostics(std::vector<Diagnostic>& diags);
bool has_errors(const std::vector<Diagnostic>& diags);

// `file:line:col: error[E012]: message`, the source line, and a caret line under the span:
//
//   rules/refunds.rules:12:9: error[E012]: unknown group 'lokup'
//      12 |   after lokup: forbid refund_order
//         |         ^~~~~
//
// Tabs in the echoed line are kept so the caret lines up under them.
std::string format_diagnostic(const Source& src, const Diagnostic& d, bool color = false);
std::string format_diagnostics(const Source& src, const std::vector<Diagnostic>& diags,
                               bool color = false);

}  // namespace trajcheck
