// JSON string escaping (trajcheck/json_string.hpp), copying runs of plain bytes in bulk.
#include "trajcheck/json_string.hpp"

#include "json/swar.hpp"

namespace trajcheck {

void append_json_string(std::string& out, std::string_view s, bool escape_del) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  const char* p = s.data();
  const char* const end = p + s.size();
  const char* run = p;  // start of the pending run of bytes that need no escaping
  while (p < end) {
    // Skip eight plain bytes at a time; most text has nothing to escape.
    if (end - p >= 8) {
      std::uint64_t w = swar::load(p);
      std::uint64_t m = swar::less(w, 0x20) | swar::equal(w, '"') | swar::equal(w, '\\');
      if (escape_del) m |= swar::equal(w, 0x7f);
      if (!m) {
        p += 8;
        continue;
      }
      p += swar::first(m);
    }
    auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c != '"' && c != '\\' && (c != 0x7f || !escape_del)) {
      ++p;
      continue;
    }
    out.append(run, static_cast<std::size_t>(p - run));
    run = ++p;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(run, static_cast<std::size_t>(end - run));
  out.push_back('"');
}

}  // namespace trajcheck
