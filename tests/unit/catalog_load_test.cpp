// Loading tool catalogs (docs/catalog.md): good files, located diagnostics for bad ones,
// and the argument validator on every schema keyword tau-bench's tools.json uses.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "trajcheck/catalog.hpp"
#include "unit/catalog_test_util.hpp"

using namespace trajcheck;
using trajcheck::test::check;
using trajcheck::test::schema;

namespace {

std::string located(const CatalogLoad& c) { return format_diagnostics(c.source, c.diagnostics); }

CatalogLoad parse(const std::string& text) { return parse_catalog(Source("c.json", text)); }

}  // namespace

TEST_CASE("a good catalog: version, normalized sorted names, effects, schemas") {
  CatalogLoad c = load_catalog(TRAJCHECK_TEST_DIR "/data/catalog/tools-v3.json");
  REQUIRE_MESSAGE(c.ok(), located(c));
  CHECK(c.diagnostics.empty());
  CHECK(c.catalog->version() == "v3");
  REQUIRE(c.catalog->tools().size() == 5);
  CHECK(c.catalog->tools()[0].name == "delete_customer");  // case-folded like trace names
  CHECK(c.catalog->tools()[0].raw_name == "Delete_Customer");
  const CatalogTool* refund = c.catalog->find("refund_order");
  REQUIRE(refund != nullptr);
  CHECK(refund->effect == ToolEffect::write);
  CHECK(c.catalog->find("order_get")->effect == ToolEffect::read);
  CHECK(c.catalog->find("search_documents")->arguments == nullptr);
  CHECK(c.catalog->find("refund_ordr") == nullptr);
  // The name's location in the file is kept for messages.
  LineCol lc = c.source.line_col(refund->range.begin);
  CHECK(lc.line == 5);
  CHECK(lc.column == 14);
}

TEST_CASE("tau-bench's tools.json shape: no version, no effect") {
  CatalogLoad c = parse(R"({"source": "x", "tools": [{"name": "think", "description": "d",
      "arguments": {"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}]})");
  REQUIRE_MESSAGE(c.ok(), located(c));
  CHECK(c.catalog->version() == "unversioned");
  CHECK(c.catalog->find("think")->effect == ToolEffect::read);
  std::vector<ArgumentError> e;
  CHECK(c.catalog->validate("think", R"({"thought": "hm"})", &e));
  CHECK_FALSE(c.catalog->validate("think", "", &e));  // absent arguments are {}: thought missing
  CHECK_FALSE(c.catalog->validate("nope", "{}", &e));
}

TEST_CASE("OpenAI function wrappers and `parameters` are accepted") {
  CatalogLoad c = parse(R"({"version": "1", "tools": [{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "required": ["a"]}}}]})");
  REQUIRE_MESSAGE(c.ok(), located(c));
  CHECK_FALSE(c.catalog->validate("f", "{}", nullptr));
  CHECK(c.catalog->validate("f", R"({"a": 1})", nullptr));
}

TEST_CASE("malformed JSON: one error at the offending line and column") {
  CatalogLoad c = parse("{\"version\": \"v1\",\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}\n");
  CHECK_FALSE(c.ok());
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].code == "E301");
  LineCol lc = c.source.line_col(c.diagnostics[0].range.begin);
  CHECK(lc.line == 3);
  CHECK(lc.column == 18);
  std::string text = located(c);
  CHECK(text.find("c.json:3:18: error[E301]: the catalog is not valid JSON") == 0);
}

TEST_CASE("a number no double can hold is an error at the number, not an exception") {
  CatalogLoad c = parse("{\"tools\": [\n  {\"name\": \"a\", \"x\": 2e99999}\n]}");
  CHECK_FALSE(c.ok());
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].code == "E301");
  CHECK(located(c).find("c.json:2:22: error[E301]: the catalog is not valid JSON: number overflow parsing '2e99999'") == 0);
}

TEST_CASE("duplicate tool (after normalization) is an error pointing at the second, noting the first") {
  CatalogLoad c = parse("{\"tools\": [\n {\"name\": \"Refund\"},\n {\"name\": \" refund \"}\n]}");
  CHECK_FALSE(c.ok());
  REQUIRE(c.diagnostics.size() == 1);
  const Diagnostic& d = c.diagnostics[0];
  CHECK(d.code == "E304");
  CHECK(d.message == "duplicate tool ' refund ' in the catalog");
  CHECK(c.source.line_col(d.range.begin).line == 3);
  REQUIRE(d.notes.size() == 1);
  CHECK(c.source.line_col(d.notes[0].range->begin).line == 2);
}

TEST_CASE("structural problems are all reported") {
  CatalogLoad c = parse(R"({"version": 3, "tools": [7, {"description": "no name"},
      {"name": "w", "effect": "delete"}, {"name": "s", "arguments": "object"},
      {"name": "r", "arguments": {"$ref": "#/definitions/missing"}}]})");
  CHECK_FALSE(c.ok());
  std::vector<std::string> codes;
  for (const Diagnostic& d : c.diagnostics) codes.push_back(d.code);
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector<std::string>{"E302", "E302", "E302", "E303", "E305", "E305"});
  CHECK(located(c).find("`effect` is \"read\" or \"write\", not \"delete\"") != std::string::npos);
  CHECK(parse("[]").diagnostics.at(0).code == "E302");
  CHECK(parse("{}").diagnostics.at(0).message == "the catalog has no `tools` array");
}

TEST_CASE("an unreadable file is E300") {
  CatalogLoad c = load_catalog("/nonexistent/catalog.json");
  CHECK_FALSE(c.ok());
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].code == "E300");
}

TEST_CASE("schema keywords of tools.json: type") {
  auto v = schema(R"({"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "number"},
      "i": {"type": "integer"}, "b": {"type": "boolean"}, "a": {"type": "array"}}})");
  CHECK(check(*v, R"({"s": "x", "n": 1.5, "i": 2, "b": true, "a": []})") == "");
  CHECK(check(*v, R"({"s": 1})") == "arguments.s: Value type not permitted by 'type' constraint.");
  CHECK(check(*v, R"({"i": 1.5})") == "arguments.i: Value type not permitted by 'type' constraint.");
  CHECK(check(*v, R"({"b": "true"})") == "arguments.b: Value type not permitted by 'type' constraint.");
  CHECK(check(*v, R"([])") == "arguments: Value type not permitted by 'type' constraint.");
  CHECK(check(*v, R"({"s": )") == "arguments: not valid JSON");
}

TEST_CASE("schema keywords of tools.json: properties and required") {
  auto v = schema(R"({"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]})");
  CHECK(check(*v, R"({"order_id": "#W1"})") == "");
  CHECK(check(*v, R"({"order_id": "#W1", "extra": 1})") == "");  // open by default
  CHECK(check(*v, R"({})") == "arguments: Missing required property 'order_id'.");
}

TEST_CASE("schema keywords of tools.json: enum") {
  auto v = schema(R"({"type": "object", "properties": {"reason": {"type": "string",
      "enum": ["no longer needed", "ordered by mistake"]}}})");
  CHECK(check(*v, R"({"reason": "ordered by mistake"})") == "");
  CHECK(check(*v, R"({"reason": "changed mind"})") == "arguments.reason: Failed to match against any enum values.");
}

TEST_CASE("schema keywords of tools.json: items") {
  auto v = schema(R"({"type": "object", "properties": {"item_ids": {"type": "array", "items": {"type": "string"}}}})");
  CHECK(check(*v, R"({"item_ids": ["1", "2"]})") == "");
  CHECK(check(*v, R"({"item_ids": ["1", 2]})") == "arguments.item_ids[1]: Value type not permitted by 'type' constraint.");
}

TEST_CASE("schema keywords: additionalProperties false") {
  auto v = schema(R"({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})");
  CHECK(check(*v, R"({"a": "x"})") == "");
  std::string e = check(*v, R"({"a": "x", "b": 1})");
  CHECK(e.find("arguments") == 0);
  CHECK(e.find("'b'") != std::string::npos);
}

TEST_CASE("the real tau-retail catalog loads, with its write tools") {
  CatalogLoad c = load_catalog(TRAJCHECK_SOURCE_DIR "/catalog/tau-retail.json");
  REQUIRE_MESSAGE(c.ok(), located(c));
  CHECK(c.catalog->version() == "tau-retail-v1");
  CHECK(c.catalog->tools().size() == 16);
  std::vector<std::string> writes;
  for (const CatalogTool& t : c.catalog->tools())
    if (t.effect == ToolEffect::write) writes.push_back(t.name);
  CHECK(writes == std::vector<std::string>{"cancel_pending_order", "exchange_delivered_order_items",
                                           "modify_pending_order_address", "modify_pending_order_items",
                                           "modify_pending_order_payment", "modify_user_address",
                                           "return_delivered_order_items"});
  CHECK(c.catalog->validate("cancel_pending_order", R"({"order_id": "#W1", "reason": "no longer needed"})", nullptr));
  CHECK_FALSE(c.catalog->validate("cancel_pending_order", R"({"order_id": "#W1", "reason": "other"})", nullptr));
}

TEST_CASE("a tool's error vocabulary and operation key") {
  CatalogLoad c = parse(R"({"version": "v4", "tools": [
    {"name": "refund_order", "effect": "write", "operation_key": "idempotency_key",
     "errors": [{"class": "timeout", "retryable": true}, {"class": "card_declined"},
                {"class": "gateway_lost", "retryable": true, "uncertain": true}, {"class": "timeout_soft", "uncertain": false}]},
    {"name": "order_get"}]})");
  REQUIRE_MESSAGE(c.ok(), located(c));
  const CatalogTool* t = c.catalog->find("refund_order");
  REQUIRE(t != nullptr);
  CHECK(t->operation_key == "idempotency_key");
  REQUIRE(t->errors.size() == 4);
  CHECK(t->errors[0].name == "timeout");
  CHECK(t->errors[0].retryable);
  CHECK(t->errors[0].uncertain);  // a timeout may have taken effect, unless the catalog says otherwise
  CHECK_FALSE(t->errors[1].retryable);
  CHECK_FALSE(t->errors[1].uncertain);
  CHECK(t->errors[2].uncertain);
  CHECK_FALSE(t->errors[3].uncertain);
  CHECK(c.catalog->find("order_get")->errors.empty());
}

TEST_CASE("a bad error vocabulary or operation key is E306, at the tool or the member") {
  CatalogLoad c = parse("{\"tools\": [\n"
                        "  {\"name\": \"a\", \"errors\": [{\"retryable\": true}]},\n"
                        "  {\"name\": \"b\", \"errors\": {\"class\": \"x\"}},\n"
                        "  {\"name\": \"c\", \"errors\": [{\"class\": \"x\", \"retryable\": \"yes\"}]},\n"
                        "  {\"name\": \"d\", \"operation_key\": 3}]}");
  CHECK_FALSE(c.ok());
  std::string text = located(c);
  INFO(text);
  CHECK(text.find("c.json:2:12: error[E306]: tool 'a': `errors` is a list of") != std::string::npos);
  CHECK(text.find("c.json:3:12: error[E306]") != std::string::npos);
  CHECK(text.find("c.json:4:12: error[E306]") != std::string::npos);
  CHECK(text.find("c.json:5:34: error[E306]: tool 'd': `operation_key` is the name of an argument") != std::string::npos);
}
