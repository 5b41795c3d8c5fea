from typing import Any, Callable

from trajcheck import Rules, assert_satisfies as assert_satisfies, assert_violates as assert_violates

def trajcheck_rules(request: Any) -> Callable[..., Rules]: ...
