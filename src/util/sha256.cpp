#include "util/sha256.hpp"

namespace trajcheck {

std::string Sha256::hex() {
  std::uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx_, sizeof md, md);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * sizeof md, '0');
  for (std::size_t i = 0; i < sizeof md; ++i) {
    out[2 * i] = kDigits[md[i] >> 4];
    out[2 * i + 1] = kDigits[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex();
}

}  // namespace trajcheck
