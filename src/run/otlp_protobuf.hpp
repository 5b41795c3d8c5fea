// OTLP/HTTP protobuf for `trajcheck serve`: an ExportTraceServiceRequest (the published
// opentelemetry-proto definitions, third_party/opentelemetry-proto, compiled by protoc at build
// time) decoded and written as the OTLP JSON encoding of the same request, which the OTLP JSON
// reader then reads — so the checker sees the traces a JSON export of the same spans gives.
//
//   std::string json, error;
//   if (!detail::otlp_traces_protobuf_to_json(body, &json, &error)) … 400, error says why
//
// The JSON follows the OTLP specification's JSON rules where they differ from protobuf's
// canonical JSON mapping: traceId/spanId/parentSpanId (of spans and links) as hex, not base64;
// enums (span kind, status code) as integers; field names in lowerCamelCase.
#pragma once

#include <string>
#include <string_view>

namespace trajcheck::detail {

// False when this build has no protobuf (configured with -DTRAJCHECK_OTLP_PROTOBUF=OFF).
bool otlp_protobuf_available();

// `body`, an ExportTraceServiceRequest in the protobuf binary encoding, as OTLP JSON. False
// with *error (why it does not decode) when it is not one.
bool otlp_traces_protobuf_to_json(std::string_view body, std::string* json, std::string* error);

// A google.rpc.Status {code, message} in the protobuf binary encoding: the body OTLP/HTTP
// gives a refused protobuf request.
std::string otlp_status_protobuf(int code, std::string_view message);

}  // namespace trajcheck::detail
