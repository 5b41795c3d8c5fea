// OtlpEventExporter (run/otlp_events.hpp): OTLP/HTTP JSON logs export on a thread of its own.
#include "run/otlp_events.hpp"

#include <regex>

#include <fmt/format.h>

#include "http/http.hpp"

namespace trajcheck::detail {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kBatch = 512;
constexpr std::size_t kMaxQueued = 65536;
constexpr auto kLinger = std::chrono::milliseconds(200);
constexpr int kRetries = 3;

Json any_value(const Json& v) {
  if (v.is_boolean()) return {{"boolValue", v.get<bool>()}};
  // OTLP JSON writes 64-bit integers as strings.
  if (v.is_number_integer()) return {{"intValue", std::to_string(v.get<std::int64_t>())}};
  if (v.is_number_unsigned()) return {{"intValue", std::to_string(v.get<std::uint64_t>())}};
  if (v.is_number_float()) return {{"doubleValue", v.get<double>()}};
  if (v.is_string()) return {{"stringValue", v.get<std::string>()}};
  return {{"stringValue", v.dump(-1, ' ', false, Json::error_handler_t::replace)}};  // objects, arrays: their JSON
}

Json attributes_of(const Json& attrs) {
  Json out = Json::array();
  for (const auto& [k, v] : attrs.items())
    if (!v.is_null()) out.push_back({{"key", k}, {"value", any_value(v)}});
  return out;
}

}  // namespace

Json event_record(std::string_view event_name, std::chrono::system_clock::time_point time, bool warn,
                  std::string_view body, const Json& attributes) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  return {{"timeUnixNano", std::to_string(ns)},
          {"observedTimeUnixNano", std::to_string(ns)},
          {"eventName", event_name},
          {"severityNumber", warn ? 13 : 9},  // WARN, INFO
          {"severityText", warn ? "WARN" : "INFO"},
          {"body", {{"stringValue", body}}},
          {"attributes", attributes_of(attributes)}};
}

std::unique_ptr<OtlpEventExporter> OtlpEventExporter::open(std::string_view endpoint, std::string service_name,
                                                           std::string* error) {
  static const std::regex url(R"(^(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?(/[^?#\s]*)?$)");
  std::cmatch m;
  if (!std::regex_match(endpoint.data(), endpoint.data() + endpoint.size(), m, url)) {
    *error = fmt::format("'{}' is not an OTLP/HTTP endpoint (http://HOST[:PORT][/PATH] or https://…)", endpoint);
    return nullptr;
  }
  if (m[3].matched && std::stoul(m[3].str().substr(1)) > 65535) {
    *error = fmt::format("'{}': the port is out of range", endpoint);
    return nullptr;
  }
  std::string http_error;
  const http::Api* api = http::api(&http_error);
  if (api == nullptr) {
    *error = std::move(http_error);
    return nullptr;
  }
  std::unique_ptr<OtlpEventExporter> ex(new OtlpEventExporter());
  ex->http_ = api;
  ex->scheme_host_port_ = m[1].str() + "://" + m[2].str() + m[3].str();
  std::string path = m[4].str();
  const std::string_view logs = "/v1/logs";
  if (path.size() < logs.size() || path.compare(path.size() - logs.size(), logs.size(), logs) != 0) {
    while (!path.empty() && path.back() == '/') path.pop_back();
    path += logs;
  }
  ex->path_ = path;
  ex->url_ = ex->scheme_host_port_ + path;
  ex->service_name_ = std::move(service_name);
  ex->thread_ = std::thread([e = ex.get()] { e->run(); });
  return ex;
}

OtlpEventExporter::~OtlpEventExporter() {
  if (thread_.joinable()) close(std::chrono::milliseconds(0));
}

void OtlpEventExporter::emit(Json log_record) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) {
    ++result_.lost;
    if (result_.first_error.empty()) result_.first_error = "the exporter was closed";
    return;
  }
  if (queue_.size() >= kMaxQueued) {
    ++result_.lost;
    if (result_.first_error.empty())
      result_.first_error = fmt::format("more than {} events waited for the collector", kMaxQueued);
    return;
  }
  queue_.push_back(std::move(log_record));
  if (queue_.size() >= kBatch) wake_.notify_one();
}

OtlpEventExporter::Result OtlpEventExporter::close(std::chrono::milliseconds deadline) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!closing_) deadline_ = std::chrono::steady_clock::now() + deadline;
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  return result_;
}

bool OtlpEventExporter::post(const std::string& body, std::string* error) {
  http::ClientSpec spec;
  spec.scheme_host_port = scheme_host_port_;
  const std::unique_ptr<http::Client> client = http_->make_client(spec);
  for (int attempt = 0;; ++attempt) {
    const http::PostResult res = client->post(path_, body, "application/json");
    bool retry;
    if (!res.answered) {
      *error = fmt::format("{}: {}", url_, res.error);
      retry = true;
    } else if (res.status >= 200 && res.status < 300) {
      return true;
    } else {
      *error = fmt::format("{} answered {}{}", url_, res.status, res.body.empty() ? "" : ": " + res.body.substr(0, 200));
      retry = res.status == 429 || res.status == 502 || res.status == 503 || res.status == 504;
    }
    if (!retry || attempt == kRetries) return false;
    const auto pause = std::chrono::milliseconds(100 << (2 * attempt));  // 100, 400, 1600 ms
    std::unique_lock<std::mutex> lock(mutex_);
    if (closing_ && std::chrono::steady_clock::now() + pause > deadline_) return false;
    lock.unlock();
    std::this_thread::sleep_for(pause);
  }
}

void OtlpEventExporter::run() {
  const Json resource = {{"attributes", attributes_of({{"service.name", service_name_}})}};
  for (;;) {
    std::vector<Json> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, kLinger, [&] { return closing_ || queue_.size() >= kBatch; });
      if (queue_.empty()) {
        if (closing_) return;
        continue;
      }
      if (closing_ && std::chrono::steady_clock::now() > deadline_) {
        result_.lost += queue_.size();
        if (result_.first_error.empty()) result_.first_error = "the time to send them ran out";
        queue_.clear();
        return;
      }
      const std::size_t n = std::min(queue_.size(), kBatch);
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + n);
    }
    const Json request = {
        {"resourceLogs",
         {{{"resource", resource},
           {"scopeLogs", {{{"scope", {{"name", "trajcheck"}}}, {"logRecords", Json(std::move(batch))}}}}}}}};
    const std::size_t n = request["resourceLogs"][0]["scopeLogs"][0]["logRecords"].size();
    std::string error;
    const bool ok = post(request.dump(-1, ' ', false, Json::error_handler_t::replace), &error);
    std::lock_guard<std::mutex> lock(mutex_);
    if (ok) {
      result_.sent += n;
    } else {
      result_.lost += n;
      if (result_.first_error.empty()) result_.first_error = error;
    }
  }
}

}  // namespace trajcheck::detail
