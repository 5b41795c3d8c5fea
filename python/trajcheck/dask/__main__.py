"""python3 -m trajcheck.dask check|score …: `trajcheck check` and `trajcheck score` on a Dask
cluster, with the same options and output, plus --scheduler, --partition-size and --out-dir."""
import argparse
import os
import sys

from . import DEFAULT_PARTITION_SIZE, check_options, run, score_options

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _size(text: str) -> int:
    t = text.strip().lower().rstrip("b").rstrip("i")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        n = int(float(t[: len(t) - len(unit)]) * _UNITS[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected a size in bytes (e.g. 65536, 64M, 1G)")
    if n < 1:
        raise argparse.ArgumentTypeError(f"'{text}': must be positive")
    return n


def _fraction(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = -1.0
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a number in [0, 1]")
    return x


def _color(mode: str, stream) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    return stream.isatty() and "NO_COLOR" not in os.environ


def _common(p: argparse.ArgumentParser):
    p.add_argument("traces", nargs="+", help="trace files (.jsonl, .json), directories or globs")
    p.add_argument("--input-format", default="auto", choices=["auto", "native", "openai", "anthropic", "otel", "list"])
    p.add_argument("--alias", action="append", default=[], help="OBSERVED=CANONICAL tool-name alias (repeatable)")
    p.add_argument("--error-pattern", action="append", default=[], help="RE2 pattern marking a tool result an error")
    p.add_argument("--context", action="append", default=[], help="KEY=VALUE context override (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="threads per task (default 1: Dask runs the tasks)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    p.add_argument("--color", default="auto", choices=["auto", "always", "never"])
    p.add_argument("--scheduler", help="address of the Dask scheduler (default: start a local cluster)")
    p.add_argument("--direct-to-workers", action="store_true",
                   help="with --scheduler: fetch each task's output from its worker, not through the scheduler")
    p.add_argument("--spool-dir",
                   help="with --scheduler: a directory every worker and this process see at the same path; "
                        "the tasks' per-trace output goes through files there instead of the network")
    p.add_argument("--partition-size", type=_size, default=DEFAULT_PARTITION_SIZE,
                   help="bytes of a JSONL file per task (default 64M)")
    p.add_argument("--out-dir", help="write per-trace output to part files in this directory (text, jsonl)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m trajcheck.dask",
                                 description="trajcheck check and score on a Dask cluster")
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="check traces against rules files")
    c.add_argument("-r", "--rules", action="append", required=True, help="rules file (repeatable)")
    c.add_argument("--format", default="text", choices=["text", "json", "jsonl", "junit", "markdown"])
    c.add_argument("--fail-on", default="error", choices=["critical", "error", "warning", "info", "never"])
    c.add_argument("--catalog", default="", help="tool catalog JSON (overrides the files' catalog line)")
    c.add_argument("--allow-no-rules", action="store_true",
                   help="check even when the rules files hold no rules (every trace passes)")
    _common(c)
    s = sub.add_parser("score", help="score actual trajectories against expected ones")
    s.add_argument("--format", default="text", choices=["text", "json", "jsonl"])
    s.add_argument("--selection", default="jaccard", choices=["jaccard", "recall", "precision", "f1"])
    s.add_argument("--multiset", action="store_true", help="count repeated calls in selection")
    s.add_argument("--weights", default="0.6,0.4", help="SELECTION,ORDERING weights of overall")
    s.add_argument("--min-order-length", type=int, default=0)
    s.add_argument("--tool-args", default="exact", choices=["exact", "ignore", "subset", "superset"])
    s.add_argument("--tool-args-for", action="append", default=[], help="NAME=MODE for one tool (repeatable)")
    for m in ("overall", "selection", "ordering", "arguments"):
        s.add_argument(f"--min-{m}", type=_fraction, metavar="X", help=f"exit 1 when the mean {m} is below X")
    s.add_argument("--per-record", action="store_true", help="apply the --min-* thresholds to every record")
    _common(s)
    a = ap.parse_args(argv)

    reading = dict(input_format=a.input_format, aliases=a.alias, error_patterns=a.error_pattern, context=a.context)
    if a.command == "check":
        options = check_options(a.rules, format=a.format, fail_on=a.fail_on, catalog=a.catalog, quiet=a.quiet,
                                color=_color(a.color, sys.stdout), stderr_color=_color(a.color, sys.stderr),
                                jobs=a.jobs, allow_no_rules=a.allow_no_rules, **reading)
    else:
        options = score_options(format=a.format, selection=a.selection, multiset=a.multiset, weights=a.weights,
                                min_order_length=a.min_order_length, tool_args=a.tool_args,
                                tool_args_for=a.tool_args_for, min_overall=a.min_overall,
                                min_selection=a.min_selection, min_ordering=a.min_ordering,
                                min_arguments=a.min_arguments, per_record=a.per_record, quiet=a.quiet,
                                jobs=a.jobs, **reading)
    client = None
    if a.scheduler:
        from distributed import Client
        client = Client(a.scheduler, direct_to_workers=a.direct_to_workers or None)
    try:
        status, _, _ = run(a.command, options, a.traces, client, partition_size=a.partition_size,
                           out_dir=a.out_dir, spool_dir=a.spool_dir)
    finally:
        if client is not None:
            client.close()
    return status


if __name__ == "__main__":
    code = main()
    # Everything is written; leave without the interpreter's teardown, in which Dask's event
    # loop may log timeouts of connections it is closing (noise after the report, on a busy
    # machine).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
