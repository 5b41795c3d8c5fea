// `trajcheck score`: classic tool-use scores of records that carry both the actual and the
// expected trajectory, streamed in input order (jsonl), gathered (json) or as tables (text).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <simdjson.h>

#include "cli/command.hpp"
#include "cli/input.hpp"
#include "metrics/chat_calls.hpp"
#include "metrics/json_canon.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/reader.hpp"
#include "run/pipeline.hpp"

namespace trajcheck::cli {
namespace {

struct ScoreSettings {
  TraceInputOptions input;
  std::string format = "text";
  std::string selection = "jaccard";
  bool multiset = false;
  std::string weights = "0.6,0.4";
  std::uint32_t min_order_length = 0;
  std::string tool_args = "exact";
  std::vector<std::string> tool_args_for;
};

// Aggregates over scored records (per worker, merged at the end).
struct Summary {
  std::uint64_t scored = 0;
  double selection = 0, ordering = 0, overall = 0, arguments = 0;
  std::uint64_t ordering_n = 0, arguments_n = 0;
  std::uint64_t strict = 0, unordered = 0, subset = 0, superset = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t buckets[6] = {};  // [0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1) =1
  std::map<std::string, std::uint64_t> missed, extra;

  void add(const ScoreResult& r) {
    ++scored;
    selection += r.selection;
    overall += r.overall;
    if (r.ordering) {
      ordering += *r.ordering;
      ++ordering_n;
    }
    if (r.arguments) {
      arguments += *r.arguments;
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
  void merge(const Summary& o) {
    scored += o.scored;
    selection += o.selection;
    ordering += o.ordering;
    overall += o.overall;
    arguments += o.arguments;
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
  }
};

constexpr const char* kBucketNames[6] = {"0.0-0.2", "0.2-0.4", "0.4-0.6", "0.6-0.8", "0.8-1.0", "1.0"};

// Scores print with at most four decimals.
double round4(double x) { return std::round(x * 10000.0) / 10000.0; }

void append_number(std::string& out, double x) { fmt::format_to(std::back_inserter(out), "{}", round4(x)); }

void append_string_list(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    metrics::append_json_string(out, v[i]);
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
  metrics::append_json_string(out, r.explanation);
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

double mean(double sum, std::uint64_t n) { return n ? sum / double(n) : 0.0; }

std::string summary_text(const Summary& s, const InputCounts& c) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "scored {} record{} (read {}, rejected {})\n", s.scored,
                 s.scored == 1 ? "" : "s", c.records, c.rejected);
  if (s.scored == 0) return out;
  fmt::format_to(std::back_inserter(out), "mean selection {}, ordering {} ({} scored), overall {}, arguments {}\n",
                 fixed2(mean(s.selection, s.scored)),
                 s.ordering_n ? fixed2(mean(s.ordering, s.ordering_n)) : std::string("-"), s.ordering_n,
                 fixed2(mean(s.overall, s.scored)),
                 s.arguments_n ? fixed2(mean(s.arguments, s.arguments_n)) : std::string("-"));
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

std::string summary_json(const Summary& s, const InputCounts& c) {
  std::string out;
  fmt::format_to(std::back_inserter(out), "{{\"records\":{},\"scored\":{},\"rejected\":{}", c.records, s.scored,
                 c.rejected);
  auto num = [&](const char* key, double sum, std::uint64_t n) {
    fmt::format_to(std::back_inserter(out), ",\"{}\":", key);
    if (n) append_number(out, sum / double(n));
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
      metrics::append_json_string(out, t[i].first);
      fmt::format_to(std::back_inserter(out), ":{}", t[i].second);
    }
    out += '}';
  }
  out += '}';
  return out;
}

struct ScoreWorker {
  // Heap state: a Trajectory points at its ToolTable, and workers are moved into a vector.
  struct State {
    State(const ScoreOptions& o, const NormalizeOptions& n) : scorer(o), fast(n) {}
    ToolTable tools;
    Trajectory actual{&tools}, expected{&tools};
    Scorer scorer;
    metrics::ChatCallReader fast;
    simdjson::dom::parser json;
    simdjson::ondemand::parser od;
    std::string buf, id, plain_id;
  };
  const TraceParser* parser = nullptr;
  const TraceParser* list_parser = nullptr;
  const ScoreSettings* settings = nullptr;
  std::unique_ptr<State> st;
  InputCounts counts;
  Summary summary;

  void reject(const RecordOrigin& where, const std::string& message, std::string& out, std::string& err) {
    ++counts.rejected;
    err += format_record_error(RecordError{where, message});
    if (settings->format == "jsonl" || settings->format == "json") {
      out += "{\"record\":";
      metrics::append_json_string(out, fmt::format("{}:{}", where.file, where.line));
      out += ",\"error\":";
      metrics::append_json_string(out, message);
      out += settings->format == "json" ? "},\n" : "}\n";
    }
  }

  // Where byte `off` of a record is, for messages.
  static RecordOrigin at(const RawRecord& rec, std::size_t off) {
    RecordOrigin o = rec.origin;
    off = std::min(off, rec.text.size());
    std::size_t nl = rec.text.rfind('\n', off == 0 ? 0 : off - 1);
    if (off == 0 || nl == std::string::npos) {
      o.column += off;
    } else {
      o.line += static_cast<std::uint64_t>(std::count(rec.text.begin(), rec.text.begin() + off, '\n'));
      o.column = off - nl;
    }
    return o;
  }

  bool parse_side(std::string_view raw, bool list_like, const RawRecord& rec, Trajectory& t,
                  std::string& out, std::string& err) {
    // Messages point at the side itself and say which side it is.
    const bool is_actual = &t == &st->actual;
    RecordOrigin where = rec.origin;
    if (raw.data() >= st->buf.data() && raw.data() <= st->buf.data() + st->buf.size())
      where = at(rec, static_cast<std::size_t>(raw.data() - st->buf.data()));
    ParseOutcome o = (list_like ? list_parser : parser)->parse_value(raw, where, t);
    if (!o.ok()) {
      ++counts.rejected;
      for (RecordError& e : o.errors) {
        e.message.insert(0, is_actual ? "actual: " : "expected: ");
        err += format_record_error(e);
      }
      if (settings->format != "text") {
        out += "{\"record\":";
        metrics::append_json_string(out, fmt::format("{}:{}", rec.origin.file, rec.origin.line));
        out += ",\"error\":";
        metrics::append_json_string(out, o.errors.front().message);
        out += settings->format == "json" ? "},\n" : "}\n";
      }
      return false;
    }
    counts.warnings += t.warnings.size();
    if (!settings->input.quiet)
      for (const std::string& w : t.warnings) err += w + "\n";
    return true;
  }

  // An expected array is a tool list unless its entries are chat messages (have a "role").
  bool is_tool_list(std::string_view raw) {
    simdjson::dom::element root;
    simdjson::dom::array items;
    if (st->json.parse(raw.data(), raw.size(), true).get(root) != simdjson::SUCCESS ||
        root.get_array().get(items) != simdjson::SUCCESS)
      return false;
    for (simdjson::dom::element item : items)
      if (item.is_object() && item["role"].error() == simdjson::SUCCESS) return false;
    return true;
  }

  void emit(const ScoreResult& r, std::string& out) {
    ++counts.traces;
    summary.add(r);
    if (settings->format == "text") {
      if (!settings->input.quiet) append_record_text(out, st->plain_id, r);
    } else {
      append_record_json(out, st->id, r);
      out += settings->format == "json" ? ",\n" : "\n";
    }
  }

  // The record's id so far: the best of its id fields (id > case_id > trace_id), as a
  // string (decoded, in State::plain_id) or a number (its source text).
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
      st->plain_id.assign(text);  // the view dies with the next string read
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
    st->id.clear();
    if (id.rank > 0 && id.is_string) {
      metrics::append_json_string(st->id, st->plain_id);
    } else if (id.rank > 0) {
      st->id.assign(id.number);
      st->plain_id = st->id;
    } else {
      st->plain_id = fmt::format("{}:{}", rec.origin.file, rec.origin.line);
      metrics::append_json_string(st->id, st->plain_id);
    }
  }

  // The common record — both sides OpenAI chat messages — in one pass over the record's
  // own document (metrics/chat_calls.hpp): no copy or second parse of a side, arguments
  // canonicalized once from their source. False, with nothing written or counted, for
  // anything else: process() then reads the record as below, with the same results.
  bool fast_process(const RawRecord& rec, std::string& out) {
    if (!st->fast.enabled() || !rec.container_error.empty()) return false;
    simdjson::padded_string_view view;
    if (rec.text.capacity() - rec.text.size() >= simdjson::SIMDJSON_PADDING) {
      view = simdjson::padded_string_view(rec.text.data(), rec.text.size(), rec.text.capacity());
    } else {
      st->buf.reserve(rec.text.size() + simdjson::SIMDJSON_PADDING);
      st->buf.assign(rec.text);
      view = simdjson::padded_string_view(st->buf.data(), st->buf.size(), st->buf.capacity());
    }
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    if (st->od.iterate(view).get(doc) || doc.get_object().get(obj)) return false;
    Scorer::Impl& impl = st->scorer.impl();
    st->fast.begin_record(impl.canon);
    impl.actual.clear();
    impl.expected.clear();
    impl.aa.clear();
    impl.ea.clear();
    bool have_actual = false, have_expected = false;
    RecordId id;
    const bool members_ok = metrics::for_members(obj, [&](std::string_view key, bool, simdjson::ondemand::value v) {
      if (key == "actual" || key == "outputs") {
        if (have_actual || !st->fast.read_side(v, impl.canon, impl.actual, impl.aa)) return false;
        have_actual = true;
        return true;
      }
      if (key == "expected" || key == "reference_outputs") {
        if (have_expected || !st->fast.read_side(v, impl.canon, impl.expected, impl.ea)) return false;
        have_expected = true;
        return true;
      }
      simdjson::ondemand::json_type type;
      return !v.type().get(type) && !read_id(key, v, type, id);
    });
    if (!members_ok || !have_actual || !have_expected) return false;
    ++counts.records;
    set_id(rec, id);
    impl.names_interned = true;  // the direct reader interns every name
    ScoreResult r = impl.score_canonical(impl.actual, impl.expected, nullptr);
    impl.names_interned = false;
    emit(r, out);
    return true;
  }

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    if (fast_process(rec, out)) return;
    ++counts.records;
    if (!rec.container_error.empty()) return reject(rec.origin, rec.container_error, out, err);
    // A padded copy lets simdjson's on-demand parser hand out raw slices of each side
    // without re-serializing them.
    std::string& buf = st->buf;
    buf.assign(rec.text);
    buf.reserve(rec.text.size() + simdjson::SIMDJSON_PADDING);
    simdjson::ondemand::document doc;
    auto bad_json = [&](simdjson::error_code e) {
      const char* loc = nullptr;
      std::size_t off = 0;
      if (doc.current_location().get(loc) == simdjson::SUCCESS && loc >= buf.data())
        off = static_cast<std::size_t>(loc - buf.data());
      reject(at(rec, off), fmt::format("invalid JSON ({})", simdjson::error_message(e)), out, err);
    };
    if (auto e = st->od.iterate(simdjson::padded_string_view(buf.data(), buf.size(), buf.capacity())).get(doc)) {
      // Rejected before iteration started (e.g. an unclosed string): the document has no
      // position to ask for (asking crashed), so the record's start is reported.
      return reject(rec.origin, fmt::format("invalid JSON ({})", simdjson::error_message(e)), out, err);
    }
    simdjson::ondemand::object obj;
    if (auto e = doc.get_object().get(obj)) {
      if (e == simdjson::INCORRECT_TYPE)
        return reject(rec.origin, "a score record is an object with \"actual\" and \"expected\"", out, err);
      return bad_json(e);
    }
    std::string_view actual, expected, path, key;
    bool expected_is_path = false, expected_is_array = false;
    std::size_t path_off = 0;
    RecordId id;
    for (auto field : obj) {
      if (auto e = field.unescaped_key().get(key)) return bad_json(e);
      simdjson::ondemand::value v;
      if (auto e = field.value().get(v)) return bad_json(e);
      simdjson::ondemand::json_type type;
      if (auto e = v.type().get(type)) return bad_json(e);
      bool is_actual = key == "actual" || key == "outputs";
      bool is_expected = key == "expected" || key == "reference_outputs";
      std::string_view raw;
      simdjson::error_code e = simdjson::SUCCESS;
      if (is_actual || is_expected) {
        if (type == simdjson::ondemand::json_type::array) {
          simdjson::ondemand::array a;
          e = v.get_array().get(a);
          if (!e) e = a.raw_json().get(raw);
        } else if (type == simdjson::ondemand::json_type::object) {
          simdjson::ondemand::object o;
          e = v.get_object().get(o);
          if (!e) e = o.raw_json().get(raw);
        } else if (is_expected && type == simdjson::ondemand::json_type::string) {
          std::string_view token = v.raw_json_token();
          path_off = static_cast<std::size_t>(token.data() - buf.data());
          e = v.get_string().get(path);
          expected_is_path = true;
          raw = path;
        } else {
          raw = v.raw_json_token();
        }
        if (e) return bad_json(e);
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

    if (!parse_side(actual, false, rec, st->actual, out, err)) return;
    ScoreResult r;
    if (expected_is_path) {
      r = st->scorer.score(st->actual, path, "expected");
      if (!r.error.empty()) return reject(at(rec, path_off), r.error, out, err);
    } else {
      if (!parse_side(expected, expected_is_array && is_tool_list(expected), rec, st->expected, out, err))
        return;
      r = st->scorer.score(st->actual, st->expected);
    }
    emit(r, out);
  }
};

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
  return *s >= 0 && *o >= 0 && *s + *o > 0 && std::isfinite(*s) && std::isfinite(*o);
}

int run_score(ScoreSettings& s) {
  ScoreOptions opt;
  if (!parse_selection_metric(s.selection, &opt.selection)) {
    fmt::print(stderr, "trajcheck score: unknown --selection '{}'\n", s.selection);
    return kBadInput;
  }
  if (!parse_weights(s.weights, &opt.selection_weight, &opt.ordering_weight)) {
    fmt::print(stderr, "trajcheck score: --weights '{}': expected SELECTION,ORDERING (two non-negative numbers, not both 0)\n",
               s.weights);
    return kBadInput;
  }
  opt.multiset = s.multiset;
  opt.min_order_length = s.min_order_length;
  if (!parse_argument_mode(s.tool_args, &opt.tool_args)) {
    fmt::print(stderr, "trajcheck score: unknown --tool-args '{}'\n", s.tool_args);
    return kBadInput;
  }
  for (const std::string& spec : s.tool_args_for) {
    auto eq = spec.find('=');
    ArgumentMode mode;
    if (eq == std::string::npos || eq == 0 || !parse_argument_mode(spec.substr(eq + 1), &mode)) {
      fmt::print(stderr, "trajcheck score: --tool-args-for '{}': expected NAME=exact|ignore|subset|superset\n", spec);
      return kBadInput;
    }
    opt.tool_args_for.emplace_back(spec.substr(0, eq), mode);
  }
  NormalizeOptions norm;
  std::string error;
  if (!make_normalize_options(s.input, &norm, &error)) {
    fmt::print(stderr, "trajcheck score: {}\n", error);
    return kBadInput;
  }
  NormalizeOptions list_norm = norm;
  list_norm.format = InputFormat::list;
  TraceParser parser(norm), list_parser(list_norm);
  if (!parser.option_error().empty()) {
    fmt::print(stderr, "trajcheck score: {}\n", parser.option_error());
    return kBadInput;
  }

  std::FILE* out = stdout;
  std::FILE* tmp = nullptr;
  if (s.format == "json") {
    // Records stream to a temporary file so memory stays flat; the array is closed after.
    tmp = std::tmpfile();
    if (!tmp) {
      fmt::print(stderr, "trajcheck score: cannot create a temporary file\n");
      return kInternal;
    }
    out = tmp;
  }
  RecordSource source(s.input.inputs);
  std::function<ScoreWorker()> make = [&] {
    ScoreWorker w;
    w.parser = &parser;
    w.list_parser = &list_parser;
    w.settings = &s;
    w.st = std::make_unique<ScoreWorker::State>(opt, norm);
    return w;
  };
  std::vector<ScoreWorker> done =
      process_records<ScoreWorker>(source, effective_jobs(s.input.jobs), make, out, stderr);
  InputCounts counts;
  Summary summary;
  for (const ScoreWorker& w : done) {
    counts.merge(w.counts);
    summary.merge(w.summary);
  }

  if (s.format == "json") {
    std::fflush(tmp);
    long size = std::ftell(tmp);
    std::rewind(tmp);
    std::fputs("{\"records\":[\n", stdout);
    // Copy all but the last ",\n".
    long left = size >= 2 ? size - 2 : 0;
    char buf[1 << 16];
    while (left > 0) {
      std::size_t n = std::fread(buf, 1, std::min<long>(left, sizeof buf), tmp);
      if (n == 0) break;
      std::fwrite(buf, 1, n, stdout);
      left -= static_cast<long>(n);
    }
    std::fclose(tmp);
    fmt::print(stdout, "{}],\n\"summary\":{}}}\n", size >= 2 ? "\n" : "", summary_json(summary, counts));
  } else if (s.format == "text") {
    fmt::print(stdout, "{}", summary_text(summary, counts));
  }
  std::fflush(stdout);
  return counts.rejected > 0 ? kBadInput : kPass;
}

const bool registered = register_command({"score", 20, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<ScoreSettings>();
  CLI::App* sub = app.add_subcommand("score", "score actual trajectories against expected ones (records carry both)");
  add_trace_input_options(sub, s->input);
  sub->add_option("--format", s->format, "text|json|jsonl")->check(CLI::IsMember({"text", "json", "jsonl"}));
  sub->add_option("--selection", s->selection, "jaccard|recall|precision|f1 (default jaccard)")
      ->check(CLI::IsMember({"jaccard", "recall", "precision", "f1"}));
  sub->add_flag("--multiset", s->multiset, "count repeated calls in selection");
  sub->add_option("--weights", s->weights, "SELECTION,ORDERING weights of overall (default 0.6,0.4)");
  sub->add_option("--min-order-length", s->min_order_length,
                  "below this many expected steps ordering is null and overall is selection");
  sub->add_option("--tool-args", s->tool_args, "exact|ignore|subset|superset (default exact)")
      ->check(CLI::IsMember({"exact", "ignore", "subset", "superset"}));
  sub->add_option("--tool-args-for", s->tool_args_for, "NAME=MODE argument mode for one tool (repeatable)");
  return [s] { return run_score(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
