// Links against libnettle.a with the calls src/util/sha256.cpp makes (cmake/static_deps.cmake).
#include <nettle/sha2.h>

#include <cstdint>

int main() {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, 3, reinterpret_cast<const std::uint8_t*>("abc"));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  return digest[0] == 0xba ? 0 : 1;
}
