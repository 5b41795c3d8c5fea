// The score runner: score records read (both sides, any format), scored, written as text,
// json or jsonl in input order, and summarized.
#include "trajcheck/score_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <simdjson.h>

#include "json/canon.hpp"
#include "trajcheck/json_string.hpp"
#include "trajcheck/record_shape.hpp"
#include "json/member_names.hpp"
#include "json/ondemand.hpp"
#include "json/pieces.hpp"
#include "util/warnings_note.hpp"
#include "metrics/chat_calls.hpp"
#include "metrics/scorer_impl.hpp"
#include "run/pipeline.hpp"
#include "run/stats_json.hpp"

namespace trajcheck {

bool parse_score_format(std::string_view name, ScoreFormat* out) {
  if (name == "text") *out = ScoreFormat::text;
  else if (name == "json") *out = ScoreFormat::json;
  else if (name == "jsonl") *out = ScoreFormat::jsonl;
  else return false;
  return true;
}

std::string_view to_string(ScoreMetric m) {
  switch (m) {
    case ScoreMetric::overall: return "overall";
    case ScoreMetric::selection: return "selection";
    case ScoreMetric::ordering: return "ordering";
    case ScoreMetric::arguments: return "arguments";
  }
  return "";
}

bool valid_score_weights(double selection, double ordering) {
  return selection >= 0 && ordering >= 0 && selection + ordering > 0 && std::isfinite(selection + ordering);
}

namespace {
bool parse_weights(const std::string& text, double* s, double* o) {
  auto comma = text.find(',');
  if (comma == std::string::npos) return false;
  try {
    std::size_t used = 0;
    *s = std::stod(text.substr(0, comma), &used);
    if (used != comma) return false;
    std::string rest = text.substr(comma + 1);
    *o = std::stod(rest, &used);
    if (used != rest.size()) return false;
  } catch (...) {
    return false;
  }
  return valid_score_weights(*s, *o);
}
}  // namespace

bool make_score_run_options(const ScoreSpellings& in, ScoreRunOptions* out, std::string* error) {
  ScoreOptions& opt = out->scoring;
  if (!parse_score_format(in.format, &out->format)) {
    *error = fmt::format("unknown --format '{}'", in.format);
    return false;
  }
  if (!parse_selection_metric(in.selection, &opt.selection)) {
    *error = fmt::format("unknown --selection '{}'", in.selection);
    return false;
  }
  if (!parse_weights(in.weights, &opt.selection_weight, &opt.ordering_weight)) {
    *error = fmt::format("--weights '{}': expected SELECTION,ORDERING (two non-negative numbers, not both 0)",
                         in.weights);
    return false;
  }
  opt.multiset = in.multiset;
  opt.min_order_length = in.min_order_length;
  if (!parse_argument_mode(in.tool_args, &opt.tool_args)) {
    *error = fmt::format("unknown --tool-args '{}'", in.tool_args);
    return false;
  }
  opt.tool_args_for.clear();
  for (const std::string& spec : in.tool_args_for) {
    auto eq = spec.find('=');
    ArgumentMode mode;
    if (eq == std::string::npos || eq == 0 || !parse_argument_mode(spec.substr(eq + 1), &mode)) {
      *error = fmt::format("--tool-args-for '{}': expected NAME=exact|ignore|subset|superset", spec);
      return false;
    }
    opt.tool_args_for.emplace_back(spec.substr(0, eq), mode);
  }
  for (int m = 0; m < 4; ++m) out->thresholds.min[m] = in.min[m];
  out->thresholds.per_record = in.per_record;
  if (in.per_record && !out->thresholds.any()) {
    *error = "--per-record applies thresholds: give --min-overall, --min-selection, --min-ordering or --min-arguments";
    return false;
  }
  return true;
}

void ScoreSum::add(double v) {
  // Scores are in [0, 1] by construction; the clamp only keeps a stray NaN or rounding
  // excess from wrapping the integer.
  v = std::isnan(v) ? 0.0 : std::clamp(v, 0.0, 1.0);
  units_ += static_cast<Units>(std::nearbyint(std::ldexp(v, 64)));
}

double ScoreSum::value() const { return std::ldexp(static_cast<double>(units_), -64); }

double ScoreSum::mean(std::uint64_t n) const { return n ? value() / static_cast<double>(n) : 0.0; }

std::string ScoreSum::to_string() const {
  if (units_ == 0) return "0";
  std::string digits;
  for (Units u = units_; u; u /= 10) digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
  return {digits.rbegin(), digits.rend()};
}

bool ScoreSum::from_string(std::string_view digits, ScoreSum* out) {
  if (digits.empty() || digits.size() > 39) return false;
  Units u = 0;
  const Units max = ~static_cast<Units>(0);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    unsigned d = static_cast<unsigned>(c - '0');
    if (u > (max - d) / 10) return false;
    u = u * 10 + d;
  }
  out->units_ = u;
  return true;
}

void ScoreSummary::add(const ScoreResult& r) {
    ++scored;
    selection.add(r.selection);
    overall.add(r.overall);
    if (r.ordering) {
      ordering.add(*r.ordering);
      ++ordering_n;
    }
    if (r.arguments) {
      arguments.add(*r.arguments);
      ++arguments_n;
    }
    strict += r.match.strict;
    unordered += r.match.unordered;
    subset += r.match.subset;
    superset += r.match.superset;
    duplicates += r.duplicates;
    int b = r.overall >= 1.0 ? 5 : std::clamp(static_cast<int>(r.overall * 5), 0, 4);
    ++buckets[b];
    for (const auto& m : r.missing) ++missed[m];
    for (const auto& e : r.extra) ++extra[e];
}

void ScoreSummary::merge(const ScoreSummary& o) {
    records += o.records;
    rejected += o.rejected;
    warnings += o.warnings;
    scored += o.scored;
    selection.merge(o.selection);
    ordering.merge(o.ordering);
    overall.merge(o.overall);
    arguments.merge(o.arguments);
    ordering_n += o.ordering_n;
    arguments_n += o.arguments_n;
    strict += o.strict;
    unordered += o.unordered;
    subset += o.subset;
    superset += o.superset;
    duplicates += o.duplicates;
    for (int i = 0; i < 6; ++i) buckets[i] += o.buckets[i];
    for (const auto& [k, v] : o.missed) missed[k] += v;
    for (const auto& [k, v] : o.extra) extra[k] += v;
    const auto mid = static_cast<std::ptrdiff_t>(below.size());
    below.insert(below.end(), o.below.begin(), o.below.end());
    std::inplace_merge(below.begin(), below.begin() + mid, below.end(),
                       [](const Below& a, const Below& b) { return a.record < b.record; });
}

namespace {

constexpr const char* kBucketNames[6] = {"0.0-0.2", "0.2-0.4", "0.4-0.6", "0.6-0.8", "0.8-1.0", "1.0"};

// Machine output carries the value: the shortest text that reads back as the same double.
void append_number(std::string& out, double x) { fmt::format_to(std::back_inserter(out), "{}", x); }

void append_string_list(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, v[i]);
  }
  out += ']';
}

void append_record_json(std::string& out, std::string_view id_json, const ScoreResult& r) {
  out += "{\"id\":";
  out += id_json;
  out += ",\"selection\":";
  append_number(out, r.selection);
  out += ",\"ordering\":";
  if (r.ordering) append_number(out, *r.ordering);
  else out += "null";
  out += ",\"overall\":";
  append_number(out, r.overall);
  out += ",\"missing\":";
  append_string_list(out, r.missing);
  out += ",\"extra\":";
  append_string_list(out, r.extra);
  // Appended piece by piece: the same text as fmt's "{}" of these, without parsing a
  // format string per record.
  out += ",\"duplicates\":";
  fmt::format_int duplicates(r.duplicates);
  out.append(duplicates.data(), duplicates.size());
  auto flag = [&](const char* key, bool b) {
    out += key;
    out += b ? "true" : "false";
  };
  flag(",\"match\":{\"strict\":", r.match.strict);
  flag(",\"unordered\":", r.match.unordered);
  flag(",\"subset\":", r.match.subset);
  flag(",\"superset\":", r.match.superset);
  out += '}';
  out += ",\"arguments\":";
  if (r.arguments) append_number(out, *r.arguments);
  else out += "null";
  out += ",\"explanation\":";
  append_json_string(out, r.explanation);
  out += '}';
}

std::string fixed2(double x) { return fmt::format("{:.2f}", x); }

void append_record_text(std::string& out, std::string_view id, const ScoreResult& r) {
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  fmt::format_to(std::back_inserter(out), "record {}\n", id);
  fmt::format_to(std::back_inserter(out), "  {:<11} {}\n", "selection", fixed2(r.selection));
  fmt::format_to(std::back_inserter(out), "  {:<11} {}\n", "ordering",
                 r.ordering ? fixed2(*r.ordering) : std::string("-"));
  fmt::format_to(std::back_inserter(out), "  {:<11} {}\n", "overall", fixed2(r.overall));
  fmt::format_to(std::back_inserter(out), "  {:<11} {}\n", "arguments",
                 r.arguments ? fixed2(*r.arguments) : std::string("-"));
  fmt::format_to(std::back_inserter(out), "  {:<11} {}\n", "duplicates", r.duplicates);
  fmt::format_to(std::back_inserter(out), "  {:<11} strict {}, unordered {}, subset {}, superset {}\n",
                 "match", yn(r.match.strict), yn(r.match.unordered), yn(r.match.subset),
                 yn(r.match.superset));
  fmt::format_to(std::back_inserter(out), "  {}\n\n", r.explanation);
}

// The `n` most frequent names, "name (count)".
std::vector<std::pair<std::string, std::uint64_t>> top(const std::map<std::string, std::uint64_t>& m,
                                                       std::size_t n) {
  std::vector<std::pair<std::string, std::uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}


}  // namespace

std::string score_summary_text(const ScoreSummary& s) {
  const ScoreSummary& c = s;
  std::string out;
  fmt::format_to(std::back_inserter(out), "scored {} record{} (read {}, rejected {}{})\n", s.scored,
                 s.scored == 1 ? "" : "s", c.records, c.rejected, warnings_note(c.warnings));
  if (s.scored == 0) return out;
  fmt::format_to(std::back_inserter(out), "mean selection {}, ordering {} ({} scored), overall {}, arguments {}\n",
                 fixed2(s.selection.mean(s.scored)),
                 s.ordering_n ? fixed2(s.ordering.mean(s.ordering_n)) : std::string("-"), s.ordering_n,
                 fixed2(s.overall.mean(s.scored)),
                 s.arguments_n ? fixed2(s.arguments.mean(s.arguments_n)) : std::string("-"));
  fmt::format_to(std::back_inserter(out), "match: strict {}/{}, unordered {}/{}, subset {}/{}, superset {}/{}\n",
                 s.strict, s.scored, s.unordered, s.scored, s.subset, s.scored, s.superset, s.scored);
  out += "overall distribution:";
  for (int i = 5; i >= 0; --i) fmt::format_to(std::back_inserter(out), " {}: {}{}", kBucketNames[i], s.buckets[i], i ? "," : "");
  out += '\n';
  fmt::format_to(std::back_inserter(out), "duplicate calls: {}\n", s.duplicates);
  for (auto [label, m] : {std::pair{"most often missed", &s.missed}, std::pair{"most often extra", &s.extra}}) {
    auto t = top(*m, 5);
    if (t.empty()) continue;
    fmt::format_to(std::back_inserter(out), "{}:", label);
    for (std::size_t i = 0; i < t.size(); ++i)
      fmt::format_to(std::back_inserter(out), "{} {} ({})", i ? "," : "", t[i].first, t[i].second);
    out += '\n';
  }
  return out;
}

std::string score_summary_json(const ScoreSummary& s) {
  const ScoreSummary& c = s;
  std::string out;
  fmt::format_to(std::back_inserter(out), "{{\"records\":{},\"scored\":{},\"rejected\":{},\"warnings\":{}",
                 c.records, s.scored, c.rejected, c.warnings);
  auto num = [&](const char* key, const ScoreSum& sum, std::uint64_t n) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":", key);
    if (n) append_number(out, sum.mean(n));
    else out += "null";
  };
  num("selection", s.selection, s.scored);
  num("ordering", s.ordering, s.ordering_n);
  num("overall", s.overall, s.scored);
  num("arguments", s.arguments, s.arguments_n);
  fmt::format_to(std::back_inserter(out),
                 ",\"match\":{{\"strict\":{},\"unordered\":{},\"subset\":{},\"superset\":{}}},\"duplicates\":{}",
                 s.strict, s.unordered, s.subset, s.superset, s.duplicates);
  out += ",\"distribution\":{";
  for (int i = 0; i < 6; ++i) fmt::format_to(std::back_inserter(out), "{}\"{}\":{}", i ? "," : "", kBucketNames[i], s.buckets[i]);
  out += '}';
  for (auto [label, m] : {std::pair{"missed", &s.missed}, std::pair{"extra", &s.extra}}) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":{{", label);
    auto t = top(*m, 10);
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, t[i].first);
      fmt::format_to(std::back_inserter(out), ":{}", t[i].second);
    }
    out += '}';
  }
  out += '}';
  return out;
}

// Heap state (a Trajectory points at its ToolTable): parsers, scorer and scratch of one thread.
struct ScoreRecordReader::Impl {
  explicit Impl(const ScoreRunOptions& o)
      : options(o), parser(o.reading), list_parser(list_options(o.reading)), core(o.scoring), fast(o.reading) {}
  static NormalizeOptions list_options(NormalizeOptions n) {
    n.format = InputFormat::list;
    return n;
  }
  ScoreRunOptions options;
  TraceParser parser, list_parser;
  ToolTable tools;
  Trajectory actual_trace{&tools}, expected_trace{&tools};
  metrics::ScorerCore core;
  metrics::ChatCallReader fast;
  simdjson::dom::parser json;
  simdjson::ondemand::parser od;
  std::string buf, id_json, plain_id;  // the record's id as JSON and as text
  std::string member, number;           // read_by_message: a member beside the sides, a numeric id
  std::uint64_t record_no = 0;          // its RecordOrigin::record
  ScoreSummary* summary = nullptr;  // the caller's, during read()

  void reject(const RecordOrigin& where, const std::string& message, std::string& out, std::string& err) {
    ++summary->rejected;
    err += format_record_error(RecordError{where, message});
    if (options.format != ScoreFormat::text) {
      out += "{\"record\":";
      append_json_string(out, fmt::format("{}:{}", where.file, where.line));
      out += ",\"error\":";
      append_json_string(out, message);
      out += options.format == ScoreFormat::json ? "},\n" : "}\n";
    }
  }

  // Where byte `off` of a record is, for messages.
  static RecordOrigin at(const RawRecord& rec, std::size_t off) {
    RecordOrigin o = rec.origin;
    const std::string_view text = rec.bytes();
    off = std::min(off, text.size());
    std::size_t nl = text.rfind('\n', off == 0 ? 0 : off - 1);
    if (off == 0 || nl == std::string_view::npos) {
      o.column += off;
    } else {
      o.line += static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + off, '\n'));
      o.column = off - nl;
    }
    return o;
  }

  bool parse_side(std::string_view raw, bool list_like, const RawRecord& rec, Trajectory& t,
                  std::string& out, std::string& err) {
    // Messages point at the side itself and say which side it is.
    const bool is_actual = &t == &actual_trace;
    RecordOrigin where = rec.origin;
    if (raw.data() >= buf.data() && raw.data() <= buf.data() + buf.size())
      where = at(rec, static_cast<std::size_t>(raw.data() - buf.data()));
    ParseOutcome o = (list_like ? list_parser : parser).parse_value(raw, where, t);
    if (!o.ok()) {
      ++summary->rejected;
      for (RecordError& e : o.errors) {
        e.message.insert(0, is_actual ? "actual: " : "expected: ");
        err += format_record_error(e);
      }
      if (options.format != ScoreFormat::text) {
        out += "{\"record\":";
        append_json_string(out, fmt::format("{}:{}", rec.origin.file, rec.origin.line));
        out += ",\"error\":";
        append_json_string(out, o.errors.front().message);
        out += options.format == ScoreFormat::json ? "},\n" : "}\n";
      }
      return false;
    }
    summary->warnings += t.warnings.size();
    if (!options.quiet)
      for (const std::string& w : t.warnings) err += w + "\n";
    return true;
  }

  // An expected array is a tool list unless its entries are chat messages (have a "role").
  bool is_tool_list(std::string_view raw) {
    simdjson::dom::element root;
    simdjson::dom::array items;
    if (json.parse(raw.data(), raw.size(), true).get(root) != simdjson::SUCCESS ||
        root.get_array().get(items) != simdjson::SUCCESS)
      return false;
    for (simdjson::dom::element item : items)
      if (item.is_object() && item["role"].error() == simdjson::SUCCESS) return false;
    return true;
  }

  void emit(const ScoreResult& r, std::string& out) {
    summary->add(r);
    const ScoreThresholds& t = options.thresholds;
    if (t.per_record) {
      const std::optional<double> values[4] = {r.overall, r.selection, r.ordering, r.arguments};
      for (int m = 0; m < 4; ++m)
        if (t.min[m] && values[m] && *values[m] < *t.min[m])
          summary->below.push_back({record_no, plain_id, static_cast<ScoreMetric>(m), *values[m]});
    }
    if (options.format == ScoreFormat::text) {
      if (!options.quiet) append_record_text(out, plain_id, r);
    } else {
      append_record_json(out, id_json, r);
      out += options.format == ScoreFormat::json ? ",\n" : "\n";
    }
  }

  // The record's id so far: the best of its id fields (id > case_id > trace_id), as a
  // string (decoded, in plain_id) or a number (its source text).
  struct RecordId {
    int rank = 0;  // 0: none yet
    bool is_string = false;
    std::string_view number;
  };

  static std::string_view trim_number(std::string_view n) {
    while (!n.empty() && (n.back() == ' ' || n.back() == '\n' || n.back() == '\t' || n.back() == '\r'))
      n.remove_suffix(1);
    return n;
  }

  // Takes `v` as the id when `key` names a better id field than `id` holds; values of other
  // types are passed over. Both record readers go through here, so they pick the same id.
  simdjson::error_code read_id(std::string_view key, simdjson::ondemand::value& v,
                               simdjson::ondemand::json_type type, RecordId& id) {
    int rank = key == "id" ? 3 : key == "case_id" ? 2 : key == "trace_id" ? 1 : 0;
    if (rank <= id.rank) return simdjson::SUCCESS;
    if (type == simdjson::ondemand::json_type::string) {
      std::string_view text;
      if (auto e = v.get_string().get(text)) return e;
      plain_id.assign(text);  // the view dies with the next string read
      id.is_string = true;
      id.rank = rank;
    } else if (type == simdjson::ondemand::json_type::number) {
      id.number = trim_number(v.raw_json_token());
      id.is_string = false;
      id.rank = rank;
    }
    return simdjson::SUCCESS;
  }

  // Sets the record's id (JSON text and plain text) from `id`, else file:line.
  void set_id(const RawRecord& rec, const RecordId& id) {
    record_no = rec.origin.record;
    id_json.clear();
    if (id.rank > 0 && id.is_string) {
      append_json_string(id_json, plain_id);
    } else if (id.rank > 0) {
      id_json.assign(id.number);
      plain_id = id_json;
    } else {
      plain_id = fmt::format("{}:{}", rec.origin.file, rec.origin.line);
      append_json_string(id_json, plain_id);
    }
  }

  // The common record — both sides OpenAI chat messages — in one pass over the record's
  // own document (metrics/chat_calls.hpp): no copy or second parse of a side, arguments
  // canonicalized once from their source. False, with nothing written or counted, for
  // anything else: process() then reads the record as below, with the same results.
  // `release`: the record's own text, which the caller lets go of once the record's calls
  // are read (null: the record stays as it is).
  bool fast_process(const RawRecord& rec, std::string* release, std::string& out) {
    if (!fast.enabled() || !rec.container_error.empty()) return false;
    std::string_view text = rec.bytes();
    std::size_t readable = rec.readable();
    if (readable - text.size() < simdjson::SIMDJSON_PADDING) {
      buf.reserve(text.size() + simdjson::SIMDJSON_PADDING);
      buf.assign(text);
      text = buf;
      readable = buf.capacity();
    }
    metrics::ScorerCore& impl = core;
    impl.actual.clear();
    impl.expected.clear();
    impl.actual_args.clear();
    impl.expected_args.clear();
    RecordId id;
    const bool by_message = text.size() > options.read_by_message_above;
    fast.begin_record(impl.canon, by_message ? text : std::string_view());
    if (!(by_message ? read_by_message(text, readable, id) : read_whole(text, readable, id))) return false;
    if (by_message) fast.release_scratch();
    // Duplicates depend on whether a repeated call's first result was an error. The direct
    // reader knows unless error patterns are given: then a side that repeats a call goes the
    // full way.
    if (!fast.reads_errors()) {
      impl.call_keys.resize(impl.actual.size());
      for (std::size_t j = 0; j < impl.actual.size(); ++j)
        impl.call_keys[j] = {impl.actual[j].name, impl.canon.whole(impl.actual_args[j]), false};
      if (metrics::has_repeated_call(impl.call_keys, impl.order)) return false;
    }
    if (by_message) {
      // Scored from here on: the record's bytes, which nothing read points into once the
      // reading's scratch is freed, are let go of rather than held beside the scoring's memory.
      if (text.data() == buf.data()) std::string().swap(buf);
      if (release && text.data() == release->data()) std::string().swap(*release);
    }
    ++summary->records;
    set_id(rec, id);
    impl.names_interned = true;  // the direct reader interns every name
    ScoreResult r = impl.score_canonical(impl.actual, impl.expected, nullptr);
    impl.names_interned = false;
    emit(r, out);
    if (by_message) {  // not kept for the records after a large one
      std::vector<metrics::Call>().swap(impl.actual);
      std::vector<metrics::Call>().swap(impl.expected);
      std::vector<metrics::CanonArgs>().swap(impl.actual_args);
      std::vector<metrics::CanonArgs>().swap(impl.expected_args);
    }
    return true;
  }

  // The record as one On-Demand document.
  bool read_whole(std::string_view text, std::size_t readable, RecordId& id) {
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    if (od.iterate(simdjson::padded_string_view(text.data(), text.size(), readable)).get(doc) ||
        doc.get_object().get(obj))
      return false;
    metrics::ScorerCore& impl = core;
    bool have_actual = false, have_expected = false;
    const bool members_ok = json::for_members(obj, [&](std::string_view key, bool, simdjson::ondemand::value v) {
      const ShapeKeys side = shape_key(key);
      if (side == shape_key_bits::actual) {
        if (have_actual || !fast.read_side(v, impl.canon, impl.actual, impl.actual_args)) return false;
        have_actual = true;
        return true;
      }
      if (side == shape_key_bits::expected) {
        if (have_expected || !fast.read_side(v, impl.canon, impl.expected, impl.expected_args)) return false;
        have_expected = true;
        return true;
      }
      simdjson::ondemand::json_type type;
      return !v.type().get(type) && !read_id(key, v, type, id);
    });
    return members_ok && have_actual && have_expected;
  }

  // A large record, one message at a time (json/pieces.hpp): each message is its own
  // document, so the parser's index covers one message, not the record (whose index, 4 bytes
  // a token, is larger than the record itself). The members beside the sides are read as
  // read_whole reads them, each from a small object of its own. The cursor takes keys without
  // escapes and sides given as arrays only; any other record goes the general way.
  bool read_by_message(std::string_view text, std::size_t readable, RecordId& id) {
    metrics::ScorerCore& impl = core;
    json::PieceCursor c(text);
    json::MemberNames names;
    bool have_actual = false, have_expected = false;
    if (!c.eat('{')) return false;
    do {
      std::string_view key;
      if (!c.plain_string(&key) || !names.insert(key) || !c.eat(':')) return false;
      const ShapeKeys side = shape_key(key);
      const bool is_actual = side == shape_key_bits::actual;
      const bool is_expected = side == shape_key_bits::expected;
      if (is_actual || is_expected) {
        bool& have = is_actual ? have_actual : have_expected;
        if (have || !c.eat('[')) return false;
        have = true;
        std::vector<metrics::Call>& calls = is_actual ? impl.actual : impl.expected;
        std::vector<metrics::CanonArgs>& args = is_actual ? impl.actual_args : impl.expected_args;
        fast.begin_side(calls);
        std::uint32_t n = 0;
        if (!c.eat(']')) {
          do {
            std::string_view m;
            if (!c.value(&m)) return false;
            const std::size_t room = readable - static_cast<std::size_t>(m.data() - text.data());
            simdjson::ondemand::document doc;
            simdjson::ondemand::value v;
            // The message ends where its object does: the cursor and simdjson count brackets
            // alike, and read_message reads every member (a bracket of the wrong kind is
            // simdjson's error there).
            if (od.iterate(simdjson::padded_string_view(m.data(), m.size(), room)).get(doc) ||
                doc.get_value().get(v) || !fast.read_message(v, n, impl.canon, calls, args))
              return false;
            ++n;
          } while (c.eat(','));
          if (!c.eat(']')) return false;
        }
        if (!metrics::ChatCallReader::end_side(n)) return false;
        continue;
      }
      std::string_view value;
      if (!c.value(&value)) return false;
      member.assign("{\"");
      member.append(key);
      member.append("\":");
      member.append(value);
      member.push_back('}');
      member.reserve(member.size() + simdjson::SIMDJSON_PADDING);
      simdjson::ondemand::document doc;
      simdjson::ondemand::object obj;
      if (od.iterate(simdjson::padded_string_view(member.data(), member.size(), member.capacity())).get(doc) ||
          doc.get_object().get(obj))
        return false;
      const int rank = id.rank;
      const bool ok = json::for_members(obj, [&](std::string_view k, bool, simdjson::ondemand::value v) {
        simdjson::ondemand::json_type type;
        return !v.type().get(type) && !read_id(k, v, type, id);
      });
      if (!ok) return false;
      if (id.rank != rank && !id.is_string) id.number = number.assign(id.number);  // it points into `member`
    } while (c.eat(','));
    return c.eat('}') && c.at_end() && have_actual && have_expected;
  }

  void process(const RawRecord& rec, std::string* release, std::string& out, std::string& err) {
    if (rec.skipped()) {
      ++summary->warnings;
      (err += rec.skip_warning) += '\n';
      return;
    }
    if (fast_process(rec, release, out)) return;
    ++summary->records;
    if (!rec.container_error.empty()) return reject(rec.origin, rec.container_error, out, err);
    // A padded copy lets simdjson's on-demand parser hand out raw slices of each side
    // without re-serializing them.
    buf.assign(rec.bytes());
    buf.reserve(buf.size() + simdjson::SIMDJSON_PADDING);
    simdjson::ondemand::document doc;
    auto bad_json = [&](simdjson::error_code e) {
      const char* loc = nullptr;
      std::size_t off = 0;
      if (doc.current_location().get(loc) == simdjson::SUCCESS && loc >= buf.data())
        off = static_cast<std::size_t>(loc - buf.data());
      reject(at(rec, off), fmt::format("invalid JSON ({})", simdjson::error_message(e)), out, err);
    };
    if (auto e = od.iterate(simdjson::padded_string_view(buf.data(), buf.size(), buf.capacity())).get(doc)) {
      // Rejected before iteration started (e.g. an unclosed string): the document has no
      // position to ask for (asking crashed), so the offending byte is searched for, and
      // the record's start is reported when it cannot be told.
      std::size_t bad = json::stage1_error_offset(e, rec.bytes());
      return reject(bad == std::string_view::npos ? rec.origin : at(rec, bad),
                    fmt::format("invalid JSON ({})", simdjson::error_message(e)), out, err);
    }
    simdjson::ondemand::object obj;
    if (auto e = doc.get_object().get(obj)) {
      if (e == simdjson::INCORRECT_TYPE)
        return reject(rec.origin, "a score record is an object with \"actual\" and \"expected\"", out, err);
      return bad_json(e);
    }
    std::string_view actual, expected, path, key;
    bool expected_is_path = false, expected_is_array = false, have_actual = false, have_expected = false;
    std::size_t path_off = 0;
    RecordId id;
    json::MemberNames names;
    for (auto member : obj) {
      simdjson::ondemand::field field;
      if (auto e = std::move(member).get(field)) return bad_json(e);
      const char* quote = field.key().raw() - 1;  // before unescaped_key(), which consumes it
      if (auto e = field.unescaped_key().get(key)) return bad_json(e);
      const std::size_t key_off = static_cast<std::size_t>(quote - buf.data());
      if (!names.insert(key)) return reject(at(rec, key_off), json::duplicate_member_message(key), out, err);
      simdjson::ondemand::value v = field.value();
      simdjson::ondemand::json_type type;
      if (auto e = v.type().get(type)) return bad_json(e);
      const ShapeKeys side = shape_key(key);
      bool is_actual = side == shape_key_bits::actual;
      bool is_expected = side == shape_key_bits::expected;
      std::string_view raw;
      simdjson::error_code e = simdjson::SUCCESS;
      if (is_actual || is_expected) {
        if (is_expected && type == simdjson::ondemand::json_type::string) {
          std::string_view token = v.raw_json_token();
          path_off = static_cast<std::size_t>(token.data() - buf.data());
          e = v.get_string().get(path);
          expected_is_path = true;
          raw = path;
        } else {
          e = json::value_source_text(v, &raw);
        }
        if (e) return bad_json(e);
        if (is_actual ? have_actual : have_expected)
          return reject(at(rec, key_off),
                        is_actual ? "the actual side is given twice (\"actual\" and \"outputs\")"
                                  : "the expected side is given twice (\"expected\" and \"reference_outputs\")",
                        out, err);
        (is_actual ? have_actual : have_expected) = true;
        if (is_actual) actual = raw;
        else {
          expected = raw;
          expected_is_array = type == simdjson::ondemand::json_type::array;
          if (type != simdjson::ondemand::json_type::string) expected_is_path = false;
        }
      } else if (auto e2 = read_id(key, v, type, id)) {
        return bad_json(e2);
      }
    }
    if (actual.empty()) return reject(rec.origin, "record has no \"actual\" (or \"outputs\")", out, err);
    if (expected.empty() && !expected_is_path)
      return reject(rec.origin, "record has no \"expected\" (or \"reference_outputs\")", out, err);

    set_id(rec, id);

    if (!parse_side(actual, false, rec, actual_trace, out, err)) return;
    ScoreResult r;
    if (expected_is_path) {
      r = core.score(actual_trace, path, "expected");
      if (!r.error.empty()) return reject(at(rec, path_off), r.error, out, err);
    } else {
      if (!parse_side(expected, expected_is_array && is_tool_list(expected), rec, expected_trace, out, err))
        return;
      r = core.score(actual_trace, expected_trace);
      if (!r.error.empty()) return reject(rec.origin, r.error, out, err);
    }
    emit(r, out);
  }
};

ScoreRecordReader::ScoreRecordReader(const ScoreRunOptions& options) : impl_(std::make_unique<Impl>(options)) {}
ScoreRecordReader::~ScoreRecordReader() = default;
ScoreRecordReader::ScoreRecordReader(ScoreRecordReader&&) noexcept = default;
ScoreRecordReader& ScoreRecordReader::operator=(ScoreRecordReader&&) noexcept = default;

const std::string& ScoreRecordReader::option_error() const { return impl_->parser.option_error(); }

void ScoreRecordReader::read(const RawRecord& record, std::string& out, std::string& err, ScoreSummary& summary) {
  impl_->summary = &summary;
  impl_->process(record, nullptr, out, err);
  impl_->summary = nullptr;
}

void ScoreRecordReader::read(RawRecord& record, std::string& out, std::string& err, ScoreSummary& summary) {
  impl_->summary = &summary;
  impl_->process(record, &record.text, out, err);
  impl_->summary = nullptr;
}

namespace {
struct ScoreWorker {
  ScoreRecordReader reader;
  ScoreSummary summary;
  void process(RawRecord& rec, std::string& out, std::string& err) { reader.read(rec, out, err, summary); }
};
}  // namespace

ScoreRunner::ScoreRunner(ScoreRunOptions options) : options_(std::move(options)) {
  option_error_ = TraceParser(options_.reading).option_error();
}
ScoreRunner::~ScoreRunner() = default;

const std::string& ScoreRunner::option_error() const { return option_error_; }

ScoreSummary ScoreRunner::run(const RecordInput& input, const RunOutput& output) const {
  ScoreSummary total;
  if (!option_error_.empty()) return total;
  std::vector<ScoreWorker> done = process_records<ScoreWorker>(
      input, effective_jobs(options_.jobs), [&] { return ScoreWorker{ScoreRecordReader(options_), {}}; }, output);
  for (const ScoreWorker& w : done) total.merge(w.summary);
  return total;
}

ScoreSummary ScoreRunner::run(RecordSource& source, const RunOutput& output) const {
  return run(RecordInput(source), output);
}

void finish_score(ScoreFormat format, const ScoreSummary& s, std::FILE* body, std::FILE* out,
                  const ScoreThresholds& thresholds) {
  if (format == ScoreFormat::text) {
    detail::write_all(out, score_summary_text(s, thresholds));
    return;
  }
  if (format != ScoreFormat::json) return;
  std::fputs("{\"records\":[\n", out);
  long size = 0;
  if (body) {
    std::fflush(body);
    size = std::ftell(body);
    std::rewind(body);
    // Every record's part ends in ",\n": copy all but the last.
    long left = size >= 2 ? size - 2 : 0;
    char buf[1 << 16];
    while (left > 0) {
      std::size_t n = std::fread(buf, 1, std::min<long>(left, sizeof buf), body);
      if (n == 0) break;
      std::fwrite(buf, 1, n, out);
      left -= static_cast<long>(n);
    }
  }
  fmt::print(out, "{}],\n\"summary\":{}}}\n", size >= 2 ? "\n" : "", score_summary_json(s, thresholds));
}

std::vector<ThresholdResult> check_thresholds(const ScoreSummary& s, const ScoreThresholds& t) {
  std::vector<ThresholdResult> out;
  const ScoreSum* sums[4] = {&s.overall, &s.selection, &s.ordering, &s.arguments};
  const std::uint64_t counts[4] = {s.scored, s.scored, s.ordering_n, s.arguments_n};
  for (int m = 0; m < 4; ++m) {
    if (!t.min[m]) continue;
    ThresholdResult r;
    r.metric = static_cast<ScoreMetric>(m);
    r.threshold = *t.min[m];
    if (t.per_record) {
      for (const ScoreSummary::Below& b : s.below) r.failing += b.metric == r.metric;
      r.pass = r.failing == 0;
    } else {
      if (counts[m]) r.value = sums[m]->mean(counts[m]);
      r.pass = r.value && *r.value >= r.threshold;
    }
    out.push_back(r);
  }
  return out;
}

std::string score_summary_text(const ScoreSummary& s, const ScoreThresholds& t) {
  std::string out = score_summary_text(s);
  for (const ThresholdResult& r : check_thresholds(s, t)) {
    const std::string_view name = to_string(r.metric);
    if (t.per_record) {
      fmt::format_to(std::back_inserter(out), "--min-{} {} per record: ", name, r.threshold);
      if (r.pass) {
        out += "pass\n";
        continue;
      }
      fmt::format_to(std::back_inserter(out), "FAIL, {} record{} below:", r.failing, r.failing == 1 ? "" : "s");
      for (const ScoreSummary::Below& b : s.below)
        if (b.metric == r.metric) fmt::format_to(std::back_inserter(out), " {} ({})", b.id, fixed2(b.value));
      out += '\n';
    } else if (r.pass) {
      fmt::format_to(std::back_inserter(out), "--min-{} {}: pass (mean {})\n", name, r.threshold, fixed2(*r.value));
    } else if (r.value) {
      fmt::format_to(std::back_inserter(out), "--min-{} {}: FAIL, mean {} is {} short\n", name, r.threshold,
                     fixed2(*r.value), fixed2(r.threshold - *r.value));
    } else {
      fmt::format_to(std::back_inserter(out), "--min-{} {}: FAIL, no record has a value for it\n", name, r.threshold);
    }
  }
  return out;
}

std::string score_summary_json(const ScoreSummary& s, const ScoreThresholds& t) {
  std::string out = score_summary_json(s);
  if (!t.any()) return out;
  out.pop_back();  // the closing brace
  out += ",\"thresholds\":[";
  bool first = true;
  for (const ThresholdResult& r : check_thresholds(s, t)) {
    out += first ? "" : ",";
    first = false;
    fmt::format_to(std::back_inserter(out), "{{\"metric\":\"{}\",\"min\":", to_string(r.metric));
    append_number(out, r.threshold);
    if (t.per_record) {
      fmt::format_to(std::back_inserter(out), ",\"per_record\":true,\"failing\":{}", r.failing);
    } else {
      out += ",\"mean\":";
      if (r.value) append_number(out, *r.value);
      else out += "null";
      out += ",\"shortfall\":";
      if (r.value && !r.pass) append_number(out, r.threshold - *r.value);
      else out += r.pass ? "0" : "null";
    }
    fmt::format_to(std::back_inserter(out), ",\"pass\":{}}}", r.pass ? "true" : "false");
  }
  out += "]";
  if (t.per_record) {
    out += ",\"failing\":[";
    for (std::size_t i = 0; i < s.below.size(); ++i) {
      out += i ? ",{\"id\":" : "{\"id\":";
      append_json_string(out, s.below[i].id);
      fmt::format_to(std::back_inserter(out), ",\"metric\":\"{}\",\"value\":", to_string(s.below[i].metric));
      append_number(out, s.below[i].value);
      out += '}';
    }
    out += ']';
  }
  out += '}';
  return out;
}

int exit_status(const ScoreSummary& s, const ScoreThresholds& t) {
  if (s.rejected > 0) return 2;
  for (const ThresholdResult& r : check_thresholds(s, t))
    if (!r.pass) return 1;
  return 0;
}

std::string ScoreSummary::to_json() const {
  std::string out = fmt::format(
      "{{\"records\":{},\"rejected\":{},\"warnings\":{},\"scored\":{},\"selection\":\"{}\",\"ordering\":\"{}\","
      "\"overall\":\"{}\",\"arguments\":\"{}\",\"ordering_n\":{},\"arguments_n\":{},\"strict\":{},\"unordered\":{},"
      "\"subset\":{},\"superset\":{},\"duplicates\":{},\"buckets\":[{},{},{},{},{},{}]",
      records, rejected, warnings, scored, selection.to_string(), ordering.to_string(), overall.to_string(),
      arguments.to_string(), ordering_n, arguments_n, strict,
      unordered, subset, superset, duplicates, buckets[0], buckets[1], buckets[2], buckets[3], buckets[4], buckets[5]);
  for (auto [label, m] : {std::pair{"missed", &missed}, std::pair{"extra", &extra}}) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":", label);
    detail::append_count_object(out, *m);
  }
  out += ",\"below\":[";
  for (std::size_t i = 0; i < below.size(); ++i) {
    fmt::format_to(std::back_inserter(out), "{}{{\"record\":{},\"id\":", i ? "," : "", below[i].record);
    append_json_string(out, below[i].id);
    fmt::format_to(std::back_inserter(out), ",\"metric\":{},\"value\":{:.17g}}}", static_cast<int>(below[i].metric),
                   below[i].value);
  }
  out += "]}";
  return out;
}

bool ScoreSummary::from_json(std::string_view json, ScoreSummary* out, std::string* error) {
  detail::CountersJson in("score summary", error);
  if (!in.parse(json)) return false;
  const simdjson::dom::element root = in.root();
  ScoreSummary s;
  std::pair<const char*, std::uint64_t*> counts[] = {
      {"records", &s.records},       {"rejected", &s.rejected}, {"warnings", &s.warnings},
      {"scored", &s.scored},         {"ordering_n", &s.ordering_n}, {"arguments_n", &s.arguments_n},
      {"strict", &s.strict},         {"unordered", &s.unordered}, {"subset", &s.subset},
      {"superset", &s.superset},     {"duplicates", &s.duplicates}};
  for (auto [key, v] : counts)
    if (root[key].get_uint64().get(*v)) return in.fail(fmt::format("\"{}\" is not a non-negative integer", key));
  std::pair<const char*, ScoreSum*> sums[] = {
      {"selection", &s.selection}, {"ordering", &s.ordering}, {"overall", &s.overall}, {"arguments", &s.arguments}};
  for (auto [key, v] : sums) {
    std::string_view digits;
    if (root[key].get_string().get(digits) || !ScoreSum::from_string(digits, v))
      return in.fail(fmt::format("\"{}\" is not an exact sum (a string of digits)", key));
  }
  simdjson::dom::array buckets;
  if (root["buckets"].get_array().get(buckets) || buckets.size() != 6) return in.fail("\"buckets\" is not 6 counts");
  for (std::size_t i = 0; i < 6; ++i)
    if (buckets.at(i).get_uint64().get(s.buckets[i])) return in.fail("\"buckets\" is not 6 counts");
  for (auto [key, m] : {std::pair{"missed", &s.missed}, std::pair{"extra", &s.extra}}) {
    switch (detail::read_count_object(root, key, m)) {
      case detail::CountObjectRead::ok: break;
      case detail::CountObjectRead::not_object: return in.fail(fmt::format("\"{}\" is not an object", key));
      case detail::CountObjectRead::bad_count: return in.fail(fmt::format("\"{}\" holds a count that is not an integer", key));
    }
  }
  simdjson::dom::array below;
  if (root["below"].get_array().get(below)) return in.fail("\"below\" is not an array");
  for (simdjson::dom::element e : below) {
    ScoreSummary::Below b;
    std::string_view id;
    std::uint64_t metric = 0;
    if (e["record"].get_uint64().get(b.record) || e["id"].get_string().get(id) ||
        e["metric"].get_uint64().get(metric) || metric > 3 || e["value"].get_double().get(b.value))
      return in.fail("\"below\" holds an entry that is not {record, id, metric, value}");
    b.id = std::string(id);
    b.metric = static_cast<ScoreMetric>(metric);
    s.below.push_back(std::move(b));
  }
  *out = std::move(s);
  return true;
}

}  // namespace trajcheck
