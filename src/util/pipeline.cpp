// Output helpers of the record pipeline.
#include "util/pipeline.hpp"

namespace trajcheck::detail {

void write_all(std::FILE* f, const std::string& s) {
  if (!f || s.empty()) return;
  std::fwrite(s.data(), 1, s.size(), f);
}

}  // namespace trajcheck::detail
