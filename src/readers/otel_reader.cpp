// OpenTelemetry GenAI traces in OTLP JSON (not yet).
#include "readers/parser_impl.hpp"
namespace trajcheck::detail {
bool read_otel(ParseCtx& c, od::object, const TraceParser::Emit&) { return c.fail(nullptr, "otel: not yet"); }
}
