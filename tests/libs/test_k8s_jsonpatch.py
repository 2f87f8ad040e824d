"""kubernetes.jsonpatch: RFC 6901 escaping of a key for JSON Patch paths."""

from __future__ import annotations

import pytest

import kcel
from kcel.libs import k8s_jsonpatch

ENV = kcel.Env(libraries=[*kcel.env.cel_libraries(), k8s_jsonpatch.LIBRARY])


@pytest.mark.parametrize(
    ("key", "escaped"),
    [("plain", "plain"), ("a/b", "a~1b"), ("a~b", "a~0b"), ("~/", "~0~1"), ("~1", "~01"), ("", "")],
)
def test_escape_key(key: str, escaped: str) -> None:
    assert ENV.compile(f"jsonpatch.escapeKey({key!r})").evaluate() == escaped


def test_cost_is_a_tenth_of_the_length() -> None:
    program = kcel.Env(libraries=ENV.libraries, optimize=False).compile(
        "jsonpatch.escapeKey(k)".replace("k", "'" + "a/" * 20 + "'")
    )
    assert program.evaluate_with_cost()[1] == 4  # ceil(40 * 0.1)


def test_only_strings() -> None:
    with pytest.raises(kcel.CompileError, match="found no matching overload for 'jsonpatch.escapeKey'"):
        ENV.compile("jsonpatch.escapeKey(1)")
