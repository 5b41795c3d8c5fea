#!/usr/bin/env bash
# Hostile inputs on the command line: each case runs trajcheck and checks its exit status and
# a piece of what it printed. Cases that need a FIFO, a device or a compressor make them here
# (a golden transcript cannot). Usage: cli_hardening.sh TRAJCHECK [CASE…]
set -uo pipefail
bin=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

# expect STATUS PATTERN COMMAND…: runs COMMAND, wants exit STATUS and PATTERN (grep -E) in
# its standard output + standard error.
expect() {
  local want=$1 pattern=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc != "$want" ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (want $want), output:"; echo "$out" | head -20
    echo "  (wanted /$pattern/)"
    failures=$((failures + 1))
  fi
}

printf 'forbid delete_*\n' > ok.rules
printf '{"trace_id":"t1","steps":[{"tool":"lookup"}]}\n{"trace_id":"t2","steps":[{"tool":"delete_all"}]}\n' > traces.jsonl
mkdir rules_dir

# A source that is not a regular file is an error, not an empty file.
expect 2 'rules_dir: is a directory' "$bin" check -r rules_dir traces.jsonl
expect 2 'rules_dir: is a directory' "$bin" lint rules_dir
expect 2 'rules_dir: is a directory' "$bin" fmt --check rules_dir
expect 2 'rules_dir: is a directory' "$bin" explain -r rules_dir --emit ir
expect 2 '/dev/zero: is a device' "$bin" check -r /dev/zero traces.jsonl
expect 2 '/dev/zero: is a device' "$bin" lint /dev/zero
mkfifo fifo.rules
expect 2 'fifo.rules: is a FIFO' timeout 10 "$bin" lint fifo.rules
expect 2 'missing.rules: cannot open file: No such file or directory' "$bin" lint missing.rules
# A source over the size limit is refused without reading it into memory.
truncate -s 65M big.rules
expect 2 'big.rules: file is larger than the 64 MiB limit' "$bin" lint big.rules

# Any -j works: the workers are capped, and a refused thread never aborts the run.
expect 1 '2 traces from 2 records: 1 passed, 1 failed' "$bin" check -r ok.rules -j 100000 traces.jsonl
expect 0 'normalize: 2 records read' "$bin" normalize -j 100000 traces.jsonl

# A directory input: an unreadable subdirectory is one rejected entry and the files beside
# it are read; FIFOs and dangling links are skipped with a warning. (The path of `deep` is
# longer than PATH_MAX, so opening it fails even for root.)
mkdir -p tree/a
printf '{"trace_id":"a","steps":[]}\n' > tree/a/one.jsonl
printf '{"trace_id":"z","steps":[]}\n' > tree/z.jsonl
mkfifo tree/pipe.jsonl
ln -s nowhere.jsonl tree/dangling.jsonl
(cd tree && for i in $(seq 1 20); do d=$(printf 'd%.0s' $(seq 1 240)); mkdir "$d" && cd "$d"; done
 printf '{"trace_id":"deep","steps":[]}\n' > x.jsonl)
expect 2 'tree/dangling.jsonl:1:1: warning: dangling symbolic link, skipped' "$bin" normalize tree
expect 2 'tree/pipe.jsonl:1:1: warning: a FIFO, skipped' "$bin" normalize tree
expect 2 'tree/dddd[d/]*:1:1: error: cannot read.*File name too long' "$bin" normalize tree
expect 2 '"trace_id":"z"' "$bin" normalize tree
expect 2 'normalize: 3 records read, 2 traces, 1 rejected, 2 warnings' "$bin" normalize tree
# The skipped entries are counted in every summary, not only printed.
expect 2 '2 traces from 3 records: 2 passed, 0 failed, 1 rejected, 2 warnings;' "$bin" check -r ok.rules tree
expect 2 '"rejected":1,"warnings":2,' "$bin" check -r ok.rules --format json tree
expect 2 'read 3, rejected 3, 2 warnings' "$bin" score tree
if [[ $(id -u) != 0 ]]; then
  mkdir -p tree2/locked && printf '{"trace_id":"b","steps":[]}\n' > tree2/b.jsonl && chmod 000 tree2/locked
  expect 2 'tree2/locked:1:1: error: cannot read directory' "$bin" normalize tree2
  expect 2 '"trace_id":"b"' "$bin" normalize tree2
  chmod 755 tree2/locked
fi

# Compressed input, recognized by its first bytes: gzip and zstd, JSONL and .json, files,
# directories and standard input; positions are those of the decompressed text.
for i in $(seq 1 3000); do printf '{"trace_id":"c%d","steps":[{"tool":"lookup"}]}\n' "$i"; done > plain.jsonl
gzip -c plain.jsonl > logs.jsonl.gz
zstd -q -c plain.jsonl > logs.jsonl.zst
printf '[{"trace_id":"j1","steps":[]},\n {"trace_id":"j2","steps":[{"tool":"delete_x"}]}]\n' | gzip -c > arr.json.gz
expect 0 'normalize: 3000 records read, 3000 traces, 0 rejected' "$bin" normalize logs.jsonl.gz
expect 0 'normalize: 3000 records read, 3000 traces, 0 rejected' "$bin" normalize logs.jsonl.zst
expect 1 '2 traces from 2 records: 1 passed, 1 failed' "$bin" check -r ok.rules arr.json.gz
expect 0 'normalize: 3000 records read' sh -c "'$bin' normalize - < logs.jsonl.zst"
mkdir gzdir && cp logs.jsonl.gz arr.json.gz gzdir/
expect 0 'normalize: 3002 records read, 3002 traces, 0 rejected' "$bin" normalize gzdir
# A truncated or corrupt stream: the records before it stand, the break is located.
head -c $(($(stat -c %s logs.jsonl.gz) / 2)) logs.jsonl.gz > cut.jsonl.gz
expect 2 'cut.jsonl.gz:[0-9]+:1: error: truncated gzip stream' "$bin" normalize cut.jsonl.gz
n=$("$bin" normalize cut.jsonl.gz 2>/dev/null | wc -l)
[[ $n -gt 500 ]] || { echo "FAIL: a truncated gzip stream kept only $n records"; failures=$((failures + 1)); }
head -c $(($(stat -c %s logs.jsonl.zst) / 2)) logs.jsonl.zst > cut.jsonl.zst
expect 2 'cut.jsonl.zst:[0-9]+:1: error: truncated zstd stream' "$bin" normalize cut.jsonl.zst
python3 -c "
import sys; b = bytearray(open('logs.jsonl.gz', 'rb').read()); b[len(b) // 2] ^= 0xff
open('bad.jsonl.gz', 'wb').write(b)"
expect 2 'bad.jsonl.gz:[0-9]+:1: error: (corrupt|truncated) gzip stream' "$bin" normalize bad.jsonl.gz
printf '\x1f\x8b' > tiny.jsonl.gz
expect 2 'tiny.jsonl.gz:1:1: error: truncated gzip stream' "$bin" normalize tiny.jsonl.gz
# A checksum is checked at the end of its gzip member or zstd frame, after the records before
# it were read: the error names the line the member began on, whose records it makes suspect.
python3 -c "
b = bytearray(open('logs.jsonl.gz', 'rb').read()); b[-8] ^= 0xff; open('crc.jsonl.gz', 'wb').write(b)
z = bytearray(open('logs.jsonl.zst', 'rb').read()); z[-2] ^= 0xff; open('crc.jsonl.zst', 'wb').write(z)"
expect 2 'crc.jsonl.gz:3001:1: error: corrupt gzip stream: incorrect data check; the records from line 1 to here were read from this gzip member before its corruption was found' "$bin" normalize crc.jsonl.gz
expect 2 'normalize: 3001 records read, 3000 traces, 1 rejected' "$bin" normalize crc.jsonl.gz
expect 2 'bad.jsonl.gz:[0-9]+:1: error: corrupt gzip stream: .*; the records from line 1 to here were read from this gzip member' "$bin" normalize bad.jsonl.gz
cat logs.jsonl.gz crc.jsonl.gz > second.jsonl.gz
expect 2 'second.jsonl.gz:6001:1: error: corrupt gzip stream: incorrect data check; the records from line 3001 to here' "$bin" normalize second.jsonl.gz
expect 2 'crc.jsonl.zst:[0-9]+:1: error: corrupt zstd stream: .*checksum; the records from line 1 to here were read from this zstd frame' "$bin" normalize crc.jsonl.zst
# zstd streams that begin with a skippable frame (pzstd writes one before each frame) or hold
# several frames.
{ printf 'P*M\x18\x04\x00\x00\x00skip'; zstd -q -c plain.jsonl; printf '\x5f\x2a\x4d\x18\x00\x00\x00\x00'; zstd -q -c plain.jsonl; } > skippable.jsonl.zst
expect 0 'normalize: 6000 records read, 6000 traces, 0 rejected' "$bin" normalize skippable.jsonl.zst
expect 0 'normalize: 6000 records read, 6000 traces, 0 rejected' sh -c "'$bin' normalize - < skippable.jsonl.zst"
if command -v pzstd >/dev/null; then
  pzstd -q -p 2 -c plain.jsonl > parallel.jsonl.zst
  expect 0 'normalize: 3000 records read, 3000 traces, 0 rejected' "$bin" normalize parallel.jsonl.zst
fi

# One record over the size limit is rejected at its line; the records around it are read.
{ printf '{"trace_id":"before","steps":[]}\n{"trace_id":"huge","pad":"'
  head -c $((65 * 1024 * 1024)) /dev/zero | tr '\0' x
  printf '"}\n{"trace_id":"after","steps":[]}\n'; } > huge.jsonl
expect 2 'huge.jsonl:2:1: error: record is larger than the 64 MiB limit' "$bin" normalize huge.jsonl
expect 2 '"trace_id":"after"' "$bin" normalize huge.jsonl
rm -f huge.jsonl

# An .eval member larger than the record limit is one rejected record, found by its declared
# size or, when that lies, by reading up to the limit (never all of it); the samples around it
# are read. The large member is 65 MiB of blanks, about 66 KiB deflated.
python3 - <<'PY'
import struct, zipfile
sample = '{"id":%d,"epoch":1,"messages":[{"role":"user","content":"hi"}]}'
with zipfile.ZipFile('bomb.eval', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('header.json', '{}')
    z.writestr('samples/1_epoch_1.json', sample % 1)
    z.writestr('samples/2_epoch_1.json', ' ' * (65 * 1024 * 1024))
    z.writestr('samples/3_epoch_1.json', sample % 3)
# The same archive, its large member declaring 100 bytes (local header and central directory).
b = bytearray(open('bomb.eval', 'rb').read())
name = b'samples/2_epoch_1.json'
local = b.find(b'PK\x03\x04' + b'\x14\x00', b.find(b'samples/1_epoch_1.json'))
central = b.rfind(name) - 46
assert b[local + 30:local + 30 + len(name)] == name and b[central:central + 4] == b'PK\x01\x02'
struct.pack_into('<I', b, local + 22, 100)
struct.pack_into('<I', b, central + 24, 100)
open('liar.eval', 'wb').write(b)
PY
for f in bomb liar; do
  expect 2 "$f.eval/samples/2_epoch_1.json:1:1: error: record is larger than the 64 MiB limit" timeout 60 "$bin" normalize -j 1 $f.eval
  expect 2 'normalize: 3 records read, 2 traces, 1 rejected' timeout 60 "$bin" normalize -j 2 $f.eval
done

# A session log is read whole: when memory runs out reading it, it is one rejected record
# that says so, and the inputs after it are read (not "invalid JSON", not a crash). Run where
# an address-space limit leaves the program room to start (not under a sanitizer).
if sh -c "ulimit -v 1000000 && exec '$bin' --version" >/dev/null 2>&1; then
  python3 - <<'PY'
import json, sys
with open('big_session.jsonl', 'w') as f:
    parent = None
    for i in range(120000):
        f.write(json.dumps({"parentUuid": parent, "sessionId": "s", "uuid": f"u{i}", "type": "user",
                            "message": {"role": "user", "content": "x" * 200}}) + "\n")
        parent = f"u{i}"
PY
  expect 2 'big_session.jsonl:1:1: error: not enough memory to (read|parse) this (record|session log)' \
    sh -c "ulimit -v 250000 && exec '$bin' normalize -j 1 big_session.jsonl traces.jsonl"
  expect 2 'normalize: 3 records read, 2 traces, 1 rejected' sh -c "ulimit -v 250000 && exec '$bin' normalize -j 1 big_session.jsonl traces.jsonl"
  rm -f big_session.jsonl
fi

# score: no record is too large to compare: 5 000 actual × 5 000 expected calls are scored.
python3 -c "
calls = [{'tool': 't%d' % (i % 50)} for i in range(5000)]
import json
print(json.dumps({'id': 'small', 'actual': [{'tool': 'a'}], 'expected': ['a']}))
print(json.dumps({'id': 'big', 'actual': {'steps': calls}, 'expected': [c['tool'] for c in calls]}))
print(json.dumps({'id': 'small2', 'actual': [{'tool': 'a'}], 'expected': ['a']}))" > score.jsonl
expect 0 '"id":"big","selection":1,"ordering":1,' "$bin" score --format jsonl score.jsonl
expect 0 '"id":"small2"' "$bin" score --format jsonl score.jsonl

# Chained groups share their sub-patterns: 40 links compile at once, and the automaton dump
# stays small.
{ printf 'group g0 = a | b\n'
  for i in $(seq 1 40); do printf 'group g%d = g%d | (g%d where arguments.x == %d)\n' "$i" $((i - 1)) $((i - 1)) "$i"; done
  printf 'forbid g40\n'; } > chain.rules
expect 0 '1 file linted: 0 errors, 0 warnings' timeout 20 "$bin" lint chain.rules
size=$(timeout 20 "$bin" explain -r chain.rules --emit automaton | wc -c)
[[ $size -lt 100000 ]] || { echo "FAIL: the automaton of chain.rules is $size bytes"; failures=$((failures + 1)); }
printf '{"trace_id":"x","steps":[{"tool":"b","arguments":{"x":40}}]}\n' > b.jsonl
expect 1 '1 failed' timeout 20 "$bin" check -r chain.rules b.jsonl

# A report that cannot be written is an error, not a pass; a closed pipe stays quiet.
expect 2 'error writing standard output' sh -c "'$bin' check -r ok.rules --format json traces.jsonl > /dev/full"
expect 2 'error writing standard output' sh -c "'$bin' normalize logs.jsonl.gz > /dev/full"
expect 2 'error writing standard output' sh -c "'$bin' lint --help > /dev/full"
out=$( { "$bin" normalize logs.jsonl.gz | head -1; } 2>&1 )
if grep -q 'error writing' <<<"$out"; then echo "FAIL: a closed pipe printed: $out"; failures=$((failures + 1)); fi

# Weights whose sum overflows would make every overall score NaN (not JSON): refused.
expect 2 "--weights '1e308,1e308': expected" "$bin" score --weights 1e308,1e308 score.jsonl

# check: 1000 statements over a trace of 300 000 distinct tool names. Pattern rows are kept
# for a bounded number of step classes, so memory follows the trace, not names × patterns
# (which needed 2.1 GB here). Peak memory is measured; the bound is generous.
python3 -c "
print('\n'.join('forbid t%d' % i for i in range(1000)))" > many.rules
python3 -c "
import json
steps = [{'tool': 'name_%d' % i} for i in range(300000)] + [{'tool': 't5'}]
print(json.dumps({'trace_id': 'wide', 'steps': steps}))" > wide.jsonl
peak=$(python3 -c "
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], 'check', '-j', '1', '-r', 'many.rules', 'wide.jsonl'], capture_output=True)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)" "$bin")
read -r rc mb <<<"$peak"
limit=400
grep -qa __asan_init "$bin" && limit=1200  # AddressSanitizer's shadow and quarantine
if [[ $rc != 1 || $mb -gt $limit ]]; then
  echo "FAIL: check over 300 000 distinct tools: exit $rc (want 1), peak $mb MB (want at most $limit)"
  failures=$((failures + 1))
fi
rm -f wide.jsonl

# Text and Markdown reports escape control characters of trace ids and tool names (untrusted
# logs must not drive the terminal or forge report lines).
printf '{"trace_id":"evil\\u001b[2J\\nFAKE","steps":[{"tool":"delete_\\u0007x"}]}\n' > evil.jsonl
for f in text markdown; do
  out=$("$bin" check -r ok.rules --format $f evil.jsonl 2>&1)
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$out" || ! grep -Eq 'evil\\x1b\[2J(\\n| )FAKE' <<<"$out"; then
    echo "FAIL: --format $f printed raw control characters:"; echo "$out" | cat -v | head -5
    failures=$((failures + 1))
  fi
done
expect 1 'delete_\\x07x' "$bin" check -r ok.rules evil.jsonl

# A run over nothing is no pass: check over an empty directory or file says so and exits 2;
# an eval that judged no case fails with its own message, and so does a gate without data.
mkdir empty_dir && : > empty.jsonl && printf '\n  \n' > blank.jsonl
expect 2 'no trace was checked: empty_dir holds no records' "$bin" check -r ok.rules empty_dir
expect 2 'no trace was checked: the input holds no records' "$bin" check -r ok.rules empty.jsonl
expect 2 'no trace was checked: empty.jsonl, blank.jsonl hold no records' "$bin" check -r ok.rules empty.jsonl blank.jsonl
expect 2 '"traces":0' "$bin" check -r ok.rules --format json empty_dir
printf '{"case_id":"c1","expected":{"tools":["lookup"]}}\n' > cases.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ngate selection >= 90%%\n' > s.suite
printf '{"trace_id":"c1","steps":[{"tool":"lookup"}]}\n' > run.jsonl
expect 0 'suite s: PASS' "$bin" eval s.suite --runs run.jsonl
# What a suite's pattern matches that is not a regular file is a located warning, not a
# silent gap; when nothing else matches, the error follows it.
mkdir -p globbed/cases/sub.jsonl && mkfifo globbed/cases/pipe.jsonl && cp cases.jsonl globbed/cases/
printf 'suite "s"\ncases "cases/*.jsonl"\ngate selection >= 90%%\n' > globbed/s.suite
printf 'suite "s"\ncases "cases/pipe.jsonl"\ngate selection >= 90%%\n' > globbed/fifo.suite
expect 0 's.suite:2:7: warning\[S011\]: globbed/cases/pipe.jsonl is a FIFO: skipped' timeout 10 "$bin" eval globbed/s.suite --runs run.jsonl
expect 0 'globbed/cases/sub.jsonl is a directory: skipped' timeout 10 "$bin" eval globbed/s.suite --runs run.jsonl
expect 2 'pipe.jsonl is a FIFO: skipped' timeout 10 "$bin" eval globbed/fifo.suite --runs run.jsonl
expect 2 'no case file matches cases/pipe.jsonl' timeout 10 "$bin" eval globbed/fifo.suite --runs run.jsonl
expect 1 'FAIL: no case was judged: 1 case, 1 without a run, 0 stale; 0 run records read' \
  "$bin" eval s.suite --runs empty.jsonl
expect 1 'trajcheck eval: FAIL: no case was judged' "$bin" eval s.suite --runs traces.jsonl
expect 1 '"reason": "no case was judged' "$bin" eval s.suite --runs empty.jsonl --format json
expect 1 'name="judged cases"><failure' "$bin" eval s.suite --runs empty.jsonl --format junit
printf 'suite "s"\ncases "cases.jsonl"\ngate cost_per_success <= 1\n' > nodata.suite
expect 1 "FAIL    cost_per_success <= 1  value n/a .*unless written 'if data'" "$bin" eval nodata.suite --runs run.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ngate cost_per_success <= 1 if data\n' > ifdata.suite
expect 0 'no data cost_per_success <= 1 if data' "$bin" eval ifdata.suite --runs run.jsonl

# Nameless entries of a tool list are skipped with a located warning and counted.
printf '{"trace_id":"n1","steps":["Search ",{"name":"  "},{"function":"transform"},{}]}\n' > nameless.jsonl
expect 0 '1 passed, 0 failed, 0 rejected, 2 warnings;' "$bin" check -r ok.rules nameless.jsonl
expect 0 'nameless.jsonl:1:37: warning: tool list entry has a blank name; skipped' "$bin" check -r ok.rules nameless.jsonl

# Means do not depend on -j: 3000 records in many batches, summed exactly whatever the split.
for i in $(seq 1 3000); do
  printf '{"id":"r%d","actual":["a%d","b","c%d"],"expected":["a%d","b%d","c","d%d"]}\n' \
    "$i" $((i % 7)) $((i % 3)) $((i % 5)) $((i % 11)) $((i % 13))
done > many.jsonl
one=$("$bin" score --format json -j 1 many.jsonl 2>&1 | sed -n '/"summary"/,$p')
two=$("$bin" score --format json -j 2 many.jsonl 2>&1 | sed -n '/"summary"/,$p')
if [[ -z $one || $one != "$two" ]]; then
  echo "FAIL: score summaries differ between -j 1 and -j 2:"; diff <(echo "$one") <(echo "$two") | head -10
  failures=$((failures + 1))
fi

# Every case's expected fields are checked before any is judged: a PATH that does not parse is
# bad input (exit 2), located at its column, not a case that merely fails.
mkdir badpath && printf '{"case_id":"c1","expected":{"path":"lookup -> -> x"}}\n' > badpath/cases.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ngate selection >= 0\n' > badpath/s.suite
expect 2 'badpath/cases.jsonl:1:47: error: "expected.path" is not a PATH of the rule language: expected a step' \
  "$bin" eval badpath/s.suite --runs run.jsonl

# compare and eval's baseline read a report's fields only once their types are checked: bad
# types, a device, and more resamples than the limit are bad input (2), never an internal error.
"$bin" eval s.suite --runs run.jsonl --format json > report.json
python3 - <<'PY'
import json
r = json.load(open("report.json"))
def bad(name, edit):
    x = json.loads(json.dumps(r)); edit(x); json.dump(x, open(name, "w"))
bad("sel.json", lambda x: x["cases"][0].update(selection="high"))
bad("id.json", lambda x: x["cases"][0].update(case_id=7))
bad("seg.json", lambda x: x.update(splits=[{"field": "split", "value": 3}]))
PY
expect 2 'sel.json: error: cases\[0\].selection: expected a number or null, got string' "$bin" compare sel.json report.json
expect 2 'id.json: error: cases\[0\].case_id: expected a string, got number' "$bin" compare report.json id.json
expect 2 'seg.json: error: splits\[0\].value: expected a string, got number' "$bin" eval s.suite --runs run.jsonl --baseline seg.json
expect 2 '/dev/zero: error: is a device' "$bin" compare /dev/zero report.json
expect 2 'resamples 1000000000 is more than the limit of 1000000' timeout 10 "$bin" compare report.json report.json --resamples 1000000000
expect 0 '1000000 resamples' timeout 60 "$bin" compare report.json report.json --resamples 1000000

# case new quotes tool names that are keywords of the rule language: the regression case means
# what the trace did, and an agent calling another tool does not meet it.
printf '{"trace_id":"kw","steps":[{"tool":"any"},{"tool":"approval"},{"tool":"not"},{"tool":"lookup"}]}\n' > kw.jsonl
mkdir kwcase && "$bin" case new --from-trace kw.jsonl --case-id kw --note n > kwcase/cases.jsonl
expect 0 '"path":"\\"any\\" -> \\"approval\\" -> \\"not\\" -> lookup"' cat kwcase/cases.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ngate selection >= 100%%\ngate order >= 100%%\n' > kwcase/s.suite
expect 0 'suite s: PASS' "$bin" eval kwcase/s.suite --runs kw.jsonl
printf '{"trace_id":"kw","steps":[{"tool":"delete_everything"},{"type":"approval","decision":"approved"},{"tool":"x"},{"tool":"lookup"}]}\n' > kw2.jsonl
expect 1 'FAIL    selection >= 100%' "$bin" eval kwcase/s.suite --runs kw2.jsonl

# A case's rules files come from the suite's folder unless the suite names more folders.
mkdir -p jail/inner shared && printf 'forbid lookup\n' > shared/extra.rules && printf 'secret line\n' > secret.txt
printf '{"case_id":"c1","expected":{"tools":["lookup"],"rules":["../secret.txt"]}}\n' > jail/cases.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ngate selection >= 0\n' > jail/s.suite
expect 2 'jail/cases.jsonl:1: error: expected.rules "../secret.txt" is outside the suite.s folder' \
  "$bin" eval jail/s.suite --runs run.jsonl
out=$("$bin" eval jail/s.suite --runs run.jsonl 2>&1)
if grep -q 'secret line' <<<"$out"; then echo "FAIL: eval quoted a file outside the suite: $out"; failures=$((failures + 1)); fi
ln -s ../../shared jail/inner/link
printf '{"case_id":"c1","expected":{"tools":["lookup"],"rules":["inner/link/extra.rules"]}}\n' > jail/cases.jsonl
expect 2 'inner/link/extra.rules" is outside' "$bin" eval jail/s.suite --runs run.jsonl
printf 'suite "s"\ncases "cases.jsonl"\ncase rules from "../shared"\ngate selection >= 0\n' > jail/s.suite
expect 0 'FAIL    c1 .*forbid lookup' "$bin" eval jail/s.suite --runs run.jsonl

if ((failures)); then echo "$failures case(s) failed"; exit 1; fi
echo "all cases passed"
