// Markup text and attribute values: one escaping routine for every XML and HTML writer
// (check and eval JUnit, eval and compare HTML).
#pragma once

#include <string>
#include <string_view>

namespace trajcheck {

// Appends `s` with `& < > " '` as entities and the control characters XML 1.0 forbids even
// as references (all below 0x20 but tab, newline and carriage return) as a space, so that a
// trace's text can never make the document invalid. `'` is `&apos;` in XML and `&#39;` in
// HTML (which has no `&apos;` before HTML5).
void append_xml_escaped(std::string& out, std::string_view s, bool html = false);
std::string xml_escaped(std::string_view s, bool html = false);

}  // namespace trajcheck
