"""The environment a cel-spec test runs in: every extension, plus the test's own declarations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kcel
from kcel.checker.types import DYN, CelType, parse_type
from kcel.env import default_libraries
from kcel.libs import Library, strings


def conformance_env(test: Mapping[str, Any]) -> kcel.Env:
    variables: dict[str, CelType] = {}
    for decl in test.get("type_env", ()):
        if "ident" in decl:
            variables[decl["name"]] = parse_type(decl["ident"]["type"])
    for name in test.get("bindings", {}):
        variables.setdefault(name, DYN)
    return kcel.Env(variables=variables, container=test.get("container", ""), libraries=_LIBRARIES)


def _libraries() -> list[Library]:
    """cel-go's conformance environment takes the latest version of every extension."""
    return [strings.library(strings.MAX_VERSION) if lib.name == "strings" else lib for lib in default_libraries()]


_LIBRARIES = _libraries()
