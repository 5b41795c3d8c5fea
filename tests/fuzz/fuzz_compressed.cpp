// libFuzzer target for compressed input: the bytes are read as a file would be (gzip, zstd or
// plain, recognized by their first bytes), split into lines and parsed; a broken stream must
// end with an error, never a crash or a hang, and what it gave before the break is parsed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "readers/input_stream.hpp"
#include "trajcheck/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024 || size == 0) return 0;
  std::FILE* f = ::fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
  if (!f) return 0;
  trajcheck::detail::InputStream in;
  in.open(f, true);
  static const trajcheck::TraceParser parser(trajcheck::NormalizeOptions{});
  trajcheck::ToolTable tools;
  trajcheck::Trajectory t(&tools);
  std::string text, error;
  char buf[4096];
  // Decompressed output is capped so a small bomb cannot spend the whole run.
  for (std::size_t n; text.size() < (std::size_t(4) << 20) && (n = in.read(buf, sizeof buf, error)) > 0;)
    text.append(buf, n);
  in.close();
  std::size_t line = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    trajcheck::RawRecord rec;
    rec.text = text.substr(pos, nl - pos);
    rec.origin = trajcheck::RecordOrigin{"fuzz.jsonl.gz", ++line, 1, line - 1};
    (void)parser.parse(rec, t, [](trajcheck::Trajectory&) {});
    pos = nl + 1;
  }
  return 0;
}
