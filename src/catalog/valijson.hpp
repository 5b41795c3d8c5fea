// The one way valijson is included: with exceptions on, so a bad schema is an error we
// report instead of valijson's default abort(). Every translation unit must agree on this
// macro (valijson's inline functions depend on it), hence this header.
#pragma once

#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
