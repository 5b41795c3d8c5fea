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
  ToolTable tools;
  Trajectory scratch;
  NormalizeStats stats;

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    if (rec.skipped()) {
      ++stats.warnings;
      (err += rec.skip_warning) += '\n';
      return;
    }
    ++stats.records;
    scratch.set_tools(&tools);
    ParseOutcome o = parser->parse(rec, scratch, [&](Trajectory& t) {
      for (const std::string& w : t.warnings) {
        err += w;
        err.push_back('\n');
      }
      stats.warnings += t.warnings.size();
      write_normalized_json(t, out);
      out.push_back('\n');
    });
    if (!o.ok()) {
      ++stats.rejected;
      for (const RecordError& e : o.errors) err += format_record_error(e);
    }
    stats.traces += o.traces;
  }
};
}  // namespace

NormalizeStats normalize_records(const RecordInput& input, const TraceParser& parser, unsigned jobs,
                                 const RunOutput& output) {
  std::vector<NormalizeWorker> workers = process_records<NormalizeWorker>(
      input, effective_jobs(jobs),
      [&] {
        NormalizeWorker w;
        w.parser = &parser;
        return w;
      },
      output);
  NormalizeStats total;
  for (const NormalizeWorker& w : workers) total.merge(w.stats);
  return total;
}

}  // namespace trajcheck
