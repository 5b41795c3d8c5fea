// Message handling of the language server (LSP 3.17): lifecycle, document sync with
// debounced diagnostics, and the language features. Every request gets exactly one
// response; nothing a client sends ends the server except `exit`.
#include "lsp/server.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "language/frontend.hpp"
#include "lsp/completion.hpp"
#include "lsp/jsonrpc.hpp"

namespace trajcheck::lsp {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxTraceRecords = 50000;

struct InvalidParams : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& member(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw InvalidParams(fmt::format("missing '{}'", key));
  return j[key];
}

std::string string_member(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_string()) throw InvalidParams(fmt::format("'{}' is not a string", key));
  return v.get<std::string>();
}

// An LSP `uinteger` (a line or character): a whole number, clamped to 32 bits; anything else
// (a fraction, a negative or huge number, which a cast would not survive) is invalid.
std::uint32_t uinteger_member(const json& j, const char* key) {
  const json& v = member(j, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw InvalidParams(fmt::format("'{}' is not a whole number >= 0", key));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v.get<std::uint64_t>(), UINT32_MAX));
}

Position position_member(const json& j) {
  return {uinteger_member(j, "line"), uinteger_member(j, "character")};
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The id of a message that is not valid JSON, when its text still shows one.
json recover_id(const std::string& body) {
  static const std::regex kId(R"re("id"\s*:\s*(-?[0-9]{1,18}|"(?:[^"\\]|\\.){0,200}"))re");
  std::smatch m;
  std::string head = body.substr(0, 4096);
  if (!std::regex_search(head, m, kId)) return nullptr;
  json id = json::parse(m[1].str(), nullptr, false);
  return id.is_discarded() ? json(nullptr) : id;
}

bool is_suite(const std::string& uri, const std::string& language) {
  if (language == "trajcheck-suite") return true;
  if (language == "trajcheck-rules") return false;
  return uri.size() >= 6 && uri.compare(uri.size() - 6, 6, ".suite") == 0;
}

std::vector<std::string> string_list(const json& j) {
  std::vector<std::string> out;
  if (j.is_string()) out.push_back(j.get<std::string>());
  if (j.is_array())
    for (const json& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

}  // namespace

Server::Server(std::function<void(const std::string&)> send, ServerOptions options)
    : send_(std::move(send)), options_(options) {}

// ---- output ----

void Server::respond(const json& id, json result) {
  send_(dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}));
}

void Server::respond_error(const json& id, int code, const std::string& message) {
  send_(dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}));
}

void Server::notify(const std::string& method, json params) {
  send_(dump(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}}));
}

void Server::log(const std::string& message) {
  if (options_.log) *options_.log << "trajcheck lsp: " << message << '\n' << std::flush;
}

// ---- input ----

void Server::bad_frame(const std::string& error, const std::string& skipped) {
  log("unreadable message: " + error);
  if (exited_ || skipped.find_first_not_of(" \t\r\n") == std::string::npos) return;
  respond_error(recover_id(skipped), kParseError, "unreadable message: " + error);
}

void Server::handle(const std::string& body, Clock::time_point now) {
  if (exited_) return;
  json msg = json::parse(body, nullptr, false);
  if (msg.is_discarded()) {
    log(fmt::format("a message that is not JSON ({} bytes)", body.size()));
    respond_error(recover_id(body), kParseError, "the message is not valid JSON");
    return;
  }
  if (msg.is_array()) {  // a JSON-RPC batch: each element on its own
    if (msg.empty()) respond_error(nullptr, kInvalidRequest, "an empty batch");
    for (const json& m : msg) dispatch(m, now);
    return;
  }
  dispatch(msg, now);
}

void Server::dispatch(const json& msg, Clock::time_point now) {
  if (exited_) return;
  if (!msg.is_object()) {
    respond_error(nullptr, kInvalidRequest, "a message is a JSON object");
    return;
  }
  auto id_it = msg.find("id");
  bool has_id = id_it != msg.end();
  json id = has_id ? *id_it : json(nullptr);
  if (has_id && !id.is_number_integer() && !id.is_string() && !id.is_null()) {
    respond_error(nullptr, kInvalidRequest, "the id is neither a number nor a string");
    return;
  }
  auto method_it = msg.find("method");
  if (method_it == msg.end()) {
    if (has_id && (msg.contains("result") || msg.contains("error"))) return;  // a response to us: we send no requests
    respond_error(id, kInvalidRequest, "a request without a method");
    return;
  }
  if (!method_it->is_string()) {
    if (has_id) respond_error(id, kInvalidRequest, "the method is not a string");
    else log("a notification whose method is not a string");
    return;
  }
  const std::string method = method_it->get<std::string>();
  const json params = msg.value("params", json::object());
  if (!has_id) {
    notification(method, params, now);
    return;
  }
  try {
    request(id, method, params);
  } catch (const InvalidParams& e) {
    respond_error(id, kInvalidParams, fmt::format("{}: {}", method, e.what()));
  } catch (const json::exception& e) {
    respond_error(id, kInvalidParams, fmt::format("{}: {}", method, e.what()));
  } catch (const std::exception& e) {
    log(fmt::format("{} failed: {}", method, e.what()));
    respond_error(id, kInternalError, fmt::format("{} failed: {}", method, e.what()));
  }
}

void Server::request(const json& id, const std::string& method, const json& params) {
  if (method == "initialize") {
    if (initialized_) {
      respond_error(id, kInvalidRequest, "initialize was already received");
      return;
    }
    respond(id, initialize(params));
    initialized_ = true;
    return;
  }
  if (!initialized_) {
    respond_error(id, kServerNotInitialized, "the server waits for initialize");
    return;
  }
  if (shutdown_) {
    respond_error(id, kInvalidRequest, "the server is shutting down");
    return;
  }
  if (method == "shutdown") {
    shutdown_ = true;
    respond(id, nullptr);
    return;
  }
  static const std::map<std::string, json (Server::*)(Document&, const json&)> kWithParams = {
      {"textDocument/completion", &Server::completion},   {"textDocument/hover", &Server::hover},
      {"textDocument/definition", &Server::definition},   {"textDocument/references", &Server::references},
  };
  if (auto it = kWithParams.find(method); it != kWithParams.end()) {
    Document* d = find(params);
    if (!d) {
      respond(id, method == "textDocument/completion" || method == "textDocument/references" ? json::array()
                                                                                            : json(nullptr));
      return;
    }
    respond(id, (this->*(it->second))(*d, params));
    return;
  }
  if (method == "textDocument/documentSymbol" || method == "textDocument/formatting") {
    Document* d = find(params);
    if (!d) {
      respond(id, json::array());
      return;
    }
    respond(id, method == "textDocument/formatting" ? formatting(*d) : symbols(*d));
    return;
  }
  respond_error(id, kMethodNotFound, "unknown method " + method);
}

void Server::notification(const std::string& method, const json& params, Clock::time_point now) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  if (!initialized_ || shutdown_) return;  // LSP: notifications before initialize are dropped
  try {
    if (method == "initialized") {
    } else if (method == "textDocument/didOpen") {
      open(params);
    } else if (method == "textDocument/didChange") {
      change(params, now);
    } else if (method == "textDocument/didSave") {
      if (Document* d = find(params)) {
        d->publish_at.reset();
        ++d->revision;  // a named catalog may have changed with it
        publish(*d);
        schedule_dependents(*d, std::nullopt);
      }
    } else if (method == "textDocument/didClose") {
      const std::string uri = string_member(member(params, "textDocument"), "uri");
      if (docs_.erase(uri)) notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
    } else if (method == "workspace/didChangeConfiguration") {
      const json& s = params.value("settings", json::object());
      const json& t = s.is_object() && s.contains("trajcheck") ? s["trajcheck"] : s;
      if (t.is_object() && t.contains("traces")) load_traces(t["traces"]);
    } else if (method.rfind("$/", 0) == 0) {
      // $/cancelRequest, $/setTrace, $/progress: requests are answered in order, nothing to cancel.
    } else {
      log("ignored notification " + method);
    }
  } catch (const std::exception& e) {
    log(fmt::format("{}: {}", method, e.what()));
  }
}

// ---- lifecycle ----

json Server::initialize(const json& params) {
  if (!params.is_object()) throw InvalidParams("params is not an object");
  const json caps = params.value("capabilities", json::object());
  if (caps.is_object()) {
    const json general = caps.value("general", json::object());
    if (general.is_object())
      for (const std::string& e : string_list(general.value("positionEncodings", json::array())))
        if (e == "utf-8") encoding_ = Encoding::utf8;
    const json* td = caps.contains("textDocument") ? &caps["textDocument"] : nullptr;
    if (td && td->is_object() && td->contains("completion") && (*td)["completion"].is_object()) {
      const json& c = (*td)["completion"];
      if (c.contains("completionItem") && c["completionItem"].is_object())
        snippets_ = c["completionItem"].value("snippetSupport", false);
    }
  }
  if (params.contains("rootUri") && params["rootUri"].is_string()) root_ = uri_to_path(params["rootUri"].get<std::string>());
  if (root_.empty() && params.contains("rootPath") && params["rootPath"].is_string()) root_ = params["rootPath"].get<std::string>();
  if (root_.empty() && params.contains("workspaceFolders") && params["workspaceFolders"].is_array() &&
      !params["workspaceFolders"].empty() && params["workspaceFolders"][0].is_object() &&
      params["workspaceFolders"][0].contains("uri") && params["workspaceFolders"][0]["uri"].is_string())
    root_ = uri_to_path(params["workspaceFolders"][0]["uri"].get<std::string>());
  const json opts = params.value("initializationOptions", json::object());
  if (opts.is_object()) {
    if (opts.contains("catalog") && opts["catalog"].is_string())
      default_catalog_ = in_workspace(opts["catalog"].get<std::string>());
    if (opts.contains("traces")) load_traces(opts["traces"]);
  }
  json capabilities = {
      {"positionEncoding", encoding_ == Encoding::utf8 ? "utf-8" : "utf-16"},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"completionProvider", {{"triggerCharacters", {".", "\"", "["}}, {"resolveProvider", false}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"referencesProvider", true},
      {"documentSymbolProvider", true},
      {"documentFormattingProvider", true},
  };
  return {{"capabilities", capabilities}, {"serverInfo", {{"name", "trajcheck"}, {"version", "0.1.0"}}}};
}

std::string Server::in_workspace(const std::string& p) const {
  return root_.empty() || p.empty() || p[0] == '/' ? p : (fs::path(root_) / p).lexically_normal().string();
}

// Trace files, directories or globs relative to the workspace root.
void Server::load_traces(const json& list) {
  std::vector<std::string> inputs;
  for (const std::string& p : string_list(list)) {
    auto files = resolve_files(root_, p);
    if (files.empty() && fs::exists(in_workspace(p))) files.push_back(in_workspace(p));  // a directory
    if (files.empty()) log("no trace file matches " + p);
    inputs.insert(inputs.end(), files.begin(), files.end());
  }
  traces_ = read_trace_names(inputs, kMaxTraceRecords);
  if (!inputs.empty())
    log(fmt::format("read {} trace records ({} rejected): {} tool names", traces_.records, traces_.rejected,
                    traces_.tools.size()));
}

// ---- documents ----

Server::Document* Server::find(const json& params) {
  const std::string uri = string_member(member(params, "textDocument"), "uri");
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : &it->second;
}

void Server::open(const json& params) {
  const json& td = member(params, "textDocument");
  Document d;
  d.uri = string_member(td, "uri");
  d.path = uri_to_path(d.uri);
  d.text = string_member(td, "text");
  d.version = td.value("version", 0);
  d.suite = is_suite(d.uri, td.value("languageId", ""));
  Document& stored = docs_[d.uri] = std::move(d);
  publish(stored);
  schedule_dependents(stored, std::nullopt);
}

void Server::change(const json& params, Clock::time_point now) {
  Document* d = find(params);
  if (!d) {
    log("didChange for a document that is not open");
    return;
  }
  const json& changes = member(params, "contentChanges");
  if (!changes.is_array()) throw InvalidParams("contentChanges is not an array");
  // Applied to a copy: a change that cannot be applied leaves the document as it was.
  std::string doc = d->text;
  for (const json& c : changes) {
    if (!c.is_object()) continue;
    std::string text = string_member(c, "text");
    if (!c.contains("range")) {
      doc = std::move(text);
      continue;
    }
    LineIndex index(doc);
    const json& r = c["range"];
    std::uint32_t b = index.offset(position_member(member(r, "start")), encoding_);
    std::uint32_t e = index.offset(position_member(member(r, "end")), encoding_);
    if (e < b) std::swap(b, e);
    doc.replace(b, e - b, text);
  }
  d->text = std::move(doc);
  const json& td = member(params, "textDocument");
  if (td.contains("version") && td["version"].is_number_integer()) d->version = td["version"].get<std::int64_t>();
  ++d->revision;
  auto at = now + std::chrono::milliseconds(options_.debounce_ms);
  if (options_.debounce_ms == 0) {
    publish(*d);
  } else {
    d->publish_at = at;
  }
  schedule_dependents(*d, options_.debounce_ms == 0 ? std::nullopt : std::optional<Clock::time_point>(at));
}

// A suite's problems include those of the rules files it names: when one of those changes,
// the open suites are analysed again (all of them; they are few).
void Server::schedule_dependents(const Document& changed, std::optional<Clock::time_point> at) {
  if (changed.suite) return;
  for (auto& [uri, d] : docs_) {
    if (!d.suite) continue;
    ++d.revision;
    if (at) d.publish_at = at;
    else publish(d);
  }
}

const Analysis& Server::analysis(Document& d) {
  if (d.analyzed != d.revision || !d.analysis) {
    AnalysisContext ctx;
    ctx.catalogs = &catalogs_;
    ctx.default_catalog = default_catalog_;
    ctx.read = [this](const std::string& path) -> std::optional<std::string> {
      for (const auto& [uri, doc] : docs_)
        if (doc.path == path) return doc.text;
      return read_text_file(path);
    };
    d.analysis = std::make_shared<const Analysis>(d.suite ? analyze_suite(d.path, d.text, ctx)
                                                          : analyze_rules(d.path, d.text, ctx));
    d.analyzed = d.revision;
  }
  return *d.analysis;
}

std::optional<Clock::time_point> Server::next_due() const {
  std::optional<Clock::time_point> due;
  for (const auto& [uri, d] : docs_)
    if (d.publish_at && (!due || *d.publish_at < *due)) due = d.publish_at;
  return due;
}

void Server::publish_due(Clock::time_point now) {
  for (auto& [uri, d] : docs_)
    if (d.publish_at && *d.publish_at <= now) publish(d);
}

void Server::publish(Document& d) {
  d.publish_at.reset();
  const Analysis& a = analysis(d);
  LineIndex index(d.text);
  static constexpr int kSeverity[] = {3, 2, 1};  // note, warning, error -> LSP
  json list = json::array();
  for (const Problem& p : a.problems) {
    const Diagnostic& g = p.diagnostic;
    std::string message = g.message;
    json related = json::array();
    for (const Note& n : g.notes) {
      if (n.range) related.push_back({{"location", location("", d.text, *n.range)},
                                      {"message", n.message}});
      else message += "\n" + n.message;
    }
    for (const Related& r : p.related)
      if (r.source) related.push_back({{"location", location(r.path, r.source->text(), r.range)}, {"message", r.message}});
    for (json& r : related)
      if (r["location"]["uri"] == "") r["location"]["uri"] = d.uri;
    json item = {{"range", range_json(index, g.range)},
                 {"severity", kSeverity[static_cast<int>(g.severity)]},
                 {"source", "trajcheck"},
                 {"message", message}};
    if (!g.code.empty()) item["code"] = g.code;
    if (!related.empty()) item["relatedInformation"] = std::move(related);
    list.push_back(std::move(item));
  }
  notify("textDocument/publishDiagnostics", {{"uri", d.uri}, {"version", d.version}, {"diagnostics", std::move(list)}});
}

// ---- positions ----

json Server::range_json(const LineIndex& index, SourceRange r) const {
  Position b = index.position(r.begin, encoding_), e = index.position(std::max(r.begin, r.end), encoding_);
  return {{"start", {{"line", b.line}, {"character", b.character}}}, {"end", {{"line", e.line}, {"character", e.character}}}};
}

json Server::location(const std::string& path, const std::string& text, SourceRange r) const {
  LineIndex index(text);
  return {{"uri", path.empty() ? std::string() : path_to_uri(fs::absolute(path).lexically_normal().string())},
          {"range", range_json(index, r)}};
}

std::uint32_t Server::offset_of(const Document& d, const json& position) const {
  LineIndex index(d.text);
  return index.offset(position_member(position), encoding_);
}

// ---- features ----

json Server::completion(Document& d, const json& params) {
  const Analysis& a = analysis(d);
  json out = json::array();
  for (const CompletionItem& c : complete(a, d.text, offset_of(d, member(params, "position")), traces_, snippets_)) {
    json item = {{"label", c.label}, {"kind", c.kind}};
    if (!c.detail.empty()) item["detail"] = c.detail;
    if (!c.documentation.empty()) item["documentation"] = c.documentation;
    if (!c.insert.empty()) item["insertText"] = c.insert;
    item["insertTextFormat"] = c.snippet ? 2 : 1;
    out.push_back(std::move(item));
  }
  return out;
}

json Server::hover(Document& d, const json& params) {
  const Analysis& a = analysis(d);
  std::uint32_t offset = offset_of(d, member(params, "position"));
  std::string md = hover_text(a, offset, traces_);
  if (md.empty()) return nullptr;
  json h = {{"contents", {{"kind", "markdown"}, {"value", md}}}};
  if (const Word* w = word_at(a, offset)) h["range"] = range_json(LineIndex(d.text), w->range);
  return h;
}

json Server::definition(Document& d, const json& params) {
  const Analysis& a = analysis(d);
  std::uint32_t offset = offset_of(d, member(params, "position"));
  json out = json::array();
  LineIndex index(d.text);
  for (const Link& l : a.links)
    if (l.range.begin <= offset && offset <= l.range.end) {
      for (const std::string& f : l.files) out.push_back(location(f, "", {0, 0}));
      return out;
    }
  const Word* w = word_at(a, offset);
  if (!w) return nullptr;
  if (w->kind == Word::Kind::tool) {
    if (!a.catalog || !a.catalog->load.ok()) return nullptr;
    const CatalogTool* t = a.catalog->load.catalog->find(w->key);
    if (!t) return nullptr;
    out.push_back(location(a.catalog->path, a.catalog->load.source.text(), t->range));
    return out;
  }
  for (const Word& x : a.words)
    if (x.declaration && x.kind == w->kind && x.key == w->key)
      out.push_back({{"uri", d.uri}, {"range", range_json(index, x.range)}});
  if (out.empty()) return nullptr;
  return out;
}

json Server::references(Document& d, const json& params) {
  const Analysis& a = analysis(d);
  const Word* w = word_at(a, offset_of(d, member(params, "position")));
  json out = json::array();
  if (!w) return out;
  bool with_decl = true;
  if (params.contains("context") && params["context"].is_object())
    with_decl = params["context"].value("includeDeclaration", true);
  LineIndex index(d.text);
  for (const Word& x : a.words)
    if (x.kind == w->kind && x.key == w->key && (with_decl || !x.declaration))
      out.push_back({{"uri", d.uri}, {"range", range_json(index, x.range)}});
  return out;
}

json Server::symbols(Document& d) {
  const Analysis& a = analysis(d);
  LineIndex index(d.text);
  std::function<json(const Symbol&)> convert = [&](const Symbol& s) {
    SourceRange range = s.range, sel = s.selection;
    // LSP: the selection lies within the range.
    range.begin = std::min(range.begin, sel.begin);
    range.end = std::max(range.end, sel.end);
    json j = {{"name", s.name.empty() ? std::string("(unnamed)") : s.name},
              {"kind", s.kind},
              {"range", range_json(index, range)},
              {"selectionRange", range_json(index, sel)}};
    if (!s.detail.empty()) j["detail"] = s.detail;
    if (!s.children.empty()) {
      j["children"] = json::array();
      for (const Symbol& c : s.children) j["children"].push_back(convert(c));
    }
    return j;
  };
  json out = json::array();
  for (const Symbol& s : a.symbols) out.push_back(convert(s));
  return out;
}

json Server::formatting(Document& d) {
  if (d.suite) return json::array();  // suites have no canonical form yet
  std::vector<Diagnostic> diags;
  std::string text = language::format_rules(Source(d.path.empty() ? "untitled.rules" : d.path, d.text), diags);
  if (has_errors(diags) || (text.empty() && !d.text.empty())) {
    log("not formatted: " + d.uri + " has errors");
    return json::array();
  }
  if (text == d.text) return json::array();
  LineIndex index(d.text);
  return json::array({{{"range", range_json(index, {0, static_cast<std::uint32_t>(d.text.size())})}, {"newText", text}}});
}

}  // namespace trajcheck::lsp
