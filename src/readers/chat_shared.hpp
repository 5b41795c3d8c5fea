// What the chat reader shares with the readers of formats whose messages are mixed with
// other items (the OpenAI Responses API): the call index results are joined through, and
// the reading of one element of a message list.
#pragma once

#include "readers/chat_formats.hpp"
#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

// Keeps an `error` value as it is, and the class it names (error_class()) as "error_class".
template <class V>
bool keep_error(ParseCtx& c, V v, ObjectWriter& extra) {
  std::string& out = extra.key("error");
  std::size_t at = out.size();
  if (!c.write_value(v, out)) return false;
  if (error_class(c.s.inner_parser, c.s.inner_padded, std::string_view(out).substr(at), &c.s.name))
    append_json_string(extra.key("error_class"), c.s.name);
  return true;
}

// Starts a message list (clears the call index of this thread).
void begin_chat(ParseCtx& c);
// Appends a tool_call step and indexes it for the results that follow.
void add_chat_call(ParseCtx& c, const Step& call);
// Joins a result to the latest open call with its id (else the first open call with its
// name), or keeps it as a call of its own, with a warning. Returns the step index, which is
// also appended to Scratch::joined (cleared by begin_chat and at each message).
std::uint32_t join_chat_result(ParseCtx& c, const PendingResult& r, std::uint32_t turn);
// A call's fields, then the members of the object `result` (a result's fields): a key the call
// already has is kept as "result_<key>".
Slice merge_result_fields(ParseCtx& c, Slice call, std::string_view result);
// One element of a message list (a message, a LangChain message or a Responses item).
bool read_chat_element(ParseCtx& c, od::value v, std::uint32_t index);
bool read_chat_element(ParseCtx& c, TapeValue v, std::uint32_t index);

// An OpenAI Responses item (`type` already read), for both kinds of value.
bool read_responses_item(ParseCtx& c, od::object& item, std::string_view type, const char* where, std::uint32_t index);
bool read_responses_item(ParseCtx& c, TapeObject& item, std::string_view type, const char* where, std::uint32_t index);

// A record that holds a model's answer beside its request, not a message list: an OpenAI
// Responses object ({"output": [items…]}, with the request's "input" when logged), a Bedrock
// Converse response ({"output": {"message"}}) or a Gemini response ({"candidates":
// [{"content"}]}).
bool read_response_object(ParseCtx& c, od::object record);

// Inspect AI: one sample of an eval log (a `.eval` log's samples/*.json, or an element of a
// `.json` log's "samples"): a chat record whose id and epoch name the trace, whose input and
// output (copies of its messages) are not kept, and whose tool events time its calls.
struct InspectSample {
  std::string_view log_meta;  // members of the log's own metadata, added to the sample's
};
bool read_inspect_sample(ParseCtx& c, od::object sample, const InspectSample& log);
// A `.json` eval log: every sample (validated first: none is emitted unless all read), with
// `emit` called once per sample when given.
bool read_inspect_log(ParseCtx& c, od::object log, const TraceParser::Emit* emit, std::uint32_t* traces);

// A coding-agent session log, one array record of its lines (session_reader.cpp): one trace
// per session, read into `c.t` one after the other and moved into `sessions`, so that none is
// emitted unless all read.
bool read_sessions(ParseCtx& c, od::array lines, std::vector<Trajectory>& sessions);

// A Codex CLI rollout file, one array record of its lines (rollout_reader.cpp): one trace, read
// into `c.t`.
bool read_rollout(ParseCtx& c, od::array lines);

}  // namespace trajcheck::detail
