// SHA-256 digests as lowercase hex: eval's input digests and grader cache keys, the rules
// digest named in guard's and serve's decisions. Nettle's implementation (linked statically
// into the executable, as libarchive's zip reader needs it anyway): no OpenSSL to load at
// every start for a digest.
#pragma once

#include <nettle/sha2.h>

#include <string>
#include <string_view>

namespace trajcheck {

class Sha256 {
 public:
  Sha256() { sha256_init(&ctx_); }
  void update(std::string_view data) {
    sha256_update(&ctx_, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  }
  // The digest of everything updated so far, as 64 hex digits; the object starts over.
  std::string hex();

 private:
  sha256_ctx ctx_;
};

// The SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace trajcheck
