"""Kubernetes' JSONPatch library (k8s.io/apiserver pkg/cel/library/jsonpatch.go): `jsonpatch.escapeKey`.

Only MutatingAdmissionPolicy environments add it: a policy builds JSON Patch paths from map keys,
and RFC 6901 needs `~` and `/` in a key escaped as `~0` and `~1` (in that order).
"""

from __future__ import annotations

from kcel.checker.types import STRING
from kcel.libs import Library, Overload, size_cost, size_estimate


def escape_key(key: str) -> str:
    """`jsonpatch.escapeKey('a/b~c') == 'a~1b~0c'`."""
    return key.replace("~", "~0").replace("/", "~1")


LIBRARY = Library(
    "kubernetes.jsonpatch",
    overloads=(
        Overload("string_jsonpatch_escapeKey_string", "jsonpatch.escapeKey", (STRING,), STRING, escape_key,
                 cost=size_cost(0.1), estimate=size_estimate(0.1, result_size=True),
                 doc="jsonpatch.escapeKey('a/b~c') == 'a~1b~0c'"),
    ),
)  # fmt: skip
