// Completion for `.rules` and `.suite` files, decided by the text of the line before the cursor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/analysis.hpp"

namespace trajcheck::lsp {

struct CompletionItem {
  std::string label, detail, documentation;
  std::string insert;  // snippet syntax when `snippet`, else plain text; empty: the label
  int kind = 1;        // LSP CompletionItemKind
  bool snippet = false;
};

// `text` is the document, `offset` the cursor (a byte offset). `snippets`: the client takes
// snippet syntax; otherwise templates are inserted with their placeholder texts.
std::vector<CompletionItem> complete(const Analysis& a, std::string_view text, std::uint32_t offset,
                                     const TraceNames& traces, bool snippets);

}  // namespace trajcheck::lsp
