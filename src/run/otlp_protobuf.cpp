// OTLP/HTTP protobuf export requests as OTLP JSON (run/otlp_protobuf.hpp).
#include "run/otlp_protobuf.hpp"

#if TRAJCHECK_OTLP_PROTOBUF

#include <mutex>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/wire_format_lite.h>
#include <nlohmann/json.hpp>

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace trajcheck::detail {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;  // keys in the order protobuf writes them (field order)
using opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest;

// Protobuf reports why a message does not parse (a string field that is not UTF-8, …) only to
// its log. While a decode runs on a thread, that thread's messages are kept as the reason
// instead of going to standard error; other messages go where they went before.
thread_local std::string* protobuf_log_capture = nullptr;
pb::LogHandler* previous_log_handler = nullptr;

void protobuf_log(pb::LogLevel level, const char* filename, int line, const std::string& message) {
  if (protobuf_log_capture != nullptr) {
    if (!protobuf_log_capture->empty()) *protobuf_log_capture += "; ";
    *protobuf_log_capture += message;
    return;
  }
  if (previous_log_handler != nullptr) previous_log_handler(level, filename, line, message);
}

struct LogCapture {
  explicit LogCapture(std::string* into) {
    static std::once_flag installed;
    std::call_once(installed, [] { previous_log_handler = pb::SetLogHandler(&protobuf_log); });
    protobuf_log_capture = into;
  }
  ~LogCapture() { protobuf_log_capture = nullptr; }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
};

std::string hex_id(const std::string& bytes) {
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) fmt::format_to(std::back_inserter(s), "{:02x}", c);
  return s;
}

// OTLP JSON writes ids as hex where protobuf's mapping writes bytes as base64.
void set_id(Json& object, const char* key, const std::string& bytes) {
  if (bytes.empty()) object.erase(key);
  else object[key] = hex_id(bytes);
}

// The JSON of one array field, or a null one when protobuf's mapping left it out (empty).
Json* array_at(Json& object, const char* key, int index) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array() || index >= static_cast<int>(it->size())) return nullptr;
  return &(*it)[static_cast<std::size_t>(index)];
}

}  // namespace

bool otlp_protobuf_available() { return true; }

bool otlp_traces_protobuf_to_json(std::string_view body, std::string* json, std::string* error) {
  ExportTraceServiceRequest request;
  std::string why;
  {
    LogCapture capture(&why);
    if (body.size() > static_cast<std::size_t>(INT32_MAX) || !request.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
      *error = why.empty() ? "the bytes do not decode as an OTLP ExportTraceServiceRequest (protobuf)"
                           : "not an OTLP ExportTraceServiceRequest (protobuf): " + why;
      return false;
    }
  }
  pb::util::JsonPrintOptions options;
  options.always_print_enums_as_ints = true;  // OTLP JSON: enums as integers
  options.preserve_proto_field_names = false; // OTLP JSON: lowerCamelCase keys
  std::string text;
  const pb::util::Status printed = pb::util::MessageToJsonString(request, &text, options);
  if (!printed.ok()) {
    *error = "the OTLP export request (protobuf) cannot be written as JSON: " + std::string(printed.message());
    return false;
  }
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    *error = "the OTLP export request (protobuf) was written as JSON that does not parse";
    return false;
  }
  for (int r = 0; r < request.resource_spans_size(); ++r) {
    Json* rs = array_at(doc, "resourceSpans", r);
    const auto& rs_pb = request.resource_spans(r);
    for (int s = 0; rs && s < rs_pb.scope_spans_size(); ++s) {
      Json* ss = array_at(*rs, "scopeSpans", s);
      const auto& ss_pb = rs_pb.scope_spans(s);
      for (int k = 0; ss && k < ss_pb.spans_size(); ++k) {
        Json* span = array_at(*ss, "spans", k);
        if (span == nullptr) break;
        const auto& span_pb = ss_pb.spans(k);
        set_id(*span, "traceId", span_pb.trace_id());
        set_id(*span, "spanId", span_pb.span_id());
        set_id(*span, "parentSpanId", span_pb.parent_span_id());
        for (int l = 0; l < span_pb.links_size(); ++l) {
          Json* link = array_at(*span, "links", l);
          if (link == nullptr) break;
          set_id(*link, "traceId", span_pb.links(l).trace_id());
          set_id(*link, "spanId", span_pb.links(l).span_id());
        }
      }
    }
  }
  *json = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  return true;
}

std::string otlp_status_protobuf(int code, std::string_view message) {
  std::string out;
  {
    pb::io::StringOutputStream raw(&out);
    pb::io::CodedOutputStream coded(&raw);
    using W = pb::internal::WireFormatLite;
    if (code != 0) W::WriteInt32(1, code, &coded);
    if (!message.empty()) W::WriteString(2, std::string(message), &coded);
  }
  return out;
}

}  // namespace trajcheck::detail

#else  // built without protobuf

namespace trajcheck::detail {

bool otlp_protobuf_available() { return false; }

bool otlp_traces_protobuf_to_json(std::string_view, std::string*, std::string* error) {
  *error = "this trajcheck was built without protobuf (-DTRAJCHECK_OTLP_PROTOBUF=OFF)";
  return false;
}

std::string otlp_status_protobuf(int, std::string_view) { return {}; }

}  // namespace trajcheck::detail

#endif
