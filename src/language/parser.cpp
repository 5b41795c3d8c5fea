// Rules text -> AST: a line pre-pass (indentation, comments, limits), PEGTL on each
// logical line, a parse-tree walk that builds AST nodes, and the indentation tree.
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "language/control.hpp"
#include "language/grammar.hpp"
#include "language/parser.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

// The words of a rule header's severity (declared in rules.hpp; the front end reads and
// prints them, so they live on its floor).
std::string_view to_string(RuleSeverity s) {
  switch (s) {
    case RuleSeverity::info: return "info";
    case RuleSeverity::warning: return "warning";
    case RuleSeverity::error: return "error";
    case RuleSeverity::critical: return "critical";
  }
  return "";
}

bool parse_rule_severity(std::string_view name, RuleSeverity* out) {
  static constexpr RuleSeverity kAll[] = {RuleSeverity::info, RuleSeverity::warning,
                                          RuleSeverity::error, RuleSeverity::critical};
  for (RuleSeverity s : kAll)
    if (to_string(s) == name) {
      *out = s;
      return true;
    }
  return false;
}

}  // namespace trajcheck

namespace trajcheck::language::detail {

namespace pegtl = tao::pegtl;
namespace g = grammar;
using ast::Id;
using ast::kNone;

Diagnostic make_error(const char* code, SourceRange range, std::string message) {
  Diagnostic d;
  d.severity = Severity::error;
  d.code = code;
  d.range = range;
  d.message = std::move(message);
  return d;
}

Diagnostic make_warning(const char* code, SourceRange range, std::string message) {
  Diagnostic d = make_error(code, range, std::move(message));
  d.severity = Severity::warning;
  return d;
}

namespace {

// must<> messages of the rule grammar, for the shared control (language/control.hpp).
struct Messages {
  template <typename Rule>
  static constexpr const char* message = g::error_message<Rule>;
};

template <typename Rule>
using Selector = pegtl::parse_tree::selector<
    Rule,
    pegtl::parse_tree::store_content::on<
        g::comment, g::string_lit, g::number_lit, g::count_number, g::true_lit, g::false_lit,
        g::null_lit, g::regex_lit, g::variable, g::field_path, g::path_key, g::path_index, g::cmp_op,
        g::list_lit, g::list_item, g::cond_paren, g::cond_seen, g::seen_source, g::cond_valid, g::valid_target, g::cond_matches, g::cond_contains,
        g::cond_in, g::cond_exists, g::cond_compare, g::cond_negation, g::cond_and, g::cond_or,
        g::condition, g::quoted_name, g::type_keyword, g::tool_name, g::pattern_paren,
        g::where_clause, g::pattern_where, g::pattern_not, g::pattern_failed, g::pattern_or,
        g::pattern, g::second_pattern, g::scope_q, g::scope_r, g::path_name, g::path_not,
        g::path_failed, g::path_atom, g::path_group, g::path_all, g::path_optional, g::path_star,
        g::path_plus, g::path_postfix, g::path_seq, g::path_alt, g::path_expr, g::count_value,
        g::kw_once, g::kw_twice, g::in_a_row, g::count_at_most, g::count_at_least,
        g::count_exactly, g::count_between, g::stmt_forbid, g::stmt_never, g::stmt_require,
        g::stmt_starts_with, g::stmt_ends_with, g::stmt_only, g::stmt_no_duplicate,
        g::stmt_retries, g::stmt_expect, g::expect_exactly, g::stmt_binary, g::tail_precedes,
        g::tail_immediately_precedes, g::tail_immediately_followed, g::tail_never_followed,
        g::tail_followed, g::tail_requires, g::tail_excludes, g::ignoring_clause, g::statement,
        g::scope_after, g::scope_before, g::scope_between, g::scope_header, g::rule_name,
        g::severity_name, g::rule_header, g::alias_from, g::alias_to, g::plain_name, g::group_name,
        g::decl_alias, g::decl_group, g::decl_workflow, g::decl_catalog, g::decl_case,
        g::message_line, g::tag_name, g::tag_line>>;

using Node = pegtl::parse_tree::node;

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t hex4(std::string_view s) {
  std::uint32_t v = 0;
  for (char c : s.substr(0, 4)) {
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
  }
  return v;
}

class Builder {
 public:
  Builder(const Source& source, ast::File& file, std::vector<Diagnostic>& diags)
      : text_(source.text().data()), file_(file), diags_(diags) {}

  SourceRange range(const Node& n) const {
    return {static_cast<std::uint32_t>(n.m_begin.data - text_),
            static_cast<std::uint32_t>(n.m_end.data - text_)};
  }

  // ---- patterns ----
  Id add_pattern(ast::Pattern p) {
    file_.patterns.push_back(std::move(p));
    return static_cast<Id>(file_.patterns.size() - 1);
  }

  // pattern / pattern_or / second_pattern / scope_q / scope_r: a list of unary patterns.
  Id pattern_or(const Node& n) {
    if (n.children.size() == 1) return unary(*n.children[0]);
    ast::Pattern p;
    p.kind = ast::Pattern::Kind::or_;
    p.range = range(n);
    for (const auto& c : n.children) p.children.push_back(unary(*c));
    return add_pattern(std::move(p));
  }

  Id unary(const Node& n) {
    if (n.is_type<g::pattern_not>() || n.is_type<g::pattern_failed>()) {
      ast::Pattern p;
      p.kind = n.is_type<g::pattern_not>() ? ast::Pattern::Kind::not_ : ast::Pattern::Kind::failed;
      p.range = range(n);
      p.children.push_back(unary(*n.children.at(0)));
      return add_pattern(std::move(p));
    }
    // pattern_where
    Id primary_id = primary(*n.children.at(0));
    if (n.children.size() == 1) return primary_id;
    ast::Pattern p;
    p.kind = ast::Pattern::Kind::where;
    p.range = range(n);
    p.children.push_back(primary_id);
    for (std::size_t i = 1; i < n.children.size(); ++i)
      p.conds.push_back(condition(*n.children[i]->children.at(0)));
    return add_pattern(std::move(p));
  }

  Id primary(const Node& n) {
    ast::Pattern p;
    p.range = range(n);
    if (n.is_type<g::pattern_paren>()) {
      p.kind = ast::Pattern::Kind::paren;
      p.children.push_back(pattern_or(*n.children.at(0)));
    } else if (n.is_type<g::quoted_name>()) {
      p.kind = ast::Pattern::Kind::quoted;
      p.text = decode_string(n.string_view());
    } else if (n.is_type<g::type_keyword>()) {
      p.kind = ast::Pattern::Kind::keyword;
      p.text = n.string();
    } else {  // tool_name / path_name
      p.kind = ast::Pattern::Kind::name;
      p.text = n.string();
    }
    return add_pattern(std::move(p));
  }

  // ---- conditions ----
  Id add_cond(ast::Cond c) {
    file_.conds.push_back(std::move(c));
    return static_cast<Id>(file_.conds.size() - 1);
  }

  // condition / cond_or: a list of cond_and.
  Id condition(const Node& n) {
    if (n.children.size() == 1) return cond_and(*n.children[0]);
    ast::Cond c;
    c.kind = ast::Cond::Kind::or_;
    c.range = range(n);
    for (const auto& ch : n.children) c.children.push_back(cond_and(*ch));
    return add_cond(std::move(c));
  }

  Id cond_and(const Node& n) {
    if (n.children.size() == 1) return cond_unary(*n.children[0]);
    ast::Cond c;
    c.kind = ast::Cond::Kind::and_;
    c.range = range(n);
    for (const auto& ch : n.children) c.children.push_back(cond_unary(*ch));
    return add_cond(std::move(c));
  }

  Id cond_unary(const Node& n) {
    ast::Cond c;
    c.range = range(n);
    if (n.is_type<g::cond_negation>()) {
      c.kind = ast::Cond::Kind::not_;
      c.children.push_back(cond_unary(*n.children.at(0)));
    } else if (n.is_type<g::cond_paren>()) {
      c.kind = ast::Cond::Kind::paren;
      c.children.push_back(condition(*n.children.at(0)));
    } else if (n.is_type<g::cond_seen>()) {
      c.kind = ast::Cond::Kind::seen;
      c.a = operand(*n.children.at(0));
      for (std::size_t i = 1; i < n.children.size(); ++i) {
        const std::string_view w = n.children[i]->string_view();
        c.sources |= w == "user" ? ir::kSeenUser : w == "result" ? ir::kSeenResult : ir::kSeenContext;
      }
    } else if (n.is_type<g::cond_valid>()) {
      c.kind = ast::Cond::Kind::valid;
      const Node& t = *n.children.at(0);
      c.a.kind = ir::Operand::Kind::path;
      c.a.range = range(t);
      c.a.path = field_path(t);
    } else if (n.is_type<g::cond_matches>()) {
      c.kind = ast::Cond::Kind::matches;
      c.a = operand(*n.children.at(0));
      const Node& re = *n.children.at(1);
      std::string_view s = re.string_view();
      c.regex = std::string(s.substr(1, s.size() - 2));
      c.regex_range = range(re);
    } else if (n.is_type<g::cond_contains>()) {
      c.kind = ast::Cond::Kind::contains;
      c.a = operand(*n.children.at(0));
      c.b = operand(*n.children.at(1));
    } else if (n.is_type<g::cond_in>()) {
      c.kind = ast::Cond::Kind::in;
      c.a = operand(*n.children.at(0));
      const Node& lst = *n.children.at(1);
      if (lst.is_type<g::list_lit>()) {
        c.b.kind = ir::Operand::Kind::list;
        c.b.range = range(lst);
        for (const auto& item : lst.children) c.b.list.push_back(literal(*item->children.at(0)));
      } else {  // `x in PATH`: the array at PATH
        c.b = operand(lst);
      }
    } else if (n.is_type<g::cond_exists>()) {
      c.kind = ast::Cond::Kind::exists;
      c.a = operand(*n.children.at(0));
    } else {  // cond_compare
      c.kind = ast::Cond::Kind::compare;
      c.a = operand(*n.children.at(0));
      std::string_view op = n.children.at(1)->string_view();
      c.op = op == "==" ? ir::CompareOp::eq
           : op == "!=" ? ir::CompareOp::ne
           : op == "<=" ? ir::CompareOp::le
           : op == ">=" ? ir::CompareOp::ge
           : op == "<"  ? ir::CompareOp::lt
                        : ir::CompareOp::gt;
      c.b = operand(*n.children.at(2));
    }
    return add_cond(std::move(c));
  }

  ir::Literal literal(const Node& n) {
    ir::Literal l;
    l.text = n.string();
    if (n.is_type<g::string_lit>()) {
      l.kind = ir::Literal::Kind::string;
      l.string = decode_string(n.string_view());
    } else if (n.is_type<g::number_lit>()) {
      l.kind = ir::Literal::Kind::number;
      const char* b = n.m_begin.data;
      auto r = std::from_chars(b, n.m_end.data, l.number);
      if (r.ec == std::errc::result_out_of_range) {
        diags_.push_back(make_error("E009", range(n), fmt::format("number {} is out of range", l.text)));
      }
    } else if (n.is_type<g::true_lit>() || n.is_type<g::false_lit>()) {
      l.kind = ir::Literal::Kind::boolean;
      l.boolean = n.is_type<g::true_lit>();
    } else {
      l.kind = ir::Literal::Kind::null;
    }
    return l;
  }

  ir::Operand operand(const Node& n) {
    ir::Operand o;
    o.range = range(n);
    if (n.is_type<g::field_path>()) {
      o.kind = ir::Operand::Kind::path;
      o.path = field_path(n);
    } else if (n.is_type<g::variable>()) {
      o.kind = ir::Operand::Kind::variable;
      o.variable = std::string(n.string_view().substr(1));
    } else {
      o.kind = ir::Operand::Kind::literal;
      o.literal = literal(n);
    }
    return o;
  }

  ir::FieldPath field_path(const Node& n) {
    ir::FieldPath p;
    p.range = range(n);
    bool first = true;
    for (const auto& c : n.children) {
      ir::PathSegment seg;
      if (c->is_type<g::path_key>()) {
        seg.key = c->string();
      } else {  // path_index
        const Node& k = *c->children.at(0);
        if (k.is_type<g::string_lit>()) {
          seg.key = decode_string(k.string_view());
        } else {
          seg.index = count_of(k).value;
          if (seg.index < 0) seg.index = 0;
        }
      }
      if (first) {
        first = false;
        if (seg.key == "arguments" || seg.key == "args") {
          p.root = ir::FieldPath::Root::arguments;
          continue;
        }
        if (seg.key == "result") {
          p.root = ir::FieldPath::Root::result;
          continue;
        }
        if (seg.key == "context") {
          p.root = ir::FieldPath::Root::context;
          continue;
        }
        if (seg.key == "fixture") {
          p.root = ir::FieldPath::Root::fixture;
          continue;
        }
        p.root = ir::FieldPath::Root::step;
      }
      p.segments.push_back(std::move(seg));
    }
    p.text = path_text(p);
    return p;
  }

  static bool plain_key(std::string_view k) {
    if (k.empty() || !(std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_')) return false;
    for (char c : k)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
  }

  static std::string path_text(const ir::FieldPath& p) {
    std::string out;
    switch (p.root) {
      case ir::FieldPath::Root::arguments: out = "arguments"; break;
      case ir::FieldPath::Root::result: out = "result"; break;
      case ir::FieldPath::Root::context: out = "context"; break;
      case ir::FieldPath::Root::fixture: out = "fixture"; break;
      case ir::FieldPath::Root::step: break;
    }
    for (const auto& s : p.segments) {
      if (s.index >= 0 && s.key.empty()) {
        out += fmt::format("[{}]", s.index);
      } else if (plain_key(s.key)) {
        if (!out.empty()) out += '.';
        out += s.key;
      } else {
        out += "[" + quote_string(s.key) + "]";
      }
    }
    return out;
  }

  // count_number -> value with overflow detection (no UB: digits are accumulated checked).
  ast::Count count_of(const Node& n) {
    ast::Count c;
    c.range = range(n);
    c.text = n.string();
    if (n.is_type<g::kw_once>()) {
      c.value = 1;
    } else if (n.is_type<g::kw_twice>()) {
      c.value = 2;
    } else {
      std::uint64_t v = 0;
      for (char ch : n.string_view()) {
        auto d = static_cast<std::uint64_t>(ch - '0');
        if (v > (kMaxCount - d) / 10) {
          c.too_large = true;
          v = kMaxCount;
          break;
        }
        v = v * 10 + d;
      }
      c.value = v;
      if (c.too_large) {
        diags_.push_back(make_error("E009", c.range,
                                    fmt::format("count {} is too large (the limit is 2^63-1 = {})",
                                                c.text, kMaxCount)));
      }
    }
    return c;
  }

  // count_value: count_number (+ times) | once | twice
  ast::Count count_value(const Node& n) {
    ast::Count c = count_of(*n.children.at(0));
    c.range = range(*n.children.at(0));
    return c;
  }

  // ---- PATH ----
  Id add_path(ast::PathNode p) {
    file_.paths.push_back(std::move(p));
    return static_cast<Id>(file_.paths.size() - 1);
  }

  Id path_expr(const Node& n) {  // path_expr / path_alt: list of path_seq
    if (n.children.size() == 1) return path_seq(*n.children[0]);
    ast::PathNode p;
    p.kind = ast::PathNode::Kind::alt;
    p.range = range(n);
    for (const auto& c : n.children) p.children.push_back(path_seq(*c));
    return add_path(std::move(p));
  }

  Id path_seq(const Node& n) {
    if (n.children.size() == 1) return path_postfix(*n.children[0]);
    ast::PathNode p;
    p.kind = ast::PathNode::Kind::seq;
    p.range = range(n);
    for (const auto& c : n.children) p.children.push_back(path_postfix(*c));
    return add_path(std::move(p));
  }

  Id path_postfix(const Node& n) {
    Id id = path_unit(*n.children.at(0));
    for (std::size_t i = 1; i < n.children.size(); ++i) {
      ast::PathNode p;
      const Node& op = *n.children[i];
      p.kind = op.is_type<g::path_optional>() ? ast::PathNode::Kind::optional
             : op.is_type<g::path_star>()     ? ast::PathNode::Kind::star
                                              : ast::PathNode::Kind::plus;
      p.range = {range(n).begin, range(op).end};
      p.children.push_back(id);
      id = add_path(std::move(p));
    }
    return id;
  }

  Id path_unit(const Node& n) {
    ast::PathNode p;
    p.range = range(n);
    if (n.is_type<g::path_group>()) {
      p.kind = ast::PathNode::Kind::group;
      p.children.push_back(path_expr(*n.children.at(0)));
    } else if (n.is_type<g::path_all>()) {
      p.kind = ast::PathNode::Kind::all_of;
      for (const auto& c : n.children) p.children.push_back(path_expr(*c));
    } else {
      p.kind = ast::PathNode::Kind::atom;
      p.pattern = path_atom(n);
    }
    return add_path(std::move(p));
  }

  Id path_atom(const Node& n) {  // path_atom
    const Node& first = *n.children.at(0);
    if (first.is_type<g::path_not>() || first.is_type<g::path_failed>()) {
      ast::Pattern p;
      p.kind = first.is_type<g::path_not>() ? ast::Pattern::Kind::not_ : ast::Pattern::Kind::failed;
      p.range = range(first);
      p.children.push_back(path_atom(*first.children.at(0)));
      return add_pattern(std::move(p));
    }
    Id prim = primary(first);
    if (n.children.size() == 1) return prim;
    ast::Pattern p;
    p.kind = ast::Pattern::Kind::where;
    p.range = range(n);
    p.children.push_back(prim);
    for (std::size_t i = 1; i < n.children.size(); ++i)
      p.conds.push_back(condition(*n.children[i]->children.at(0)));
    return add_pattern(std::move(p));
  }

  // ---- statements ----
  Id statement(const Node& n) {
    ast::Statement s;
    s.range = range(n);
    const Node& body = *n.children.at(0);
    using K = ir::StatementKind;
    if (body.is_type<g::stmt_forbid>() || body.is_type<g::stmt_never>()) {
      s.kind = K::forbid;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_require>()) {
      s.kind = K::require;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_starts_with>()) {
      s.kind = K::starts_with;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_ends_with>()) {
      s.kind = K::ends_with;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_only>()) {
      s.kind = K::only;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_no_duplicate>()) {
      s.kind = K::no_duplicate;
      s.a = pattern_or(*body.children.at(0));
    } else if (body.is_type<g::stmt_retries>()) {
      s.kind = K::retries;
      s.a = pattern_or(*body.children.at(0));
      s.form = ast::CountForm::at_most;
      s.first = count_value(*body.children.at(1));
    } else if (body.is_type<g::stmt_expect>()) {
      s.kind = K::expect;
      std::size_t i = 0;
      if (body.children.at(0)->is_type<g::expect_exactly>()) {
        s.kind = K::expect_exactly;
        i = 1;
      }
      s.path = path_expr(*body.children.at(i));
    } else {  // stmt_binary
      s.a = pattern_or(*body.children.at(0));
      const Node& tail = *body.children.at(1);
      auto second = [&] { return pattern_or(*tail.children.back()); };
      if (tail.is_type<g::count_at_most>()) {
        s.kind = K::count;
        s.form = ast::CountForm::at_most;
        s.first = count_value(*tail.children.at(0));
        if (tail.children.size() > 1) s.kind = K::in_a_row;
      } else if (tail.is_type<g::count_at_least>()) {
        s.kind = K::count;
        s.form = ast::CountForm::at_least;
        s.first = count_value(*tail.children.at(0));
      } else if (tail.is_type<g::count_exactly>()) {
        s.kind = K::count;
        s.form = ast::CountForm::exactly;
        s.first = count_value(*tail.children.at(0));
      } else if (tail.is_type<g::count_between>()) {
        s.kind = K::count;
        s.form = ast::CountForm::between;
        s.first = count_of(*tail.children.at(0));
        s.second = count_value(*tail.children.at(1));
      } else if (tail.is_type<g::tail_precedes>()) {
        s.kind = K::precedes;
        s.b = second();
      } else if (tail.is_type<g::tail_immediately_precedes>()) {
        s.kind = K::immediately_precedes;
        s.b = second();
      } else if (tail.is_type<g::tail_immediately_followed>()) {
        s.kind = K::immediately_followed_by;
        s.b = second();
      } else if (tail.is_type<g::tail_never_followed>()) {
        s.kind = K::never_followed_by;
        s.b = second();
      } else if (tail.is_type<g::tail_followed>()) {
        s.kind = K::followed_by;
        s.b = second();
      } else if (tail.is_type<g::tail_requires>()) {
        s.kind = K::requires_;
        s.b = second();
      } else {
        s.kind = K::excludes;
        s.b = second();
      }
    }
    if (n.children.size() > 1) s.ignoring = pattern_or(*n.children[1]->children.at(0));
    file_.statements.push_back(std::move(s));
    return static_cast<Id>(file_.statements.size() - 1);
  }

  ast::Scope scope(const Node& n) {  // scope_after / scope_before / scope_between
    ast::Scope s;
    s.range = range(n);
    if (n.is_type<g::scope_after>()) {
      s.kind = n.children.size() > 1 ? ir::ScopeKind::after_until : ir::ScopeKind::after;
      s.q = pattern_or(*n.children.at(0));
      if (n.children.size() > 1) s.r = pattern_or(*n.children[1]);
    } else if (n.is_type<g::scope_before>()) {
      s.kind = ir::ScopeKind::before;
      s.r = pattern_or(*n.children.at(0));
    } else {
      s.kind = ir::ScopeKind::between;
      s.q = pattern_or(*n.children.at(0));
      s.r = pattern_or(*n.children.at(1));
    }
    return s;
  }

  // scope_header: [scope, statement?] into `line`.
  void scope_header(const Node& n, ast::Line& line) {
    line.scope = scope(*n.children.at(0));
    if (n.children.size() > 1) line.statement = statement(*n.children[1]);
  }

  static std::string alias_text(const Node& n) {  // alias_from / alias_to
    const Node& c = *n.children.at(0);
    if (c.is_type<g::quoted_name>()) return decode_string(c.string_view());
    return c.string();
  }

  void line(const Node& root, ast::Line& line) {
    for (const auto& cp : root.children) {
      const Node& n = *cp;
      if (n.is_type<g::comment>()) {
        line.comment = n.string();
        continue;
      }
      line.range = range(n);
      using LineKind = ast::Line::Kind;
      if (n.is_type<g::decl_workflow>() || n.is_type<g::decl_catalog>() || n.is_type<g::message_line>()) {
        line.kind = n.is_type<g::decl_workflow>() ? LineKind::workflow
                  : n.is_type<g::decl_catalog>()  ? LineKind::catalog
                                                  : LineKind::message;
        line.text = decode_string(n.children.at(0)->string_view());
        line.text_range = range(*n.children[0]);
      } else if (n.is_type<g::decl_alias>()) {
        line.kind = LineKind::alias;
        line.text = alias_text(*n.children.at(0));
        line.text_range = range(*n.children[0]);
        line.text2 = alias_text(*n.children.at(1));
        line.text2_range = range(*n.children[1]);
      } else if (n.is_type<g::decl_group>()) {
        line.kind = LineKind::group;
        line.text = n.children.at(0)->string();
        line.text_range = range(*n.children[0]);
        line.pattern = pattern_or(*n.children.at(1));
      } else if (n.is_type<g::decl_case>()) {
        line.kind = LineKind::case_sensitive;
      } else if (n.is_type<g::tag_line>()) {
        line.kind = LineKind::tag;
        for (const auto& t : n.children) {
          line.tags.push_back(t->string());
          line.tag_ranges.push_back(range(*t));
        }
      } else if (n.is_type<g::rule_header>()) {
        line.kind = LineKind::rule;
        line.text = n.children.at(0)->string();
        line.text_range = range(*n.children[0]);
        for (std::size_t i = 1; i < n.children.size(); ++i) {
          const Node& c = *n.children[i];
          if (c.is_type<g::severity_name>()) {
            RuleSeverity severity = RuleSeverity::error;  // the grammar admits the four names only
            parse_rule_severity(c.string_view(), &severity);
            line.severity = severity;
            line.severity_range = range(c);
          } else if (c.is_type<g::scope_header>()) {
            scope_header(c, line);
          } else {
            line.statement = statement(c);
          }
        }
      } else if (n.is_type<g::scope_header>()) {
        line.kind = LineKind::scope;
        scope_header(n, line);
      } else if (n.is_type<g::statement>()) {
        line.kind = LineKind::statement;
        line.statement = statement(n);
      }
    }
    if (line.kind == ast::Line::Kind::blank && !line.comment.empty()) line.kind = ast::Line::Kind::comment;
  }

 private:
  const char* text_;
  ast::File& file_;
  std::vector<Diagnostic>& diags_;
};

// The first offset in [b, e) that is not valid UTF-8, or e.
const char* invalid_utf8(const char* b, const char* e) {
  const auto* p = reinterpret_cast<const unsigned char*>(b);
  const auto* end = reinterpret_cast<const unsigned char*>(e);
  while (p < end) {
    unsigned char c = *p;
    int n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || end - p <= n) return reinterpret_cast<const char*>(p);
    std::uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return reinterpret_cast<const char*>(p);
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return reinterpret_cast<const char*>(p);
    p += n + 1;
  }
  return e;
}

// Parses text[b, e) with Rule; fills the line (kind error on failure).
template <typename Rule, typename Fill>
bool parse_with(const Source& source, std::uint32_t b, std::uint32_t e, std::uint32_t max_nesting,
                std::vector<Diagnostic>& diags, Fill&& fill) {
  std::optional<LineFailure> failure = parse_line<Rule, Selector, Messages>(source, b, e, max_nesting, fill);
  if (!failure) return true;
  switch (failure->kind) {
    case LineFailure::Kind::no_match:
      diags.push_back(make_error("E001", failure->range, std::move(failure->message)));
      break;
    case LineFailure::Kind::raised: {
      std::string message = std::move(failure->message);
      std::uint32_t off = failure->range.begin;
      if (off < e && static_cast<unsigned char>(source.text()[off]) >= 0x80)
        message += " (a name with characters other than ASCII letters, digits and _ . : / - is written quoted)";
      diags.push_back(make_error("E001", failure->range, std::move(message)));
      break;
    }
    case LineFailure::Kind::internal:
      // A parse-tree shape the builder did not expect: report it rather than crash.
      diags.push_back(make_error("E001", failure->range, fmt::format("cannot parse this line ({})", failure->message)));
      break;
    case LineFailure::Kind::nesting:
      diags.push_back(make_error(
          "E010", failure->range,
          fmt::format("nesting is deeper than {} levels (parentheses, braces, `not`, `failed`)", max_nesting)));
      break;
  }
  return false;
}

std::uint32_t indentation(std::string_view s, std::uint32_t& width) {
  std::uint32_t i = 0;
  width = 0;
  for (; i < s.size() && (s[i] == ' ' || s[i] == '\t'); ++i) width = s[i] == '\t' ? (width / 8 + 1) * 8 : width + 1;
  return i;
}

// Builds the block tree from indentation (Python-like: a deeper line opens a block under
// the line before it; a shallower one must return to an enclosing level).
void build_tree(ast::File& file, std::vector<Diagnostic>& diags) {
  struct Level {
    std::uint32_t indent;
    std::uint32_t parent;  // line index, or UINT32_MAX for the file
  };
  std::vector<Level> stack{{0, UINT32_MAX}};
  std::uint32_t last = UINT32_MAX;  // previous code line
  auto add = [&](std::uint32_t parent, std::uint32_t i) {
    file.lines[i].parent = parent;
    if (parent == UINT32_MAX) file.top.push_back(i);
    else file.lines[parent].children.push_back(i);
  };
  for (std::uint32_t i = 0; i < file.lines.size(); ++i) {
    ast::Line& l = file.lines[i];
    if (l.kind == ast::Line::Kind::blank || l.kind == ast::Line::Kind::comment) continue;
    std::uint32_t d = l.indent;
    if (d > stack.back().indent) {
      if (last == UINT32_MAX) {
        diags.push_back(make_error("E014", {l.begin, l.begin + 1},
                                   "unexpected indentation: the first line of a file is not indented"));
      } else {
        stack.push_back({d, last});
      }
    } else if (d < stack.back().indent) {
      while (stack.size() > 1 && stack.back().indent > d) stack.pop_back();
      if (stack.back().indent != d) {
        // Recover by attaching the line to the enclosing level, leaving levels unchanged.
        diags.push_back(make_error("E014", {l.begin, l.begin + 1},
                                   "indentation does not match any enclosing block"));
      }
    }
    add(stack.back().parent, i);
    last = i;
  }
}

}  // namespace

std::string decode_string(std::string_view lit) {
  std::string out;
  if (lit.size() < 2) return out;
  std::string_view s = lit.substr(1, lit.size() - 2);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        std::uint32_t cp = hex4(s.substr(i + 1));
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < s.size() + 1 && s.substr(i + 1, 2) == "\\u") {
          std::uint32_t lo = hex4(s.substr(i + 3));
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        append_utf8(out, cp);
        break;
      }
      default: out += e; break;  // " \ /
    }
  }
  return out;
}

bool parse_file(const Source& source, const FrontendOptions& options, ast::File& file,
                std::vector<Diagnostic>& diags) {
  const std::string& text = source.text();
  if (text.size() > kMaxSourceBytes) {
    diags.push_back(make_error("E011", {0, 0},
                               fmt::format("rules file is {} bytes; the limit is {} bytes (16 MiB)",
                                           text.size(), kMaxSourceBytes)));
    return false;
  }
  Builder builder(source, file, diags);
  const char* base = text.data();
  std::uint32_t n = source.line_count();
  file.lines.reserve(n);
  for (std::uint32_t ln = 1; ln <= n; ++ln) {
    std::string_view lt = source.line_text(ln);
    if (ln == n && lt.empty()) break;  // the empty tail after a final newline
    auto b = static_cast<std::uint32_t>(lt.data() - base);
    auto e = static_cast<std::uint32_t>(b + lt.size());
    ast::Line line;
    line.number = ln;
    std::uint32_t width = 0;
    std::uint32_t skip = indentation(lt, width);
    line.indent = width;
    line.begin = b + skip;
    line.range = {line.begin, e};
    if (const char* bad = invalid_utf8(base + b, base + e); bad != base + e) {
      auto off = static_cast<std::uint32_t>(bad - base);
      diags.push_back(make_error("E013", {off, off + 1}, "invalid UTF-8 in the rules file"));
    }
    if (skip == lt.size()) {
      line.kind = ast::Line::Kind::blank;
    } else if (lt[skip] == '#') {
      line.kind = ast::Line::Kind::comment;
      line.comment = std::string(lt.substr(skip));
    } else {
      bool ok = parse_with<grammar::line>(source, line.begin, e, options.max_nesting, diags,
                                          [&](const Node& root) { builder.line(root, line); });
      if (!ok) line.kind = ast::Line::Kind::error;
    }
    file.lines.push_back(std::move(line));
  }
  build_tree(file, diags);
  return true;
}

ast::Id parse_path_text(const Source& source, const FrontendOptions& options, ast::File& file,
                        std::vector<Diagnostic>& diags) {
  const std::string& text = source.text();
  if (text.size() > kMaxSourceBytes) {
    diags.push_back(make_error("E011", {0, 0}, "PATH expression is too large"));
    return kNone;
  }
  auto e = static_cast<std::uint32_t>(text.size());
  while (e > 0 && (text[e - 1] == '\n' || text[e - 1] == '\r')) --e;
  if (std::memchr(text.data(), '\n', e) != nullptr) {
    diags.push_back(make_error("E001", {0, e}, "a PATH expression is one line"));
    return kNone;
  }
  Builder builder(source, file, diags);
  Id result = kNone;
  parse_with<grammar::path_line>(source, 0, e, options.max_nesting, diags, [&](const Node& root) {
    for (const auto& c : root.children)
      if (c->is_type<grammar::path_expr>()) result = builder.path_expr(*c);
  });
  return result;
}

}  // namespace trajcheck::language::detail
