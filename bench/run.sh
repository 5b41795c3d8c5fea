#!/usr/bin/env bash
# bench/run.sh — trajcheck's performance harness (docs/performance.md says what each figure
# means). Builds Release into build-bench/, generates the data into bench/out/ if missing,
# installs the Node peers into bench/peers/, runs every figure RUNS times, interleaved, and
# writes bench/out/results.md (medians, throughput, ratios, peak RSS) and bench/out/targets.md
# (every performance target with its verdict), printed at the end. About 5–10 minutes.
#
#   bash bench/run.sh                 # full: 500 MB + 200 MB of traces, 20 000 score records
#   QUICK=1 bash bench/run.sh         # smoke run on small data (a minute or two)
#
# Environment: RUNS (default 3) runs of a figure; PEER_RUNS (default RUNS) of agentevals;
# PROMPTFOO_RUNS (default 0: about two minutes a run, no target depends on it); SCALING_RUNS
# (default RUNS); RULE_RUNS (default RUNS, at least 5) rounds of the per-rule pairs; JOBS
# (default 2) the threads of the -j figures; NATIVE (default ON) builds
# with TRAJCHECK_NATIVE (-march=native, trajcheck and floor alike); RSS_COPIES (default 10)
# times the native file is piped through check for the largest input (10 = 5 GB, never on
# disk); RSS_RUNS (default 3) runs of each input size, the largest peak kept;
# HOSTILE_STEPS (default 50 000) the smaller hostile trace; SKIP_PEERS=1, SKIP_SCALING=1,
# SKIP_RSS=1, SKIP_HOSTILE=1, SKIP_RULES=1 (the per-rule costs), SKIP_GUARD=1, SKIP_PYTHON=1, SKIP_SCORE_LARGE=1, SKIP_DASK=1 leave
# parts out; ONLY_DATA=1 stops after generating; SHM=0 times the inputs from bench/out/ instead of
# copies in /dev/shm; PYTHON (default /usr/bin/python3) the Python of the Python and Dask figures;
# DASK_MB (default 500, QUICK 50) the Dask corpus; SCORE_LARGE_CALLS (default 100 000, QUICK
# 20 000) the calls a side of the one large score record.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

QUICK=${QUICK:-0}
RUNS=${RUNS:-3}
PEER_RUNS=${PEER_RUNS:-$RUNS}
PROMPTFOO_RUNS=${PROMPTFOO_RUNS:-0}
SCALING_RUNS=${SCALING_RUNS:-$RUNS}
RULE_RUNS=${RULE_RUNS:-$((RUNS > 5 ? RUNS : 5))}
JOBS=${JOBS:-2}
SKIP_PEERS=${SKIP_PEERS:-0}
SKIP_SCALING=${SKIP_SCALING:-0}
SKIP_RSS=${SKIP_RSS:-0}
RSS_RUNS=${RSS_RUNS:-3}
SKIP_HOSTILE=${SKIP_HOSTILE:-0}
SKIP_RULES=${SKIP_RULES:-0}
SKIP_GUARD=${SKIP_GUARD:-0}
SKIP_PYTHON=${SKIP_PYTHON:-0}
SKIP_SCORE_LARGE=${SKIP_SCORE_LARGE:-0}
SKIP_DASK=${SKIP_DASK:-0}
PYTHON=${PYTHON:-/usr/bin/python3}

if [[ $QUICK == 1 ]]; then
  data=bench/out/quick
  native_bytes=20M; ae_records=1000
  scale_total=100000; scale_steps="10 100 1000 10000 100000"
  single_steps="12500 25000 50000 100000"
  rule_counts="1 10 50 100 200"; rules_slice_lines=900     # ~10 MB
  rss_copies=${RSS_COPIES:-10}
  tau_bytes=20M
  hostile_steps=${HOSTILE_STEPS:-5000}
  dask_mb=${DASK_MB:-50}; score_large_calls=${SCORE_LARGE_CALLS:-20000}
else
  data=bench/out/full
  native_bytes=500M; ae_records=20000
  # One trace is one record: 200 000 steps (~55 MB) stay under the reader's 64 MiB record limit.
  scale_total=1000000; scale_steps="10 100 1000 10000 100000"
  single_steps="25000 50000 100000 200000"
  rule_counts="1 5 10 20 50 100 200"; rules_slice_lines=4500  # ~50 MB
  rss_copies=${RSS_COPIES:-10}                                # 10 x 500 MB = 5 GB on stdin
  tau_bytes=200M
  hostile_steps=${HOSTILE_STEPS:-50000}
  dask_mb=${DASK_MB:-500}; score_large_calls=${SCORE_LARGE_CALLS:-100000}
fi
build=build-bench
mkdir -p "$data" bench/out
samples=bench/out/samples.tsv    # one line per run: group name run wall_s rss_kb rc ok cpu_s
figures=bench/out/figures.tsv    # one line per figure: group name bytes records steps rules note
notes=bench/out/notes.txt        # what could not be measured, and why
: >"$samples"; : >"$figures"; : >"$notes"; : >bench/out/loadavg.tsv
cut -d' ' -f1-3 /proc/loadavg >bench/out/loadavg.start
printf 'start\t%s\n' "$(cat bench/out/loadavg.start)" >>bench/out/loadavg.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
note() { say "NOTE: $*"; printf '%s\n' "$*" >>"$notes"; }

# ------------------------------------------------------------------ tools

command -v python3 >/dev/null || { echo "bench: python3 is required for the report" >&2; exit 2; }
if [[ $SKIP_PEERS != 1 ]] && ! { command -v node >/dev/null && command -v npm >/dev/null; }; then
  SKIP_PEERS=1
  note "node/npm not found: the peers (agentevals, promptfoo; Node >= 20.20) are not measured"
fi

# ------------------------------------------------------------------ build

say "building Release into $build/"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
python_opts=(-DTRAJCHECK_PYTHON=OFF)  # the Python and Dask figures need the package, built for $PYTHON
[[ $SKIP_PYTHON != 1 || $SKIP_DASK != 1 ]] && python_opts=(-DTRAJCHECK_PYTHON=AUTO -DPython3_EXECUTABLE="$PYTHON")
cmake -S . -B "$build" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DTRAJCHECK_BUILD_BENCH=ON -DTRAJCHECK_NATIVE=${NATIVE:-ON} \
  -DTRAJCHECK_BUILD_TESTS=OFF "${python_opts[@]}" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; exit 2; }
cmake --build "$build" -j "$JOBS" --target bench_gen bench_floor bench_rusage bench_guard_latency >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log" >&2; exit 2; }
gen=$build/bench/bench_gen
floor=$build/bench/bench_floor
rusage=$build/bench/bench_rusage  # each run's peak RSS and CPU time (to the microsecond)
tc=""
if cmake --build "$build" -j "$JOBS" --target trajcheck_cli >bench/out/build-trajcheck.log 2>&1; then
  tc=$build/trajcheck
else
  note "trajcheck does not build yet (bench/out/build-trajcheck.log): no trajcheck figures"
fi
has_command() {  # has_command NAME: the subcommand exists in this build (`NAME --help` alone
  [[ -n $tc ]] && "$tc" --help 2>/dev/null | grep -qE "^ +$1( |\$)"  # would succeed either way)
}
has_check=0; has_score=0
if has_command check; then has_check=1; elif [[ -n $tc ]]; then note "trajcheck has no 'check' command yet: no check figures"; fi
if has_command score; then has_score=1; elif [[ -n $tc ]]; then note "trajcheck has no 'score' command yet: no score figures"; fi

# ------------------------------------------------------------------ data

# meta FILE [--format agentevals]: "records N steps M bytes B" of a data file (cached).
meta() {
  local f=$1; shift
  if [[ ! -s $f.meta || $f.meta -ot $f ]]; then
    "$floor" "$@" "$f" | awk '{print $1, $2, $3, $4, $5, $6}' >"$f.meta"
  fi
  cat "$f.meta"
}
field() { awk -v k="$2" '{for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1)}' <<<"$1"; }

native=$data/native.jsonl
agentevals=$data/agentevals.jsonl
if [[ ! -s $native ]]; then
  say "generating $native ($native_bytes)"
  "$gen" native -o "$native.tmp" --bytes "$native_bytes" --seed 7 2>"$data/native.stats" && mv "$native.tmp" "$native"
fi
if [[ ! -s $agentevals ]]; then
  say "generating $agentevals ($ae_records records)"
  "$gen" agentevals -o "$agentevals.tmp" --records "$ae_records" --calls 20 --seed 11 2>"$data/agentevals.stats" \
    && mv "$agentevals.tmp" "$agentevals"
fi
tau=$data/tau.jsonl
if [[ ! -s $tau ]]; then
  say "generating $tau ($tau_bytes, tau-bench-like retail traces)"
  python3 bench/gen_tau.py -o "$tau.tmp" --bytes "$tau_bytes" --seed 5 2>"$data/tau.stats" && mv "$tau.tmp" "$tau"
fi
# The main inputs are timed from copies in memory (/dev/shm) when it has room for them: on a
# busy machine the page cache can drop part of a 500 MB file between two rounds, and that
# round then times the disk. SHM=0 times the files where they were generated.
inputs="the generated files in $data/"
if [[ ${SHM:-1} == 1 && ${ONLY_DATA:-0} != 1 && -d /dev/shm ]]; then
  need=$(du -cb "$native" "$tau" "$agentevals" | tail -n 1 | cut -f 1)
  room=$(df -B1 --output=avail /dev/shm | tail -n 1)
  if ((room > 2 * need)); then
    shm=$(mktemp -d /dev/shm/trajcheck-bench.XXXXXX)
    trap 'rm -rf "$tmp" "$shm"' EXIT
    for v in native tau agentevals; do
      cp "${!v}" "$shm/"
      printf -v "$v" '%s' "$shm/${!v##*/}"
    done
    inputs="copies in memory ($shm/, removed at the end) of native.jsonl, tau.jsonl and agentevals.jsonl"
  else
    note "/dev/shm has $((room >> 20)) MiB free, less than twice the inputs' $((need >> 20)) MiB: inputs timed from $data/"
  fi
fi
tau_meta=$(meta "$tau")
native_meta=$(meta "$native")
ae_meta=$(meta "$agentevals" --format agentevals)
say "native: $native_meta"
say "agentevals: $ae_meta"
if [[ ! -s $data/slice.jsonl ]]; then head -n "$rules_slice_lines" "$native" >"$data/slice.jsonl"; fi
slice_meta=$(meta "$data/slice.jsonl")
rules=bench/bench.rules
rule_count=20
if has_command lint; then  # a rules file that does not compile would make every check figure fail
  if ! "$tc" lint "$rules" >bench/out/lint.txt 2>&1; then
    note "bench/bench.rules does not compile with this build (bench/out/lint.txt): $(head -n 1 bench/out/lint.txt)"
  fi
fi
[[ ${ONLY_DATA:-0} == 1 ]] && exit 0

# ------------------------------------------------------------------ measuring

# figure GROUP NAME META RULES RUNS OK_CODES SINK NOTE -- CMD…
# Queues a figure: CMD is run RUNS times under bench_rusage (peak RSS, and CPU time to the
# microsecond), timing each run's wall clock; exit codes outside OK_CODES ("0 1") mark the
# run failed. `flush` runs the queued figures interleaved (round 1 of every figure, then round
# 2, …), so a change in the machine's load hits every figure of a comparison alike.
queue=()
figure() {
  local group=$1 name=$2 m=$3 nrules=$4 runs=$5 ok=$6 sink=$7 what=$8
  shift 9
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$group" "$name" "$(field "$m" bytes)" "$(field "$m" records)" \
    "$(field "$m" steps)" "$nrules" "$what" >>"$figures"
  local cmd
  printf -v cmd '%q ' "$@"
  queue+=("$group"$'\x1f'"$name"$'\x1f'"$runs"$'\x1f'"$ok"$'\x1f'"$sink"$'\x1f'"$cmd")
}
flush() {
  local max=0 q group name runs ok sink cmd round t0 t1 rc rss user sys cpu wall good
  declare -A broken=()
  for q in "${queue[@]}"; do IFS=$'\x1f' read -r _ _ runs _ <<<"$q"; ((runs > max)) && max=$runs; done
  printf '%s\t%s\n' "${queue[0]%%$'\x1f'*}" "$(cut -d' ' -f1-3 /proc/loadavg)" >>bench/out/loadavg.tsv
  for ((round = 1; round <= max; round++)); do
    for q in "${queue[@]}"; do
      IFS=$'\x1f' read -r group name runs ok sink cmd <<<"$q"
      ((round > runs)) && continue
      [[ -n ${broken[$group/$name]:-} ]] && continue
      t0=$EPOCHREALTIME
      rc=0
      eval "\"\$rusage\" \"\$tmp/rss\" $cmd" >"$sink" 2>"$tmp/stderr" || rc=$?
      t1=$EPOCHREALTIME
      read -r rss user sys < <(tail -n 1 "$tmp/rss")
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.4f", u + s}')
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b - a}')
      good=1
      [[ " $ok " == *" $rc "* ]] || good=0
      printf '%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n' "$group" "$name" "$round" "$wall" "$rss" "$rc" "$good" "$cpu" >>"$samples"
      cp "$tmp/stderr" "bench/out/$group-$name.stderr" 2>/dev/null || true
      if ((!good)); then
        broken[$group/$name]=1
        say "$group/$name run $round: exit $rc"
        head -n 5 "$tmp/stderr" >&2
        continue
      fi
      say "$group/$name run $round: ${wall}s wall, ${cpu}s CPU, peak RSS ${rss} KB"
    done
  done
  queue=()
}

# ------------------------------------------------------------------ check (native traces)

# The one-thread figures compared with each other (the floors and check -j 1 beside them) run
# on one CPU, the same for all: a virtual machine's CPUs can differ in speed (two here: the
# same check took 0.34 s on one and 0.48 s on the other, both idle), and a figure would take
# the speed of whichever CPU the scheduler picked, run by run. PIN_CPU picks the CPU (default:
# the first this script may run on); PIN_CPU=none leaves the scheduler to choose.
one=()
if [[ ${PIN_CPU:-} != none ]] && command -v taskset >/dev/null; then
  one=(taskset -c "${PIN_CPU:-$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')}")
fi

# Two single-threaded checks of the same input at once, as separate processes: they share
# nothing but the machine (its cores' caches, memory bus, and whatever else it runs), so
# 2 x check-j1 / check-j1-pair is what this machine allows -j 2 at best. Exit status: the
# larger of the two.
pair='"$0" check -r "$1" -j 1 --quiet "$2" & a=$!; "$0" check -r "$1" -j 1 --quiet "$2" & b=$!
wait $a; x=$?; wait $b; y=$?; exit $(( x > y ? x : y ))'

figure check floor "$native_meta" 0 "$RUNS" "0" /dev/null "simdjson On-Demand, parse + touch tool names" -- "${one[@]}" "$floor" "$native"
figure check floor-validate "$native_meta" 0 "$RUNS" "0" /dev/null "simdjson DOM: parse and validate every byte + touch tool names" -- \
  "${one[@]}" "$floor" --validate "$native"
if ((has_check)); then
  figure check "check-j1" "$native_meta" $rule_count "$RUNS" "0 1" /dev/null "20 rules, text output" -- \
    "${one[@]}" "$tc" check -r "$rules" -j 1 --quiet "$native"
  figure check "check-j$JOBS" "$native_meta" $rule_count "$RUNS" "0 1" /dev/null "20 rules, text output" -- \
    "$tc" check -r "$rules" -j "$JOBS" --quiet "$native"
  figure check "check-j1-pair" "$native_meta" $rule_count "$RUNS" "0 1" /dev/null \
    "two check -j 1 at once, each over all of it (the machine's own ceiling for -j 2)" -- \
    bash -c "$pair" "$tc" bench/bench.rules "$native"
  figure check "check-j1-jsonl" "$native_meta" $rule_count "$RUNS" "0 1" /dev/null "20 rules, --format jsonl" -- \
    "${one[@]}" "$tc" check -r "$rules" -j 1 --format jsonl "$native"
  if "$tc" lint bench/bench-parametric.rules >bench/out/lint-parametric.txt 2>&1; then
    figure check "check-j1-param" "$native_meta" $((rule_count + 2)) "$RUNS" "0 1" /dev/null \
      "20 rules + 2 parametric (bench-parametric.rules)" -- \
      "${one[@]}" "$tc" check -r "$rules" -r bench/bench-parametric.rules -j 1 --quiet "$native"
  else
    note "bench/bench-parametric.rules does not compile with this build (bench/out/lint-parametric.txt): no parametric figure"
  fi
  # seen() paid only where asked: a rule that could ask but whose call never occurs, against
  # the trivial rule alone (both one rule, so the difference is the seen() machinery).
  printf 'forbid no_such_tool_in_any_trace\n' >"$tmp/trivial.rules"
  printf 'forbid no_such_tool_in_any_trace where not seen(arguments.order_id)\n' >"$tmp/seen-never.rules"
  figure check "check-j1-trivial" "$native_meta" 1 "$RUNS" "0 1" /dev/null "one rule that never fires (the reading cost)" -- \
    "${one[@]}" "$tc" check -r "$tmp/trivial.rules" -j 1 --quiet "$native"
  figure check "check-j1-seen-never" "$native_meta" 1 "$RUNS" "0 1" /dev/null "one seen() rule whose call never occurs" -- \
    "${one[@]}" "$tc" check -r "$tmp/seen-never.rules" -j 1 --quiet "$native"
fi
if has_command normalize; then
  figure check "normalize-j1" "$native_meta" 0 "$RUNS" "0" /dev/null "reader + normalized JSON writer" -- \
    "${one[@]}" "$tc" normalize -j 1 "$native"
fi
flush

# ------------------------------------------------------------------ check (tau-bench-like traces)

figure tau floor-validate "$tau_meta" 0 "$RUNS" "0" /dev/null "simdjson DOM: parse and validate every byte + touch tool names" -- \
  "${one[@]}" "$floor" --validate "$tau"
figure tau floor "$tau_meta" 0 "$RUNS" "0" /dev/null "simdjson On-Demand, parse + touch tool names" -- "${one[@]}" "$floor" "$tau"
if ((has_check)); then
  figure tau "check-j1" "$tau_meta" 20 "$RUNS" "0 1" /dev/null "bench/tau.rules (20 rules: seen(), \$o, argument conditions)" -- \
    "${one[@]}" "$tc" check -r bench/tau.rules -j 1 --quiet "$tau"
  figure tau "check-j$JOBS" "$tau_meta" 20 "$RUNS" "0 1" /dev/null "bench/tau.rules" -- \
    "$tc" check -r bench/tau.rules -j "$JOBS" --quiet "$tau"
  figure tau "check-j1-pair" "$tau_meta" 20 "$RUNS" "0 1" /dev/null \
    "two check -j 1 at once, each over all of it (the machine's own ceiling for -j 2)" -- \
    bash -c "$pair" "$tc" bench/tau.rules "$tau"
fi
flush

# ------------------------------------------------------------------ per-rule cost (tau.rules, each alone)

# A rule's own cost is a small difference of two large times, so each rule K is paired: the
# trivial rule (bK) runs right before it (rK) in every round, and the report takes the median
# of the per-round differences, which the machine's drift moves far less than two medians.
if ((has_check)) && [[ $SKIP_RULES != 1 ]]; then
  python3 bench/split_rules.py bench/tau.rules "$tmp/split" >bench/out/rules-split.tsv
  while IFS=$'\t' read -r k label; do
    if [[ $k != 0 ]]; then
      figure rule "b$k" "$tau_meta" 1 "$RULE_RUNS" "0 1" /dev/null "the trivial rule, paired with rule $k" -- \
        "${one[@]}" "$tc" check -r "$tmp/split/rule-0.rules" -j 1 --quiet "$tau"
    fi
    figure rule "r$k" "$tau_meta" 1 "$RULE_RUNS" "0 1" /dev/null "$label" -- \
      "${one[@]}" "$tc" check -r "$tmp/split/rule-$k.rules" -j 1 --quiet "$tau"
  done <bench/out/rules-split.tsv
  flush
fi
# ------------------------------------------------------------------ score (agentevals records)

figure score floor "$ae_meta" 0 "$RUNS" "0" /dev/null "simdjson On-Demand, parse + touch tool-call names" -- \
  "$floor" --format agentevals "$agentevals"
figure score floor-validate "$ae_meta" 0 "$RUNS" "0" /dev/null "simdjson DOM: parse and validate every byte + touch tool-call names" -- \
  "$floor" --validate --format agentevals "$agentevals"
if ((has_score)); then
  score_args=(--format jsonl)
  if "$tc" score --help 2>&1 | grep -q -- --tool-args; then
    score_args+=(--tool-args exact)
  else
    note "trajcheck score has no --tool-args option in this build: its default argument matching is compared with agentevals' exact mode"
  fi
  figure score "score-j1" "$ae_meta" 0 "$RUNS" "0 1" bench/out/score.jsonl "all four match modes, --tool-args exact" -- \
    "$tc" score -j 1 "${score_args[@]}" "$agentevals"
  figure score "score-j$JOBS" "$ae_meta" 0 "$RUNS" "0 1" /dev/null "all four match modes, --tool-args exact" -- \
    "$tc" score -j "$JOBS" "${score_args[@]}" "$agentevals"
fi

if [[ $SKIP_PEERS != 1 ]]; then
  peers=bench/peers
  mkdir -p "$peers"
  if ! cmp -s bench/node/package.json "$peers/package.json" || [[ ! -d $peers/node_modules ]]; then
    say "installing the Node peers into $peers/ (npm ci)"
    cp bench/node/package.json bench/node/package-lock.json "$peers/"
    (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error) >bench/out/npm-install.log 2>&1 \
      || note "npm ci failed (bench/out/npm-install.log): peers not measured"
  fi
  cp bench/node/driver.mjs "$peers/driver.mjs"
  if [[ -d $peers/node_modules/agentevals ]]; then
    figure score agentevals "$ae_meta" 0 "$PEER_RUNS" "0" bench/out/agentevals.stdout \
      "agentevals 0.0.7: strict, unordered, subset, superset (toolArgsMatchMode exact), Node $(node --version)" -- \
      node "$peers/driver.mjs" --peer agentevals --input "$agentevals" --out bench/out/agentevals.verdicts.jsonl
  fi
  if [[ -d $peers/node_modules/promptfoo ]] && ((PROMPTFOO_RUNS > 0)); then
    figure score promptfoo "$ae_meta" 0 "$PROMPTFOO_RUNS" "0" bench/out/promptfoo.stdout \
      "promptfoo 0.121.20: trajectory:tool-used, tool-sequence (in order, exact), tool-args-match (exact)" -- \
      node "$peers/driver.mjs" --peer promptfoo --input "$agentevals" --out bench/out/promptfoo.verdicts.jsonl
  fi
fi
flush

# ------------------------------------------------------------------ peak RSS against input size

if ((has_check)) && [[ $SKIP_RSS != 1 ]]; then
  # The same check over growing input: a 1/10 slice, the file, and the file rss_copies times on stdin.
  lines=$(field "$native_meta" records)
  head -n $((lines / 10)) "$native" >"$data/tenth.jsonl"
  # A figure's peak RSS is the largest of its runs: with -j 2 it depends on the batches in
  # flight at the worst moment, which one run of a short input may not meet.
  figure rss tenth "$(meta "$data/tenth.jsonl")" $rule_count "$RSS_RUNS" "0 1" /dev/null "1/10 of the traces" -- \
    "$tc" check -r "$rules" -j "$JOBS" --quiet "$data/tenth.jsonl"
  figure rss whole "$native_meta" $rule_count "$RSS_RUNS" "0 1" /dev/null "all traces" -- \
    "$tc" check -r "$rules" -j "$JOBS" --quiet "$native"
  big_meta="records $(( $(field "$native_meta" records) * rss_copies )) steps $(( $(field "$native_meta" steps) * rss_copies )) bytes $(( $(field "$native_meta" bytes) * rss_copies ))"
  figure rss "x$rss_copies-stdin" "$big_meta" $rule_count "$RSS_RUNS" "0 1" /dev/null "the file $rss_copies times through stdin" -- \
    bash -c 'for ((k = 0; k < $1; k++)); do cat "$2"; done | "$3" check -r "$4" -j "$5" --quiet -' _ \
    "$rss_copies" "$native" "$tc" "$rules" "$JOBS"
  flush
fi

# ------------------------------------------------------------------ hostile input: linear time

# One trace built against the linear-time promise (gen_tau.py --hostile: a new binding every
# four steps, steps binding nothing between, seen() lookups that find nothing) at N and 4N
# steps, checked with every parametric form and scope (bench/hostile.rules).
if ((has_check)) && [[ $SKIP_HOSTILE != 1 ]]; then
  for n in "$hostile_steps" $((4 * hostile_steps)); do
    f=$data/hostile-$n.jsonl
    [[ -s $f ]] || python3 bench/gen_tau.py -o "$f" --hostile "$n"
    figure hostile "check-$n" "$(meta "$f")" 13 "$RUNS" "0 1" /dev/null "one hostile trace of $n steps, bench/hostile.rules" -- \
      "$tc" check -r bench/hostile.rules -j 1 --quiet "$f"
  done
  flush
fi

# ------------------------------------------------------------------ scaling: steps x rules

if [[ $SKIP_SCALING != 1 ]]; then
  for s in $scale_steps; do
    f=$data/steps-$s.jsonl
    if [[ ! -s $f ]]; then
      "$gen" long -o "$f" --steps "$s" --traces $((scale_total / s)) --seed 13 2>/dev/null
    fi
    m=$(meta "$f")
    figure steps "floor-$s" "$m" 0 "$SCALING_RUNS" "0" /dev/null "$s steps a trace" -- "$floor" "$f"
    if ((has_check)); then
      figure steps "check-$s" "$m" $rule_count "$SCALING_RUNS" "0 1" /dev/null "$s steps a trace" -- \
        "$tc" check -r "$rules" -j 1 --quiet "$f"
    fi
  done
  # One trace of N steps, growing 8×: its time must grow in proportion to N (no quadratic
  # behaviour inside a trace).
  if ((has_check)); then
    for s in $single_steps; do
      f=$data/single-$s.jsonl
      if [[ ! -s $f ]]; then
        "$gen" long -o "$f" --steps "$s" --traces 1 --seed 13 2>/dev/null
      fi
      figure single "check-$s" "$(meta "$f")" $rule_count "$SCALING_RUNS" "0 1" /dev/null "one trace of $s steps" -- \
        "$tc" check -r "$rules" -j 1 --quiet "$f"
    done
    for r in $rule_counts; do
      rf=$data/rules-$r.rules
      "$gen" rules -o "$rf" --count "$r" --seed 17  # cheap: always current with the generator
      figure rules "check-$r" "$slice_meta" "$r" "$SCALING_RUNS" "0 1" /dev/null "$r generated rules" -- \
        "$tc" check -r "$rf" -j 1 --quiet "$data/slice.jsonl"
    done
  fi
  flush
fi

# ------------------------------------------------------------------ guard decisions

# bench_guard_latency (bench/guard_latency.cpp): check_call + observe per step of 2 000 traces
# of 200 steps with 20 rules, pinned to one core, RUNS times alone and RUNS times with a busy
# loop on the other core (alternating); a line per run in bench/out/guard.tsv (mode, p50, p90,
# p99, p99.9 in ns).
guard_tsv=bench/out/guard.tsv
: >"$guard_tsv"
if [[ $SKIP_GUARD != 1 && -x $build/bench/bench_guard_latency ]] && command -v taskset >/dev/null \
   && [[ $(nproc) -ge 2 ]]; then
  say "guard decisions (bench_guard_latency, $RUNS runs quiet and $RUNS with the other core busy)"
  guard_traces=2000; ((QUICK)) && guard_traces=300
  for ((run = 0; run < RUNS; run++)); do
    for mode in quiet busy; do
      busy_pid=""
      if [[ $mode == busy ]]; then
        taskset -c 0 sh -c 'while :; do :; done' &
        busy_pid=$!
      fi
      line=$(taskset -c 1 "$build/bench/bench_guard_latency" "$guard_traces" 200 | grep 'per step')
      [[ -n $busy_pid ]] && { kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; }
      awk -v m="$mode" '{for (i = 1; i <= NF; i++) if ($i ~ /^p[0-9.]+$/) v[$i] = $(i + 1)}
        END {print m "\t" v["p50"] "\t" v["p90"] "\t" v["p99"] "\t" v["p99.9"]}' <<<"$line" >>"$guard_tsv"
    done
  done
else
  note "guard decisions not measured (SKIP_GUARD=1, no bench_guard_latency, no taskset or one core)"
fi

# ------------------------------------------------------------------ Python, one large score record, Dask

# Python per trace (bench/python_per_trace.py: CPU time, best of RUNS, against `check -j 1` on the
# same traces): its output in bench/out/python.txt. The package is the bench build's.
python_txt=bench/out/python.txt; score_large_txt=bench/out/score_large.txt; dask_txt=bench/out/dask.txt
: >"$python_txt"; : >"$score_large_txt"; : >"$dask_txt"
has_python=0
if [[ ( $SKIP_PYTHON != 1 || $SKIP_DASK != 1 ) && -n $tc ]]; then
  if cmake --build "$build" -j "$JOBS" --target trajcheck_python >bench/out/build-python.log 2>&1 \
     && PYTHONPATH="$build/python" "$PYTHON" -c 'import trajcheck' 2>>bench/out/build-python.log; then
    has_python=1
  else
    note "the Python package does not build or import with $PYTHON (bench/out/build-python.log): no Python or Dask figures"
  fi
fi
if [[ $SKIP_PYTHON != 1 && $has_python == 1 && $has_check == 1 ]]; then
  say "Python per trace (bench/python_per_trace.py, best of $RUNS)"
  py_traces=$data/python.jsonl
  [[ -s $py_traces ]] || "$gen" native -o "$py_traces" --bytes 20M --seed 7 2>/dev/null
  # On the one-thread figures' CPU, with the CLI it starts (which inherits it): Python and the
  # CLI on CPUs of different speed would make the ratio the CPUs' as much as theirs.
  PYTHONPATH="$build/python" "${one[@]}" "$PYTHON" bench/python_per_trace.py "$tc" bench/bench.rules "$py_traces" "$RUNS" \
    >"$python_txt" 2>bench/out/python.err || note "bench/python_per_trace.py failed (bench/out/python.err)"
elif [[ $SKIP_PYTHON != 1 ]]; then
  note "Python per trace not measured (SKIP_PYTHON=1, or no package or no check command)"
fi
if [[ $SKIP_SCORE_LARGE != 1 && $has_score == 1 ]]; then
  say "one record of $score_large_calls x $score_large_calls calls (bench/score_large.sh)"
  bash bench/score_large.sh "$tc" "$score_large_calls" >"$score_large_txt" 2>bench/out/score_large.err \
    || note "bench/score_large.sh failed (bench/out/score_large.err)"
elif [[ $SKIP_SCORE_LARGE != 1 ]]; then
  note "the large score record not measured (no score command)"
fi
if [[ $SKIP_DASK != 1 && $has_python == 1 ]] && PYTHONPATH="$build/python" "$PYTHON" -c 'import distributed' 2>/dev/null; then
  say "Dask: 1 and 2 workers on $dask_mb MB (bench/dask_bench.py, $RUNS rounds)"
  PYTHONPATH="$build/python" "$PYTHON" bench/dask_bench.py --cli "$tc" --mb "$dask_mb" --rounds "$RUNS" \
    >"$dask_txt" 2>bench/out/dask.err || note "bench/dask_bench.py failed (bench/out/dask.err)"
elif [[ $SKIP_DASK != 1 ]]; then
  note "Dask not measured (SKIP_DASK=1, no package, or $PYTHON has no distributed)"
fi

# ------------------------------------------------------------------ verdict agreement and report

compare_args=()
[[ -s bench/out/score.jsonl ]] && compare_args+=(--trajcheck bench/out/score.jsonl)
[[ -s bench/out/agentevals.verdicts.jsonl ]] && compare_args+=(--agentevals bench/out/agentevals.verdicts.jsonl)
[[ -s bench/out/promptfoo.verdicts.jsonl ]] && compare_args+=(--promptfoo bench/out/promptfoo.verdicts.jsonl)
python3 bench/compare.py "${compare_args[@]}" --out bench/out/agreement.md || note "verdict comparison failed"

cut -d' ' -f1-3 /proc/loadavg >bench/out/loadavg.end
python3 bench/report.py --samples "$samples" --figures "$figures" --notes "$notes" \
  --agreement bench/out/agreement.md --quick "$QUICK" --jobs "$JOBS" \
  --native-stats "$data/native.stats" --agentevals-stats "$data/agentevals.stats" \
  --tau-stats "$data/tau.stats" --rules-split bench/out/rules-split.tsv --loadavg bench/out/loadavg.tsv \
  --inputs "$inputs" --guard "$guard_tsv" --python "$python_txt" --score-large "$score_large_txt" \
  --score-large-calls "$score_large_calls" --dask "$dask_txt" \
  --out bench/out/results.md --targets bench/out/targets.md
say "wrote bench/out/results.md ($(( SECONDS / 60 )) min $(( SECONDS % 60 )) s)"
cat bench/out/results.md
echo
cat bench/out/targets.md
