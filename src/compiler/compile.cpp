// trajcheck::compile: the front end (parse, check, lower to IR), then the Program build.
// Kept apart from program.cpp so the builder can be linked and tested without a parser.
#include "compiler/catalog_checks.hpp"
#include "compiler/program.hpp"
#include "language/frontend.hpp"

namespace trajcheck {

CompileResult compile(Source source, const CompileOptions& options) {
  CompileResult out;
  language::FrontendOptions fo;
  fo.max_nesting = options.max_nesting;
  fo.command_line_aliases = options.command_line_aliases;
  fo.other_files_aliases = options.other_files_aliases;
  language::FrontendResult fr = language::parse_rules(source, fo);
  out.diagnostics = std::move(fr.diagnostics);
  if (!has_errors(out.diagnostics)) {
    auto program = detail::build_program(fr.module, source, options, out.diagnostics);
    if (!detail::attach_catalog(fr.module, source, options, program.get(), out.diagnostics)) program = nullptr;
    if (program) {
      program->ast_dump = std::move(fr.ast_dump);
      program->ir_dump = language::dump_ir(fr.module);
      out.program = std::make_shared<const Program>(std::move(program));
    }
  }
  sort_diagnostics(out.diagnostics);
  out.source = std::move(source);
  return out;
}

}  // namespace trajcheck
