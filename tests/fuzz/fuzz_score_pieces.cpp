// libFuzzer target for score's reading of a large record one message at a time
// (json/pieces.hpp): the input is one score record, read whole and read by message; the two
// must score it, reject it or warn about it alike.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "trajcheck/score_run.hpp"

namespace {
std::string score(trajcheck::ScoreRecordReader& reader, const std::string& text) {
  trajcheck::RawRecord rec;
  rec.origin = trajcheck::RecordOrigin{"fuzz.jsonl", 1, 1, 0};
  rec.text.reserve(text.size() + trajcheck::kRecordPadding);
  rec.text = text;
  std::string out, err;
  trajcheck::ScoreSummary s;
  reader.read(rec, out, err, s);
  return out + err + s.to_json();
}

trajcheck::ScoreRecordReader make(std::size_t above) {
  trajcheck::ScoreRunOptions o;
  o.format = trajcheck::ScoreFormat::jsonl;
  o.read_by_message_above = above;
  return trajcheck::ScoreRecordReader(o);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  static trajcheck::ScoreRecordReader whole = make(SIZE_MAX), by_message = make(0);
  std::string text(reinterpret_cast<const char*>(data), size);
  if (score(whole, text) != score(by_message, text)) std::abort();
  return 0;
}
