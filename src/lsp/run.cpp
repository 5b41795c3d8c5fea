// run_language_server: a reader thread frames messages off the input stream into a queue;
// this thread handles them in order and, between messages, publishes debounced diagnostics
// when their quiet period has passed. The reader stops after `exit` or at the end of the
// input, so joining it never waits on a client that is still connected.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "lsp/jsonrpc.hpp"
#include "lsp/server.hpp"
#include "trajcheck/lsp.hpp"

namespace trajcheck::lsp {

namespace {

// Whether a body is the `exit` notification (checked by the reader, to stop reading).
bool is_exit(const std::string& body) {
  if (body.find("\"exit\"") == std::string::npos) return false;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  return j.is_object() && j.contains("method") && j["method"] == "exit" && !j.contains("id");
}

}  // namespace

int run_language_server(std::istream& in, std::ostream& out, const ServerOptions& options) {
  // A tied input stream flushes its output stream before reading: from the reader thread,
  // while this one writes. Untie it (std::cin is tied to std::cout).
  in.tie(nullptr);
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Frame> queue;

  std::thread reader([&] {
    FrameReader frames(in);
    while (true) {
      Frame f = frames.next();
      bool last = f.kind == Frame::Kind::eof || (f.kind == Frame::Kind::message && is_exit(f.body));
      {
        std::lock_guard<std::mutex> lock(mutex);
        queue.push_back(std::move(f));
      }
      ready.notify_one();
      if (last) return;
    }
  });

  Server server([&](const std::string& body) { out << frame(body) << std::flush; }, options);
  while (!server.exited()) {
    Frame f;
    {
      std::unique_lock<std::mutex> lock(mutex);
      auto due = server.next_due();
      if (due) ready.wait_until(lock, *due, [&] { return !queue.empty(); });
      else ready.wait(lock, [&] { return !queue.empty(); });
      if (queue.empty()) {
        lock.unlock();
        server.publish_due(Clock::now());
        continue;
      }
      f = std::move(queue.front());
      queue.pop_front();
    }
    if (f.kind == Frame::Kind::eof) break;
    if (f.kind == Frame::Kind::bad) server.bad_frame(f.error, f.body);
    else server.handle(f.body, Clock::now());
    // Coalescing: whatever is already queued is handled before a due publication.
    bool idle;
    {
      std::lock_guard<std::mutex> lock(mutex);
      idle = queue.empty();
    }
    if (idle) server.publish_due(Clock::now());
  }
  reader.join();
  return server.exit_code();
}

}  // namespace trajcheck::lsp
