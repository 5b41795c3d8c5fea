// trajcheck._native's support for trajcheck.dask: checking and scoring one piece of a corpus
// (an InputPiece of the library's input layer: a whole entry, or a byte range of a plain JSONL
// file) and writing the end of a run from the statistics merged over all pieces. Listing,
// cutting and reading pieces is the library's (trajcheck/input.hpp), and the runs go through the
// public run layer, so a corpus checked in pieces gives what `trajcheck check` / `trajcheck
// score` give for the whole.
#include <unistd.h>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "trajcheck/input.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/score_run.hpp"

namespace py = pybind11;

namespace trajcheck::python {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// A piece as Python holds it: (path, kind, message, ranged, start, end, lines_before), kind the
// InputEntry::Kind's number.
using PieceTuple = std::tuple<std::string, int, std::string, bool, std::uint64_t, std::uint64_t, std::uint64_t>;

PieceTuple to_tuple(const InputPiece& p) {
  return {p.entry.path, static_cast<int>(p.entry.kind), p.entry.message, p.ranged, p.start, p.end, p.lines_before};
}

InputPiece piece_of(const PieceTuple& t) {
  InputPiece p;
  p.entry.path = std::get<0>(t);
  int kind = std::get<1>(t);
  if (kind < 0 || kind > static_cast<int>(InputEntry::Kind::skipped)) throw std::invalid_argument("bad piece kind");
  p.entry.kind = static_cast<InputEntry::Kind>(kind);
  p.entry.message = std::get<2>(t);
  p.ranged = std::get<3>(t);
  p.start = std::get<4>(t);
  p.end = std::get<5>(t);
  p.lines_before = std::get<6>(t);
  return p;
}

// Runs `run` over the records of the piece numbered `ordinal` in the corpus. Records are
// numbered (RecordOrigin::record) ordinal * 2^40 + their index in the piece, so that what is
// ordered by record number (a score run's records below a threshold) merges in input order.
template <class Run>
auto run_piece(InputPiece p, std::uint64_t ordinal, InputFormat format, Run&& run) {
  std::uint64_t next = ordinal << 40;
  RecordSource source({std::move(p)}, format);
  return run([&](RawRecord& r) {
    if (!source.next(r)) return false;
    r.origin.record = next++;
    return true;
  });
}

// Text of a run's batches, which arrive in input order: `err` collected, and `out` collected
// or, with `file`, written there as it comes (a piece's output can be several times its
// input: held whole, then copied into a Python bytes object, it cost more than checking it).
struct Collected {
  std::string out, err;
  std::FILE* file = nullptr;
  std::uint64_t written = 0;
  int error = 0;  // errno of the first failed write; nothing is written after it
  RunOutput output() {
    return [this](std::string_view o, std::string_view e) {
      if (!file) {
        out.append(o);
      } else if (!error && !o.empty()) {
        if (std::fwrite(o.data(), 1, o.size(), file) != o.size()) error = errno ? errno : EIO;
        written += o.size();
      }
      err.append(e);
    };
  }
};

// (out, err, statistics JSON) of `run(records, output)` over the piece numbered `ordinal` (as
// run_piece numbers its records), run without the GIL. With `out_path`, `out` is written to
// that file (created or emptied) and its size takes its place in the tuple; a file that
// cannot be written whole raises, naming it.
template <class Run>
py::tuple run_collected(const PieceTuple& piece, std::uint64_t ordinal, InputFormat format,
                        const std::optional<std::string>& out_path, Run&& run) {
  InputPiece p = piece_of(piece);
  Collected c;
  File file;
  auto fail = [&](int error) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", *out_path, std::strerror(error)));
  };
  if (out_path) {
    file.reset(std::fopen(out_path->c_str(), "wb"));
    if (!file) fail(errno);
    c.file = file.get();
  }
  const RunOutput output = c.output();
  auto stats = [&] {
    py::gil_scoped_release nogil;
    return run_piece(std::move(p), ordinal, format, [&](const RecordInput& in) { return run(in, output); });
  }();
  if (!out_path) return py::make_tuple(py::bytes(c.out), py::bytes(c.err), stats.to_json());
  if (!c.error && std::fflush(c.file) != 0) c.error = errno ? errno : EIO;
  if (std::fclose(file.release()) != 0 && !c.error) c.error = errno ? errno : EIO;
  if (c.error) fail(c.error);
  return py::make_tuple(c.written, py::bytes(c.err), stats.to_json());
}

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

// The report's destination (a copy of the descriptor `fd`) and, for a buffered format, the
// file `body` of its parts; an exception when either cannot be opened.
struct ReportFiles {
  File out, body;
};
ReportFiles open_report_files(int fd, const std::optional<std::string>& body) {
  ReportFiles f{open_fd(fd), open_body(body)};
  if (!f.out || (body && !f.body)) throw std::runtime_error(fmt::format("cannot write the report: {}", std::strerror(errno)));
  return f;
}

// Statistics a piece's run returned as JSON (CheckStats, ScoreSummary), read back; an exception
// naming them as `what` when they are not theirs.
template <class Stats>
Stats stats_from(const std::string& json, std::string_view what) {
  Stats s;
  std::string error;
  if (!Stats::from_json(json, &s, &error)) throw std::runtime_error(fmt::format("bad {}: {}", what, error));
  return s;
}

// The statistics of every piece merged, as JSON.
template <class Stats>
std::string merged_json(const std::vector<std::string>& parts, std::string_view what) {
  Stats all;
  for (const std::string& p : parts) all.merge(stats_from<Stats>(p, what));
  return all.to_json();
}

ReadingSpec reading_spec(const py::dict& o) {
  return ReadingSpec{o["input_format"].cast<std::string>(), o["aliases"].cast<std::vector<std::string>>(),
                     o["error_patterns"].cast<std::vector<std::string>>(), o["context"].cast<std::vector<std::string>>()};
}

// One compiled rule set with the runner and report of `trajcheck check` over it, set up from
// the command line's option spellings by the library's set_up_check.
class CheckTask {
 public:
  explicit CheckTask(const py::dict& o) {
    CheckSpellings spell;
    spell.rules = o["rules"].cast<std::vector<std::string>>();
    spell.catalog = o["catalog"].cast<std::string>();
    spell.format = o["format"].cast<std::string>();
    spell.fail_on = o["fail_on"].cast<std::string>();
    spell.reading = reading_spec(o);
    spell.jobs = o["jobs"].cast<unsigned>();
    spell.quiet = o["quiet"].cast<bool>();
    spell.color = o["color"].cast<bool>();
    spell.diagnostics_color = o["stderr_color"].cast<bool>();
    spell.allow_no_rules = o["allow_no_rules"].cast<bool>();
    CheckSetup setup = set_up_check(spell);
    diagnostics_ = std::move(setup.diagnostics);
    error_ = std::move(setup.error);
    if (!error_.empty()) return;
    format_ = setup.run.reading.format;
    rules_ = setup.compiled.rules;
    // A piece's run leaves OTLP traces to one joined run over the pieces that held them, so
    // that a trace exported to several files is joined as the command line joins it.
    CheckRunOptions records = setup.run, joined = setup.run;
    records.part = CheckPart::records;
    joined.part = CheckPart::otlp_joined;
    runner_ = std::make_unique<CheckRunner>(rules_, records);
    if (!runner_->option_error().empty()) {
      error_ = fmt::format("trajcheck check: {}\n", runner_->option_error());
      runner_.reset();
      return;
    }
    joined_runner_ = std::make_unique<CheckRunner>(rules_, joined);
    report_ = std::make_unique<CheckReport>(rules_, setup.report);
  }

  // What compiling printed (diagnostics, for stderr) and, when it cannot run, why.
  const std::string& diagnostics() const { return diagnostics_; }
  const std::string& error() const { return error_; }
  bool buffered() const { return report_ && report_->buffered(); }

  // (out, err, stats JSON) of the piece numbered `ordinal` in the corpus; with `out_path`,
  // out written to that file and its size in its place.
  py::tuple run(const PieceTuple& piece, std::uint64_t ordinal, const std::optional<std::string>& out_path) const {
    if (!runner_) throw std::runtime_error(error_);
    return run_collected(piece, ordinal, format_, out_path,
                         [&](const RecordInput& in, const RunOutput& out) { return runner_->run(in, *report_, out); });
  }

  // (out, err, stats JSON) of the OTLP traces of `pieces` (those whose stats counted
  // otlp_parts, in input order), joined: what the command line writes after every record.
  py::tuple run_joined(const std::vector<PieceTuple>& pieces) const {
    if (!joined_runner_) throw std::runtime_error(error_);
    std::vector<InputPiece> ps;
    for (const PieceTuple& t : pieces) ps.push_back(piece_of(t));
    Collected c;
    CheckStats st;
    {
      py::gil_scoped_release nogil;
      RecordSource source(std::move(ps), format_);
      st = joined_runner_->run(source, *report_, c.output());
    }
    return py::make_tuple(py::bytes(c.out), py::bytes(c.err), st.to_json());
  }

  // Writes the end of the run (the summary; buffered formats the whole document, with the
  // parts from the file `body`) to `fd`, and returns the CLI's exit status.
  int finish(const std::string& stats_json, const std::optional<std::string>& body, int fd) const {
    if (!report_) throw std::runtime_error(error_);
    CheckStats st = stats_from<CheckStats>(stats_json, "statistics");
    ReportFiles files = open_report_files(fd, body);
    report_->finish(st, files.body.get(), files.out.get());
    return exit_status(st);
  }

 private:
  InputFormat format_ = InputFormat::auto_detect;
  std::shared_ptr<const RuleSet> rules_;
  std::unique_ptr<CheckRunner> runner_, joined_runner_;
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
    if (!parse_reading_spec(reading_spec(o), &run_.reading, &error)) {
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

  // As CheckTask::run.
  py::tuple run(const PieceTuple& piece, std::uint64_t ordinal, const std::optional<std::string>& out_path) const {
    if (!runner_) throw std::runtime_error(error_);
    return run_collected(piece, ordinal, run_.reading.format, out_path,
                         [&](const RecordInput& in, const RunOutput& out) { return runner_->run(in, out); });
  }

  int finish(const std::string& summary_json, const std::optional<std::string>& body, int fd) const {
    ScoreSummary s = stats_from<ScoreSummary>(summary_json, "summary");
    ReportFiles files = open_report_files(fd, body);
    finish_score(run_.format, s, files.body.get(), files.out.get(), run_.thresholds);
    return exit_status(s, run_.thresholds);
  }

 private:
  ScoreRunOptions run_;
  std::unique_ptr<ScoreRunner> runner_;
  std::string error_;
};

}  // namespace

void init_dask(py::module_& m) {
  py::class_<CheckTask>(m, "_CheckTask")
      .def(py::init<const py::dict&>())
      .def_property_readonly("diagnostics", [](const CheckTask& t) { return py::bytes(t.diagnostics()); })
      .def_property_readonly("error", &CheckTask::error)
      .def_property_readonly("buffered", &CheckTask::buffered)
      .def("run", &CheckTask::run, py::arg("piece"), py::arg("ordinal"), py::arg("out_path") = py::none())
      .def("run_joined", &CheckTask::run_joined)
      .def("finish", &CheckTask::finish);
  py::class_<ScoreTask>(m, "_ScoreTask")
      .def(py::init<const py::dict&>())
      .def_property_readonly("error", &ScoreTask::error)
      .def_property_readonly("buffered", &ScoreTask::buffered)
      .def("run", &ScoreTask::run, py::arg("piece"), py::arg("ordinal"), py::arg("out_path") = py::none())
      .def("finish", &ScoreTask::finish);
  m.def("_merge_check_stats",
        [](const std::vector<std::string>& parts) { return merged_json<CheckStats>(parts, "statistics"); });
  m.def("_merge_score_summaries",
        [](const std::vector<std::string>& parts) { return merged_json<ScoreSummary>(parts, "summary"); });
  m.def("_check_exit_status",
        [](const std::string& stats) { return exit_status(stats_from<CheckStats>(stats, "statistics")); });
  m.def("_pieces", [](const std::string& input, std::uint64_t piece_bytes, const std::string& input_format) {
    // What one input stands for (list_input), cut into pieces (split_entry), in reading order.
    InputFormat f = InputFormat::auto_detect;
    parse_input_format(input_format, &f);
    std::vector<PieceTuple> out;
    py::gil_scoped_release nogil;
    for (const InputEntry& e : list_input(input))
      for (const InputPiece& p : split_entry(e, piece_bytes, f)) out.push_back(to_tuple(p));
    return out;
  });
  m.def("_count_newlines", [](const std::string& path, std::uint64_t start, std::uint64_t end) {
    py::gil_scoped_release nogil;
    return count_newlines(path, start, end);
  });
  m.def("_with_lines_before", [](const std::vector<PieceTuple>& pieces, const std::vector<std::int64_t>& counts) {
    std::vector<InputPiece> ps;
    for (const PieceTuple& t : pieces) ps.push_back(piece_of(t));
    set_lines_before(ps, counts);
    std::vector<PieceTuple> out;
    for (const InputPiece& p : ps) out.push_back(to_tuple(p));
    return out;
  });
  m.def("_read_pieces", [](const std::vector<PieceTuple>& pieces, const std::string& input_format) {
    // The records pieces yield, as (file, line, column, text or "error: …" or "warning: …"): for
    // tests of the cutting.
    InputFormat f = InputFormat::auto_detect;
    parse_input_format(input_format, &f);
    std::vector<InputPiece> ps;
    for (const PieceTuple& t : pieces) ps.push_back(piece_of(t));
    RecordSource source(std::move(ps), f);
    RawRecord r;
    py::list out;
    while (source.next(r)) {
      std::string text = r.skipped() ? "warning: " + r.skip_warning
                         : r.container_error.empty() ? std::string(r.bytes()) : "error: " + r.container_error;
      out.append(py::make_tuple(r.origin.file, r.origin.line, r.origin.column, py::bytes(text)));
    }
    return out;
  });
}

}  // namespace trajcheck::python
