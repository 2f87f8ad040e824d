"""Case values in the k8s-cases README's encoding (`{"int": 1}`, `{"optional_of": ...}`, ...), and how they compare."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import kcel
from kcel.env import load_library
from kcel.eval.equality import cel_equals
from kcel.k8s.environment import library as k8s_library
from kcel.libs import Library
from kcel.values import NONE, Optional, Uint


def decode(value: Any) -> Any:
    """A case value in the README's encoding as the Python value kcel uses."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict) or len(value) != 1:
        return {k: decode(v) for k, v in value.items()} if isinstance(value, dict) else value
    tag, payload = next(iter(value.items()))
    simple = {"int": int, "uint": lambda v: Uint(int(v)), "double": float}
    if tag in simple:
        return simple[tag](payload)
    if tag == "optional_none":
        return NONE
    if tag == "optional_of":
        return Optional(decode(payload))
    if tag in ("ip", "cidr", "quantity", "semver"):
        return _typed(tag, payload)
    return {tag: decode(payload)}


def _typed(tag: str, text: str) -> Any:
    program = kcel.Env(libraries=[*_all_known_libraries()]).compile(f"{tag}({json.dumps(text)})", check=False)
    return program.evaluate()


def _all_known_libraries() -> list[Library]:
    libraries = [load_library(n) for n in ("operators", "standard", "network")]
    libraries += [k8s_library(module, None) for module in ("k8s_quantity", "k8s_semver")]
    return libraries


def kcel_equal(expected: Any, actual: Any) -> bool:
    """CEL equality, with doubles compared by value (NaN matches NaN) and kinds kept apart."""
    if isinstance(expected, float) and isinstance(actual, float):
        return expected == actual or (math.isnan(expected) and math.isnan(actual))
    if isinstance(expected, list) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(map(kcel_equal, expected, actual))
    if type(expected) is not type(actual) and not (isinstance(expected, dict) and isinstance(actual, Mapping)):
        return False
    return cel_equals(expected, actual)
