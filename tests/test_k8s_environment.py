"""The Kubernetes base environment gates options by compatibility version (base.go)."""

from __future__ import annotations

import pytest

import kcel

DECLS = {"l": "list(int)", "s": "string"}
# expression -> first compatibility version whose "new" environment accepts it
ARRIVALS = [
    ("1 < 1.5", "1.28"), ("optional.of(1).hasValue()", "1.28"), ("s.lowerAscii()", "1.0"),
    ("sets.contains(l, [1])", "1.29"), ("'%d'.format([1])", "1.29"), ("l.all(i, v, v > i)", "1.32"),
    ("l.sortBy(x, x)", "1.34"), ("l.reverse().size() > 0", "1.34"),
]  # fmt: skip
VERSIONS = ["1.26", "1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.36", "1.37"]


def _minor(version: str) -> int:
    return int(version.split(".")[1])


@pytest.mark.parametrize(("expr", "since"), ARRIVALS)
@pytest.mark.parametrize("version", VERSIONS)
def test_functions_arrive_with_their_version(expr: str, since: str, version: str) -> None:
    env = kcel.Env(variables=DECLS, k8s_version=version)
    if _minor(version) >= _minor(since):
        env.compile(expr)
    else:
        with pytest.raises(kcel.CompileError):
            env.compile(expr)


@pytest.mark.parametrize("expr", ["cel.bind(x, 1, x)", "math.ceil(1.5)", "base64.encode(b'a')"])
def test_extensions_kubernetes_does_not_load_are_undeclared(expr: str) -> None:
    with pytest.raises(kcel.CompileError):
        kcel.Env(k8s_version="1.37").compile(expr)


def test_stored_environment_keeps_everything_not_removed() -> None:
    kcel.Env(variables=DECLS, k8s_version="1.20", environment="stored").compile("l.sortBy(x, x)")
    with pytest.raises(kcel.CompileError):
        kcel.Env(variables=DECLS, k8s_version="1.20").compile("l.sortBy(x, x)")


def test_kubernetes_rejects_heterogeneous_literals() -> None:
    with pytest.raises(kcel.CompileError) as info:
        kcel.Env(k8s_version="1.30").compile("[1, 'a']")
    assert info.value.messages == ("expected type 'int' but found 'string'",)


def test_bad_versions_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="invalid Kubernetes version"):
        kcel.Env(k8s_version="latest")
