// JSON string escaping (trajcheck/json_string.hpp), copying runs of plain bytes in bulk.
#include "trajcheck/json_string.hpp"

#include <cstring>

#include "json/swar.hpp"

namespace trajcheck {

char* write_json_escape(char* out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  char e;
  switch (c) {
    case '"': e = '"'; break;
    case '\\': e = '\\'; break;
    case '\n': e = 'n'; break;
    case '\r': e = 'r'; break;
    case '\t': e = 't'; break;
    case '\b': e = 'b'; break;
    case '\f': e = 'f'; break;
    default:
      std::memcpy(out, "\\u00", 4);
      out[4] = kHex[c >> 4];
      out[5] = kHex[c & 15];
      return out + 6;
  }
  out[0] = '\\';
  out[1] = e;
  return out + 2;
}

void append_json_string(std::string& out, std::string_view s, bool escape_del) {
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
    char escape[6];
    out.append(escape, write_json_escape(escape, c));
  }
  out.append(run, static_cast<std::size_t>(end - run));
  out.push_back('"');
}

}  // namespace trajcheck
