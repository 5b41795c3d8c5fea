// Output helpers of the record pipeline.
#include "run/pipeline.hpp"

namespace trajcheck {

namespace detail {
void write_all(std::FILE* f, const std::string& s) {
  if (!f || s.empty()) return;
  std::fwrite(s.data(), 1, s.size(), f);
}
}  // namespace detail

RunOutput write_to(std::FILE* out_file, std::FILE* err_file) {
  return [out_file, err_file](std::string_view out, std::string_view err) {
    if (err_file && !err.empty()) std::fwrite(err.data(), 1, err.size(), err_file);
    if (out_file && !out.empty()) std::fwrite(out.data(), 1, out.size(), out_file);
  };
}

}  // namespace trajcheck
