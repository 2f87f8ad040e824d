"""The parser's speed-ups behave exactly like what they replace: lark's lexer and parser loops, dataclass methods."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark, Token
from lark.exceptions import UnexpectedInput

import kcel.parser
from kcel.errors import CompileError
from kcel.parser.ast import Call, Comprehension, Const, Ident, Select
from kcel.parser.lexer import SETTLE_AFTER, ContextualLexer
from kcel.parser.unparser import dump

OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "cache": True}
STOCK = Lark.open_from_package("kcel.parser", "cel.lark", **OPTIONS)


def ours(parses: int) -> Lark:
    """A parser with kcel's lexer, as if it had parsed `parses` texts before."""
    built = Lark.open_from_package("kcel.parser", "cel.lark", **OPTIONS, _plugins={"ContextualLexer": ContextualLexer})
    built.parser.lexer.parses = parses
    return built


FIRST = ours(-(10**9))  # scans with the shared scanner for the whole test
SETTLED = ours(SETTLE_AFTER - 1)  # each state with its own from the first parse on

TEXTS = [
    "a + -1 - 1 - -1", "a-1", "- 1", "--1", "1 -1", "x.in && a.true", "M{in: 1, null: 2}", "a index",
    "'''two\nlines''' + \"x\"\n  + r'\\d' // comment\n- b'\\xff'", "a\n\n.b\n  .c", "1.5e3 + .5 + 1u + 0x1F",
    "f(a, [b, ?c], {'k': v, ?1: 2}, T{f: 1})[x]", "a.?b[?0]", "!a ? b : c", "`a.b-c`", "x.all(y, y > 0)",
    "", " ", "\n", "a +", "a b", "'unclosed", "a + @", "1 ? 2", "a.", "f(1,", "\u00e9", "a ? b",
]  # fmt: skip
PIECES = [
    "a", "b.c", "1", "-2", "- 3", "4u", "5.5", ".6", "'s'", 'b"y"', "r'\\d'", "'''t\n'''", "true", "null", "in",
    "+", "-", "*", "/", "%", "==", "<=", "&&", "||", "!", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}",
    " ", "\n", "//c\n", "`a-b`", "@", "'", "\\",
]  # fmt: skip


def stream(lark: Lark, text: str) -> tuple[list[tuple[object, ...]], tuple[object, ...] | None]:
    """The tokens the parser is fed, with every position field, and the error that ends the parse."""
    tokens: list[tuple[object, ...]] = []
    try:
        for token in lark.parse_interactive(text).iter_parse():
            tokens.append(_fields(token))
    except UnexpectedInput as err:
        bad = getattr(err, "token", None)
        return tokens, (type(err), err.pos_in_stream, bad and _fields(bad), getattr(err, "expected", None))
    return tokens, None


def _fields(token: Token) -> tuple[object, ...]:
    return tuple(getattr(token, name) for name in FIELDS) + (str(token),)


FIELDS = ("type", "start_pos", "value", "line", "column", "end_line", "end_column", "end_pos")


def test_tokens_have_the_fields_the_lexer_sets() -> None:
    assert set(Token.__slots__) == set(FIELDS)


@pytest.mark.parametrize("text", TEXTS)
def test_lexer_yields_larks_tokens(text: str) -> None:
    assert stream(FIRST, text) == stream(STOCK, text)
    assert stream(SETTLED, text) == stream(STOCK, text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20))
def test_lexer_yields_larks_tokens_for_any_soup(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert stream(FIRST, text) == stream(STOCK, text)
    assert stream(SETTLED, text) == stream(STOCK, text)


def test_lexer_scans_with_the_shared_scanner_until_settled() -> None:
    parser = ours(0)
    lexer = parser.parser.lexer
    for _ in range(SETTLE_AFTER - 2):
        assert stream(parser, "a + b.c(1, [2])")[1] is None
    assert lexer.plans and all(plan.parts is lexer.shared and plan._own is None for plan in lexer.plans.values())
    assert stream(parser, "a-1") == stream(STOCK, "a-1")  # `-1` is no token after an operand: the state's scanner
    assert [plan._own is not None for plan in lexer.plans.values()].count(True) == 1
    stream(parser, "a")  # the parse that settles
    assert all(plan.parts is plan._own for plan in lexer.plans.values())


LARKS_LOOP = Lark.open_from_package(
    "kcel.parser",
    "cel.lark",
    **OPTIONS,
    maybe_placeholders=True,
    transformer=kcel.parser._builder,
    _plugins={"ContextualLexer": ContextualLexer},
)  # kcel's parser with lark's own parser loop


def parsed(text: str, lark: Lark | None = None) -> tuple[object, ...]:
    """`kcel.parse` (through `lark`'s loop if given): the AST with every node id and the macro calls, or the error."""
    original = kcel.parser._lark
    kcel.parser._lark = lark or original
    try:
        result = kcel.parser.parse(text)
        return "parsed", dump(result), sorted((key, repr(call)) for key, call in result.macro_calls.items())
    except CompileError as err:
        return "error", str(err)
    finally:
        kcel.parser._lark = original


@pytest.mark.parametrize("text", [*TEXTS, "a.all(x, x > 0) && [1, 2].map(y, y + 1).exists(z, z == 3)"])
def test_parser_loop_builds_and_fails_as_larks(text: str) -> None:
    assert parsed(text) == parsed(text, LARKS_LOOP)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20))
def test_parser_loop_builds_and_fails_as_larks_for_any_soup(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert parsed(text) == parsed(text, LARKS_LOOP)


def test_nodes_stay_frozen_dataclasses() -> None:
    node = Call(3, 0, 5, 1, "f", (Ident(1, 0, 1, 0, "a"),))
    assert (node.id, node.start, node.end, node.pos, node.target) == (3, 0, 5, 1, None)
    assert node == Call(9, 9, 9, 9, function="f", args=(Ident(2, 2, 2, 2, name="a"),))
    assert hash(node) == hash(Call(9, 9, 9, 9, "f", (Ident(2, 2, 2, 2, "a"),)))
    assert Select(1, 0, 0, 0, node).field == "" and not Select(1, 0, 0, 0, node).test_only
    assert Comprehension(1, 0, 0, 0, iter_var="x").accu_var == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.id = 4  # type: ignore[misc]
    assert dataclasses.replace(node, function="g").function == "g"
    assert pickle.loads(pickle.dumps(node)) == node
    with pytest.raises(TypeError):
        Const(1, 0, 0)  # type: ignore[call-arg]
