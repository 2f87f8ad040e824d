"""Table and property tests of CRD property-name escaping (apiserver pkg/cel/escaping.go).

Rows follow the examples of k8s-cel-schemas.md section 4 and escaping_test.go; the last test runs the
escaping cases of ../shared/k8s-cases through the conformance runner.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import k8scases
from conformance.k8s_field_cases import RUNNERS
from kcel.k8s.schemas.escaping import RESERVED, escape, unescape
from tests.conftest import SHARED

CEL_IDENTIFIER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

# (property name, escaped name)
ESCAPE_ROWS = [
    ("a.a", "a__dot__a"),
    ("a-a", "a__dash__a"),
    ("a/a", "a__slash__a"),
    ("a__a", "a__underscores__a"),
    ("a___a", "a__underscores___a"),
    ("a____a", "a__underscores____underscores__a"),
    ("a._a", "a__dot___a"),
    ("a__dot__a", "a__underscores__dot__underscores__a"),
    ("a.-/__a", "a__dot____dash____slash____underscores__a"),
    ("-a", "__dash__a"),
    ("namespace", "__namespace__"),
    ("while", "__while__"),
    ("_if", "_if"),
    ("has", "has"),
    ("size", "size"),
    ("_", "_"),
    ("x1", "x1"),
]

NOT_ESCAPABLE = ["", "@", "1up", "9", "👑", "a b", "a@b", "a.@", "a-é", "a\n"]


@pytest.mark.parametrize(("name", "escaped"), ESCAPE_ROWS)
def test_escape(name: str, escaped: str) -> None:
    assert escape(name) == escaped
    assert unescape(escaped) == name


@pytest.mark.parametrize("name", NOT_ESCAPABLE)
def test_not_escapable(name: str) -> None:
    assert escape(name) is None


def test_every_reserved_word_is_wrapped() -> None:
    assert len(RESERVED) == 21
    assert {escape(word) for word in RESERVED} == {f"__{word}__" for word in RESERVED}


# (escaped name, property name or None for an invalid escape)
UNESCAPE_ROWS = [
    ("plain", "plain"),
    ("____", "____"),
    ("__dot__", "."),
    ("a__underscores___a", "a___a"),
    ("__if__", "if"),
    ("__int__extra", None),
    ("__illegal__", None),
    ("__if__x", None),
    ("x__if__", None),
    ("a__dot____bogus__", None),
]


@pytest.mark.parametrize(("escaped", "name"), UNESCAPE_ROWS)
def test_unescape(escaped: str, name: str | None) -> None:
    assert unescape(escaped) == name


@given(st.from_regex(r"[A-Za-z_./-][A-Za-z0-9_./-]*", fullmatch=True))
def test_escapable_names_round_trip(name: str) -> None:
    escaped = escape(name)
    assert escaped is not None and CEL_IDENTIFIER.fullmatch(escaped)
    assert unescape(escaped) == name


@given(st.text())
def test_escape_gives_an_identifier_or_refuses(name: str) -> None:
    escaped = escape(name)
    accessible = re.fullmatch(r"[A-Za-z_./-][A-Za-z0-9_./-]*", name) is not None
    assert (escaped is not None) == accessible
    assert escaped is None or CEL_IDENTIFIER.fullmatch(escaped)


CASES = [c for c in k8scases.load(SHARED / "k8s-cases") if c.data["kind"].endswith("_property_name")]


@pytest.mark.skipif(not CASES, reason="../shared/k8s-cases is absent")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kubernetes_cases(case: k8scases.Case) -> None:
    outcome = RUNNERS[case.data["kind"]](case)
    assert outcome.status == "passed", outcome.reason
