// HTTP for `serve` (a server) and for OTLP event export (a client), behind an interface of
// our own so that cpp-httplib — and the OpenSSL it loads and initialises — is not part of
// every start of the executable: about 6.5 ms there, as much as everything else `check` does
// before its first record. The executable loads the implementation from a plugin,
// libtrajcheck-http.so, the first time it needs HTTP (docs/architecture.md); the library (the
// Python module, the tests, an embedder's program) links it in.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trajcheck::http {

struct Request {
  std::string_view content_type;
  // The body as it arrived, decompressed (Content-Encoding: gzip), cut at
  // ServerSpec::max_body_bytes + 1 bytes: a body longer than the limit is seen as one byte
  // longer than it, however much the client sent.
  std::string_view body;
};

struct Answer {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct Route {
  enum class Method { kGet, kPost } method = Method::kGet;
  std::string path;
  std::function<Answer(const Request&)> handler;
};

struct ServerSpec {
  // A request announcing a longer body is answered 413 before it is read.
  std::size_t max_body_bytes = std::size_t{16} << 20;
  std::vector<Route> routes;
};

class Server {
 public:
  virtual ~Server() = default;
  // Listens on host:port (0: a free port); the port, or -1 (errno says why).
  virtual int bind(const std::string& host, int port) = 0;
  // Answers requests on threads of its own until stop(); returns then. stop() may come from
  // another thread before listen() has begun: it waits for it, and listen() returns.
  virtual void listen() = 0;
  virtual void stop() = 0;
};

struct ClientSpec {
  std::string scheme_host_port;  // http://host:port or https://…
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{5000};
  std::chrono::milliseconds write_timeout{5000};
};

struct PostResult {
  bool answered = false;  // false: no answer (error says why)
  int status = 0;
  std::string body;
  std::string error;
};

class Client {
 public:
  virtual ~Client() = default;
  virtual PostResult post(const std::string& path, const std::string& body, const std::string& content_type) = 0;
};

// The layout of Api and of the types it passes: a plugin built against another is refused.
inline constexpr int kApiVersion = 1;

// What the implementation provides (one per process).
struct Api {
  int version;  // kApiVersion of the implementation's build
  std::size_t size;  // sizeof(Api) there
  std::unique_ptr<Server> (*make_server)(ServerSpec spec);
  std::unique_ptr<Client> (*make_client)(ClientSpec spec);
};

// The implementation: linked in, or loaded from the plugin. Null, with the reason in *error
// (the places looked in and what the loader said), when the plugin cannot be loaded.
const Api* api(std::string* error);

}  // namespace trajcheck::http

// The implementation's entry point (http/httplib_api.cpp): defined where the library links it
// in, absent from the executable, which finds it in the plugin.
extern "C" const trajcheck::http::Api* trajcheck_http_api();
