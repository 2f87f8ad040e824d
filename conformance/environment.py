"""The environment a cel-spec test runs in: every extension, plus the test's own declarations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import kcel
from kcel.checker.types import DYN, CelType, parse_type


def conformance_env(test: Mapping[str, Any]) -> kcel.Env:
    variables: dict[str, CelType] = {}
    for decl in test.get("type_env", ()):
        if "ident" in decl:
            variables[decl["name"]] = parse_type(decl["ident"]["type"])
    for name in test.get("bindings", {}):
        variables.setdefault(name, DYN)
    return kcel.Env(variables=variables, container=test.get("container", ""))
