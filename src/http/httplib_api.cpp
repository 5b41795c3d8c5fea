// The HTTP interface (http/http.hpp) on cpp-httplib. Built twice: into the library, and as
// the executable's plugin libtrajcheck-http.so, whose only exported symbol is
// trajcheck_http_api. Nothing here but cpp-httplib and the standard library, so that the
// plugin needs no other part of trajcheck.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <httplib.h>

#include "http/http.hpp"

namespace trajcheck::http {
namespace {

void answer(const Answer& a, httplib::Response& res) {
  res.status = a.status;
  for (const auto& [name, value] : a.headers) res.set_header(name, value);
  res.set_content(a.body, a.content_type);
}

class HttplibServer final : public Server {
 public:
  explicit HttplibServer(ServerSpec spec) : spec_(std::move(spec)) {
    server_.set_payload_max_length(spec_.max_body_bytes);
    // An answer is written in pieces: without this, Nagle's algorithm and the client's
    // delayed ACK hold each answer ~40 ms on a keep-alive connection.
    server_.set_tcp_nodelay(true);
    for (const Route& r : spec_.routes) {
      const auto* handler = &r.handler;
      if (r.method == Route::Method::kGet) {
        server_.Get(r.path, [handler](const httplib::Request& req, httplib::Response& res) {
          answer((*handler)(Request{req.get_header_value("Content-Type"), {}}), res);
        });
        continue;
      }
      const std::size_t limit = spec_.max_body_bytes;
      server_.Post(r.path, [handler, limit](const httplib::Request& req, httplib::Response& res,
                                            const httplib::ContentReader& content) {
        // Kept up to one byte past the limit, so that a small compressed request cannot grow
        // without bound.
        std::string body;
        content([&](const char* data, std::size_t n) {
          const std::size_t room = limit + 1 - std::min<std::size_t>(body.size(), limit + 1);
          body.append(data, std::min(n, room));
          return n <= room;
        });
        const std::string type = req.get_header_value("Content-Type");
        answer((*handler)(Request{type, body}), res);
      });
    }
  }

  int bind(const std::string& host, int port) override {
    return port == 0 ? server_.bind_to_any_port(host) : (server_.bind_to_port(host, port) ? port : -1);
  }
  void listen() override {
    server_.listen_after_bind();
    listened_ = true;
  }
  // httplib's stop() does nothing while the server is not yet listening, so a stop that came
  // before the listening thread got there (a SIGTERM right after start) was lost and listen()
  // never returned: wait until it listens, or has returned, first.
  void stop() override {
    while (!server_.is_running() && !listened_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server_.stop();
  }

 private:
  ServerSpec spec_;
  httplib::Server server_;
  std::atomic<bool> listened_{false};
};

class HttplibClient final : public Client {
 public:
  explicit HttplibClient(const ClientSpec& spec) : client_(spec.scheme_host_port) {
    client_.set_connection_timeout(spec.connect_timeout);
    client_.set_read_timeout(spec.read_timeout);
    client_.set_write_timeout(spec.write_timeout);
  }

  PostResult post(const std::string& path, const std::string& body, const std::string& content_type) override {
    PostResult r;
    httplib::Result res = client_.Post(path, body, content_type);
    if (!res) {
      r.error = httplib::to_string(res.error());
      return r;
    }
    r.answered = true;
    r.status = res->status;
    r.body = std::move(res->body);
    return r;
  }

 private:
  httplib::Client client_;
};

std::unique_ptr<Server> make_server(ServerSpec spec) { return std::make_unique<HttplibServer>(std::move(spec)); }
std::unique_ptr<Client> make_client(ClientSpec spec) { return std::make_unique<HttplibClient>(spec); }

constexpr Api kApi{kApiVersion, sizeof(Api), make_server, make_client};

}  // namespace
}  // namespace trajcheck::http

extern "C" __attribute__((visibility("default"))) const trajcheck::http::Api* trajcheck_http_api() {
  return &trajcheck::http::kApi;
}
