#include "json/located_parse.hpp"

#include <algorithm>

namespace trajcheck::json {
namespace {

// nlohmann's own DOM builder, with the failure kept instead of thrown.
class LocatingSax {
 public:
  explicit LocatingSax(nlohmann::json& out) : dom_(out, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(nlohmann::json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(nlohmann::json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(nlohmann::json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(std::string& v) { return dom_.string(v); }
  bool binary(nlohmann::json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return dom_.start_object(n); }
  bool key(std::string& k) { return dom_.key(k); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) {
    // `position` counts the bytes read. A syntax error is at the last one; a number that
    // overflows (406) has been read whole, so it starts a token's length back.
    std::size_t read = e.id == 406 ? last_token.size() : 1;
    ParseFailure f;
    f.offset = position >= read ? position - read : 0;
    std::string_view what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error …"
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
    if (auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
    if (what.starts_with("parse error"))
      if (auto colon = what.find(": "); colon != std::string_view::npos) what.remove_prefix(colon + 2);
    f.reason = what;
    failure = std::move(f);
    return false;
  }

  std::optional<ParseFailure> failure;

 private:
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> dom_;
};

}  // namespace

std::optional<ParseFailure> parse_located(std::string_view text, nlohmann::json& out) {
  LocatingSax sax(out);
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  if (sax.failure) sax.failure->offset = std::min(sax.failure->offset, text.size());
  return std::move(sax.failure);
}

}  // namespace trajcheck::json
