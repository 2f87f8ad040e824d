"""The Kubernetes base environment gates options by compatibility version (base.go); an API server of version 1.N
compiles new expressions at compatibility version 1.(N-1) and stored ones with every option it knows."""

from __future__ import annotations

import importlib
import random
import subprocess
import sys
from typing import Any

import pytest

import kcel
from kcel.k8s.environment import DEFERRED

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
    env = kcel.Env(variables=DECLS, compatibility_version=version)
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
    kcel.Env(variables=DECLS, compatibility_version="1.20", environment="stored").compile("l.sortBy(x, x)")
    with pytest.raises(kcel.CompileError):
        kcel.Env(variables=DECLS, compatibility_version="1.20").compile("l.sortBy(x, x)")


@pytest.mark.parametrize(("expr", "since"), [(e, s) for e, s in ARRIVALS if _minor(s) >= 29])
def test_an_api_server_offers_new_expressions_what_the_version_before_it_had(expr: str, since: str) -> None:
    """A 1.N API server's new expressions get 1.(N-1)'s options; its stored ones every option 1.N knows."""
    arrival = f"1.{_minor(since)}"
    kcel.Env(variables=DECLS, k8s_version=f"1.{_minor(since) + 1}").compile(expr)
    if arrival != "1.29":  # older API servers are not supported
        kcel.Env(variables=DECLS, k8s_version=arrival, environment="stored").compile(expr)
        with pytest.raises(kcel.CompileError):
            kcel.Env(variables=DECLS, k8s_version=arrival).compile(expr)
        with pytest.raises(kcel.CompileError):
            kcel.Env(variables=DECLS, k8s_version=f"1.{_minor(since) - 1}", environment="stored").compile(expr)


def test_a_replaced_option_counts_from_the_version_that_replaces_it() -> None:
    """Kubernetes' lists library version 0 gave way to version 1 (which adds `includes`) in 1.37: a 1.36 API server
    knows only version 0, a 1.37 one stores version 1 but offers new expressions 1.36's version 0."""
    has_includes = [
        bool(kcel.Env(k8s_version=version, environment=environment).overloads("includes"))
        for version, environment in (("1.36", "stored"), ("1.37", "stored"), ("1.37", "new"))
    ]
    assert has_includes == [False, True, False]


def test_unsupported_versions_name_the_range() -> None:
    with pytest.raises(
        ValueError, match="unsupported Kubernetes version 1.29: kcel answers as Kubernetes 1.30 to 1.37"
    ):
        kcel.Env(k8s_version="1.29")


def test_without_a_version_every_library_is_in() -> None:
    env = kcel.Env()
    assert env.compile('quantity("1Gi").isGreaterThan(quantity("1Mi"))').evaluate() is True
    assert env.compile("math.ceil(1.5) == 2.0 && base64.encode(b'a') == 'YQ=='").evaluate() is True
    assert env.compile('jsonpatch.escapeKey("a/b")').evaluate() == "a~1b"


def test_kubernetes_rejects_heterogeneous_literals() -> None:
    with pytest.raises(kcel.CompileError) as info:
        kcel.Env(k8s_version="1.31").compile("[1, 'a']")
    assert info.value.messages == ("expected type 'int' but found 'string'",)


def test_bad_versions_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="invalid Kubernetes version"):
        kcel.Env(k8s_version="latest")


# (expression, answer from 1.33 on, answer before): containsCIDR compared addresses as written before 1.33
# (apiserver 64791740a), so a narrower prefix with other host bits was not contained.
CONTAINS_CIDR = [
    ("cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))", True, False),
    ("cidr('192.168.0.0/24').containsCIDR('192.168.0.1/32')", True, False),
    ("cidr('10.0.0.0/8').containsCIDR('10.0.0.0/16')", True, True),
    ("cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", False, False),
]


@pytest.mark.parametrize(("expr", "now", "before"), CONTAINS_CIDR)
def test_library_behaviour_follows_the_api_servers_code(expr: str, now: bool, before: bool) -> None:
    """Fixes in a library's code apply from the API server that has them, in stored expressions too."""
    answers = [kcel.Env(k8s_version=v, environment="stored").compile(expr).evaluate() for v in ("1.32", "1.33")]
    assert answers == [before, now]


def test_equality_of_kubernetes_types_is_priced_from_1_32() -> None:
    """apiserver cbc488649: before 1.32 `==` on a Quantity fell to cel-go's estimate, unbounded for opaque values,
    so a CRD rule comparing quantities was rejected at create; the numbers are upstream's own test's."""
    expr = 'quantity("200M") == quantity("200M")'
    estimates = []
    for version in ("1.31", "1.32"):
        env = kcel.Env(k8s_version=version, environment="stored")
        estimates.append(env.estimate_cost(env.compile(expr)))
    assert estimates == [kcel.CostEstimate(3, 1844674407370955266), kcel.CostEstimate(3, 3)]


def test_costs_follow_the_api_servers_cel_go() -> None:
    """cel-go v0.29 (Kubernetes 1.37) charges startsWith/endsWith for the prefix, not the receiver (a4d0d643), and
    prices the global matches() like the receiver form (d4efa771); 1.34 to 1.36 run cel-go v0.26."""
    found = []
    for version in ("1.36", "1.37"):
        env = kcel.Env(variables={"s": "string"}, k8s_version=version)
        starts = env.compile("s.startsWith('a')").evaluate_with_cost({"s": "a" * 100})[1]
        matches = env.compile("matches(s, 'a+')")
        found.append((starts, env.estimate_cost(matches).max, matches.evaluate_with_cost({"s": "a" * 100})[1]))
    assert found == [(11, 2, 2), (2, 1844674407370955265, 12)]


def _library_variants(module: str) -> list[Any]:
    """The module's table at every version it has."""
    loaded = importlib.import_module(f"kcel.libs.{module}")
    if not hasattr(loaded, "library"):
        return [loaded.LIBRARY]
    variants = []
    for version in range(10):
        try:
            variants.append(loaded.library(version))
        except (KeyError, ValueError, IndexError):
            continue
    return variants


@pytest.mark.parametrize("module", sorted(DEFERRED))
def test_a_deferred_library_is_known_by_the_names_its_tables_declare(module: str) -> None:
    """The names an environment knows a deferred library by are exactly those its versions declare, and it has
    nothing an environment needs before a name is looked up (macros, constants, validators, message types)."""
    name, functions, type_names = DEFERRED[module]
    variants = _library_variants(module)
    assert variants and {v.name for v in variants} == {name}
    assert functions == {o.function for v in variants for o in v.overloads}
    assert type_names == {t.name for v in variants for t in v.types}
    for variant in variants:
        assert not (variant.macros or variant.constants or variant.validators or variant.struct_types)
        assert not variant.mixed_literal_functions


def test_kubernetes_libraries_load_when_an_expression_names_them() -> None:
    code = (
        "import sys, kcel\n"
        "env = kcel.Env(k8s_version='1.37')\n"
        "assert env.compile('1 + 1').evaluate() == 2\n"
        "print(sorted(m for m in sys.modules if m.startswith('kcel.libs.k8s')))\n"
        "assert env.compile(\"quantity('1Gi').isGreaterThan(quantity('1Mi'))\").evaluate() is True\n"
        "print(sorted(m for m in sys.modules if m.startswith('kcel.libs.k8s')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = run.stdout.splitlines()
    assert before == "[]"
    assert "kcel.libs.k8s_quantity" in after and "kcel.libs.k8s_authz" not in after


@pytest.mark.parametrize("version", ["1.30", "1.33", "1.37"])
def test_overloads_found_as_names_are_looked_up_are_those_of_the_whole_environment(version: str) -> None:
    """Loading deferred libraries one name at a time, in any order, gives each function the overloads, in the
    order, that indexing every library at once gives (the checker tries them in that order)."""
    eager = kcel.Env(k8s_version=version, libraries=kcel.Env(k8s_version=version).libraries)
    lazy = kcel.Env(k8s_version=version)
    functions = sorted({o.function for library in eager.libraries for o in library.overloads})
    random.Random(version).shuffle(functions)
    for function in functions:
        assert [o.id for o in lazy.overloads(function)] == [o.id for o in eager.overloads(function)], function
    assert lazy.type_of_name("net.IP") == eager.type_of_name("net.IP")
