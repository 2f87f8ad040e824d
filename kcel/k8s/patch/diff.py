"""The JSON Patch (RFC 6902) that turns one JSON value into another: what a mutating webhook returns.

The API server applies the patch to the object it sent, so any correct patch will do; this one is short for the
usual mutations (a field set, a label added, a container appended): objects are compared key by key, lists
element by element over their common length, then extended or shortened at the end; anything else is replaced.
"""

from __future__ import annotations

from typing import Any


def escape(key: str) -> str:
    """RFC 6901: `~` as `~0`, `/` as `~1`."""
    return key.replace("~", "~0").replace("/", "~1")


def diff(source: Any, target: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations that make `source` equal to `target` (an empty list when they are equal)."""
    if _same(source, target):
        return []
    if isinstance(source, dict) and isinstance(target, dict):
        operations: list[dict[str, Any]] = []
        for key in source:
            if key not in target:
                operations.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key, value in target.items():
            child = f"{path}/{escape(key)}"
            if key in source:
                operations += diff(source[key], value, child)
            else:
                operations.append({"op": "add", "path": child, "value": value})
        return operations
    if isinstance(source, list) and isinstance(target, list):
        common = min(len(source), len(target))
        operations = []
        for i in range(common):
            operations += diff(source[i], target[i], f"{path}/{i}")
        for i in range(len(source) - 1, common - 1, -1):
            operations.append({"op": "remove", "path": f"{path}/{i}"})
        for i in range(common, len(target)):
            operations.append({"op": "add", "path": f"{path}/{i}", "value": target[i]})
        return operations
    return [{"op": "replace", "path": path, "value": target}]


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, and `1` is `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b
