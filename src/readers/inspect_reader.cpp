// Inspect AI's `.json` eval log: {"version", "status", "eval", "plan", "results", "stats",
// "samples": [...], "reductions"}, one trace per sample (and epoch). The samples are chat
// records (chat_reader.cpp, read_inspect_sample); this file walks the log around them.
#include <fmt/format.h>

#include "readers/chat_shared.hpp"

namespace trajcheck::detail {

namespace {

// Members of the eval header kept on every sample's trace, under "eval".
bool kept_eval_member(std::string_view key) {
  return key == "eval_id" || key == "run_id" || key == "created" || key == "task" || key == "task_id" ||
         key == "task_version" || key == "model" || key == "dataset" || key == "solver" || key == "tags";
}

}  // namespace

bool read_inspect_log(ParseCtx& c, od::object log, const TraceParser::Emit* emit, std::uint32_t* traces) {
  // The log's own metadata: the status of the eval and the header's identifying members. It
  // is written into a buffer of its own: the samples' readers use the scratch strings.
  std::string log_meta;
  ObjectWriter meta(log_meta);
  bool has_samples = false;
  RecordOrigin origin = c.t.origin;
  bool ok = for_fields(c, log, [&](std::string_view key, od::value v) {
    if (key == "status" || key == "version") return c.write_value(v, meta.key(key == "status" ? "eval_status" : "log_version"));
    if (key == "eval") {
      od::object header;
      if (auto e = v.get_object().get(header)) return c.fail(location_of(v), expect(e, "\"eval\" must be an object"));
      std::string& out = meta.key("eval");
      out.push_back('{');
      bool first = true;
      bool fine = for_fields(c, header, [&](std::string_view k, od::value hv) {
        if (!kept_eval_member(k)) return c.skip_value(hv);
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, k);
        out.push_back(':');
        return c.write_value(hv, out);
      });
      out.push_back('}');
      return fine;
    }
    if (key != "samples") return c.skip_value(v);  // plan, results, stats, reductions: about the whole eval
    has_samples = true;
    od::array samples;
    if (auto e = v.get_array().get(samples)) return c.fail(location_of(v), expect(e, "\"samples\" must be an array"));
    InspectSample sample;
    return for_each_element(c, samples, [&](od::value sv) {
      const char* where = location_of(sv);
      od::object so;
      if (auto e = sv.get_object().get(so)) return c.fail(where, expect(e, "a sample must be an object"));
      c.t.clear();
      c.t.origin = c.where(where);
      c.context = {};
      // The header precedes the samples in Inspect's logs: its members are complete here.
      std::string members = meta.empty() ? std::string() : std::string(log_meta) + "}";
      sample.log_meta = members;
      if (!read_inspect_sample(c, so, sample)) return false;
      if (emit) {
        ++*traces;
        if (*emit) (*emit)(c.t);
      }
      return true;
    });
  });
  c.t.origin = origin;
  if (!ok) return false;
  if (!has_samples) return c.fail(c.text.data(), "Inspect log has no \"samples\" (a log written without them holds no trace)");
  return true;
}

}  // namespace trajcheck::detail
