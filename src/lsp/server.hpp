// The language server's state machine: one JSON-RPC message in, zero or more out. No
// threads and no clock of its own (the caller passes the time), so tests and the fuzz
// target drive it message by message; run_language_server adds the reader thread and the
// debounce timer around it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsp/analysis.hpp"
#include "lsp/text.hpp"
#include "trajcheck/lsp.hpp"

namespace trajcheck::lsp {

using Clock = std::chrono::steady_clock;

class Server {
 public:
  // `send` gets each outgoing message body (unframed).
  Server(std::function<void(const std::string&)> send, ServerOptions options);

  // Handles one message body as read from the client.
  void handle(const std::string& body, Clock::time_point now);
  // A frame that could not be read as a message (bad headers): logged, and when bytes followed
  // the headers (`skipped`, their start), answered with a JSON-RPC parse error, under the
  // request's id when one can be found in them, else under a null id.
  void bad_frame(const std::string& error, const std::string& skipped = {});

  // When the next debounced publication is due, if one is pending.
  std::optional<Clock::time_point> next_due() const;
  // Publishes the diagnostics of every document whose quiet period ended by `now`.
  void publish_due(Clock::time_point now);

  bool exited() const { return exited_; }
  // 0 once `shutdown` was answered, else 1 (LSP: `exit` without `shutdown` is an error).
  int exit_code() const { return shutdown_ ? 0 : 1; }

 private:
  struct Document {
    std::string uri, path, text;
    std::int64_t version = 0;
    bool suite = false;
    std::uint64_t revision = 0;  // bumped on every change (and for suites when a named file changes)
    std::uint64_t analyzed = UINT64_MAX;
    std::shared_ptr<const Analysis> analysis;
    std::optional<Clock::time_point> publish_at;
  };

  void dispatch(const nlohmann::json& msg, Clock::time_point now);
  void request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void notification(const std::string& method, const nlohmann::json& params, Clock::time_point now);

  void respond(const nlohmann::json& id, nlohmann::json result);
  void respond_error(const nlohmann::json& id, int code, const std::string& message);
  void notify(const std::string& method, nlohmann::json params);
  void log(const std::string& message);

  nlohmann::json initialize(const nlohmann::json& params);
  std::string in_workspace(const std::string& path) const;
  void load_traces(const nlohmann::json& list);
  void open(const nlohmann::json& params);
  void change(const nlohmann::json& params, Clock::time_point now);
  void schedule_dependents(const Document& changed, std::optional<Clock::time_point> at);
  Document* find(const nlohmann::json& params);
  const Analysis& analysis(Document& d);
  void publish(Document& d);

  nlohmann::json completion(Document& d, const nlohmann::json& params);
  nlohmann::json hover(Document& d, const nlohmann::json& params);
  nlohmann::json definition(Document& d, const nlohmann::json& params);
  nlohmann::json references(Document& d, const nlohmann::json& params);
  nlohmann::json symbols(Document& d);
  nlohmann::json formatting(Document& d);

  nlohmann::json range_json(const LineIndex& index, SourceRange r) const;
  nlohmann::json location(const std::string& path, const std::string& text, SourceRange r) const;
  std::uint32_t offset_of(const Document& d, const nlohmann::json& position) const;

  std::function<void(const std::string&)> send_;
  ServerOptions options_;
  Encoding encoding_ = Encoding::utf16;
  bool snippets_ = false;
  bool initialized_ = false, shutdown_ = false, exited_ = false;
  std::string root_;
  std::string default_catalog_;
  std::map<std::string, Document> docs_;
  CatalogCache catalogs_;
  TraceNames traces_;
};

}  // namespace trajcheck::lsp
