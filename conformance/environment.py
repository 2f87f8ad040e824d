"""The environment a cel-spec test runs in: every extension, plus the test's own declarations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kcel
from kcel.checker.types import DYN, CelType, parse_type
from kcel.env import cel_libraries
from kcel.errors import EvalError
from kcel.libs import Library, Overload, strings


def conformance_env(test: Mapping[str, Any], messages: Library | None = None) -> kcel.Env:
    """The test's environment; `messages`: the suite's protobuf message types as a library, when it has them."""
    variables: dict[str, CelType] = {}
    declared: list[Overload] = []
    for decl in test.get("type_env", ()):
        if "ident" in decl:
            variables[decl["name"]] = parse_type(decl["ident"]["type"])
        for overload in decl.get("function", {}).get("overloads", ()):
            declared.append(_declared_overload(decl["name"], overload))
    for name in test.get("bindings", {}):
        variables.setdefault(name, DYN)
    libraries = [
        *_LIBRARIES,
        *([messages] if messages else []),
        *([Library("declared", tuple(declared))] * bool(declared)),
    ]
    # cel-go's harness plans with no options: no OptOptimize, so a bad literal conversion fails when evaluated;
    # and it sets cel.EnableErrorOnBadPresenceTest(true), which Kubernetes does not: `has(x.f)` or `x.?f` on an
    # int or a string is an error, not absent.
    return kcel.Env(
        variables=variables, container=test.get("container", ""), libraries=libraries, optimize=False,
        error_on_bad_presence_test=True,
    )  # fmt: skip


def _declared_overload(function: str, decl: Mapping[str, Any]) -> Overload:
    """A function the test declares for the checker only: calling it is an error, as in cel-go."""

    def unbound(*_: Any) -> Any:
        raise EvalError(f"no such overload: {function}")

    return Overload(
        decl["overload_id"],
        function,
        tuple(parse_type(p) for p in decl["params"]),
        parse_type(decl["result_type"]),
        unbound,
        member=bool(decl.get("is_instance_function")),
    )


def _libraries() -> list[Library]:
    """cel-go's conformance environment takes the latest version of every extension."""
    return [strings.library(strings.MAX_VERSION) if lib.name == "strings" else lib for lib in cel_libraries()]


_LIBRARIES = _libraries()
