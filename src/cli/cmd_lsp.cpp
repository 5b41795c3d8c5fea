// `trajcheck lsp`: the language server for editors, on standard input and output.
#include <iostream>

#include "command.hpp"
#include "trajcheck/lsp.hpp"

namespace trajcheck::cli {
namespace {

struct LspArgs {
  bool stdio = false;
  unsigned debounce_ms = 200;
  bool quiet = false;
};

const bool lsp_registered = register_command({"lsp", 90, [](CLI::App& app) {
  auto args = std::make_shared<LspArgs>();
  CLI::App* sub = app.add_subcommand("lsp", "run the language server for .rules and .suite files (stdio)");
  sub->add_flag("--stdio", args->stdio, "talk LSP on standard input and output (the default and only transport)");
  sub->add_option("--debounce-ms", args->debounce_ms,
                  "publish an edited file's diagnostics after this many quiet milliseconds (default 200)");
  sub->add_flag("-q,--quiet", args->quiet, "log nothing on standard error");
  return [args] {
    std::ios::sync_with_stdio(false);
    lsp::ServerOptions options;
    options.debounce_ms = args->debounce_ms;
    options.log = args->quiet ? nullptr : &std::cerr;
    return lsp::run_language_server(std::cin, std::cout, options);
  };
}});

}  // namespace
}  // namespace trajcheck::cli
