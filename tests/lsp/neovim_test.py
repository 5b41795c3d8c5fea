#!/usr/bin/env python3
"""docs/editors.md's Neovim 0.7 set-up, run in a real headless Neovim.

Usage: neovim_test.py NVIM TRAJCHECK SOURCE_DIR WORK_DIR

The Lua block under "### Neovim 0.7" is taken from the page as it is and loaded as the init
file; Neovim opens a rules file with an error in a project (a folder with .git), waits for the
server's diagnostics and writes them, the buffer's filetype and the attached clients to a JSON
file, which this script checks: the E001 error on the right line, from the client named
trajcheck rooted at the project, and a second file of the project attached to the same client.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

nvim, trajcheck, src, work = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
page = (src / "docs/editors.md").read_text()
m = re.search(r"### Neovim 0\.7[^\n]*\n.*?```lua\n(.*?)```", page, re.S)
assert m, "docs/editors.md has no Lua block under '### Neovim 0.7'"
snippet = m.group(1)

shutil.rmtree(work, ignore_errors=True)
project = work / "project"
(project / ".git").mkdir(parents=True)
(project / "rules").mkdir()
(project / "rules/bad.rules").write_text('workflow "w"\n\nforbid\n')
(project / "rules/good.rules").write_text('workflow "w"\n\nforbid delete_*\n')
out = work / "result.json"
(work / "init.lua").write_text(snippet + f"""
local function report(t)
  local f = io.open({json.dumps(str(out))}, "w")
  f:write(vim.fn.json_encode(t))
  f:close()
  vim.cmd("qa!")
end
vim.defer_fn(function()
  vim.cmd("edit " .. vim.fn.fnameescape({json.dumps(str(project / "rules/bad.rules"))}))
  local bad = vim.api.nvim_get_current_buf()
  local got = vim.wait(15000, function() return #vim.diagnostic.get(bad) > 0 end, 50)
  local diags = {{}}
  for _, d in ipairs(vim.diagnostic.get(bad)) do
    table.insert(diags, {{ lnum = d.lnum, code = d.code, message = d.message, severity = d.severity }})
  end
  local filetype = vim.bo[bad].filetype
  vim.cmd("edit " .. vim.fn.fnameescape({json.dumps(str(project / "rules/good.rules"))}))
  local good = vim.api.nvim_get_current_buf()
  vim.wait(2000, function() return next(vim.lsp.buf_get_clients(good)) ~= nil end, 50)
  local function clients(buf)
    local r = {{}}
    for id, c in pairs(vim.lsp.buf_get_clients(buf)) do table.insert(r, {{ id = id, name = c.name, root = c.config.root_dir }}) end
    return r
  end
  report({{ waited = got, filetype = filetype, diagnostics = diags, bad = clients(bad), good = clients(good) }})
end, 10)
vim.defer_fn(function() report({{ timeout = true }}) end, 30000)
""")
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(trajcheck)) + os.pathsep + os.environ["PATH"],
           XDG_CONFIG_HOME=str(work / "config"), XDG_DATA_HOME=str(work / "data"), XDG_STATE_HOME=str(work / "state"),
           XDG_CACHE_HOME=str(work / "cache"))
p = subprocess.run([nvim, "--headless", "-i", "NONE", "-u", str(work / "init.lua")], cwd=project, env=env,
                   capture_output=True, text=True, timeout=60)
print(p.stdout, p.stderr, sep="")
r = json.loads(out.read_text())
print(json.dumps(r, indent=1))
failures = []
if r.get("timeout"):
    failures.append("Neovim did not finish")
else:
    if r["filetype"] != "trajcheck-rules":
        failures.append(f"filetype {r['filetype']!r}")
    errs = [d for d in r["diagnostics"] if d["code"] == "E001" and d["lnum"] == 2 and d["severity"] == 1]
    if not errs:
        failures.append(f"no E001 error on line 3 among {r['diagnostics']}")
    if [c["name"] for c in r["bad"]] != ["trajcheck"] or Path(r["bad"][0]["root"]) != project:
        failures.append(f"clients of bad.rules: {r['bad']}")
    if [c["id"] for c in r["good"]] != [c["id"] for c in r["bad"]]:
        failures.append(f"good.rules is not attached to the same client: {r['good']} vs {r['bad']}")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
