// util/sha256: the digests of FIPS 180-2's test messages, and one digest built in pieces.
#include <doctest/doctest.h>

#include <string>

#include "util/sha256.hpp"

using trajcheck::Sha256;
using trajcheck::sha256_hex;

TEST_CASE("sha256: the FIPS 180-2 test messages") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: a digest built in pieces is the digest of their concatenation; hex() starts over") {
  const std::string text = "approval precedes refund_order\nforbid delete_*\norder_get at most 1\n";
  Sha256 h;
  for (std::size_t i = 0; i < text.size(); i += 7) h.update(std::string_view(text).substr(i, 7));
  CHECK(h.hex() == sha256_hex(text));
  CHECK(h.hex() == sha256_hex(""));
  h.update("abc");
  CHECK(h.hex() == sha256_hex("abc"));
}
