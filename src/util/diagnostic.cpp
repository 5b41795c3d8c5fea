// Source line tables and compiler-style rendering of diagnostics.
#include "trajcheck/diagnostic.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/read_file.hpp"

namespace trajcheck {

Source::Source(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (std::uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::optional<Source> Source::from_file(const std::string& path, std::string* error) {
  std::string text, message;
  if (!read_regular_file(path, kMaxSourceBytes, text, message)) {
    if (error) *error = fmt::format("{}: {}", path, message);
    return std::nullopt;
  }
  return Source(path, std::move(text));
}

LineCol Source::line_col(std::uint32_t offset) const {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  auto line = static_cast<std::uint32_t>(it - line_starts_.begin());  // 1-based
  return {line, offset - line_starts_[line - 1] + 1};
}

std::string_view Source::line_text(std::uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  std::uint32_t b = line_starts_[line - 1];
  std::uint32_t e = line < line_starts_.size() ? line_starts_[line] - 1
                                                : static_cast<std::uint32_t>(text_.size());
  if (e > b && text_[e - 1] == '\r') --e;
  return std::string_view(text_).substr(b, e - b);
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::note: return "note";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "error";
}

void sort_diagnostics(std::vector<Diagnostic>& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
    return a.code < b.code;
  });
}

bool has_errors(const std::vector<Diagnostic>& diags) {
  return std::any_of(diags.begin(), diags.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::error; });
}

namespace {

// Longest source line echoed whole, and how much of a longer one is shown before the column.
constexpr std::size_t kMaxExcerptBytes = 240;
constexpr std::size_t kExcerptLead = 80;

// The echoed source line plus a caret line; the caret line copies tabs from the source
// so it lines up in any terminal.
void render_excerpt(std::string& out, const Source& src, SourceRange r, const char* on, const char* off) {
  LineCol lc = src.line_col(r.begin);
  std::string_view line = src.line_text(lc.line);
  std::string num = std::to_string(lc.line);
  std::string pad(num.size(), ' ');
  std::uint32_t col0 = lc.column - 1;
  // A very long line (a minified file, a 16 MiB one-liner) is echoed as a window around the
  // column, cut at UTF-8 character boundaries and marked with "...".
  std::string shown;
  if (line.size() > kMaxExcerptBytes) {
    auto boundary = [&](std::size_t i) {
      while (i > 0 && i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) --i;
      return i;
    };
    std::size_t from = boundary(col0 > kExcerptLead ? col0 - kExcerptLead : 0);
    std::size_t to = std::max(boundary(std::min(line.size(), from + kMaxExcerptBytes)),
                              std::min(line.size(), std::size_t(col0) + 1));
    if (from > 0) shown = "...";
    col0 = col0 - static_cast<std::uint32_t>(from) + static_cast<std::uint32_t>(shown.size());
    shown.append(line.substr(from, to - from));
    if (to < line.size()) shown += "...";
    line = shown;
  }
  out += fmt::format(" {} | {}\n", num, line);
  std::string marks;
  for (std::uint32_t i = 0; i < col0 && i < line.size(); ++i) marks += line[i] == '\t' ? '\t' : ' ';
  std::uint32_t len = r.end > r.begin ? r.end - r.begin : 1;
  if (col0 + len > line.size()) len = line.size() > col0 ? static_cast<std::uint32_t>(line.size()) - col0 : 1;
  marks += on;
  marks += '^';
  for (std::uint32_t i = 1; i < len; ++i) marks += '~';
  marks += off;
  out += fmt::format(" {} | {}\n", pad, marks);
}

}  // namespace

std::string format_diagnostic(const Source& src, const Diagnostic& d, bool color) {
  const char* sev_on = "";
  const char* bold = color ? "\x1b[1m" : "";
  const char* reset = color ? "\x1b[0m" : "";
  if (color) sev_on = d.severity == Severity::error ? "\x1b[1;31m" : d.severity == Severity::warning ? "\x1b[1;33m" : "\x1b[1;36m";
  LineCol lc = src.line_col(d.range.begin);
  std::string out = fmt::format("{}{}:{}:{}:{} {}{}", bold, src.name(), lc.line, lc.column, reset, sev_on,
                                to_string(d.severity));
  if (!d.code.empty()) out += fmt::format("[{}]", d.code);
  out += fmt::format("{}: {}{}{}\n", reset, bold, d.message, reset);
  render_excerpt(out, src, d.range, color ? "\x1b[1;32m" : "", reset);
  for (const Note& n : d.notes) {
    if (n.range) {
      LineCol nl = src.line_col(n.range->begin);
      out += fmt::format("{}:{}:{}: note: {}\n", src.name(), nl.line, nl.column, n.message);
      render_excerpt(out, src, *n.range, color ? "\x1b[1;32m" : "", reset);
    } else {
      out += fmt::format("  note: {}\n", n.message);
    }
  }
  return out;
}

std::string format_diagnostics(const Source& src, const std::vector<Diagnostic>& diags, bool color) {
  std::string out;
  for (const Diagnostic& d : diags) out += format_diagnostic(src, d, color);
  return out;
}

}  // namespace trajcheck
