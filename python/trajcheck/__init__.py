"""trajcheck: check AI-agent trajectories against rules and score their tool use.

    import trajcheck
    rules = trajcheck.load_rules("rules/refunds.rules")
    report = rules.check({"trace_id": "t1", "steps": [...]})   # any trace format, or JSON text
    assert report.passed, str(report)                           # str(): as `trajcheck check` prints it

Everything is computed by the C++ library the ``trajcheck`` command is built on, so results
equal the command line's. A :class:`Rules` object is immutable and may be shared by threads;
checking releases the GIL.
"""
import functools as _functools
import inspect as _inspect
import json as _json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._types import (Blocked, Decision, Diagnostic, Obligation, OptionError, Result, RulesError, SuiteError,
                     TraceError, Violation)
from . import _native
from ._native import FileRun, Report

__all__ = [
    "Blocked", "Decision", "Diagnostic", "FileRun", "Monitor", "Obligation", "OptionError", "Report", "Result",
    "Rules", "RulesError", "TraceError", "SuiteError", "Violation", "assert_satisfies", "assert_violates", "compile",
    "eval_suite", "load_rules", "normalize", "score",
]
__version__ = "0.1.0"

Trace = Union[Mapping[str, Any], Sequence[Any], str, bytes]


def _encode(value: Any) -> str:
    """JSON text of a Python value, as json.dumps(separators=(",", ":"), ensure_ascii=False)."""
    return _native.dumps(value).decode()


def _reading(input_format: str, aliases: Union[Mapping[str, str], Iterable[str], None],
             error_patterns: Iterable[str], context: Optional[Mapping[str, Any]]):
    if aliases is None:
        alias_list: List[str] = []
    elif isinstance(aliases, Mapping):
        alias_list = [f"{k}={v}" for k, v in aliases.items()]
    else:
        alias_list = list(aliases)
    ctx = [f"{k}={_encode(v)}" for k, v in (context or {}).items()]
    return input_format, alias_list, list(error_patterns), ctx


class Rules:
    """Compiled rules files (several compile together: rule ids, aliases and the tool catalog
    as ``trajcheck check -r A -r B`` uses them). Immutable; share it between threads."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Rules"):
        self._native = native

    @property
    def rules(self) -> List[str]:
        """The rule names, in the order results list them."""
        return self._native.rule_names

    @property
    def files(self) -> List[str]:
        """The rules files (or source names) compiled, in order."""
        return self._native.files

    def check(self, trace: Trace, *, fail_on: str = "error") -> Report:
        """Checks one trace: a dict or list in any format ``trajcheck`` reads (native, OpenAI or
        Anthropic chat, OpenTelemetry spans, a tool list), or its JSON text (str or bytes).

        ``fail_on`` (``critical|error|warning|info|never``) decides ``report.passed``. Raises
        :class:`TraceError` (a ``ValueError``) with the reader's located message when the trace
        is rejected."""
        return self._native.check(trace, fail_on)

    def check_file(self, path: str, *more_paths: str, jobs: int = 0, fail_on: str = "error") -> FileRun:
        """Checks every record of files or directories (``.jsonl``, ``.json``, compressed, ``-``
        for standard input) like ``trajcheck check``, on ``jobs`` threads (0: every core), and
        yields one :class:`Report` per trace in input order. A rejected record is yielded as a
        report with ``rejected`` set and ``error`` its message; after the last one, the iterator's
        ``summary`` holds the run's counters."""
        if jobs < 0:
            raise OptionError(f"jobs must be 0 (every core) or more, not {jobs}")
        return self._native.check_file([str(path)] + [str(p) for p in more_paths], jobs, fail_on)

    def monitor(self, context: Optional[Mapping[str, Any]] = None) -> "Monitor":
        """A :class:`Monitor` for one trace about to run (guard mode); ``context`` is the
        trace's context object (``context.*`` in rules)."""
        return Monitor(self, context)

    def decide(self, tool: str, arguments: Optional[Mapping[str, Any]] = None, history: Optional[Trace] = None, *,
               context: Optional[Mapping[str, Any]] = None) -> Decision:
        """Whether the tool call may be made now, after ``history``: the calls (and messages,
        approvals…) made so far, as a trace in any format :meth:`check` reads — a native trace
        dict, a list of native steps, OpenAI or Anthropic messages, Inspect or AgentDojo
        messages. The :class:`Decision` is ``allowed``, or names the violations the call would
        make final (``decision.message`` is the first rule's message): exactly what a
        :class:`Monitor` that observed the history would answer for the call. ``context`` is
        the trace's context (else the history's own). Stateless; for a running agent a
        :class:`Monitor` is cheaper (the history is read again at each call here). Raises
        :class:`TraceError` when the history cannot be read."""
        mon = Monitor(self, context)
        if history is not None:
            mon.replay(history)
        return mon.check_call(tool, arguments)

    def __repr__(self) -> str:
        return f"<trajcheck.Rules {', '.join(self.files)}: {len(self.rules)} rules>"


def _jsonable(value: Any) -> Any:
    try:
        _encode(value)
        return value
    except (TypeError, ValueError):
        return str(value)


class Monitor:
    """The rules enforced while one trace is being made (guard mode).

        mon = rules.monitor(context={"user": "u1"})
        decision = mon.check_call("refund_order", {"order_id": "o1"})
        if not decision.allowed: ...                      # decision.message, decision.violations
        mon.observe({"type": "tool_call", "tool": "refund_order", "arguments": {...}, "result": ...})
        report = mon.finish()                             # what rules.check gives for the steps

    Steps are native trace steps (dicts as ``trajcheck`` reads them, or their JSON text).
    ``observe`` returns the violations a step made final: those no later step can undo;
    ``check`` / ``check_call`` say what observing a step would report, without taking it.
    What only the end of the trace can show (``followed by``, ``at least``) is in
    ``pending()`` until ``finish()``. A monitor belongs to one thread."""

    __slots__ = ("_native", "rules")

    def __init__(self, rules: Rules, context: Optional[Mapping[str, Any]] = None):
        self.rules = rules
        self._native = _native.Monitor(rules._native, None if context is None else dict(context))

    def check(self, step: Union[Mapping[str, Any], str, bytes]) -> Decision:
        """The decision on a step before it is taken; the monitor's state is unchanged."""
        return Decision(self._native.check(step))

    def check_call(self, tool: str, arguments: Optional[Mapping[str, Any]] = None) -> Decision:
        """The decision on a tool call about to be made (no result yet)."""
        return self.check({"type": "tool_call", "tool": tool, "arguments": dict(arguments or {})})

    def observe(self, step: Union[Mapping[str, Any], str, bytes]) -> List[Violation]:
        """Takes the step as the trace's next; returns the violations it made final."""
        return self._native.observe(step)

    def replay(self, history: Trace) -> List[Violation]:
        """Observes every step of ``history`` (a trace in any format :meth:`Rules.check` reads,
        or a list of native steps), in order; returns the violations they made final. A monitor
        made without a context that has observed nothing takes the history's context."""
        if isinstance(history, (list, tuple)) and history and all(
                isinstance(s, Mapping) and "type" in s and "role" not in s for s in history):
            history = {"trace_id": "history", "steps": list(history)}
        return self._native.replay(history)

    def observe_call(self, tool: str, arguments: Optional[Mapping[str, Any]] = None, result: Any = None,
                     failed: bool = False) -> List[Violation]:
        """observe() for a tool call that was made: its result, and whether it failed."""
        step: Dict[str, Any] = {"type": "tool_call", "tool": tool, "arguments": dict(arguments or {})}
        if result is not None:
            step["result"] = _jsonable(result)
        if failed:
            step["status"] = "error"
        return self.observe(step)

    def pending(self) -> List[Obligation]:
        """The obligations still open (what the trace ending now would violate)."""
        return self._native.pending()

    def finish(self, *, fail_on: str = "error") -> Report:
        """Ends the trace: the :class:`Report` ``rules.check`` gives for the steps observed."""
        return self._native.finish(fail_on)

    @property
    def steps(self) -> int:
        """The number of steps observed."""
        return self._native.steps

    def guard(self, func: Optional[Callable[..., Any]] = None, *, tool: Optional[str] = None) -> Any:
        """Wraps a plain tool function (``@mon.guard`` or ``mon.guard(f, tool="name")``): each
        call is checked first and raises :class:`Blocked` with the rule's message when denied;
        an allowed call runs and is observed with its result (or, when it raises, as a failed
        call, and the exception propagates). The arguments are the function's parameters by
        name; the tool name is ``tool`` or the function's name."""
        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            name = tool or f.__name__
            signature = _inspect.signature(f)

            @_functools.wraps(f)
            def guarded(*args: Any, **kwargs: Any) -> Any:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = {k: _jsonable(v) for k, v in bound.arguments.items()}
                decision = self.check_call(name, arguments)
                if not decision.allowed:
                    raise Blocked(name, arguments, decision)
                try:
                    result = f(*args, **kwargs)
                except Exception as e:
                    self.observe_call(name, arguments, f"{type(e).__name__}: {e}", failed=True)
                    raise
                self.observe_call(name, arguments, result)
                return result
            return guarded
        return wrap(func) if func is not None else wrap

    def __repr__(self) -> str:
        return f"<trajcheck.Monitor {self.steps} steps>"


def compile(text: str, name: str = "<rules>", *, catalog: Optional[str] = None, input_format: str = "auto",
            aliases: Union[Mapping[str, str], Iterable[str], None] = None, error_patterns: Iterable[str] = (),
            context: Optional[Mapping[str, Any]] = None) -> Rules:
    """Compiles rules text; ``name`` labels its diagnostics and rule sources.

    ``catalog`` is a tool catalog file (``--catalog``); ``input_format``, ``aliases``
    (``{"observed": "canonical"}`` or ``["observed=canonical"]``), ``error_patterns`` (RE2 over a
    tool result's text) and ``context`` (``--context KEY=VALUE``) are how traces are read, as the
    command-line options of the same names. Raises :class:`RulesError`."""
    return Rules(_native.compile_sources([(name, text)], catalog or "",
                                         *_reading(input_format, aliases, error_patterns, context)))


def load_rules(path: str, *more_paths: str, catalog: Optional[str] = None, input_format: str = "auto",
               aliases: Union[Mapping[str, str], Iterable[str], None] = None, error_patterns: Iterable[str] = (),
               context: Optional[Mapping[str, Any]] = None) -> Rules:
    """Reads and compiles one or more rules files together (``-r path -r more…``); the
    keywords are those of :func:`compile`. Raises :class:`RulesError`, also for a file that
    cannot be read."""
    paths = [str(path)] + [str(p) for p in more_paths]
    return Rules(_native.load_files(paths, catalog or "", *_reading(input_format, aliases, error_patterns, context)))


def normalize(trace: Trace, *, input_format: str = "auto",
              aliases: Union[Mapping[str, str], Iterable[str], None] = None, error_patterns: Iterable[str] = (),
              context: Optional[Mapping[str, Any]] = None) -> dict:
    """The normalized trajectory of one trace, as ``trajcheck normalize`` prints it (a dict:
    ``trace_id``, ``steps``, and ``context``/``metadata`` when present). Raises
    :class:`TraceError`."""
    return _json.loads(_native.normalize(trace, *_reading(input_format, aliases, error_patterns, context)))


def _failure(text: str, report: Report) -> AssertionError:
    return AssertionError(f"{text}\n{report}")


def assert_satisfies(trace: Trace, rules: Rules, *, fail_on: str = "info") -> Report:
    """Asserts that no rule is violated (at or above ``fail_on``: by default none at all). The
    failure message lists the violated rules with their witness steps, as ``trajcheck check``
    prints them. Returns the report."""
    __tracebackhide__ = True
    report = rules.check(trace, fail_on=fail_on)
    if not report.passed:
        names = ", ".join(sorted({r.rule for r in report.violations}))
        raise _failure(f"trace {report.trace_id} violates {names}", report)
    return report


def assert_violates(trace: Trace, rules: Rules, rule: str) -> Report:
    """Asserts that the rule named ``rule`` is violated by the trace. The failure message says
    how the rule came out and lists the trace's steps and any other violations. Returns the
    report."""
    __tracebackhide__ = True
    if rule not in rules.rules:
        raise AssertionError(f"no rule named {rule!r}; the rules are: " + ", ".join(map(repr, rules.rules)))
    report = rules.check(trace)
    statuses = [r.status for r in report.results if r.rule == rule]
    if "violated" in statuses:
        return report
    status = "satisfied" if "satisfied" in statuses else "vacuous"
    steps = "\n".join(f"    #{i} {report.describe_step(i)}" for i in range(report.steps)) or "    (no steps)"
    text = f"rule {rule!r} is {status} on trace {report.trace_id} ({report.steps} steps):\n{steps}"
    if report.violations:
        text += f"\nother rules it violates:\n{report}"
    raise AssertionError(text)


def score(*, expected: Any, actual: Trace, id: Any = None, selection: str = "jaccard", multiset: bool = False,
          weights: Sequence[float] = (0.6, 0.4), min_order_length: int = 0, tool_args: str = "exact",
          tool_args_for: Optional[Mapping[str, str]] = None, input_format: str = "auto",
          aliases: Union[Mapping[str, str], Iterable[str], None] = None,
          error_patterns: Iterable[str] = ()) -> dict:
    """Scores the tool use of ``actual`` against ``expected``; keyword-only, so the sides cannot
    be swapped. Returns a dict equal to the record ``trajcheck score --format jsonl`` prints
    for ``{"id": id, "actual": actual, "expected": expected}``: ``selection``, ``ordering``,
    ``overall``, ``missing``, ``extra``, ``duplicates``, ``match``, ``arguments``,
    ``explanation``.

    ``actual`` is a trace as :meth:`Rules.check` takes it. ``expected`` is a trace, a list of
    tool names, or a ``str`` PATH of the rule language (``"a -> {b, c}"``); JSON text of a trace
    is given as ``bytes``. The keywords are the ``score`` options of the same names
    (``weights`` = ``--weights S,O``, ``tool_args_for`` = ``{"tool": "mode"}``). Raises
    :class:`TraceError` for a side that cannot be read, :class:`OptionError` for a bad option."""
    def side(value: Any, what: str) -> str:
        if isinstance(value, str):
            return _encode(value) if what == "expected" else value  # expected: a PATH
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode()
        if isinstance(value, (dict, list, tuple)):
            return _encode(value)
        raise TypeError(f"{what}: expected a dict, a list or JSON text (str or bytes), not {type(value).__name__}")

    record = '"actual":' + side(actual, "actual") + ',"expected":' + side(expected, "expected") + "}"
    record = ('{"id":' + _encode(id) + "," if id is not None else "{") + record
    s, o = weights
    line = _native.score(record.encode(), selection, bool(multiset), float(s), float(o), int(min_order_length),
                         tool_args, list((tool_args_for or {}).items()), input_format,
                         *_reading(input_format, aliases, error_patterns, None)[1:3])
    return _json.loads(line)


def eval_suite(path: str, runs: Optional[Sequence[str]] = None, baseline: Optional[str] = None, *, jobs: int = 0,
               input_format: str = "auto", aliases: Union[Mapping[str, str], Iterable[str], None] = None,
               error_patterns: Iterable[str] = (), grader_cache: Optional[str] = None) -> dict:
    """Runs an evaluation suite like ``trajcheck eval SUITE --format json`` and returns that
    report as a dict (cases, the six dimensions overall, per segment and per split, gates).
    ``runs`` replaces the suite's run files (``--runs``), ``baseline`` its baseline report
    (``--baseline``); ``jobs`` threads (0: every core); ``grader_cache`` the folder of the
    graders' cached answers (``--grader-cache``; ``"-"``: none). Rejected run records are counted in the
    report (``rejected``), as the command line counts them. Raises :class:`SuiteError` when the
    suite cannot be run (a suite or rules file that does not compile, unreadable cases)."""
    if jobs < 0:
        raise OptionError(f"jobs must be 0 (every core) or more, not {jobs}")
    fmt, alias_list, patterns, _ = _reading(input_format, aliases, error_patterns, None)
    return _json.loads(_native.eval_suite(str(path), [str(r) for r in (runs or [])], str(baseline or ""), jobs,
                                          fmt, alias_list, patterns, str(grader_cache or "")))
