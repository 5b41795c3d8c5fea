// The MCP proxy of `trajcheck guard`: two threads, one per direction, each reading
// newline-delimited JSON-RPC messages. Client to server: a `tools/call` request is checked
// (RuleSetMonitor::check) and either forwarded or answered with a tool error. Server to
// client: the response to a forwarded call is observed as the call's step, with its result.
// Writes to the client come from both threads and are serialized; so is the monitor.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/guard.hpp"

extern char** environ;

namespace trajcheck {

namespace {

using json = nlohmann::json;

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Calls f(line) for each newline-terminated line read from fd (the newline kept), and for a
// last unterminated one; returns at end of input, or soon after `stop` is set.
template <class F>
void each_line(int fd, const std::atomic<bool>& stop, F&& f) {
  std::string buf;
  char chunk[65536];
  while (!stop) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
      f(std::string_view(buf).substr(start, nl + 1 - start));
    buf.erase(0, start);
  }
  if (!buf.empty()) f(std::string_view(buf));
}

std::string_view trimmed(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

class Proxy {
 public:
  Proxy(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, std::FILE* log)
      : options_(options), log_(log), parser_(rules->reading_options({})), scratch_(&tools_),
        monitor_(rules, options.context) {}

  // Client to server; false when the server's stdin is gone.
  bool from_client(std::string_view line, int server_in, int client_out) {
    json msg = json::parse(trimmed(line), nullptr, false);
    if (msg.is_discarded()) {
      if (!trimmed(line).empty()) note_malformed("client", line);
      return write_all(server_in, line);
    }
    if (msg.is_array()) return from_client_batch(msg, line, server_in, client_out);
    if (!msg.is_object() || msg.value("method", json()) != "tools/call" || !msg.contains("id")) return write_all(server_in, line);
    const json& params = msg.value("params", json::object());
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) return write_all(server_in, line);
    json step = {{"type", "tool_call"}, {"tool", params["name"]}, {"arguments", params.value("arguments", json::object())}};
    if (msg["id"].is_string() || msg["id"].is_number()) step["id"] = msg["id"].is_string() ? msg["id"].get<std::string>() : msg["id"].dump();
    std::string denial;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.calls;
      if (read_step(step)) {
        monitor_.check(scratch_, 0, found_);
        for (const Violation& v : found_) log_violation(options_.deny ? "deny" : "warn", params["name"], v);
        if (!found_.empty() && options_.deny) {
          ++stats_.denied;
          denial = message_of(found_.front());
        }
      }
      if (denial.empty()) pending_[msg["id"].dump()] = Forwarded{next_call_++, std::move(step)};
    }
    if (denial.empty()) return write_all(server_in, line);
    json reply = {{"jsonrpc", "2.0"}, {"id", msg["id"]},
                  {"result", {{"content", json::array({{{"type", "text"}, {"text", denial}}})}, {"isError", true}}}};
    to_client(client_out, reply.dump() + "\n");
    return true;
  }

  // Server to client.
  void from_server(std::string_view line, int client_out) {
    json msg = json::parse(trimmed(line), nullptr, false);
    if (msg.is_discarded()) {
      if (!trimmed(line).empty()) note_malformed("server", line);
    } else if (msg.is_object() && msg.contains("id") && (msg.contains("result") || msg.contains("error"))) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(msg["id"].dump());
      if (it != pending_.end()) {
        json step = std::move(it->second.step);
        pending_.erase(it);
        const bool failed = msg.contains("error") || (msg["result"].is_object() && msg["result"].value("isError", false) == true);
        step["result"] = msg.contains("error") ? msg["error"] : msg["result"];
        if (failed) step["status"] = "error";
        ++stats_.results;
        if (read_step(step)) {
          monitor_.observe(scratch_, 0, found_);
          for (const Violation& v : found_) log_violation("violation", step["tool"], v);
        }
      }
    }
    to_client(client_out, line);
  }

  void to_client(int fd, std::string_view text) {
    std::lock_guard<std::mutex> lock(out_mutex_);
    write_all(fd, text);
  }

  // The end. A call forwarded and never answered (the server exited, or the client stopped
  // waiting) may have had its effect: it is a step too, in the order the calls were made,
  // with status error and no result. Writes the trace; false when it could not.
  bool finish(GuardStats* stats) {
    std::vector<Forwarded*> unanswered;
    for (auto& [id, call] : pending_) unanswered.push_back(&call);
    std::sort(unanswered.begin(), unanswered.end(), [](const Forwarded* a, const Forwarded* b) { return a->seq < b->seq; });
    for (Forwarded* call : unanswered) {
      call->step["status"] = "error";
      call->step["unanswered"] = true;
      ++stats_.unanswered;
      fmt::print(log_, "guard: the call of {} (id {}) was never answered: recorded with status error\n",
                 call->step["tool"].get<std::string>(), call->step.value("id", json("?")).dump());
      if (read_step(call->step)) {
        monitor_.observe(scratch_, 0, found_);
        for (const Violation& v : found_) log_violation("violation", call->step["tool"], v);
      }
    }
    pending_.clear();
    const TraceVerdict& v = monitor_.finish();
    for (const RuleResult& r : v.results) {
      if (r.status != VerdictStatus::violated) continue;
      ++stats_.violated_at_end;
      const RuleInfo& info = *monitor_.rules().rules()[r.rule].info;
      fmt::print(log_, "guard: at the end, rule {} [{}] is violated{}\n", info.name, to_string(info.severity),
                 info.message.empty() ? "" : ": " + info.message);
    }
    fmt::print(log_, "guard: {} tool calls, {} denied, {} results recorded, {} never answered, {} malformed messages, "
                     "{} batches refused\n",
               stats_.calls, stats_.denied, stats_.results, stats_.unanswered, stats_.malformed, stats_.batches_refused);
    if (stats) *stats = stats_;
    if (options_.trace_out.empty()) return true;
    std::string text;
    Trajectory t = monitor_.trace();
    t.set_trace_id(t.store("guard"));
    write_normalized_json(t, text);
    text += '\n';
    std::FILE* f = std::fopen(options_.trace_out.c_str(), "wb");
    const bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f != nullptr && std::fclose(f) != 0) return false;
    if (!ok) fmt::print(log_, "guard: cannot write the trace to {}: {}\n", options_.trace_out, std::strerror(errno));
    return ok;
  }

 private:
  // A JSON-RPC batch (an array of messages). One without a tools/call is forwarded as it is;
  // one holding a call is not forwarded at all — checking its calls one by one while the
  // server answers the batch as a whole would let a denied call through or lose its answer
  // — and each request in it is answered with a JSON-RPC error. (MCP since 2025-06-18 has
  // no batches; older clients can send every call on its own.)
  bool from_client_batch(const json& batch, std::string_view line, int server_in, int client_out) {
    auto is_call = [](const json& m) { return m.is_object() && m.value("method", json()) == "tools/call"; };
    if (std::none_of(batch.begin(), batch.end(), is_call)) return write_all(server_in, line);
    json replies = json::array();
    for (const json& m : batch)
      if (m.is_object() && m.contains("id") && m.contains("method"))
        replies.push_back({{"jsonrpc", "2.0"}, {"id", m["id"]},
                           {"error", {{"code", -32600}, {"message", "trajcheck guard does not forward a batch holding "
                                                                    "tools/call: send each tool call on its own"}}}});
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.batches_refused;
      fmt::print(log_, "guard: refused a batch of {} messages holding a tools/call (not forwarded)\n", batch.size());
    }
    if (!replies.empty()) to_client(client_out, replies.dump() + "\n");
    return true;
  }

  bool read_step(const json& step) {
    raw_.text = R"({"trace_id":"guard","steps":[)" + step.dump() + "]}";
    raw_.origin = RecordOrigin{"<mcp>", 1, 1, 0};
    ParseOutcome outcome = parser_.parse(raw_, scratch_, [](Trajectory&) {});
    if (!outcome.ok() || scratch_.steps().size() != 1) {
      for (const RecordError& e : outcome.errors) fmt::print(log_, "{}", format_record_error(e));
      return false;
    }
    return true;
  }
  std::string message_of(const Violation& v) const {
    const RuleInfo& info = *monitor_.rules().rules()[v.rule].info;
    return info.message.empty() ? "denied by rule " + info.name : info.message;
  }
  void log_violation(std::string_view what, const json& tool, const Violation& v) {
    const RuleInfo& info = *monitor_.rules().rules()[v.rule].info;
    std::string binding;
    for (const auto& [var, value] : v.binding) binding += fmt::format(" (${} = {})", var, value);
    fmt::print(log_, "guard: {} {}: rule {}{} [{}] at {}{}\n", what, tool.is_string() ? tool.get<std::string>() : tool.dump(),
               info.name, binding, to_string(info.severity), info.location, info.message.empty() ? "" : ": " + info.message);
  }
  void note_malformed(std::string_view side, std::string_view line) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    ++stats_.malformed;
    fmt::print(log_, "guard: a message from the {} is not JSON (forwarded as it is): {:.80}\n", side, trimmed(line));
  }

  GuardOptions options_;
  std::FILE* log_;
  TraceParser parser_;
  ToolTable tools_;
  Trajectory scratch_;
  RawRecord raw_;
  RuleSetMonitor monitor_;
  std::vector<Violation> found_;
  struct Forwarded {
    std::uint64_t seq;  // the order calls were made in
    json step;
  };
  std::map<std::string, Forwarded> pending_;  // forwarded calls by request id (its JSON text)
  std::uint64_t next_call_ = 0;
  GuardStats stats_;
  std::mutex mutex_, out_mutex_, log_mutex_;
};

}  // namespace

int run_guard(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, const std::vector<std::string>& command,
              std::FILE* in, std::FILE* out, std::FILE* log, GuardStats* stats) {
  if (command.empty()) {
    fmt::print(log, "guard: no server command given\n");
    return 2;
  }
  int to_server[2], from_server[2];
  if (::pipe(to_server) != 0 || ::pipe(from_server) != 0) {
    fmt::print(log, "guard: cannot make pipes: {}\n", std::strerror(errno));
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_server[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_server[1], 1);
  for (int fd : {to_server[0], to_server[1], from_server[0], from_server[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_server[0]);
  ::close(from_server[1]);
  if (rc != 0) {
    fmt::print(log, "guard: cannot start {}: {}\n", command[0], std::strerror(rc));
    ::close(to_server[1]);
    ::close(from_server[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a side that went away is seen as a failed write
  std::fflush(out);
  Proxy proxy(std::move(rules), options, log);
  const int client_in = fileno(in), client_out = fileno(out);
  std::atomic<bool> server_gone{false};
  const std::atomic<bool> never{false};
  std::thread upstream([&] {
    bool open = true;
    each_line(client_in, server_gone,
              [&](std::string_view line) { open = open && proxy.from_client(line, to_server[1], client_out); });
    ::close(to_server[1]);  // the client is done: so is the server's input
  });
  each_line(from_server[0], never, [&](std::string_view line) { proxy.from_server(line, client_out); });
  ::close(from_server[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  server_gone = true;  // a client still sending has nobody to talk to
  upstream.join();
  const bool written = proxy.finish(stats);
  if (!written) return 2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace trajcheck
