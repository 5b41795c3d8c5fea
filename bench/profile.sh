#!/usr/bin/env bash
# Where check's time goes, by stage: samples `trajcheck check -j 1` with perf and sums the
# share of each stage (reading, validation with duplicate names, building traces, rules, output,
# memory, other) by function name. Needs perf (Debian: linux-perf) and a trajcheck built with
# symbols (the Release build is: it is not stripped).
#   bash bench/profile.sh TRAJCHECK RULES FILE.jsonl [perf record options]
set -euo pipefail
tc=${1:?usage: profile.sh TRAJCHECK RULES FILE.jsonl}
rules=${2:?rules file}
input=${3:?input file}
shift 3
command -v perf >/dev/null || { echo "profile.sh: perf is required (Debian package linux-perf)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
perf record -q -o "$work/perf.data" -F 5000 "$@" -- "$tc" check -r "$rules" -j 1 --quiet "$input" >/dev/null 2>"$work/err" || true
perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null | grep -v '^#' | grep '%' >"$work/syms"
python3 - "$work/syms" "$rules" "$input" <<'PY'
import re, sys
# First match wins: (stage, pattern on "dso [.] symbol").
stages = [
    ("reading input (read(2), line splitting, copying records)",
     r"_copy_to_iter|filemap_|copy_page_to_iter|memchr|next_line|RecordSource|read_line|InputStream|_IO_fread|_IO_file_xsgetn|zstd|gz|inflate"),
    ("validation (simdjson stage 1, the walk over its indexes: grammar, escapes, numbers, member names)",
     r"simdjson|validate_utf8|utf8|TapeDoc::validate|TapeDoc::parse|plain_number|fingerprint|distinct_names|all_distinct"),
    ("building the trace model (fields, tool names, raw JSON slices)",
     r"TapeDoc|read_native|read_step|ParseCtx|Trajectory::|normalize_tool_name|ToolTable|canonical_tape|write_tape_value|TraceParser|TapeValue|store_json"),
    ("rules (step classes, monitors, conditions, seen(), bindings)",
     r"Checker|StatementMonitor|RuleState|StepEval|StepDocs|Provenance|KeySet|SubstringIndex|re2::|RE2|eval_cond|eval_operand|compare_values|value_key|divsufsort|sa_search|RuleResult|RuleSetChecker|Parametric|Automaton|Nfa|canonical_value|value_of|libre2|binds"),
    ("output (text report, summary)", r"fmt::|CheckReport|CheckStats|append_json_string|append_printable|append_one_line|fwrite|_IO_|write_to"),
    ("memory (malloc, free, page faults, memmove)", r"malloc|free|_int_|memmove|memcpy|memset|clear_page|page_fault|handle_mm|do_anonymous|alloc_pages|mmap|munmap|brk"),
]
tot = {s: 0.0 for s, _ in stages}
other, top = 0.0, {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+(.*)", line)
    if not m:
        continue
    p, sym = float(m.group(1)), m.group(2)
    for s, pat in stages:
        if re.search(pat, sym):
            tot[s] += p
            top.setdefault(s, []).append((p, sym))
            break
    else:
        other += p
        top.setdefault("other", []).append((p, sym))
print(f"check -j 1 -r {sys.argv[2]} {sys.argv[3]}: share of CPU samples by stage")
for s, _ in stages:
    names = ", ".join(re.sub(r"\s+-\s+-\s*$", "", n).split("[.]")[-1].split("[k]")[-1].strip()[:60]
                      for _, n in sorted(top.get(s, []), reverse=True)[:3])
    print(f"  {tot[s]:5.1f}%  {s}  [{names}]")
print(f"  {other:5.1f}%  other (memcmp and hashing shared by stages, kernel, startup)")
PY
