// Message roles of chat transcripts, as both the chat reader and the score command's direct
// reader classify them: one table, so that the two accept exactly the same roles.
#pragma once

#include <string_view>

namespace trajcheck::detail {

enum class ChatRole { system, user, assistant, tool, other };

// Role names are compared as written (case-sensitive); unknown roles are `other`.
constexpr ChatRole classify_chat_role(std::string_view role) {
  if (role == "system" || role == "developer") return ChatRole::system;
  if (role == "user" || role == "human") return ChatRole::user;
  if (role == "assistant" || role == "model" || role == "ai") return ChatRole::assistant;
  if (role == "tool" || role == "function" || role == "ipython") return ChatRole::tool;
  return ChatRole::other;
}

}  // namespace trajcheck::detail
