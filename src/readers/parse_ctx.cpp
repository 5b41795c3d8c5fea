// ParseCtx: the per-record state every format reader writes through, and the normalization
// rules they share (tool names, aliases, results, arguments, error positions).
#include <fmt/format.h>

#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

RecordOrigin ParseCtx::where(const char* p) const {
  std::size_t off = 0;
  if (p && p >= text.data() && p <= text.data() + text.size()) off = static_cast<std::size_t>(p - text.data());
  return lines.locate(origin, text, off);
}

bool ParseCtx::fail(const char* p, std::string message) { return fail(p, ReadError{std::move(message)}); }

bool ParseCtx::fail(const char* p, ReadError e) {
  if (outcome.errors.empty()) outcome.errors.push_back(RecordError{where(p), std::move(e.message), e.kind});
  return false;
}

bool ParseCtx::fail(const JsonFailure& f) { return fail(f.where ? f.where : here(), ReadError{f.message, f.kind}); }

void ParseCtx::warn(const char* p, const std::string& message) {
  RecordOrigin w = where(p);
  t.warnings.push_back(fmt::format("{}:{}:{}: warning: {}", w.file, w.line, w.column, message));
}

bool ParseCtx::store_value(od::value v, Slice* out) {
  s.value.clear();
  if (!write_value(v, s.value)) return false;
  *out = t.store(s.value);
  return true;
}

bool ParseCtx::write_value(od::value v, std::string& out) {
  JsonFailure f;
  if (!detail::write_value(v, out, f)) return fail(f);
  return true;
}

bool ParseCtx::store_written(const TapeValue& v, Slice* out) {
  s.value.clear();
  write_tape_value(v, s.value);
  *out = t.store(s.value);
  return true;
}

bool ParseCtx::skip_value(od::value v) {
  s.value.clear();
  return write_value(v, s.value);
}

bool ParseCtx::matches_any_error_pattern(std::string_view text) const {
  for (const auto& re : opts.error_patterns)
    if (RE2::PartialMatch(text, *re)) return true;
  return false;
}

// Its first character after whitespace (raw or escaped) is '{' or '['.
bool may_hold_json(std::string_view raw) {
  std::size_t i = 0;
  while (i < raw.size()) {
    char c = raw[i];
    if (c == ' ') {
      ++i;
    } else if (c == '\\' && i + 1 < raw.size() && (raw[i + 1] == 'n' || raw[i + 1] == 't' || raw[i + 1] == 'r')) {
      i += 2;
    } else {
      return c == '{' || c == '[';
    }
  }
  return false;
}

Slice ParseCtx::store_text_result(std::string_view text, bool* error) {
  *error = matches_error_pattern(text);
  std::string_view trimmed = trim_ws(text);
  if (!trimmed.empty() && (trimmed.front() == '{' || trimmed.front() == '[')) {
    JsonFailure f;
    s.result_text.clear();
    if (minify_document(s.inner_parser, trimmed, s.inner_padded, s.result_text, f))
      return t.store(s.result_text);
    // Text that is not JSON is a plain result; JSON naming a member twice would be read
    // as one of the two by a rule asking about it, so it is kept as text, with a warning.
    if (f.duplicate_key) warn(here(), fmt::format("tool result kept as a string: its JSON has a {}", f.message));
  }
  s.result_text.clear();
  append_json_string(s.result_text, text);
  return t.store(s.result_text);
}

void ParseCtx::set_arguments_text(Step& step, std::string_view text, const char* where) {
  std::string_view trimmed = trim_ws(text);
  if (trimmed.empty()) {  // some producers write "" for a call without arguments
    step.arguments = t.store("{}");
    return;
  }
  JsonFailure f;
  s.value.clear();
  if (minify_document(s.inner_parser, trimmed, s.inner_padded, s.value, f)) {
    step.arguments = t.store(s.value);
    return;
  }
  s.value.clear();
  append_json_string(s.value, text);
  step.arguments = t.store(s.value);
  step.arguments_invalid = true;
  warn(where, fmt::format("arguments of '{}' are not valid JSON ({}); kept as a string",
                          t.text(step.raw_tool), f.message));
}

void ParseCtx::name_tool(Step& step, std::string_view raw, std::size_t slot) {
  if (s.tools_serial != opts.serial) {
    for (ToolCacheEntry& e : s.tools) e.valid = false;
    s.tools_serial = opts.serial;
  }
  // A new name takes the first of its two entries that is free, else the second (so two
  // names of one entry both stay).
  ToolTable* table = t.tools();
  ToolCacheEntry& e = s.tools[slot].valid ? s.tools[(slot + 1) % s.tools.size()] : s.tools[slot];
  normalize_tool_name(raw, opts.options.case_sensitive, s.name);  // a reused buffer
  std::string_view canonical = s.name;
  if (!opts.aliases.empty()) {
    auto it = opts.aliases.find(canonical);
    if (it != opts.aliases.end()) canonical = it->second;
  }
  // `raw` is in the arena, which storing `canonical` may move: everything that reads it first.
  const bool same = canonical == raw;
  if (table) {
    e.valid = true;
    e.same = same;
    e.raw.assign(raw);
    e.canonical.assign(canonical);
  }
  step.tool_name = same ? step.raw_tool : t.store(canonical);
  step.tool = table ? table->intern(canonical) : kNoTool;
  e.id = step.tool;
  e.table = table ? table->serial() : 0;
}

Slice ParseCtx::merge_extra(Slice a, std::string_view b) {
  b = trim_ws(b);
  if (b.size() <= 2) return a;
  if (a.len <= 2) return t.store(b);
  s.merged.assign(t.text(a));
  s.merged.back() = ',';
  s.merged.append(b.substr(1));
  return t.store(s.merged);
}

Slice ParseCtx::origin_id() {
  s.value.clear();
  fmt::format_to(std::back_inserter(s.value), "{}:{}", origin.file, origin.line);
  return t.store(s.value);
}

void ParseCtx::finish_wrapper(Wrapper& w) {
  Slice id = !w.trace_id.empty() ? w.trace_id : !w.id.empty() ? w.id : !w.task_id.empty() ? w.task_id : w.case_id;
  if (id.empty()) id = origin_id();
  t.set_trace_id(id);
  std::string_view meta = w.meta->finish();
  if (!meta.empty()) t.set_metadata(t.store(meta));
  if (!context.empty()) t.set_context(context);
}

}  // namespace trajcheck::detail
