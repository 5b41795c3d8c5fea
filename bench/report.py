#!/usr/bin/env python3
# Turns the raw samples of bench/run.sh into bench/out/results.md: medians, throughput, ratios
# to the floor and to the peers measured in the same run, peak RSS, scaling fits, per-rule
# cost, the verdict agreement written by compare.py, and bench/out/targets.md: every
# performance target of docs/performance.md with PASS or FAIL and the measured ratio.
import argparse
import csv
import os
import re
import statistics
import subprocess
from datetime import datetime, timezone


def read_text(path):
    """The file's text, or "" when no path was given or the file is absent."""
    if not path or not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def read_tsv(path, names):
    rows = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for r in csv.reader(f, delimiter="\t"):
                if r:
                    rows.append(dict(zip(names, r)))
    return rows


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def machine():
    model = "?"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    with open("/proc/loadavg", encoding="utf-8") as f:
        load = " ".join(f.read().split()[:3])
    start = ""
    if os.path.exists("bench/out/loadavg.start"):
        with open("bench/out/loadavg.start", encoding="utf-8") as f:
            start = " ".join(f.read().split()[:3])
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    try:
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        node = "absent"
    return model, os.cpu_count(), mem, load, start, commit, node


class Figure:
    def __init__(self, meta, samples):
        self.group = meta["group"]
        self.name = meta["name"]
        self.bytes = num(meta["bytes"]) or 0
        self.records = num(meta["records"]) or 0
        self.steps = num(meta["steps"]) or 0
        self.rules = num(meta["rules"]) or 0
        self.note = meta["note"]
        ok = [s for s in samples if s["ok"] == "1"]
        self.failed = [s for s in samples if s not in ok]
        walls = [float(s["wall"]) for s in ok]
        self.runs = len(walls)
        self.median = statistics.median(walls) if walls else None
        self.min = min(walls) if walls else None
        self.max = max(walls) if walls else None
        self.cpu_by_round = {int(s["run"]): float(s["cpu"]) for s in ok if num(s.get("cpu")) is not None}
        self.cpu = statistics.median(self.cpu_by_round.values()) if self.cpu_by_round else None
        rss = [int(s["rss"]) for s in ok if s["rss"].isdigit()]
        self.rss_mb = max(rss) / 1024 if rss else None

    @property
    def ok(self):
        return self.median is not None and self.median > 0

    def mbps(self):
        return self.bytes / 1e6 / self.median if self.ok else None

    def per_s(self, what):
        return what / self.median if self.ok else None

    def cost(self):
        """CPU seconds (user + system) when known and non-zero, else wall seconds: what the
        single-thread comparisons use, since CPU time moves far less with the machine's load."""
        return self.cpu if self.cpu else self.median

    def cpu_mbps(self):
        return self.bytes / 1e6 / self.cost() if self.ok else None

    def cpu_per_s(self, what):
        return what / self.cost() if self.ok else None


def fmt(x, digits=1, suffix=""):
    if x is None:
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}{suffix}"
    return f"{x:.{digits}f}{suffix}"


def spread(f):
    if not f.ok:
        return "—"
    return f"{f.median:.3f} ({f.min:.3f}–{f.max:.3f}, n={f.runs})"


def cpu(f):
    return "—" if not f.ok or f.cpu is None else f"{f.cpu:.3f}"


def linfit(xs, ys):
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys))
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return a, b, r2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--figures", required=True)
    ap.add_argument("--notes")
    ap.add_argument("--agreement")
    ap.add_argument("--native-stats")
    ap.add_argument("--agentevals-stats")
    ap.add_argument("--quick", default="0")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--tau-stats")
    ap.add_argument("--rules-split")
    ap.add_argument("--loadavg")
    ap.add_argument("--inputs", help="where the timed inputs were read from")
    ap.add_argument("--guard", help="bench_guard_latency runs: mode, p50, p90, p99, p99.9 (ns) per line")
    ap.add_argument("--python", help="bench/python_per_trace.py's output")
    ap.add_argument("--score-large", help="bench/score_large.sh's output")
    ap.add_argument("--score-large-calls", default="100000")
    ap.add_argument("--dask", help="bench/dask_bench.py's output")
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets")
    a = ap.parse_args()

    samples = read_tsv(a.samples, ["group", "name", "run", "wall", "rss", "rc", "ok", "cpu"])
    metas = read_tsv(a.figures, ["group", "name", "bytes", "records", "steps", "rules", "note"])
    figs = {}
    for m in metas:
        figs[(m["group"], m["name"])] = Figure(
            m, [s for s in samples if s["group"] == m["group"] and s["name"] == m["name"]])

    def get(group, name):
        f = figs.get((group, name))
        return f if f and f.ok else None

    jobs = a.jobs
    model, cpus, mem, load, load_start, commit, node = machine()
    out = []
    w = out.append
    w("# trajcheck benchmark results\n")
    w(f"Generated by `bench/run.sh` on {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
      f"commit `{commit}`, {'QUICK (small data, smoke run)' if a.quick == '1' else 'full data'}.\n")
    w(f"Machine: {cpus} cores, {model}, {mem} RAM; Node {node}. Load average at start {load_start or '?'}, "
      f"at the end {load} (the machine is shared: compare figures of one run, side by side, not across runs).\n")
    w("Times are medians over the runs shown, end to end (process start, reading, parsing, output): wall-clock "
      "seconds (min–max, n) and CPU seconds (user + system, all threads). Throughput columns use wall time; "
      "the single-thread ratios marked *CPU* divide CPU times, which the load of a shared machine moves much "
      "less than wall time. Peak RSS is the largest resident set of the process, and CPU times are to the microsecond (`bench_rusage`: the `wait4` resource use of the run).\n")
    for label, path in (("native traces", a.native_stats), ("agentevals records", a.agentevals_stats),
                        ("tau-bench-like traces", a.tau_stats)):
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                w(f"- data, {label}: `{f.read().strip()}`")
    if a.inputs:
        w(f"- inputs timed from: {a.inputs}")
    w("")

    # ---------------------------------------------------------------- check
    floor = get("check", "floor")
    vfloor = get("check", "floor-validate")
    w("## Check: native JSONL traces, `bench/bench.rules` (20 rules)\n")
    w("*floor* parses with simdjson On-Demand and reads only the tool names, so it never checks the bytes of "
      "values it skips; *floor-validate* parses every record with simdjson's DOM parser, which checks all of "
      "them, as a reader that rejects invalid JSON (TRACES.md) must.\n")
    w("| figure | what | wall s | CPU s | MB/s | traces/s | steps/s | × floor (wall) | × floor (CPU) | × floor-validate (CPU) | peak RSS MB |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for (g, n), f in figs.items():
        if g != "check":
            continue
        ratio = f.mbps() / floor.mbps() if f.ok and floor and f is not floor else None
        cratio = f.cpu_mbps() / floor.cpu_mbps() if f.ok and floor and f is not floor else None
        vratio = f.cpu_mbps() / vfloor.cpu_mbps() if f.ok and vfloor and f is not vfloor else None
        w(f"| {n} | {f.note} | {spread(f)} | {cpu(f)} | {fmt(f.mbps())} | {fmt(f.per_s(f.records))} | "
          f"{fmt(f.per_s(f.steps))} | {fmt(ratio, 2)} | {fmt(cratio, 2)} | {fmt(vratio, 2)} | {fmt(f.rss_mb)} |")
    w("")

    # ---------------------------------------------------------------- tau-bench-like traces
    tfloor = get("tau", "floor")
    tvfloor = get("tau", "floor-validate")
    if any(g == "tau" for g, _ in figs):
        w("## Check: tau-bench-like retail traces (`bench/gen_tau.py`), `bench/tau.rules` (20 rules)\n")
        w("| figure | what | wall s | CPU s | MB/s | steps/s | × floor-validate (wall) | × floor-validate (CPU) | peak RSS MB |")
        w("|---|---|---|---|---|---|---|---|---|")
        for (g, n), f in figs.items():
            if g != "tau":
                continue
            vr = f.mbps() / tvfloor.mbps() if f.ok and tvfloor and f is not tvfloor else None
            vc = f.cpu_mbps() / tvfloor.cpu_mbps() if f.ok and tvfloor and f is not tvfloor else None
            w(f"| {n} | {f.note} | {spread(f)} | {cpu(f)} | {fmt(f.mbps())} | {fmt(f.per_s(f.steps))} | "
              f"{fmt(vr, 2)} | {fmt(vc, 2)} | {fmt(f.rss_mb)} |")
        w("")

    # ---------------------------------------------------------------- per-rule cost
    per_rule = []
    base = get("rule", "r0")
    if base and a.rules_split and os.path.exists(a.rules_split):
        with open(a.rules_split, encoding="utf-8") as fh:
            labels = [l.rstrip("\n").split("\t", 1) for l in fh if "\t" in l]
        w("## Cost of each rule alone (`bench/tau.rules`, 1 thread, the tau-bench-like traces)\n")
        w(f"Each rule of `bench/tau.rules` checked alone over {base.bytes / 1e6:,.0f} MB ({int(base.steps):,} steps). "
          f"Its own time is what it costs over the trivial rule (a `forbid` of a tool no trace calls: reading, "
          f"validating and building the traces, {base.cost():.3f} s CPU), which runs right before it in every "
          f"round: *own CPU s* is the median of the {base.runs} per-round differences, *spread* their lowest and "
          f"highest. *× reading* is the rule's own time over that reading time.\n")
        w("| # | rule | CPU s | own CPU s | spread | own ns/step | × reading |")
        w("|---|---|---|---|---|---|---|")
        for k, label in labels:
            f = get("rule", f"r{k}")
            if not f:
                continue
            own = lo = hi = None
            pair = get("rule", f"b{k}") if k != "0" else None
            diffs = [f.cpu_by_round[r] - pair.cpu_by_round[r] for r in sorted(f.cpu_by_round)
                     if pair and r in pair.cpu_by_round]
            if diffs:
                own, lo, hi = statistics.median(diffs), min(diffs), max(diffs)
                per_rule.append((own, label))
            cell = label.replace("|", "\\|")
            w(f"| {k} | `{cell}` | {cpu(f)} | {fmt(own, 3)} | "
              f"{f'{lo:.3f}–{hi:.3f}' if diffs else '—'} | "
              f"{fmt(own / f.steps * 1e9 if own is not None and f.steps else None)} | "
              f"{fmt(own / base.cost() if own is not None and base.cost() else None, 2)} |")
        w("")

    # ---------------------------------------------------------------- score
    sfloor = get("score", "floor")
    ae = get("score", "agentevals")
    pf = get("score", "promptfoo")
    w("## Score: agentevals-format records (`outputs` / `reference_outputs`)\n")
    w("| figure | what | wall s | CPU s | records/s | MB/s | × floor | × agentevals (wall) | × agentevals (CPU) | × promptfoo (wall) | peak RSS MB |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for (g, n), f in figs.items():
        if g != "score":
            continue
        rps = f.per_s(f.records)
        r_floor = f.mbps() / sfloor.mbps() if f.ok and sfloor and f is not sfloor else None
        r_ae = rps / ae.per_s(ae.records) if f.ok and ae and f is not ae else None
        r_pf = rps / pf.per_s(pf.records) if f.ok and pf and f is not pf else None
        r_aec = f.cpu_per_s(f.records) / ae.cpu_per_s(ae.records) if f.ok and ae and f is not ae else None
        w(f"| {n} | {f.note} | {spread(f)} | {cpu(f)} | {fmt(rps)} | {fmt(f.mbps())} | {fmt(r_floor, 2)} | "
          f"{fmt(r_ae, 2)} | {fmt(r_aec, 2)} | {fmt(r_pf, 2)} | {fmt(f.rss_mb)} |")
    for peer in ("agentevals", "promptfoo"):
        path = f"bench/out/score-{peer}.stderr"
        if ("score", peer) in figs and os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                last = [l for l in fh.read().splitlines() if l.startswith("{")]
            if last:
                w(f"\n{peer} driver (last run): `{last[-1]}` (import_s: loading the package; process_s: the records).")
    w("")

    # ---------------------------------------------------------------- targets
    j1 = get("check", "check-j1")
    jn = get("check", f"check-j{jobs}")
    t1 = get("tau", "check-j1")
    tn = get("tau", f"check-j{jobs}")
    s1 = get("score", "score-j1")
    sn = get("score", f"score-j{jobs}")
    tg = []
    tw = tg.append
    tw("## Targets\n")
    tw("Each target with what was measured in this run and PASS / FAIL (*not measured* says why). Ratios "
       "are between medians of figures run interleaved in this run; *CPU* ratios divide user + system time.\n")
    tw("| target | measured | verdict |")
    tw("|---|---|---|")

    def target(label, value, ok, missing_why):
        if value is None:
            tw(f"| {label} | — | not measured: {missing_why} |")
        else:
            tw(f"| {label} | {value} | {'PASS' if ok else 'FAIL'} |")

    for name, c1, vf, fl in (("bench data, `bench/bench.rules`", j1, vfloor, floor),
                             ("tau-bench-like traces, `bench/tau.rules`", t1, tvfloor, tfloor)):
        r = vf.cost() / c1.cost() if c1 and vf and c1.cost() else None
        rw = vf.median / c1.median if c1 and vf else None
        ro = fl.cost() / c1.cost() if c1 and fl and c1.cost() else None
        target(f"check -j1 ≥ 0.75× the validating floor's throughput ({name})",
               None if r is None else f"{r:.2f}× (CPU; wall {rw:.2f}×)" + ("" if ro is None else f"; {ro:.2f}× the On-Demand floor (reference)"),
               r is not None and r >= 0.75, "no check or floor figure")
    for name, c1, cn, cp in (("bench data", j1, jn, get("check", "check-j1-pair")),
                             ("tau-bench-like traces", t1, tn, get("tau", "check-j1-pair"))):
        r = c1.median / cn.median if c1 and cn else None
        ceiling = 2 * c1.median / cp.median if c1 and cp else None
        value = None if r is None else f"{r:.2f}×" + (
            "" if ceiling is None else f" (reference: two -j 1 processes side by side, {ceiling:.2f}×)")
        target(f"check -j {jobs} ≥ 1.85× -j 1 ({name}, wall)", value, r is not None and r >= 1.85,
               "no check figures")
    guard = {}
    if a.guard and os.path.exists(a.guard):
        with open(a.guard, encoding="utf-8") as fh:
            for line in fh:
                f = line.rstrip("\n").split("\t")
                if len(f) == 5 and f[3]:
                    guard.setdefault(f[0], []).append(float(f[3]))
    for mode, label, bound in (("quiet", "alone on its core", 2000), ("busy", "with the other core busy", 3000)):
        runs = sorted(guard.get(mode, []))
        p99 = runs[len(runs) // 2] if runs else None
        target(f"guard decision p99 ≤ {bound / 1000:g} µs, 20 rules, {label} (`bench_guard_latency`, check_call + observe "
               "per step, median of the runs' p99)",
               None if p99 is None else f"{p99 / 1000:.2f} µs (runs: {', '.join(f'{x / 1000:.2f}' for x in runs)})",
               p99 is not None and p99 <= bound, "no bench_guard_latency runs (SKIP_GUARD=1, taskset absent, one core)")
    tr, sv = get("check", "check-j1-trivial"), get("check", "check-j1-seen-never")
    r = sv.cost() / tr.cost() if tr and sv and tr.cost() else None
    target("seen() costs nothing in a trace with no asking call (a never-asking seen() rule ≤ 1.1× the trivial rule, CPU)",
           None if r is None else f"{r:.2f}× ({sv.cost():.2f} s against {tr.cost():.2f} s)", r is not None and r <= 1.1,
           "no seen() figures")
    ours = [f for (g, n), f in figs.items() if f.ok and f.rss_mb is not None
            and ((g in ("check", "score", "tau") and n.split("-")[0] in ("check", "score", "normalize")) or g == "rss")]
    peak = max((f.rss_mb for f in ours), default=None)
    target("peak RSS ≤ 64 MB (check, score, normalize and the input-size series)", None if peak is None else f"{peak:.1f} MB",
           peak is not None and peak <= 64, "no trajcheck figure")
    rss = sorted([f for (g, n), f in figs.items() if g == "rss" and f.ok], key=lambda f: f.bytes)
    if rss:
        lo, hi = min(f.rss_mb for f in rss), max(f.rss_mb for f in rss)
        sizes = ", ".join(f"{f.bytes / 1e6:,.0f} MB → {f.rss_mb:.1f} MB" for f in rss)
        target(f"peak RSS flat from {rss[0].bytes / 1e6:,.0f} MB to {rss[-1].bytes / 1e9:,.1f} GB of input (largest ≤ 1.25× smallest + 5 MB)",
               sizes, hi <= 1.25 * lo + 5, "")
    else:
        target("peak RSS flat from 50 MB to 5 GB of input", None, False, "no input-size figures in this run")
    hostile = sorted([f for (g, n), f in figs.items() if g == "hostile" and f.ok], key=lambda f: f.steps)
    if len(hostile) == 2 and hostile[0].cost():
        r = hostile[1].cost() / hostile[0].cost()
        k = hostile[1].steps / hostile[0].steps
        target(f"linear time on hostile input (one trace of {int(hostile[0].steps):,} and {int(hostile[1].steps):,} steps, "
               f"`bench/hostile.rules`: CPU ratio ≤ 1.5 × {k:.0f}; quadratic would be {k * k:.0f})",
               f"{r:.1f}× ({hostile[0].cost():.2f} s → {hostile[1].cost():.2f} s)", r <= 1.5 * k, "")
    else:
        target("linear time on hostile input", None, False, "no hostile figures in this run")
    steps = sorted([f for (g, n), f in figs.items() if g == "steps" and n.startswith("check-") and f.ok
                    and f.records > 1], key=lambda f: f.bytes / max(f.records, 1))
    if len(steps) >= 2:
        per = [f.cost() / f.steps * 1e9 for f in steps]
        target("check linear in steps (CPU ns per step, traces of "
               f"{int(steps[0].steps / steps[0].records):,} to {int(steps[-1].steps / steps[-1].records):,} steps, max ≤ 2× min)",
               f"{min(per):.0f}–{max(per):.0f} ns/step", max(per) <= 2 * min(per), "")
    else:
        target("check linear in steps", None, False, "no steps-scaling check figures in this run")
    single = sorted([f for (g, n), f in figs.items() if g == "single" and f.ok], key=lambda f: f.steps)
    if len(single) >= 2:
        per = [f.cost() / f.steps * 1e9 for f in single]
        target(f"one trace checks in time proportional to its length ({int(single[0].steps):,} to "
               f"{int(single[-1].steps):,} steps, CPU ns per step, max ≤ 1.3× min)",
               f"{min(per):.0f}–{max(per):.0f} ns/step", max(per) <= 1.3 * min(per), "")
    else:
        target("one trace checks in time proportional to its length", None, False, "no single-trace figures in this run")
    r = s1.cpu_per_s(s1.records) / ae.cpu_per_s(ae.records) if s1 and ae else None
    rw = s1.per_s(s1.records) / ae.per_s(ae.records) if s1 and ae else None
    target("score -j 1 ≥ 10× agentevals (CPU)", None if r is None else f"{r:.1f}× (wall {rw:.1f}×)",
           r is not None and r >= 10, "no score or no agentevals figure (node/npm absent, or SKIP_PEERS=1)")
    r = sn.per_s(sn.records) / ae.per_s(ae.records) if sn and ae else None
    target(f"score -j {jobs} ≥ 18× agentevals (wall)", None if r is None else f"{r:.1f}×", r is not None and r >= 18,
           "no score or no agentevals figure (node/npm absent, or SKIP_PEERS=1)")
    py = {}
    py_text = read_text(a.python)
    for line in py_text.splitlines():
        m = re.match(r"(\w+)\s+([\d.]+) us/trace\s+([\d.]+)x cli", line)
        if m:
            py[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    for name, bound, what in (("dict", 1.25, "`rules.check(dict)`"), ("str", 1.0, "`rules.check(json line)`")):
        v = py.get(name)
        target(f"Python {what} ≤ {bound:g}× the CLI's CPU time per trace (`bench/python_per_trace.py`, bench data, "
               "best of the runs)",
               None if v is None or "cli" not in py else f"{v[1]:.2f}× ({v[0]:.1f} µs a trace; CLI {py['cli'][0]:.1f} µs)",
               v is not None and v[1] <= bound, "no Python figures (SKIP_PYTHON=1, or the package did not build)")
    sl = read_text(a.score_large)
    m = re.search(r"wall ([\d:.]+), user ([\d.]+) s, system ([\d.]+) s, peak RSS (\d+) kB", sl)
    if m:
        wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(m.group(1).split(":"))))
        rss_mb = int(m.group(4)) / 1000
    calls = int(a.score_large_calls)
    target(f"score one record of {calls:,} × {calls:,} calls in under 10 s and 64 MB (`bench/score_large.sh`)",
           None if not m else f"{wall:.2f} s wall, {float(m.group(2)) + float(m.group(3)):.2f} s CPU, {rss_mb:.1f} MB",
           bool(m) and wall < 10 and rss_mb <= 64, "no large score record figure (SKIP_SCORE_LARGE=1, or not scored)")
    dk = read_text(a.dask)
    m = re.search(r"2 workers / 1 worker: ([\d.]+)x", dk)
    same = "output byte for byte the CLI's: yes" in dk
    over = re.search(r"per-task overhead:\s+([\d.-]+) ms", dk)
    target("Dask: 2 workers of 1 thread ≥ 1.7× one worker, verdicts byte for byte the CLI's (`bench/dask_bench.py`, wall)",
           None if not m else f"{float(m.group(1)):.2f}×, output {'the same' if same else 'DIFFERENT'}"
           + ("" if not over else f"; {float(over.group(1)):.0f} ms overhead a task"),
           bool(m) and float(m.group(1)) >= 1.7 and same, "no Dask figures (SKIP_DASK=1, no package or no distributed)")
    # Quietness: the load average before the run, and before each group of figures (which
    # includes this harness's own load from the figure before: up to the -j threads).
    loads = []
    if a.loadavg and os.path.exists(a.loadavg):
        with open(a.loadavg, encoding="utf-8") as fh:
            loads = [l.rstrip("\n").split("\t") for l in fh if "\t" in l]
    if loads:
        first = num(loads[0][1].split()[0]) or 0
        during = max((num(l[1].split()[0]) or 0) for l in loads)
        quiet = first < 0.5 and during <= int(jobs) + 0.5
        tw(f"\nMachine: load average (1 min) {first:.2f} before the run, at most {during:.2f} before a group of figures "
           f"(this harness itself adds up to {jobs}), {load.split()[0]} at the end: "
           + ("**quiet** — the timing verdicts hold." if quiet else
              "**NOT quiet** — other work shared the cores, so the wall-clock verdicts (-j, score -j) are unreliable; "
              "rerun on an idle machine.")
           + " Load before each group: " + ", ".join(f"{g} {v.split()[0]}" for g, v in loads) + ".")
    if per_rule:
        top = sorted(per_rule, reverse=True)[:3]
        tw("\nCostliest rules alone (own CPU s over the tau-bench-like traces): " + "; ".join(f"`{l}` {c:.3f}" for c, l in top) + ".")
    tw("")
    w("\n".join(tg))
    if a.targets:
        with open(a.targets, "w", encoding="utf-8") as fh:
            fh.write("\n".join(tg) + "\n")

    # ---------------------------------------------------------------- scaling
    w("## Scaling in steps per trace (1 thread, same total of steps, 20 rules)\n")
    w("CPU seconds (user + system) of each process; ns/step divides check's CPU time by the steps.\n")
    w("| steps/trace | traces | steps | floor CPU s | check CPU s | check ns/step | ns/(step·rule) | check / floor | check peak RSS MB |")
    w("|---|---|---|---|---|---|---|---|---|")
    names = sorted({n.split("-", 1)[1] for (g, n) in figs if g == "steps"}, key=lambda s: int(s))
    for s in names:
        fl = get("steps", f"floor-{s}")
        ch = get("steps", f"check-{s}")
        base = ch or fl
        if not base:
            continue
        nsps = ch.cost() / ch.steps * 1e9 if ch else None
        nspr = nsps / ch.rules if ch and ch.rules else None
        w(f"| {int(s):,} | {int(base.records):,} | {int(base.steps):,} | {fmt(fl.cost(), 3) if fl else '—'} | "
          f"{fmt(ch.cost(), 3) if ch else '—'} | {fmt(nsps)} | {fmt(nspr, 2)} | "
          f"{fmt(ch.cost() / fl.cost(), 2) if ch and fl else '—'} | {fmt(ch.rss_mb) if ch else '—'} |")
    w("")
    if single:
        w("## One trace, growing (1 thread, 20 rules)\n")
        w("| steps in the trace | bytes | wall s | CPU s | CPU ns/step | peak RSS MB |")
        w("|---|---|---|---|---|---|")
        for f in single:
            w(f"| {int(f.steps):,} | {f.bytes / 1e6:,.0f} MB | {spread(f)} | {cpu(f)} | "
              f"{fmt(f.cost() / f.steps * 1e9)} | {fmt(f.rss_mb)} |")
        w("")
    rules = sorted([f for (g, n), f in figs.items() if g == "rules" and f.ok], key=lambda f: f.rules)
    w("## Scaling in rules (1 thread, the same traces, generated rule files)\n")
    if rules:
        w("| rules | traces | steps | wall s | CPU s | CPU ns/(step·rule) | peak RSS MB |")
        w("|---|---|---|---|---|---|---|")
        for f in rules:
            w(f"| {int(f.rules)} | {int(f.records):,} | {int(f.steps):,} | {spread(f)} | {cpu(f)} | "
              f"{fmt(f.cost() / (f.steps * f.rules) * 1e9, 2)} | {fmt(f.rss_mb)} |")
        fit = linfit([f.rules for f in rules], [f.cost() for f in rules])
        if fit:
            a0, b0, r2 = fit
            st = rules[0].steps
            w(f"\nLeast-squares fit of CPU time: seconds = {a0:.3f} + {b0 * 1000:.3f} ms × rules (R² = {r2:.4f}); the slope is "
              f"{b0 / st * 1e9:.2f} ns per step and rule, the intercept the rule-independent cost (reading, parsing).\n")
    else:
        w("Not measured (no `check` command in this build).\n")

    # ---------------------------------------------------------------- Python, large score, Dask
    for title, text in (("Python per trace (`bench/python_per_trace.py`)", py_text),
                        ("One large score record (`bench/score_large.sh`)", sl),
                        ("Dask: 1 and 2 workers (`bench/dask_bench.py`)", dk)):
        if text.strip():
            w(f"## {title}\n")
            w("```\n" + text.rstrip() + "\n```\n")
    # ---------------------------------------------------------------- notes, agreement
    if a.agreement and os.path.exists(a.agreement):
        with open(a.agreement, encoding="utf-8") as f:
            w(f.read())
    failed = [f for f in figs.values() if f.failed]
    notes = []
    if a.notes and os.path.exists(a.notes):
        with open(a.notes, encoding="utf-8") as f:
            notes = [l.strip() for l in f if l.strip()]
    for f in failed:
        notes.append(f"{f.group}/{f.name}: a run exited {f.failed[0]['rc']} (bench/out/{f.group}-{f.name}.stderr)")
    if notes:
        w("## Not measured / failed\n")
        for n in notes:
            w(f"- {n}")
        w("")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
