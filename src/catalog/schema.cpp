// JSON Schema validation of tool arguments: valijson over nlohmann (catalogs are small
// config files), regexes by RE2. Exceptions are valijson's only failure channel; they stop here.
#include "catalog/valijson.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catalog/schema_regex.hpp"
#include "trajcheck/catalog.hpp"

namespace trajcheck {

namespace {

// valijson contexts look like {"<root>", "[items]", "[0]", "[item_id]"}: a property and an
// index are both bracketed, so digits-only names read as indices (rare in tool schemas).
std::string readable_path(const std::vector<std::string>& context) {
  std::string out = "arguments";
  for (const std::string& c : context) {
    if (c == "<root>") continue;
    std::string_view inner = c;
    if (inner.size() >= 2 && inner.front() == '[' && inner.back() == ']') inner = inner.substr(1, inner.size() - 2);
    bool index = !inner.empty() && inner.find_first_not_of("0123456789") == std::string_view::npos;
    if (index) {
      out += '[';
      out += inner;
      out += ']';
    } else {
      out += '.';
      out += inner;
    }
  }
  return out;
}

class ValijsonValidator final : public SchemaValidator {
 public:
  bool validate(std::string_view instance_json, std::vector<ArgumentError>* errors) const override {
    nlohmann::json doc = nlohmann::json::parse(instance_json, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      if (errors) errors->push_back({"arguments", "not valid JSON"});
      return false;
    }
    return validate_json(doc, errors);
  }

  bool validate_json(const nlohmann::json& doc, std::vector<ArgumentError>* errors) const {
    // A Validator has per-validation state (an std::regex cache that the RE2 specializations
    // in valijson.hpp leave empty): one per call keeps the schema shareable.
    valijson::Validator validator;
    valijson::adapters::NlohmannJsonAdapter target(doc);
    valijson::ValidationResults results;
    bool ok = false;
    try {
      ok = validator.validate(schema_, target, errors ? &results : nullptr);
    } catch (const std::exception& e) {
      if (errors) errors->push_back({"arguments", std::string("schema could not be applied: ") + e.what()});
      return false;
    }
    if (ok || !errors) return ok;
    // valijson reports each failure and then every enclosing keyword that failed because of
    // it ("Failed to validate against schema associated with property name …"); the leaves
    // say why, so the wrappers are dropped unless nothing else is left.
    std::vector<ArgumentError> all, leaves;
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
      ArgumentError a{readable_path(e.context), e.description};
      bool wrapper = e.description.rfind("Failed to validate", 0) == 0;
      if (!wrapper) leaves.push_back(a);
      all.push_back(std::move(a));
    }
    auto& chosen = leaves.empty() ? all : leaves;
    for (ArgumentError& a : chosen) errors->push_back(std::move(a));
    return false;
  }

  valijson::Schema schema_;
};

}  // namespace

std::shared_ptr<const SchemaValidator> SchemaValidator::compile(std::string_view schema_json,
                                                                SchemaDraft draft, std::string* error) {
  nlohmann::json doc = nlohmann::json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    if (error) *error = "the schema is not valid JSON";
    return nullptr;
  }
  // Every pattern is compiled now (into the shared RE2 cache), so that one RE2 cannot run
  // (ECMA-262 lookaround, backreferences, …) is a load error, not a call that never validates.
  if (auto problems = detail::schema_pattern_problems(doc); !problems.empty()) {
    if (error) {
      error->clear();
      for (const detail::SchemaPatternProblem& p : problems)
        *error += fmt::format("{}{} \"{}\" at {} is not supported by RE2: {}", error->empty() ? "" : "; ",
                              p.is_key ? "patternProperties pattern" : "pattern", p.pattern,
                              p.pointer, p.reason);
    }
    return nullptr;
  }
  auto v = std::make_shared<ValijsonValidator>();
  // Draft 6 is parsed by valijson's draft 7 rules (draft 7 only added keywords).
  valijson::SchemaParser parser(draft == SchemaDraft::draft4 ? valijson::SchemaParser::kDraft4
                                                             : valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  try {
    parser.populateSchema(adapter, v->schema_);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  return v;
}

}  // namespace trajcheck
