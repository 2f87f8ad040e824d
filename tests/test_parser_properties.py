"""Property tests: the front end never fails in any way other than a CompileError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import kcel
from kcel.parser.unparser import unparse

TOKENS = [
    "a", "b.c", "x", "1", "-2", "3u", "4.5", "'s'", 'b"y"', "r'\\d'", "true", "null", "in", "+", "-", "*", "/", "%",
    "==", "!=", "<", ">=", "&&", "||", "!", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}", ".?", "[?", "has(",
    ".all(", ".map(", ".exists_one(", "cel.bind(", ".f(", " ", "\n", "//c\n", "`a-b`", "'''t'''", "\\", "\"",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_compile_error(text: str) -> None:
    try:
        kcel.parse(text)
    except kcel.CompileError as err:
        assert str(err).startswith("ERROR: <input>:")


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=25))
def test_token_soup_parses_or_raises_and_round_trips(tokens: list[str]) -> None:
    try:
        parsed = kcel.parse("".join(tokens))
    except kcel.CompileError:
        return
    text = unparse(parsed)
    again = kcel.parse(text)
    assert again.expr == parsed.expr
    assert unparse(again) == text
