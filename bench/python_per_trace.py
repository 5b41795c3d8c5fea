"""Python-per-trace cost against the command line's (bench/python.sh runs it).

    python3 bench/python_per_trace.py CLI RULES TRACES.jsonl [RUNS]

CPU time (user + system: the machine may be shared, wall time would measure the others too) on
one thread, best of RUNS:
  cli          `trajcheck check -j 1 --format jsonl -r RULES TRACES` (wall time / traces)
  str          rules.check(line) for every line of TRACES, the report's verdict read
  dict         rules.check(d) for every line already parsed by json.loads (parse not timed)
  check_file   list(rules.check_file(TRACES, jobs=1)), every report's verdict read
and prints one line per figure: microseconds per trace and the ratio to the CLI.
"""
import json
import resource
import subprocess
import sys

import trajcheck


def cpu():
    """CPU seconds of this process and of its waited-for children so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def best(runs, fn):
    times = []
    for _ in range(runs):
        t0 = cpu()
        fn()
        times.append(cpu() - t0)
    return min(times)


def main():
    cli, rules_path, traces = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    with open(traces, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    dicts = [json.loads(line) for line in lines]
    n = len(lines)
    rules = trajcheck.load_rules(rules_path)

    def run_cli():
        subprocess.run([cli, "check", "-j", "1", "--format", "jsonl", "-r", rules_path, traces],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    def per_str():
        check = rules.check
        failed = 0
        for line in lines:
            failed += not check(line).passed
        return failed

    def per_dict():
        check = rules.check
        failed = 0
        for d in dicts:
            failed += not check(d).passed
        return failed

    def from_file():
        return sum(not r.passed for r in rules.check_file(traces, jobs=1))

    assert per_str() == per_dict() == from_file()
    base = best(runs, run_cli)
    print(f"traces {n}, {sum(map(len, lines)) / n:.0f} bytes a trace, {len(rules.rules)} rules")
    for name, fn in [("cli", run_cli), ("str", per_str), ("dict", per_dict), ("check_file", from_file)]:
        t = base if name == "cli" else best(runs, fn)
        print(f"{name:<11} {t / n * 1e6:8.2f} us/trace  {t / base:5.2f}x cli")


if __name__ == "__main__":
    main()
