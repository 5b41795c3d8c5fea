// trajcheck._native's support for trajcheck.dask: checking and scoring one piece of a corpus
// (a whole input, or one byte range of a JSONL file) and writing the end of a run from the
// statistics merged over all pieces. Everything goes through the public run layer, so a
// corpus checked in pieces gives what `trajcheck check` / `trajcheck score` give for the whole.
//
// A byte range [start, end) owns every line that starts inside it: a reader starting in the
// middle of a line skips to the next line, and a line that starts before `end` is read to its
// end even past `end`. Cuts may fall anywhere; `newlines_before` (the number of '\n' bytes
// before `start`) gives records the line numbers RecordSource gives them.
#include <sys/types.h>
#include <unistd.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "trajcheck/reader.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/score_run.hpp"

namespace py = pybind11;

namespace trajcheck::python {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// The records of the lines that start in [start, end) of a JSONL file, as RecordSource reads
// them: '\n' ends a line, a trailing '\r' is dropped, a BOM is dropped from line 1, blank
// lines are not records, and a read error is one rejected record (the range's last).
class RangeReader {
 public:
  RangeReader(std::string path, std::uint64_t start, std::uint64_t end, std::uint64_t newlines_before)
      : path_(std::move(path)), pos_(start), end_(end), newlines_(newlines_before) {}

  bool next(RawRecord& out) {
    if (done_) return false;
    if (!file_) {
      if (!open(out)) return true;  // an error record
      if (done_) return false;
    }
    for (;;) {
      if (pos_ >= end_) return finish();
      std::uint64_t line = newlines_ + 1;
      std::string error;
      bool got = read_line(out.text, &error);
      if (!error.empty()) return fail(out, line, error);
      if (!got) return finish();
      std::uint64_t col = 1;
      if (line == 1 && out.text.compare(0, kBom.size(), kBom) == 0) {
        out.text.erase(0, kBom.size());
        col += kBom.size();
      }
      if (!out.text.empty() && out.text.back() == '\r') out.text.pop_back();
      if (std::all_of(out.text.begin(), out.text.end(), is_ws)) continue;
      out.origin = RecordOrigin{path_, line, col, 0};
      out.container_error.clear();
      if (out.text.capacity() < out.text.size() + kRecordPadding) out.text.reserve(out.text.size() + kRecordPadding);
      return true;
    }
  }

 private:
  // Opens the file at the range's first line start; false when an error record was made.
  // Only the range at the start of the file reports a file that cannot be opened (once, at
  // line 1, as RecordSource does); the others then hold nothing.
  bool open(RawRecord& out) {
    file_.reset(std::fopen(path_.c_str(), "rb"));
    if (!file_ || (pos_ > 0 && ::fseeko(file_.get(), static_cast<off_t>(pos_ - 1), SEEK_SET) != 0)) {
      if (pos_ == 0) return !fail(out, 1, fmt::format("cannot open file: {}", std::strerror(errno)));
      done_ = true;
      return true;
    }
    if (pos_ == 0) return true;
    // From the byte before the range: the range starts a line only when that byte is '\n'.
    // Else the rest of the line belongs to an earlier range, and read_line counts its '\n'.
    --pos_;
    std::string skipped, error;
    bool got = read_line(skipped, &error);
    if (!error.empty()) {
      done_ = true;  // the range before reports it
      file_.reset();
      return true;
    }
    if (!got) done_ = true;
    else if (skipped.empty()) --newlines_;  // that '\n' is one of newlines_before
    return true;
  }

  // Reads one line (without its '\n') into `text`, counting the '\n'; false at end of file.
  bool read_line(std::string& text, std::string* error) {
    text.clear();
    bool any = false;
    for (;;) {
      if (bpos_ == bend_) {
        if (eof_) return any;
        bend_ = std::fread(buf_.data(), 1, buf_.size(), file_.get());
        bpos_ = 0;
        if (bend_ == 0) {
          eof_ = true;
          if (std::ferror(file_.get())) {
            *error = fmt::format("read error: {}", std::strerror(errno));
            return false;
          }
          continue;
        }
      }
      any = true;
      const char* start = buf_.data() + bpos_;
      const void* nl = std::memchr(start, '\n', bend_ - bpos_);
      if (nl) {
        std::size_t n = static_cast<const char*>(nl) - start;
        text.append(start, n);
        bpos_ += n + 1;
        pos_ += n + 1;
        ++newlines_;
        return true;
      }
      text.append(start, bend_ - bpos_);
      pos_ += bend_ - bpos_;
      bpos_ = bend_;
    }
  }

  bool fail(RawRecord& out, std::uint64_t line, std::string message) {
    out.text.clear();
    out.origin = RecordOrigin{path_, line, 1, 0};
    out.container_error = std::move(message);
    done_ = true;
    file_.reset();
    return true;
  }

  bool finish() {
    done_ = true;
    file_.reset();
    return false;
  }

  std::string path_;
  std::uint64_t pos_, end_, newlines_;
  File file_;
  std::vector<char> buf_ = std::vector<char>(1 << 16);
  std::size_t bpos_ = 0, bend_ = 0;
  bool eof_ = false, done_ = false;
};

// Where a task's records come from: the whole input `path` (RecordSource: a file of any
// format, a directory, or what cannot be read), or the range [start, end) of a JSONL file.
struct Piece {
  std::string path;
  std::int64_t start = -1;  // < 0: the whole input
  std::uint64_t end = 0, newlines_before = 0;
};

// Runs `run` over the records of the piece numbered `ordinal` in the corpus. Records are
// numbered (RecordOrigin::record) ordinal * 2^40 + their index in the piece, so that what is
// ordered by record number (a score run's records below a threshold) merges in input order.
template <class Run>
auto run_piece(const Piece& p, std::uint64_t ordinal, InputFormat format, Run&& run) {
  std::uint64_t next = ordinal << 40;
  auto numbered = [&next](RawRecord& r) {
    r.origin.record = next++;
    return true;
  };
  if (p.start < 0) {
    RecordSource source({p.path}, format);
    return run([&](RawRecord& r) { return source.next(r) && numbered(r); });
  }
  RangeReader reader(p.path, static_cast<std::uint64_t>(p.start), p.end, p.newlines_before);
  return run([&](RawRecord& r) { return reader.next(r) && numbered(r); });
}

Piece piece_of(const py::tuple& t) {
  Piece p;
  p.path = t[0].cast<std::string>();
  p.start = t[1].cast<std::int64_t>();
  p.end = t[2].cast<std::uint64_t>();
  p.newlines_before = t[3].cast<std::uint64_t>();
  return p;
}

// Text collected from a run's batches, which arrive in input order.
struct Collected {
  std::string out, err;
  RunOutput output() {
    return [this](std::string_view o, std::string_view e) {
      out.append(o);
      err.append(e);
    };
  }
};

// Writes `text` to the file descriptor `fd` (the caller's stdout or stderr), after anything
// Python buffered there was flushed by the caller.
File open_fd(int fd) {
  int copy = ::dup(fd);
  File f(copy >= 0 ? ::fdopen(copy, "wb") : nullptr);
  if (!f && copy >= 0) ::close(copy);
  return f;
}

// The body of a buffered report as the run left it: written, positioned at its end (the
// reports rewind it, and measure it by its position).
File open_body(const std::optional<std::string>& path) {
  if (!path) return nullptr;
  File f(std::fopen(path->c_str(), "rb"));
  if (f) std::fseek(f.get(), 0, SEEK_END);
  return f;
}

NormalizeOptions reading_from(const py::dict& o, std::string* error) {
  ReadingSpec spec;
  spec.input_format = o["input_format"].cast<std::string>();
  spec.aliases = o["aliases"].cast<std::vector<std::string>>();
  spec.error_patterns = o["error_patterns"].cast<std::vector<std::string>>();
  spec.context = o["context"].cast<std::vector<std::string>>();
  NormalizeOptions n;
  if (!parse_reading_spec(spec, &n, error)) return n;
  return n;
}

// One compiled rule set with the runner and report of `trajcheck check` over it. Built from
// the command line's option spellings; `error` says (with the CLI's words) why it cannot run.
class CheckTask {
 public:
  explicit CheckTask(const py::dict& o) {
    std::string fmt_name = o["format"].cast<std::string>(), fail_on = o["fail_on"].cast<std::string>();
    if (!parse_check_format(fmt_name, &report_options_.format)) {
      error_ = fmt::format("trajcheck check: unknown --format '{}'\n", fmt_name);
      return;
    }
    if (!parse_fail_on(fail_on, &report_options_.fail_on)) {
      error_ = fmt::format("trajcheck check: unknown --fail-on '{}'\n", fail_on);
      return;
    }
    bool quiet = o["quiet"].cast<bool>();
    report_options_.quiet = quiet;
    report_options_.color = report_options_.format == CheckFormat::text && o["color"].cast<bool>();
    CheckRunOptions run;
    std::string error;
    run.reading = reading_from(o, &error);
    if (!error.empty()) {
      error_ = fmt::format("trajcheck check: {}\n", error);
      return;
    }
    format_ = run.reading.format;
    run.fail_on = report_options_.fail_on;
    run.quiet = quiet;
    run.jobs = o["jobs"].cast<unsigned>();
    CompileOptions copts;
    copts.catalog_override = o["catalog"].cast<std::string>();
    RuleSetResult compiled = compile_rule_set(o["rules"].cast<std::vector<std::string>>(), copts);
    bool err_color = o["stderr_color"].cast<bool>();
    for (const RuleFile& f : compiled.files) {
      if (!f.read_error.empty()) diagnostics_ += fmt::format("trajcheck check: {}\n", f.read_error);
      else if (!f.ok() || (!f.diagnostics.empty() && !quiet))
        diagnostics_ += format_diagnostics(f.source, f.diagnostics, err_color);
    }
    if (!compiled.ok()) {
      error_ = "trajcheck check: rules did not compile; no trace was checked\n";
      return;
    }
    rules_ = compiled.rules;
    runner_ = std::make_unique<CheckRunner>(rules_, run);
    if (!runner_->option_error().empty()) {
      error_ = fmt::format("trajcheck check: {}\n", runner_->option_error());
      runner_.reset();
      return;
    }
    report_ = std::make_unique<CheckReport>(rules_, report_options_);
  }

  // What compiling printed (diagnostics, for stderr) and, when it cannot run, why.
  const std::string& diagnostics() const { return diagnostics_; }
  const std::string& error() const { return error_; }
  bool buffered() const { return report_ && report_->buffered(); }

  // (out, err, stats JSON) of the piece numbered `ordinal` in the corpus.
  py::tuple run(const py::tuple& piece, std::uint64_t ordinal) const {
    if (!runner_) throw std::runtime_error(error_);
    Piece p = piece_of(piece);
    Collected c;
    CheckStats st;
    {
      py::gil_scoped_release nogil;
      st = run_piece(p, ordinal, format_, [&](const RecordInput& in) { return runner_->run(in, *report_, c.output()); });
    }
    return py::make_tuple(py::bytes(c.out), py::bytes(c.err), st.to_json());
  }

  // Writes the end of the run (the summary; buffered formats the whole document, with the
  // parts from the file `body`) to `fd`, and returns the CLI's exit status.
  int finish(const std::string& stats_json, const std::optional<std::string>& body, int fd) const {
    if (!report_) throw std::runtime_error(error_);
    CheckStats st = stats_from(stats_json);
    File out = open_fd(fd);
    File in = open_body(body);
    if (!out || (body && !in)) throw std::runtime_error(fmt::format("cannot write the report: {}", std::strerror(errno)));
    report_->finish(st, in.get(), out.get());
    return exit_status(st);
  }

  static CheckStats stats_from(const std::string& json) {
    CheckStats st;
    std::string error;
    if (!CheckStats::from_json(json, &st, &error)) throw std::runtime_error("bad statistics: " + error);
    return st;
  }

 private:
  CheckReportOptions report_options_;
  InputFormat format_ = InputFormat::auto_detect;
  std::shared_ptr<const RuleSet> rules_;
  std::unique_ptr<CheckRunner> runner_;
  std::unique_ptr<CheckReport> report_;
  std::string diagnostics_, error_;
};

// The runner of `trajcheck score` from its option spellings.
class ScoreTask {
 public:
  explicit ScoreTask(const py::dict& o) {
    ScoreSpellings spell;
    spell.format = o["format"].cast<std::string>();
    spell.selection = o["selection"].cast<std::string>();
    spell.weights = o["weights"].cast<std::string>();
    spell.tool_args = o["tool_args"].cast<std::string>();
    spell.tool_args_for = o["tool_args_for"].cast<std::vector<std::string>>();
    spell.multiset = o["multiset"].cast<bool>();
    spell.min_order_length = o["min_order_length"].cast<std::uint32_t>();
    const char* names[4] = {"min_overall", "min_selection", "min_ordering", "min_arguments"};
    for (int m = 0; m < 4; ++m)
      if (!o[names[m]].is_none()) spell.min[m] = o[names[m]].cast<double>();
    spell.per_record = o["per_record"].cast<bool>();
    std::string error;
    if (!make_score_run_options(spell, &run_, &error)) {
      error_ = fmt::format("trajcheck score: {}\n", error);
      return;
    }
    run_.reading = reading_from(o, &error);
    if (!error.empty()) {
      error_ = fmt::format("trajcheck score: {}\n", error);
      return;
    }
    run_.quiet = o["quiet"].cast<bool>();
    run_.jobs = o["jobs"].cast<unsigned>();
    runner_ = std::make_unique<ScoreRunner>(run_);
    if (!runner_->option_error().empty()) {
      error_ = fmt::format("trajcheck score: {}\n", runner_->option_error());
      runner_.reset();
    }
  }

  const std::string& error() const { return error_; }
  bool buffered() const { return run_.format == ScoreFormat::json; }

  py::tuple run(const py::tuple& piece, std::uint64_t ordinal) const {
    if (!runner_) throw std::runtime_error(error_);
    Piece p = piece_of(piece);
    Collected c;
    ScoreSummary s;
    {
      py::gil_scoped_release nogil;
      s = run_piece(p, ordinal, run_.reading.format, [&](const RecordInput& in) { return runner_->run(in, c.output()); });
    }
    return py::make_tuple(py::bytes(c.out), py::bytes(c.err), s.to_json());
  }

  int finish(const std::string& summary_json, const std::optional<std::string>& body, int fd) const {
    ScoreSummary s = summary_from(summary_json);
    File out = open_fd(fd);
    File in = open_body(body);
    if (!out || (body && !in)) throw std::runtime_error(fmt::format("cannot write the report: {}", std::strerror(errno)));
    finish_score(run_.format, s, in.get(), out.get(), run_.thresholds);
    return exit_status(s, run_.thresholds);
  }

  static ScoreSummary summary_from(const std::string& json) {
    ScoreSummary s;
    std::string error;
    if (!ScoreSummary::from_json(json, &s, &error)) throw std::runtime_error("bad summary: " + error);
    return s;
  }

 private:
  ScoreRunOptions run_;
  std::unique_ptr<ScoreRunner> runner_;
  std::string error_;
};

// The '\n' bytes in [start, end) of a file (fewer when the file is shorter); -1 when it
// cannot be read (the task that reads the range then reports why).
std::int64_t count_newlines(const std::string& path, std::uint64_t start, std::uint64_t end) {
  py::gil_scoped_release nogil;
  File f(std::fopen(path.c_str(), "rb"));
  if (!f || ::fseeko(f.get(), static_cast<off_t>(start), SEEK_SET) != 0) return -1;
  std::vector<char> buf(1 << 20);
  std::uint64_t left = end - start, n = 0;
  while (left > 0) {
    std::size_t got = std::fread(buf.data(), 1, std::min<std::uint64_t>(left, buf.size()), f.get());
    if (got == 0) break;
    n += static_cast<std::uint64_t>(std::count(buf.data(), buf.data() + got, '\n'));
    left -= got;
  }
  if (std::ferror(f.get())) return -1;
  return static_cast<std::int64_t>(n);
}

}  // namespace

void init_dask(py::module_& m) {
  py::class_<CheckTask>(m, "_CheckTask")
      .def(py::init<const py::dict&>())
      .def_property_readonly("diagnostics", [](const CheckTask& t) { return py::bytes(t.diagnostics()); })
      .def_property_readonly("error", &CheckTask::error)
      .def_property_readonly("buffered", &CheckTask::buffered)
      .def("run", &CheckTask::run)
      .def("finish", &CheckTask::finish);
  py::class_<ScoreTask>(m, "_ScoreTask")
      .def(py::init<const py::dict&>())
      .def_property_readonly("error", &ScoreTask::error)
      .def_property_readonly("buffered", &ScoreTask::buffered)
      .def("run", &ScoreTask::run)
      .def("finish", &ScoreTask::finish);
  m.def("_merge_check_stats", [](const std::vector<std::string>& parts) {
    CheckStats all;
    for (const std::string& p : parts) all.merge(CheckTask::stats_from(p));
    return all.to_json();
  });
  m.def("_merge_score_summaries", [](const std::vector<std::string>& parts) {
    ScoreSummary all;
    for (const std::string& p : parts) all.merge(ScoreTask::summary_from(p));
    return all.to_json();
  });
  m.def("_check_exit_status", [](const std::string& stats) { return exit_status(CheckTask::stats_from(stats)); });
  m.def("_count_newlines", &count_newlines);
  m.def("_session_log", [](const std::string& path, const std::string& input_format) {
    // Whether the library reads the file whole as a session log: it is then one piece.
    InputFormat f = InputFormat::auto_detect;
    parse_input_format(input_format, &f);
    py::gil_scoped_release nogil;
    return RecordSource::is_session_log(path, f);
  });
  m.def("_read_range", [](const std::string& path, std::uint64_t start, std::uint64_t end, std::uint64_t before) {
    // The records a range yields, as (line, column, text or error): for tests of the cutting.
    RangeReader reader(path, start, end, before);
    RawRecord r;
    py::list out;
    while (reader.next(r))
      out.append(py::make_tuple(r.origin.line, r.origin.column,
                                py::bytes(r.container_error.empty() ? r.text : "error: " + r.container_error)));
    return out;
  });
}

}  // namespace trajcheck::python
