// trajcheck/lsp.hpp — a Language Server Protocol server for `.rules` and `.suite` files.
//
//   trajcheck::lsp::ServerOptions options;               // defaults suit an editor
//   return trajcheck::lsp::run_language_server(std::cin, std::cout, options);
//
// Speaks JSON-RPC 2.0 with `Content-Length` framing on the two streams (LSP 3.17 base
// protocol) until the client sends `exit` or closes `in`. Diagnostics, completion, hover,
// go to definition, references, document symbols and formatting come from the library's own
// front end (compile(), the catalog, the suite parser); docs/editors.md lists what each does.
// Bad input never ends the server: malformed messages are answered with JSON-RPC errors
// where they carry an id, and logged.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>

namespace trajcheck::lsp {

struct ServerOptions {
  // Diagnostics of an edited document are published once no newer change of it arrived
  // for this long (opening and saving publish at once). 0 publishes after every change.
  std::uint32_t debounce_ms = 200;
  // Where the server logs what it could not handle (a malformed message, an unknown
  // notification); null: nowhere.
  std::ostream* log = nullptr;
};

// Serves one client; returns the process exit status the protocol asks for: 0 after
// `shutdown` then `exit`, 1 after `exit` without `shutdown` or when `in` ends first.
int run_language_server(std::istream& in, std::ostream& out, const ServerOptions& options = {});

}  // namespace trajcheck::lsp
