// The front end's entry points: parse_rules, parse_path_expression, format_rules, dump_ir.
#include "language/frontend.hpp"

#include <fmt/format.h>

#include "language/parser.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::language {

FrontendResult parse_rules(const Source& source, const FrontendOptions& options) {
  FrontendResult result;
  ast::File file;
  if (detail::parse_file(source, options, file, result.diagnostics)) {
    detail::lower_file(source, file, options, result.module, result.diagnostics);
    detail::check_traps(source, file, result.diagnostics);
    result.ast_dump = detail::dump_ast(file);
  }
  sort_diagnostics(result.diagnostics);
  return result;
}

ir::Id parse_path_expression(const Source& source, ir::Module& module, std::vector<Diagnostic>& diagnostics) {
  ast::File file;
  std::vector<Diagnostic> diags;
  ast::Id root = detail::parse_path_text(source, FrontendOptions{}, file, diags);
  ir::Id id = ir::kNone;
  if (root != ast::kNone && !has_errors(diags)) {
    id = detail::lower_path(source, file, root, module, diags);
    detail::check_traps(source, file, diags);
  }
  sort_diagnostics(diags);
  if (has_errors(diags)) id = ir::kNone;
  diagnostics.insert(diagnostics.end(), diags.begin(), diags.end());
  return id;
}

std::string format_rules(const Source& source, std::vector<Diagnostic>& diagnostics) {
  ast::File file;
  std::vector<Diagnostic> diags;
  bool ok = detail::parse_file(source, FrontendOptions{}, file, diags);
  if (ok) {
    ir::Module scratch;
    detail::lower_file(source, file, FrontendOptions{}, scratch, diags);
  }
  sort_diagnostics(diags);
  bool failed = !ok || has_errors(diags);
  diagnostics.insert(diagnostics.end(), diags.begin(), diags.end());
  if (failed) return {};

  // Depth of each line in the block tree gives its indentation; comment lines take the
  // indentation of the next code line (the one they most likely describe).
  std::vector<int> depth(file.lines.size(), 0);
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    const ast::Line& l = file.lines[i];
    if (l.parent != UINT32_MAX) depth[i] = depth[l.parent] + 1;
  }
  std::vector<int> comment_depth(file.lines.size(), 0);
  int next = 0;
  for (std::size_t i = file.lines.size(); i-- > 0;) {
    const ast::Line& l = file.lines[i];
    if (l.kind == ast::Line::Kind::blank || l.kind == ast::Line::Kind::comment) comment_depth[i] = next;
    else next = depth[i];
  }
  std::string out;
  bool pending_blank = false;
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    const ast::Line& l = file.lines[i];
    if (l.kind == ast::Line::Kind::blank) {
      pending_blank = !out.empty();
      continue;
    }
    if (pending_blank) out += '\n';
    pending_blank = false;
    int d = l.kind == ast::Line::Kind::comment ? comment_depth[i] : depth[i];
    out.append(static_cast<std::size_t>(d) * 4, ' ');
    std::string_view comment = l.comment;
    while (!comment.empty() && (comment.back() == ' ' || comment.back() == '\t')) comment.remove_suffix(1);
    if (l.kind == ast::Line::Kind::comment) {
      out += comment;
    } else {
      out += detail::print_line(file, l);
      if (!comment.empty()) {
        out += "  ";
        out += comment;
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace trajcheck::language

namespace trajcheck {
std::string format_rules(const Source& source, std::vector<Diagnostic>& diagnostics) {
  return language::format_rules(source, diagnostics);
}
}  // namespace trajcheck
