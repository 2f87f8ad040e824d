"""Kubernetes' own CEL test tables (../shared/k8s-cases) as pytest cases.

Kinds that later issues bring are skipped with the issue named; cases in the checked-in skip
list are expected to fail (strictly, so a case that starts passing must leave the list).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import k8scases
from conformance.__main__ import SUITES
from conformance.outcome import SkipList

DIRECTORY, SKIP_FILE = SUITES["k8s-cases"]
SKIPS = SkipList.read(SKIP_FILE)
CASES = list(k8scases.load(DIRECTORY)) if DIRECTORY.is_dir() else []
MISSING = pytest.mark.skipif(not CASES, reason=f"k8s-cases not found at {DIRECTORY} (../shared is absent)")


def _param(case: k8scases.Case) -> object:
    reason = SKIPS.reason(case.id)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


@MISSING
@pytest.mark.parametrize("case", [_param(c) for c in CASES] or [None])
def test_case(case: k8scases.Case) -> None:
    outcome = k8scases.run(case)
    if outcome.status == "skipped":
        pytest.skip(outcome.reason)
    assert outcome.status == "passed", outcome.reason


def _schema_case(kind: str, schema: dict[str, object], expect: dict[str, object]) -> k8scases.Case:
    data = {"id": "made-up", "kind": kind, "inputs": {"schema": schema}, "expect": expect}
    return k8scases.Case("made-up", "made-up.json", data)


ADDITIONAL_TRUE = {"type": "object", "properties": {"foo": {"type": "object", "additionalProperties": True}}}
PROPERTIES_UNDER_ARRAY = {"type": "array", "properties": {"field": {"type": "string", "default": "default"}}}


@pytest.mark.parametrize(("kind", "schema", "expect", "status"), [
    # upstream TestSchemaDeclType (Nov 2025): an object with `additionalProperties: true` is an object type
    ("schema_decl_type", ADDITIONAL_TRUE, {"field_type_names": {"foo": "object"}}, "passed"),
    ("schema_decl_type", ADDITIONAL_TRUE, {"field_type_names": {"foo": "map"}}, "failed"),
    ("schema_decl_type", ADDITIONAL_TRUE, {"field_type_names": {"bar": "object"}}, "failed"),
    # upstream ExpectNilType: no CEL type at all
    ("schema_max_elements", PROPERTIES_UNDER_ARRAY, {"decl_type": None}, "passed"),
    ("schema_decl_type", PROPERTIES_UNDER_ARRAY, {"decl_type": None}, "passed"),
    ("schema_decl_type", ADDITIONAL_TRUE, {"decl_type": None}, "failed"),
    ("schema_decl_type", ADDITIONAL_TRUE, {"type_nam": "object"}, "skipped"),  # unknown: never passed unchecked
])  # fmt: skip
def test_schema_expectations_of_newer_upstream_tables(
    kind: str, schema: dict[str, object], expect: dict[str, object], status: str
) -> None:
    assert k8scases.run(_schema_case(kind, schema, expect)).status == status


def test_a_compile_error_must_have_no_issue_beyond_the_patterns() -> None:
    """The suite's README: every pattern matches an issue, and every issue is matched by a pattern."""
    from types import SimpleNamespace

    from conformance.k8scases import _expected_compile_error

    case: Any = SimpleNamespace(id="made/up")
    two = "ERROR: <input>:1:1: undeclared reference to 'a'\n | a + b\n | ^\n"
    two += "ERROR: <input>:1:5: undeclared reference to 'b'"
    expect = {"compile_error": {"match": "regex", "patterns": ["reference to 'a'", "reference to 'b'"]}}
    assert _expected_compile_error(case, expect, two).status == "passed"
    only_a = {"compile_error": {"match": "regex", "patterns": ["reference to 'a'"]}}
    outcome = _expected_compile_error(case, only_a, two)
    assert outcome.status == "failed" and "undeclared reference to 'b'" in outcome.reason


def test_expected_values_compare_with_their_kinds_and_kubernetes_values_by_their_own_parse() -> None:
    import kcel
    from conformance.k8s_values import Written, decode, kcel_equal

    assert not kcel_equal(decode({"a": 1}), {"a": 1.0}) and not kcel_equal(decode([True]), [1])
    assert kcel_equal(decode({"a": [{"int": 1}]}), {"a": [1]})
    env = kcel.Env(k8s_version="1.37")
    assert kcel_equal(Written("quantity", "1.5Gi"), env.compile('quantity("1536Mi")').evaluate({}))
    assert not kcel_equal(Written("quantity", "1.5G"), env.compile('quantity("1536Mi")').evaluate({}))
    assert kcel_equal(Written("ip", "::1"), env.compile('ip("0:0::1")').evaluate({}))
    assert kcel_equal(Written("cidr", "10.0.0.1/8"), env.compile('cidr("10.0.0.1/8")').evaluate({}))
    assert not kcel_equal(Written("ip", "::1"), "::1")  # a string is no IP


def test_without_shared_each_skipped_suite_is_named(tmp_path: Path) -> None:
    """A checkout without ../shared passes, and says which suites it skipped and why: each skip's reason, and a
    closing line naming the test files whose reference data is absent."""
    root = Path(__file__).resolve().parents[1]
    checkout = tmp_path / "kcel"
    for part in ("kcel", "conformance"):
        shutil.copytree(root / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
    (checkout / "tests").mkdir()
    for name in ("conftest.py", "test_conformance_k8scases.py"):
        shutil.copy(root / "tests" / name, checkout / "tests" / name)
    shutil.copy(root / "pyproject.toml", checkout / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    test = "tests/test_conformance_k8scases.py::test_case"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", test], cwd=checkout, env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"k8s-cases not found at {tmp_path / 'shared' / 'k8s-cases'} (../shared is absent)" in run.stdout
    assert f"{tmp_path / 'shared'} is absent: the reference suites of tests/test_conformance_k8scases.py were " \
           "skipped" in run.stdout  # fmt: skip
