"""pytest plugin of trajcheck: the ``trajcheck_rules`` fixture and the assertion helpers.

Loaded automatically through the package's ``pytest11`` entry point (or with
``-p trajcheck.pytest_plugin``)::

    from trajcheck.pytest_plugin import assert_satisfies, assert_violates

    def test_refund_needs_approval(trajcheck_rules):
        rules = trajcheck_rules("rules/refunds.rules")      # compiled once per session
        assert_violates(transcript, rules, "refund_needs_approval")

A failing assertion lists the violated rules with their witness steps, as ``trajcheck check``
prints them.
"""
import os
import threading
from typing import Any, Callable, Dict, Tuple

import pytest

import trajcheck
from trajcheck import Rules, assert_satisfies, assert_violates

__all__ = ["assert_satisfies", "assert_violates", "trajcheck_rules"]

_cache: Dict[Tuple[Any, ...], Rules] = {}
_lock = threading.Lock()


def _load(key: Tuple[Any, ...], make: Callable[[], Rules]) -> Rules:
    with _lock:
        rules = _cache.get(key)
        if rules is None:
            rules = _cache[key] = make()
        return rules


@pytest.fixture
def trajcheck_rules(request) -> Callable[..., Rules]:
    """A factory of compiled rules, each compiled once per test session:
    ``trajcheck_rules("a.rules", "b.rules", **options)`` loads files (a relative path is looked
    up beside the test file first, then from the current directory);
    ``trajcheck_rules(text="forbid delete_*", name="inline.rules")`` compiles text. The options
    are those of :func:`trajcheck.load_rules`. A rules error fails the test with the compiler's
    message."""
    here = os.path.dirname(str(request.node.fspath))

    def resolve(path: str) -> str:
        path = os.fspath(path)
        beside = os.path.join(here, path)
        return beside if not os.path.isabs(path) and os.path.exists(beside) else path

    def factory(*paths: str, text: str = None, name: str = "<rules>", **options: Any) -> Rules:
        __tracebackhide__ = True
        frozen = tuple(sorted((k, repr(v)) for k, v in options.items()))
        try:
            if text is not None:
                if paths:
                    raise TypeError("trajcheck_rules: give files or text=, not both")
                return _load(("text", text, name, frozen), lambda: trajcheck.compile(text, name, **options))
            if not paths:
                raise TypeError("trajcheck_rules: give at least one rules file, or text=")
            files = tuple(resolve(p) for p in paths)
            return _load(("files", files, frozen), lambda: trajcheck.load_rules(*files, **options))
        except trajcheck.RulesError as err:
            pytest.fail(f"rules did not compile:\n{err}", pytrace=False)

    return factory
