// `trajcheck normalize`'s runner: each trajectory as one normalized JSON line, in input order.
#include "run/pipeline.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

void NormalizeStats::merge(const NormalizeStats& o) {
  records += o.records;
  traces += o.traces;
  rejected += o.rejected;
  warnings += o.warnings;
}

namespace {
struct NormalizeWorker {
  const TraceParser* parser = nullptr;
  TraceJoiner* joiner = nullptr;
  ToolTable tools;
  Trajectory scratch;
  Trajectory joined;  // an OTLP trace joined from its parts
  NormalizeStats stats;

  void write(Trajectory& t, std::string& out, std::string& err) {
    for (const std::string& w : t.warnings) {
      err += w;
      err.push_back('\n');
    }
    stats.warnings += t.warnings.size();
    write_normalized_json(t, out);
    out.push_back('\n');
    ++stats.traces;
  }

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    if (rec.skipped()) {
      ++stats.warnings;
      (err += rec.skip_warning) += '\n';
      return;
    }
    ++stats.records;
    scratch.set_tools(&tools);
    joined.set_tools(&tools);
    const TraceParser::Emit emit_joined = [&](Trajectory& t) { write(t, out, err); };
    ParseOutcome o = parser->parse(rec, scratch, [&](Trajectory& t) {
      if (!joiner->offer(t, joined, emit_joined)) write(t, out, err);
    });
    if (!o.ok()) {
      ++stats.rejected;
      for (const RecordError& e : o.errors) err += format_record_error(e);
    }
  }
};
}  // namespace

NormalizeStats normalize_records(const RecordInput& input, const TraceParser& parser, unsigned jobs,
                                 const RunOutput& output, const TraceJoinOptions& join) {
  TraceJoiner joiner(join);
  std::vector<NormalizeWorker> workers = process_records<NormalizeWorker>(
      input, effective_jobs(jobs),
      [&] {
        NormalizeWorker w;
        w.parser = &parser;
        w.joiner = &joiner;
        return w;
      },
      output);
  NormalizeWorker& w0 = workers.front();
  w0.joined.set_tools(&w0.tools);
  std::string out, err;
  joiner.finish(w0.joined, [&](Trajectory& t) {
    w0.write(t, out, err);
    if (out.size() + err.size() >= kBatchBytes) {
      output(out, err);
      out.clear();
      err.clear();
    }
  });
  if (!out.empty() || !err.empty()) output(out, err);
  NormalizeStats total;
  for (const NormalizeWorker& w : workers) total.merge(w.stats);
  return total;
}

}  // namespace trajcheck
