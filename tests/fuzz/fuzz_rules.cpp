// libFuzzer target for the rule language: parse_rules, format_rules and the fmt round trip on
// arbitrary bytes, and the whole compiler (program, automata, dumps) on what parses. Inputs
// are capped so each run stays fast.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "language/frontend.hpp"
#include "trajcheck/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  trajcheck::Source src("fuzz.rules", text);
  auto result = trajcheck::language::parse_rules(src);
  (void)trajcheck::format_diagnostics(src, result.diagnostics);
  (void)trajcheck::language::dump_ir(result.module);

  std::vector<trajcheck::Diagnostic> diags;
  std::string formatted = trajcheck::language::format_rules(src, diags);
  if (!formatted.empty() && !trajcheck::has_errors(result.diagnostics)) {
    // fmt's output must compile to the same IR and be a fixed point of fmt.
    trajcheck::Source again("fuzz.rules", formatted);
    auto reparsed = trajcheck::language::parse_rules(again);
    if (trajcheck::has_errors(reparsed.diagnostics)) std::abort();
    if (trajcheck::language::dump_ir(reparsed.module) != trajcheck::language::dump_ir(result.module)) std::abort();
    std::vector<trajcheck::Diagnostic> d2;
    if (trajcheck::language::format_rules(again, d2) != formatted) std::abort();
  }

  if (!trajcheck::has_errors(result.diagnostics)) {
    trajcheck::CompileResult compiled = trajcheck::compile(trajcheck::Source("fuzz.rules", text));
    (void)trajcheck::format_diagnostics(compiled.source, compiled.diagnostics);
    if (compiled.ok()) {
      (void)compiled.program->dump_ir();
      (void)compiled.program->dump_automaton();
    }
  }

  trajcheck::ir::Module module;
  std::vector<trajcheck::Diagnostic> path_diags;
  (void)trajcheck::language::parse_path_expression(src, module, path_diags);
  return 0;
}
