// libFuzzer target for the catalog loader: parse_catalog on arbitrary bytes (both schema
// drafts), and argument validation of a fixed call against every tool it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trajcheck/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  for (trajcheck::SchemaDraft draft : {trajcheck::SchemaDraft::draft4, trajcheck::SchemaDraft::draft7}) {
    trajcheck::CatalogLoad c = trajcheck::parse_catalog(trajcheck::Source("fuzz.json", text), false, draft);
    (void)trajcheck::format_diagnostics(c.source, c.diagnostics);
    if (!c.ok()) continue;
    std::vector<trajcheck::ArgumentError> errors;
    for (const trajcheck::CatalogTool& t : c.catalog->tools()) {
      (void)c.catalog->validate(t.name, R"({"id":"x","n":3,"list":[1,"a",null],"o":{"k":true}})", &errors);
      (void)c.catalog->validate(t.name, "", &errors);
    }
  }
  return 0;
}
