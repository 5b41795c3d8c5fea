// The one way valijson is included: with exceptions on, so a bad schema is an error we
// report instead of valijson's default abort(), and with RE2 instead of std::regex. Every
// translation unit must agree on both (valijson's inline functions depend on the macro; the
// specializations below must be declared before any use), hence this header.
#pragma once

#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

// valijson's schema parser checks `$id` / `$ref` URIs with internal::uri::isUrn, an inline
// function around a std::regex (with a lookahead RE2 lacks). Its header is included first
// with the function renamed out of the way, and the parser gets trajcheck's RE2 version,
// defined in catalog/schema_regex.cpp.
#include <string>
#define isUrn isUrn_std_regex_unused
#include <valijson/internal/uri.hpp>
#undef isUrn
namespace valijson::internal::uri {
bool isUrn(const std::string& document_uri);
}  // namespace valijson::internal::uri

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

// The validator of valijson 1.0 (Debian 12) hard-codes std::regex in three places: `pattern`,
// `patternProperties` and the `date` / `time` / `date-time` formats. (Later valijson takes a
// regex engine as a template parameter, ValidatorT<RegexEngine>; 1.0 has no such hook.) They
// are replaced, for the two adapters valijson instantiates its visitor with (ours and its own
// StdStringAdapter for `propertyNames`), by explicit specializations defined in
// catalog/schema_regex.cpp, which match with RE2 (compiled once per pattern, shared).
// valijson's unused std::regex cache map stays in its classes' layout but is never filled.
namespace valijson {

using ValijsonString = std::basic_string<char, std::char_traits<char>, internal::CustomAllocator<char>>;

template <>
bool ValidationVisitor<adapters::NlohmannJsonAdapter>::visit(const constraints::PatternConstraint&);
template <>
bool ValidationVisitor<adapters::NlohmannJsonAdapter>::visit(const constraints::FormatConstraint&);
template <>
template <>
bool ValidationVisitor<adapters::NlohmannJsonAdapter>::ValidatePatternPropertySubschemas::operator()(
    const ValijsonString&, const Subschema*) const;

template <>
bool ValidationVisitor<adapters::StdStringAdapter>::visit(const constraints::PatternConstraint&);
template <>
bool ValidationVisitor<adapters::StdStringAdapter>::visit(const constraints::FormatConstraint&);
template <>
template <>
bool ValidationVisitor<adapters::StdStringAdapter>::ValidatePatternPropertySubschemas::operator()(
    const ValijsonString&, const Subschema*) const;

}  // namespace valijson
