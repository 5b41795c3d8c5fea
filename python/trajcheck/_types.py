"""The value and error types of the trajcheck package (re-exported by ``trajcheck``)."""
from typing import Any, Dict, List, NamedTuple


class Diagnostic(NamedTuple):
    """One compiler message about a rules file, as ``trajcheck lint`` prints it.

    ``line`` and ``column`` are 1-based (columns in bytes); both are 0 when the file
    could not be read at all.
    """

    code: str
    severity: str
    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        code = f"[{self.code}]" if self.code else ""
        return f"{where}: {self.severity}{code}: {self.message}"


class Result(NamedTuple):
    """The verdict of one rule on one trace (one per binding for a parametric violation).

    ``status`` is ``satisfied``, ``violated`` or ``vacuous``; ``steps`` are the witness
    step indices of the normalized trace; ``binding`` maps a parametric rule's variables to
    their values; ``source`` is where the rule is written (``file:line:col``).
    """

    rule: str
    severity: str
    status: str
    steps: List[int]
    binding: Dict[str, Any]
    message: str
    source: str
    bindings_dropped: int


class Violation(NamedTuple):
    """A violation a step made final (guard mode): no later step can undo it.

    ``steps`` are the witness steps (indices in the monitored trace) this step made final;
    ``binding`` maps a parametric rule's variable to its value; ``source`` is where the rule
    is written (``file:line:col``).
    """

    rule: str
    severity: str
    message: str
    steps: List[int]
    binding: Dict[str, Any]
    source: str


class Obligation(NamedTuple):
    """A statement the trace ending now would violate (beyond what was reported): an
    unanswered ``followed by``, a ``requires`` with no B yet, ``at least`` not reached, an
    unfinished ``expect``. ``steps`` are the steps the end would name; ``statement`` the
    statement's index within its rule."""

    rule: str
    severity: str
    message: str
    steps: List[int]
    binding: Dict[str, Any]
    source: str
    statement: int


class Decision(NamedTuple):
    """What the rules say about a step before it is taken: ``allowed`` when it would make no
    violation final; else ``violations`` lists them (``bool(decision)`` is ``allowed``)."""

    violations: List[Violation]

    @property
    def allowed(self) -> bool:
        return not self.violations

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def message(self) -> str:
        """The first violated rule's message (its name when it has none); empty if allowed."""
        if not self.violations:
            return ""
        v = self.violations[0]
        return v.message or f"rule {v.rule} would be violated"


class Blocked(Exception):
    """A tool call the rules deny (raised by :meth:`Monitor.guard` wrappers): ``str(err)`` is
    the rule's message; ``tool``, ``arguments`` and ``decision`` say what was denied and why."""

    def __init__(self, tool: str, arguments: Dict[str, Any], decision: Decision):
        super().__init__(decision.message)
        self.tool = tool
        self.arguments = arguments
        self.decision = decision
        self.violations = decision.violations


class RulesError(Exception):
    """Rules that could not be read or did not compile.

    ``str(err)`` is the compiler's text (``trajcheck lint``'s, with source lines and carets);
    ``diagnostics`` lists every message as a :class:`Diagnostic`.
    """

    def __init__(self, text: str, diagnostics: List[Diagnostic]):
        super().__init__(text)
        self.diagnostics = list(diagnostics)


class TraceError(ValueError):
    """A trace the readers reject: ``str(err)`` is ``file:line:col: error: reason``, as the
    command line prints it; ``file``, ``line``, ``column`` and ``reason`` are its parts
    (``file`` is ``<trace>`` for a trace given as a value)."""

    def __init__(self, text: str, file: str, line: int, column: int, reason: str):
        super().__init__(text)
        self.file = file
        self.line = line
        self.column = column
        self.reason = reason


class OptionError(ValueError):
    """An option value the command line would refuse too (an unknown ``fail_on``, a bad
    ``--alias`` or ``--error-pattern``, …)."""


class SuiteError(Exception):
    """An evaluation suite that cannot be run (it, or a rules file it names, does not compile;
    its cases cannot be read): ``str(err)`` is what ``trajcheck eval`` prints."""
