// trajcheck/hook.hpp — the rules as a Claude Code hook (`trajcheck hook claude-code`).
//
//   trajcheck::HookOptions o;
//   o.state_dir = "/home/dev/.local/state/trajcheck/claude-code";
//   trajcheck::HookAnswer a = trajcheck::claude_code_hook(rs.rules, reading, o, stdin_text);
//   fwrite(a.out…, stdout); fwrite(a.err…, stderr); return a.exit_code;
//
// Claude Code runs the hook once per event with the event as a JSON object on standard
// input. PreToolUse (session_id, cwd, tool_name, tool_input, tool_use_id): the call is decided
// as a monitor that observed the session's calls so far would decide it; a denied call is
// answered with Claude Code's hook output, whose reason (the rule's message) the model sees:
//
//   {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//                          "permissionDecisionReason":"no recursive deletes"}}
//
// and an allowed one with nothing (exit 0, no output: Claude Code's own permissions then
// apply). PostToolUse (tool_response) and PostToolUseFailure (error) record the call's
// result. The session's steps so far — every call decided, allowed or denied, with its
// result once known — are kept in a state file per session, `<state_dir>/<session_id>.json`,
// a native trace (`trajcheck check` reads it), updated under an exclusive lock
// (`<session_id>.lock`), so hooks of parallel calls take turns. A denied call did not run: it
// is recorded as `trajcheck guard` records one, a `denied_call` step (`denied_tool`,
// `arguments`, `rule`, `message`), which later decisions observe like any step.
//
// Nothing fails open: input that is not a hook event, a session id that is not a safe file
// name, a state directory or file that cannot be read or written, blocks the call — exit
// status 2 with the reason on standard error, which Claude Code shows to the model.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

struct HookOptions {
  std::string state_dir;  // where the sessions' state files are kept (created when missing)
};

// What the hook process prints and exits with.
struct HookAnswer {
  int exit_code = 0;  // 0: answered on `out` (or nothing to say); 2: blocked, reason on `err`
  std::string out;    // standard output: Claude Code's hook output (JSON), or empty
  std::string err;    // standard error
};

// Answers one Claude Code hook event (`input`: the JSON text on the hook's standard input).
// `reading`: how steps are read (aliases, error patterns, context overrides), as `check` reads.
HookAnswer claude_code_hook(std::shared_ptr<const RuleSet> rules, const NormalizeOptions& reading,
                            const HookOptions& options, std::string_view input);

}  // namespace trajcheck
