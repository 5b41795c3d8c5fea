// RE2 as valijson's regex engine: the compiled-pattern cache, the load-time pattern check,
// and the valijson specializations declared in valijson.hpp.
#include "catalog/schema_regex.hpp"

#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "catalog/valijson.hpp"

namespace trajcheck::detail {

namespace {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Patterns come from loaded catalogs, so the cache is bounded by the schemas a process
// loads; entries are never removed, so the references handed out stay valid.
class RegexCache {
 public:
  // The compiled pattern, or null with *error set (failures are not cached: they end a
  // catalog load, so they are not looked up again on a hot path).
  const RE2* get(std::string_view pattern, std::string* error) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = compiled_.find(pattern); it != compiled_.end()) return it->second.get();
    }
    RE2::Options options;
    options.set_log_errors(false);  // the error is returned, not printed
    auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
    if (!re->ok()) {
      if (error) *error = re->error();
      return nullptr;
    }
    std::unique_lock lock(mutex_);
    auto [it, fresh] = compiled_.try_emplace(std::string(pattern), std::move(re));
    return it->second.get();
  }

 private:
  std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<RE2>, StringHash, std::equal_to<>> compiled_;
};

RegexCache& cache() {
  static RegexCache c;
  return c;
}

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') out += "~0";
    else if (ch == '/') out += "~1";
    else out += ch;
  }
  return out;
}

class PatternWalker {
 public:
  std::vector<SchemaPatternProblem> problems;

  void schema(const nlohmann::json& s) {
    if (!s.is_object()) return;  // a boolean schema has no patterns
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      const nlohmann::json& v = *it;
      const std::size_t mark = push(k);
      if (k == "pattern") {
        if (v.is_string()) check(v.get_ref<const std::string&>(), false);
      } else if (k == "patternProperties") {
        members(v, /*keys_are_patterns=*/true);
      } else if (k == "properties" || k == "definitions" || k == "$defs" || k == "dependencies") {
        members(v, false);  // a dependencies array (property names) is skipped as a non-schema
      } else if (k == "items" || k == "allOf" || k == "anyOf" || k == "oneOf") {
        if (v.is_array()) {
          for (std::size_t i = 0; i < v.size(); ++i) {
            const std::size_t m = push(std::to_string(i));
            schema(v[i]);
            pointer_.resize(m);
          }
        } else {
          schema(v);
        }
      } else if (k == "additionalProperties" || k == "additionalItems" || k == "contains" ||
                 k == "propertyNames" || k == "not" || k == "if" || k == "then" || k == "else") {
        schema(v);
      }
      // enum, const, default, examples and unknown keywords hold data, not schemas.
      pointer_.resize(mark);
    }
  }

 private:
  std::string pointer_;

  std::size_t push(std::string_view token) {
    const std::size_t mark = pointer_.size();
    pointer_ += '/';
    pointer_ += pointer_token(token);
    return mark;
  }

  void members(const nlohmann::json& v, bool keys_are_patterns) {
    if (!v.is_object()) return;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::size_t m = push(it.key());
      if (keys_are_patterns) check(it.key(), true);
      schema(*it);
      pointer_.resize(m);
    }
  }

  void check(const std::string& pattern, bool is_key) {
    std::string error;
    if (cache().get(pattern, &error) == nullptr)
      problems.push_back(SchemaPatternProblem{pointer_, pattern, is_key, std::move(error)});
  }
};

// What valijson's date/time formats need from a match: nothing more, a range check of
// month and day, or a failure.
enum class FormatVerdict { unchecked, ok, check_date, bad };

FormatVerdict match_format(const std::string& format, const std::string& s, int& month, int& day) {
  // valijson 1.0's own expressions, anchored by FullMatch instead of ^…$.
  static const RE2 date("([0-9]+)-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])");
  static const RE2 time(
      "([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]|60)(\\.[0-9]+)?(([Zz])|([\\+|\\-]([01][0-9]|2[0-3]):[0-5][0-9]))");
  static const RE2 date_time(
      "([0-9]+)-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]|60)(\\.[0-9]+)?"
      "(([Zz])|([\\+|\\-]([01][0-9]|2[0-3]):[0-5][0-9]))");
  void* skip = nullptr;
  if (format == "date")
    return RE2::FullMatch(s, date, skip, &month, &day) ? FormatVerdict::check_date : FormatVerdict::bad;
  if (format == "time") return RE2::FullMatch(s, time) ? FormatVerdict::ok : FormatVerdict::bad;
  if (format == "date-time")
    return RE2::FullMatch(s, date_time, skip, &month, &day) ? FormatVerdict::check_date : FormatVerdict::bad;
  return FormatVerdict::unchecked;
}

template <typename Adapter>
bool match_pattern(const Adapter& target, bool strict_types, const valijson::constraints::PatternConstraint& c,
                   valijson::ValidationResults* results, const std::vector<std::string>& context) {
  if ((strict_types && !target.isString()) || !target.maybeString()) return true;
  thread_local std::string pattern;  // reused: no allocation per check
  c.getPattern(pattern);
  // JSON Schema's `pattern` is a search, not a whole-string match.
  if (RE2::PartialMatch(target.asString(), schema_regex(pattern))) return true;
  if (results) results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
  return false;
}

// valijson 1.0's ValidatePatternPropertySubschemas::operator(), with RE2 (the state is the
// functor's members, passed in).
template <typename Adapter>
bool match_pattern_properties(const valijson::ValijsonString& pattern, const valijson::Subschema* subschema,
                              const typename Adapter::Object& object, const std::vector<std::string>& context,
                              bool continue_on_success, bool continue_on_failure, bool continue_if_unmatched,
                              bool strict_types, valijson::ValidationResults* results,
                              std::set<std::string>* properties_matched, bool* validated,
                              std::unordered_map<std::string, std::regex>& unused_cache) {
  const RE2& re = schema_regex(std::string_view(pattern.data(), pattern.size()));
  bool match_found = false;
  for (const typename Adapter::ObjectMember m : object) {
    if (!RE2::PartialMatch(m.first, re)) continue;
    match_found = true;
    if (properties_matched) properties_matched->insert(m.first);
    std::vector<std::string> new_context = context;
    new_context.push_back("[" + m.first + "]");
    valijson::ValidationVisitor<Adapter> visitor(m.second, new_context, strict_types, results, unused_cache);
    if (visitor.validateSchema(*subschema)) continue;
    if (results)
      results->pushError(context, "Failed to validate against schema associated with pattern '" +
                                      std::string(pattern.data(), pattern.size()) + "'.");
    if (validated) *validated = false;
    if (!continue_on_failure) return false;
  }
  if (!match_found && !continue_if_unmatched) return false;
  return continue_on_success;
}

}  // namespace

const RE2& schema_regex(std::string_view pattern) {
  std::string error;
  const RE2* re = cache().get(pattern, &error);
  if (re == nullptr)
    throw std::runtime_error(fmt::format("pattern \"{}\" is not supported by RE2: {}", pattern, error));
  return *re;
}

std::vector<SchemaPatternProblem> schema_pattern_problems(const nlohmann::json& schema) {
  PatternWalker w;
  w.schema(schema);
  return std::move(w.problems);
}

}  // namespace trajcheck::detail

namespace valijson {

namespace internal::uri {

// valijson 1.0's isUrn (RFC 8141), with its (?!urn:) lookahead as a separate test.
bool isUrn(const std::string& document_uri) {
  static const RE2 urn(
      "(?:urn|URN):([a-zA-Z0-9][a-zA-Z0-9-]{1,31})(:[-a-zA-Z0-9\\\\._~%!$&'()\\/*+,;=]+)+"
      "(\\?[-a-zA-Z0-9\\\\._~%!$&'()\\/*+,;:=]+){0,1}(#[-a-zA-Z0-9\\\\._~%!$&'()\\/*+,;:=]+){0,1}");
  if (document_uri.size() >= 8 && document_uri.compare(4, 4, "urn:") == 0) return false;
  return RE2::FullMatch(document_uri, urn);
}

}  // namespace internal::uri

// Bodies shared by both adapters; each specialization only hands over the private state.
#define TRAJCHECK_VALIJSON_RE2_SPECIALIZATIONS(Adapter)                                                         \
  template <>                                                                                                  \
  bool ValidationVisitor<Adapter>::visit(const constraints::PatternConstraint& constraint) {                    \
    return trajcheck::detail::match_pattern(m_target, m_strictTypes, constraint, m_results, m_context);        \
  }                                                                                                            \
  template <>                                                                                                  \
  bool ValidationVisitor<Adapter>::visit(const constraints::FormatConstraint& constraint) {                     \
    /* `format` applies to strings only (valijson 1.0 throws on other types). */                              \
    if (!m_target.maybeString() || (m_strictTypes && !m_target.isString())) return true;                     \
    const std::string s = m_target.asString();                                                                 \
    const std::string& format = constraint.getFormat();                                                        \
    int month = 0, day = 0;                                                                                    \
    switch (trajcheck::detail::match_format(format, s, month, day)) {                                          \
      case trajcheck::detail::FormatVerdict::unchecked:                                                        \
      case trajcheck::detail::FormatVerdict::ok:                                                               \
        return true;                                                                                           \
      case trajcheck::detail::FormatVerdict::check_date:                                                       \
        return validate_date_range(month, day);                                                                \
      case trajcheck::detail::FormatVerdict::bad:                                                              \
        break;                                                                                                 \
    }                                                                                                          \
    if (m_results) m_results->pushError(m_context, "String should be a valid " + format);                     \
    return false;                                                                                              \
  }                                                                                                            \
  template <>                                                                                                  \
  template <>                                                                                                  \
  bool ValidationVisitor<Adapter>::ValidatePatternPropertySubschemas::operator()(                              \
      const ValijsonString& pattern, const Subschema* subschema) const {                                       \
    return trajcheck::detail::match_pattern_properties<Adapter>(                                               \
        pattern, subschema, m_object, m_context, m_continueOnSuccess, m_continueOnFailure,                     \
        m_continueIfUnmatched, m_strictTypes, m_results, m_propertiesMatched, m_validated, m_regexesCache);    \
  }

TRAJCHECK_VALIJSON_RE2_SPECIALIZATIONS(adapters::NlohmannJsonAdapter)
TRAJCHECK_VALIJSON_RE2_SPECIALIZATIONS(adapters::StdStringAdapter)

#undef TRAJCHECK_VALIJSON_RE2_SPECIALIZATIONS

}  // namespace valijson
