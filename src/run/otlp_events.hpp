// OtlpEventExporter: OpenTelemetry events (log records with an event name) sent to a
// collector over OTLP/HTTP with JSON bodies, from a thread of its own, so that the caller
// (the guard deciding a tool call) never waits on the network.
//
//   std::string error;
//   auto ex = OtlpEventExporter::open("http://127.0.0.1:4318", "trajcheck-guard", &error);
//   ex->emit(record);                       // a LogRecord in OTLP JSON, e.g. from event_record()
//   OtlpEventExporter::Result r = ex->close();   // every record sent, or how many were lost and why
//
// Records are batched (up to 512 per request, or what arrived within 200 ms) and a batch is
// sent again up to three times when the collector cannot be reached or answers 429/5xx
// (OTLP's retryable statuses); another status drops the batch. At most 65 536 records wait;
// beyond that a record is dropped at once. Every record dropped is counted and the first
// reason kept: nothing is lost without a word.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace trajcheck::http {
struct Api;
}

namespace trajcheck::detail {

class OtlpEventExporter {
 public:
  // `endpoint` as OTEL_EXPORTER_OTLP_ENDPOINT: http(s)://host[:port][/base], to which
  // /v1/logs is added; a URL whose path already ends in /v1/logs is used as it is. Null with
  // *error when it is not such a URL, or when HTTP is not available (http::api).
  static std::unique_ptr<OtlpEventExporter> open(std::string_view endpoint, std::string service_name,
                                                 std::string* error);
  ~OtlpEventExporter();
  OtlpEventExporter(const OtlpEventExporter&) = delete;
  OtlpEventExporter& operator=(const OtlpEventExporter&) = delete;

  void emit(nlohmann::json log_record);

  struct Result {
    std::uint64_t sent = 0, lost = 0;
    std::string first_error;  // why the first lost record was lost
  };
  // Sends what waits (giving up at `deadline` from now) and stops the thread.
  Result close(std::chrono::milliseconds deadline = std::chrono::seconds(10));

  const std::string& url() const { return url_; }

 private:
  OtlpEventExporter() = default;
  void run();
  bool post(const std::string& body, std::string* error);

  const http::Api* http_ = nullptr;
  std::string url_, scheme_host_port_, path_, service_name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<nlohmann::json> queue_;
  bool closing_ = false, closed_ = false;
  std::chrono::steady_clock::time_point deadline_{};
  Result result_;
  std::thread thread_;
};

// One event as an OTLP JSON LogRecord: `eventName`, the time, a severity, the body text and
// the attributes (strings, booleans and integers as their OTLP values; null ones left out).
nlohmann::json event_record(std::string_view event_name, std::chrono::system_clock::time_point time,
                            bool warn, std::string_view body, const nlohmann::json& attributes);

}  // namespace trajcheck::detail
