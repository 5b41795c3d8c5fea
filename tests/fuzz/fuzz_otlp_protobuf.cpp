// libFuzzer target for OTLP/HTTP protobuf in `trajcheck serve`: bytes in as an
// ExportTraceServiceRequest (application/x-protobuf), through the decode to OTLP JSON and
// ServeCore. A request that decodes must give JSON that parses, with every span and link id
// written as lowercase hex; every answer is 200 or 400 (never a crash, a hang or a leak), a
// 400 carries a google.rpc.Status, and shutdown checks whatever was kept.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "run/otlp_protobuf.hpp"
#include "trajcheck/serve.hpp"

namespace {

const std::shared_ptr<const trajcheck::RuleSet>& rules() {
  static const auto r = trajcheck::compile_rule_set(std::vector<trajcheck::Source>{trajcheck::Source(
      "p.rules", "lookup precedes refund\nforbid delete_user\n")}).rules;
  return r;
}

bool hex_id(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() % 2 != 0) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void check_ids(const nlohmann::json& doc) {
  if (!doc.contains("resourceSpans")) return;
  for (const auto& rs : doc["resourceSpans"]) {
    if (!rs.contains("scopeSpans")) continue;
    for (const auto& ss : rs["scopeSpans"]) {
      if (!ss.contains("spans")) continue;
      for (const auto& span : ss["spans"]) {
        for (const char* k : {"traceId", "spanId", "parentSpanId"})
          if (span.contains(k) && !hex_id(span[k])) std::abort();
        if (span.contains("links"))
          for (const auto& link : span["links"])
            for (const char* k : {"traceId", "spanId"})
              if (link.contains(k) && !hex_id(link[k])) std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  std::string json, error;
  if (trajcheck::detail::otlp_traces_protobuf_to_json(body, &json, &error)) {
    const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
    if (!doc.is_object()) std::abort();
    check_ids(doc);
  } else if (error.empty()) {
    std::abort();  // a refusal always says why
  }
  std::uint64_t now = 0;
  trajcheck::ServeOptions o;
  o.clock = [&now] { return now; };
  trajcheck::ServeCore core(rules(), o, nullptr);
  const trajcheck::ServeReply r = core.post_traces("application/x-protobuf", body);
  if (r.status != 200 && r.status != 400) std::abort();
  if (r.content_type != "application/x-protobuf") std::abort();
  if (r.status == 400 && r.body.empty()) std::abort();
  now += 10000;
  core.poll();
  core.finish();
  return 0;
}
