"""Case values in the k8s-cases README's encoding (`{"int": 1}`, `{"optional_of": ...}`, ...), and how they compare."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import semver

from kcel.eval.equality import cel_equals
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
        return Written(tag, payload)
    return {tag: decode(payload)}


@dataclass(frozen=True)
class Written:
    """An expected Kubernetes value (`{"quantity": "1Gi"}`), kept as written: compared with kcel's value by parsing
    both texts here, independently of the libraries under test."""

    kind: str  # ip, cidr, quantity or semver
    text: str

    def matches(self, actual: Any) -> bool:
        if getattr(actual, "cel_type_name", None) != _TYPE_NAMES[self.kind]:
            return False
        canonical = _CANONICAL[self.kind]
        try:
            return bool(canonical(self.text) == canonical(str(actual)))
        except ValueError:
            return False


def _quantity(text: str) -> Decimal:
    """A resource quantity's value (`1.5Gi` is 1610612736): the number times its suffix's multiplier."""
    match = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|[KMGTPE]i|[numkMGTPE]?)", text)
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = Decimal(match[1]), match[2]
    if suffix[:1] in ("e", "E"):
        return number * Decimal(10) ** int(suffix[1:])
    if suffix.endswith("i"):
        return number * Decimal(1024) ** ("KMGTPE".index(suffix[0]) + 1)
    return number * Decimal(10) ** {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
                                    "E": 18}[suffix]  # fmt: skip


_TYPE_NAMES = {"ip": "net.IP", "cidr": "net.CIDR", "quantity": "kubernetes.Quantity", "semver": "kubernetes.Semver"}
_CANONICAL: dict[str, Any] = {
    "ip": ipaddress.ip_address, "cidr": lambda text: ipaddress.ip_interface(text).with_prefixlen,
    "quantity": _quantity, "semver": lambda text: semver.Version.parse(text).to_tuple(),
}  # fmt: skip


def kcel_equal(expected: Any, actual: Any) -> bool:
    """Equal values of the same kinds: `1` is not `1.0` nor `true`, at any depth (Python's `==` says they are);
    doubles by value (NaN matches NaN); Kubernetes values by their canonical form."""
    if isinstance(expected, Written):
        return expected.matches(actual)
    if isinstance(expected, float) or isinstance(actual, float):
        if not (isinstance(expected, float) and isinstance(actual, float)):
            return False
        return expected == actual or (math.isnan(expected) and math.isnan(actual))
    if isinstance(expected, list) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(map(kcel_equal, expected, actual))
    if isinstance(expected, dict) and isinstance(actual, Mapping):
        pairs = [(k, v) for k, v in expected.items()]
        return len(pairs) == len(actual) and all(_has(actual, k) and kcel_equal(v, actual[k]) for k, v in pairs)
    if isinstance(expected, Optional) and isinstance(actual, Optional):
        if expected.has_value() != actual.has_value():
            return False
        return not expected.has_value() or kcel_equal(expected.value, actual.value)
    if type(expected) is not type(actual):  # bool, int, Uint, str, bytes, null stay apart
        return False
    return cel_equals(expected, actual)


def _has(mapping: Mapping[Any, Any], key: Any) -> bool:
    return any(type(k) is type(key) and k == key for k in mapping)
