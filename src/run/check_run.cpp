// The corpus runner of `trajcheck check`: records read in batches, checked by one
// RuleSetChecker per worker thread, their text handed over in input order.
#include <atomic>

#include "run/pipeline.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

struct CheckRunner::Impl {
  std::shared_ptr<const RuleSet> rules;
  CheckRunOptions options;
  TraceParser parser;
  Impl(std::shared_ptr<const RuleSet> r, CheckRunOptions o)
      : rules(std::move(r)), options(std::move(o)), parser(rules->reading_options(options.reading)) {}
};

namespace {

// Per-thread state: its own tool table, trajectory buffers and checker, all reused from trace
// to trace.
struct CheckWorker {
  const TraceParser* parser = nullptr;
  const CheckWriter* writer = nullptr;
  const CheckRunOptions* options = nullptr;
  std::atomic<std::uint64_t>* records_read = nullptr;  // for the progress callback
  std::unique_ptr<TraceCheck> check;  // tool table, trajectory buffers, checker
  TraceJoiner* joiner = nullptr;
  std::unique_ptr<Trajectory> joined;  // an OTLP trace joined from its parts
  CheckStats stats;
  TraceParser::Emit emit, emit_joined;
  std::string* cur_out = nullptr;
  std::string* cur_err = nullptr;

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    if (options->part == CheckPart::otlp_joined) return join_only(rec, out, err);
    if (rec.skipped()) {
      ++stats.warnings;
      if (!options->quiet) (err += rec.skip_warning) += '\n';
      return;
    }
    ++stats.records;
    if (options->progress) {
      std::uint64_t n = ++*records_read;
      if (n % 256 == 0) options->progress(n);
    }
    if (!rec.container_error.empty()) {
      reject(RecordError{rec.origin, rec.container_error, RecordErrorKind::input}, out, err);
      return;
    }
    // The emit callback captures only `this` (no allocation per record); it is made on first
    // use, once the worker has its final address.
    if (!emit) {
      emit_joined = [this](Trajectory& t) { check_one(t, *cur_out, *cur_err); };
      if (options->part == CheckPart::records)
        emit = [this](Trajectory& t) {
          if (t.spans.empty() || options->join.max_bytes == 0) check_one(t, *cur_out, *cur_err);
          else ++stats.otlp_parts;  // the joined run's
        };
      else
        emit = [this](Trajectory& t) {
          if (!joiner->offer(t, *joined, emit_joined)) check_one(t, *cur_out, *cur_err);
        };
    }
    cur_out = &out;
    cur_err = &err;
    ParseOutcome o = parser->parse_borrowing(rec, check->scratch(), emit);
    if (!o.ok()) {
      for (std::size_t i = 1; i < o.errors.size(); ++i) err += format_record_error(o.errors[i]);
      reject(o.errors[0], out, err);
    }
  }

  // CheckPart::otlp_joined: only OTLP traces, offered to the joiner; what the records runs
  // reported (rejections, warnings, other traces, the records read) is not reported again.
  void join_only(const RawRecord& rec, std::string& out, std::string& err) {
    if (rec.skipped() || !rec.container_error.empty()) return;
    if (!emit) {
      emit_joined = [this](Trajectory& t) { check_one(t, *cur_out, *cur_err); };
      emit = [this](Trajectory& t) { joiner->offer(t, *joined, emit_joined); };
    }
    cur_out = &out;
    cur_err = &err;
    parser->parse_borrowing(rec, check->scratch(), emit);
  }

  void reject(const RecordError& e, std::string& out, std::string& err) {
    ++stats.rejected;
    err += format_record_error(e);
    writer->rejected(e, out);
  }

  void check_one(Trajectory& t, std::string& out, std::string& err) {
    if (!options->quiet)
      for (const std::string& w : t.warnings) {
        err += w;
        if (w.empty() || w.back() != '\n') err += '\n';
      }
    const TraceVerdict& v = check->checker().check(t);
    stats.add(v, t.warnings.size());
    writer->trace(t, v, out);
  }
};

}  // namespace

CheckRunner::CheckRunner(std::shared_ptr<const RuleSet> rules, CheckRunOptions options)
    : impl_(std::make_unique<Impl>(std::move(rules), std::move(options))) {}
CheckRunner::~CheckRunner() = default;

const std::string& CheckRunner::option_error() const { return impl_->parser.option_error(); }

CheckStats CheckRunner::run(const RecordInput& input, const CheckWriter& writer, const RunOutput& output) const {
  const Impl& m = *impl_;
  CheckStats total;
  total.rules.resize(m.rules->rules().size());
  if (!option_error().empty()) return total;
  std::atomic<std::uint64_t> records_read{0};
  TraceJoiner joiner(m.options.join);
  std::vector<CheckWorker> workers = process_records<CheckWorker>(
      input, effective_jobs(m.options.jobs),
      [&] {
        CheckWorker w;
        w.parser = &m.parser;
        w.writer = &writer;
        w.options = &m.options;
        w.records_read = &records_read;
        w.check = std::make_unique<TraceCheck>(m.rules, m.options.fail_on);
        w.joiner = &joiner;
        w.joined = std::make_unique<Trajectory>(&w.check->tools());
        w.stats.rules.resize(m.rules->rules().size());
        return w;
      },
      output);
  // The OTLP traces still held are complete now: checked on this thread, their text handed
  // over about every kBatchBytes. (A records run holds none.)
  CheckWorker& w0 = workers.front();
  std::string out, err;
  joiner.finish(*w0.joined, [&](Trajectory& t) {
    w0.check_one(t, out, err);
    if (out.size() + err.size() >= kBatchBytes) {
      output(out, err);
      out.clear();
      err.clear();
    }
  });
  if (!out.empty() || !err.empty()) output(out, err);
  for (const CheckWorker& w : workers) total.merge(w.stats);
  return total;
}

CheckStats CheckRunner::run(RecordSource& source, const CheckWriter& writer, const RunOutput& output) const {
  return run(RecordInput(source), writer, output);
}

}  // namespace trajcheck
