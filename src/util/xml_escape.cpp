// The one XML/HTML escaper (see the header).
#include "util/xml_escape.hpp"

namespace trajcheck {

void append_xml_escaped(std::string& out, std::string_view s, bool html) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += html ? "&#39;" : "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') out += ' ';
        else out += ch;
    }
  }
}

std::string xml_escaped(std::string_view s, bool html) {
  std::string out;
  out.reserve(s.size());
  append_xml_escaped(out, s, html);
  return out;
}

}  // namespace trajcheck
