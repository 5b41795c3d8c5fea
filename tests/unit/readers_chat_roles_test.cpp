// The one role table shared by the chat reader and the score command's direct reader.
#include <doctest/doctest.h>

#include "readers/chat_roles.hpp"

using trajcheck::detail::ChatRole;
using trajcheck::detail::classify_chat_role;

TEST_CASE("classify_chat_role: every accepted spelling and nothing else") {
  CHECK(classify_chat_role("system") == ChatRole::system);
  CHECK(classify_chat_role("developer") == ChatRole::system);
  CHECK(classify_chat_role("user") == ChatRole::user);
  CHECK(classify_chat_role("human") == ChatRole::user);
  CHECK(classify_chat_role("assistant") == ChatRole::assistant);
  CHECK(classify_chat_role("model") == ChatRole::assistant);
  CHECK(classify_chat_role("ai") == ChatRole::assistant);
  CHECK(classify_chat_role("tool") == ChatRole::tool);
  CHECK(classify_chat_role("function") == ChatRole::tool);
  CHECK(classify_chat_role("ipython") == ChatRole::tool);
  // Case-sensitive and exact: near misses are other roles.
  CHECK(classify_chat_role("Assistant") == ChatRole::other);
  CHECK(classify_chat_role("tools") == ChatRole::other);
  CHECK(classify_chat_role(" user") == ChatRole::other);
  CHECK(classify_chat_role("") == ChatRole::other);
  CHECK(classify_chat_role("critic") == ChatRole::other);
  static_assert(classify_chat_role("ai") == ChatRole::assistant);
}
