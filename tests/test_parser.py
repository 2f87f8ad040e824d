"""Golden tables for the parser: AST dumps, rendered errors, literals, limits, unparsing."""

from __future__ import annotations

import os
import random
import time

import pytest
from lark import Lark

import kcel
from kcel.parser.ast import Call, Comprehension, Const, CreateList, Ident, Select, walk
from kcel.parser.macros import STANDARD
from kcel.parser.unparser import dump, unparse
from kcel.values import Uint

DUMPS = [
    ("-1", "-1^#1"),
    ("--a", "a^#1"),
    ("!!a", "a^#1"),
    ("a.b + 1", "_+_(\n  a^#1.b^#2,\n  1^#3\n)^#4"),
    ("a || b || c", "_||_(\n  _||_(\n    a^#1,\n    b^#2\n  )^#4,\n  c^#3\n)^#5"),
    ("a ? b : c ? d : e", "_?_:_(\n  a^#1,\n  b^#2,\n  _?_:_(\n    c^#3,\n    d^#4,\n    e^#5\n  )^#6\n)^#7"),
    ("a.?b[?0]", '_[?_](\n  _?._(\n    a^#1,\n    "b"^#2\n  )^#3,\n  0^#4\n)^#5'),
    ('{?"k": v}', '{\n  ?"k"^#1:v^#2^#3\n}^#4'),
    (".pkg.Msg{?f: 1}", ".pkg.Msg{\n  ?f:1^#3^#4\n}^#5"),
    ("has(a.b.c)", "a^#1.b^#2.c~test-only^#4"),
    ("1 in [1]", "@in(\n  1^#1,\n  [\n    1^#2\n  ]^#3\n)^#4"),
    ("f()", "f()^#1"),
    ("x.f(1)", "x^#1.f(\n  1^#2\n)^#3"),
    (
        "[1].all(x, x > 0)",
        "__comprehension__(\n  // Variable\n  x,\n  // Target\n  [\n    1^#1\n  ]^#2,\n  // Accumulator\n  @result,\n"
        "  // Init\n  true^#7,\n  // LoopCondition\n  @not_strictly_false(\n    @result^#8\n  )^#9,\n"
        "  // LoopStep\n  _&&_(\n    @result^#10,\n    _>_(\n      x^#4,\n      0^#5\n    )^#6\n  )^#11,\n"
        "  // Result\n  @result^#12)^#13",
    ),
]


@pytest.mark.parametrize(("text", "expected"), DUMPS)
def test_dump(text: str, expected: str) -> None:
    assert dump(kcel.parse(text)) == expected


_EOF_EXPECTED = (
    "ERROR: <input>:{}: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', "
    "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}"
)

ERRORS = [
    ("", "ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
     "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | \n | ^"),
    ("a.true", None),
    ("self.true == 1", "ERROR: <input>:1:6: Syntax error: mismatched input 'true' expecting IDENTIFIER\n"
     " | self.true == 1\n | .....^"),
    ("M{in: 1}", None),
    ("if", "ERROR: <input>:1:1: reserved identifier: if\n | if\n | ^"),
    ("a.all(1, true)", "ERROR: <input>:1:7: argument must be a simple name\n | a.all(1, true)\n | ......^"),
    ("a.map(b.c, 1)", "ERROR: <input>:1:8: argument is not an identifier\n | a.map(b.c, 1)\n | .......^"),
    ("has(a)", "ERROR: <input>:1:5: invalid argument to has() macro\n | has(a)\n | ....^"),
    ("m.all(k, k, true)", "ERROR: <input>:1:10: duplicate variable name: k\n | m.all(k, k, true)\n | .........^"),
    ("l.map(@result, 1)", None),
    ("cel.bind(1, 2, 3)", "ERROR: <input>:1:10: cel.bind() variable names must be simple identifiers\n"
     " | cel.bind(1, 2, 3)\n | .........^"),
    ("9223372036854775808", "ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^"),
    ("18446744073709551616u", "ERROR: <input>:1:1: invalid uint literal\n | 18446744073709551616u\n | ^"),
    ("1e999", "ERROR: <input>:1:1: invalid double literal\n | 1e999\n | ^"),
    # cel-go v0.29.2: ANTLR's lexer rejects the escape and lexes on from the closing quote
    ('"\\q"', 'ERROR: <input>:1:1: Syntax error: token recognition error at: \'"\\q\'\n | "\\q"\n | ^\n'
     'ERROR: <input>:1:4: Syntax error: token recognition error at: \'"\'\n | "\\q"\n | ...^\n'
     "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
     "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | \"\\q\"\n | ....^"),
    ('"\\ud800"', 'ERROR: <input>:1:1: invalid unicode code point\n | "\\ud800"\n | ^'),
    ("b'\\u00ff'", "ERROR: <input>:1:1: unable to unescape string\n | b'\\u00ff'\n | ^"),
    # ANTLR lexes on past a character no token takes; the parser then finds the input ended (cel-go v0.29.2)
    ("'\u00e9' + @", "ERROR: <input>:1:7: Syntax error: token recognition error at: '@'\n | '\u00e9' + @\n"
     " | .\uff0e....^\n" + _EOF_EXPECTED.format("1:8") + "\n | '\u00e9' + @\n | .\uff0e.....^"),
    ("\u00e9", "ERROR: <input>:1:1: Syntax error: token recognition error at: '\u00e9'\n | \u00e9\n | \uff3e\n"
     + _EOF_EXPECTED.format("1:2") + "\n | \u00e9\n | \uff0e^"),
    ("a +\n  'abc", "ERROR: <input>:2:3: Syntax error: token recognition error at: ''abc'\n |   'abc\n | ..^\n"
     + _EOF_EXPECTED.format("2:7") + "\n |   'abc\n | ......^"),
    ("(a.b){}", "ERROR: <input>:1:6: expected a qualified message name before '{'\n | (a.b){}\n | .....^"),
    ("a index", None),
    ("if + else", "ERROR: <input>:1:1: reserved identifier: if\n | if + else\n | ^\n"
     "ERROR: <input>:1:6: reserved identifier: else\n | if + else\n | .....^"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "rendered"), ERRORS)
def test_error_rendering(text: str, rendered: str | None) -> None:
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(text)
    if rendered is not None:
        assert str(info.value) == rendered


def test_reserved_words_are_fields() -> None:
    assert kcel.parse("self.namespace").expr == Select(0, 0, 0, 0, Ident(0, 0, 0, 0, "self"), "namespace")


LITERALS = [
    ("42", 42), ("-42", -42), ("- 7", -7), ("0x2A", 42), ("-0x2A", -42), ("42u", Uint(42)), ("0x2Au", Uint(42)),
    ("-9223372036854775808", -(2**63)), ("18446744073709551615u", Uint(2**64 - 1)),
    ("1.5", 1.5), ("-1.5e3", -1500.0), (".5", 0.5), ("1e-3", 0.001), ("true", True), ("false", False), ("null", None),
    ('"a\\tb"', "a\tb"), ("'\\''", "'"), ('"\\x41\\101\\u0041\\U00000041"', "AAAA"), ("r'\\n'", "\\n"),
    ('R"\\d+"', "\\d+"), ('"""a\n"b"\n"""', 'a\n"b"\n'), ("'''x'''", "x"), ('"\\a\\b\\f\\v\\?\\`"', "\a\b\f\v?`"),
    ("b'abc'", b"abc"), ("b'\\xff\\377'", b"\xff\xff"), ("b'\u00ff'", b"\xc3\xbf"), ("br'\\x'", b"\\x"),
    ('"\u00e9\U0001f600"', "\u00e9\U0001f600"), ('"\\xff"', "\u00ff"), ("'a\r\nb'".replace("\r\n", ""), "ab"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value"), LITERALS)
def test_literals(text: str, value: object) -> None:
    node = kcel.parse(text).expr
    assert isinstance(node, Const)
    assert type(node.value) is type(value) and node.value == value


def test_macros_can_be_switched_off() -> None:
    assert isinstance(kcel.parse("a.all(x, x)").expr, Comprehension)
    call = kcel.parse("a.all(x, x)", macros=()).expr
    assert isinstance(call, Call) and call.function == "all"
    assert isinstance(kcel.parse("cel.bind(x, 1, x)", macros=STANDARD).expr, Call)


def test_macro_call_is_remembered_for_unparsing() -> None:
    parsed = kcel.parse("items.filter(i, i.ready).size() > 0")
    assert unparse(parsed) == "items.filter(i, i.ready).size() > 0"
    comprehension = next(n for n in walk(parsed.expr) if isinstance(n, Comprehension))
    assert parsed.macro_calls[comprehension.id].function == "filter"


def test_macro_nodes_point_at_the_call() -> None:
    parsed = kcel.parse("list.exists(e, e == 1)")
    assert {n.pos for n in walk(parsed.expr) if isinstance(n, Ident) and n.name == "@result"} == {11}


def test_positions_follow_cel_go() -> None:
    node = kcel.parse("a.b(c)[d]").expr
    assert isinstance(node, Call) and node.function == "_[_]" and node.pos == 6
    target = node.args[0]
    assert isinstance(target, Call) and target.pos == 3 and (target.start, target.end) == (0, 6)


UNPARSE = [
    ("a + b * c", "a + b * c"), ("(a + b) * c", "(a + b) * c"), ("a - (b - c)", "a - (b - c)"),
    ("a || (b || c)", "a || (b || c)"), ("a || b || c || d || e", "a || b || c || d || e"),
    ("(a ? b : c) ? d : e", "(a ? b : c) ? d : e"), ("!(!a)", "!(!a)"), ("-(-1)", "-(-1)"), ("-(1)", "-(1)"),
    ("(-1).f()", "(-1).f()"), ("-1.f()", "(-1).f()"), ("x.`a-b`.c", "x.`a-b`.c"), ("a.?b", "a.?b"),
    ("[?a, b]", "[?a, b]"),
    ("{'a': 1, ?b: c}", '{"a": 1, ?b: c}'), ("M{f: 1, ?g: 2}", "M{f: 1, ?g: 2}"), ("b'\\x00a'", 'b"\\x00a"'),
    ("'\\u0001\\n'", '"\\u0001\\n"'), ("1.0", "1.0"), ("-0.0", "-0.0"), ("1e100", "1e+100"), ("2u", "2u"),
    ("x.map(k, v, k + v)", "x.map(k, v, k + v)"), ("has(a.b)", "has(a.b)"), ("cel.bind(x, 1, x)", "cel.bind(x, 1, x)"),
    ("o.optMap(v, v + 1)", "o.optMap(v, v + 1)"), ("l.sortBy(x, -x)", "l.sortBy(x, -x)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), UNPARSE)
def test_unparse(text: str, expected: str) -> None:
    parsed = kcel.parse(text)
    assert unparse(parsed) == expected
    assert kcel.parse(expected).expr == parsed.expr


def test_equality_ignores_positions_but_not_types() -> None:
    assert kcel.parse("a  +  1").expr == kcel.parse("a+1").expr
    assert kcel.parse("[1]").expr != kcel.parse("[1u]").expr
    assert kcel.parse("[1]").expr != kcel.parse("[true]").expr
    assert isinstance(kcel.parse("[1]").expr, CreateList)


def test_grammar_has_no_conflicts() -> None:
    pytest.importorskip("interegular")
    Lark.open_from_package("kcel.parser", "cel.lark", parser="lalr", strict=True)


DEEP = {
    "parentheses": "(" * 10_000 + "a" + ")" * 10_000,
    "lists": "[" * 10_000 + "]" * 10_000,
    "maps": "{1:" * 10_000 + "1" + "}" * 10_000,
    "calls": "f(" * 10_000 + ")" * 10_000,
    "selects": "a" + ".b" * 10_000,
    "indexes": "a" + "[0]" * 10_000,
    "additions": "+".join(["1"] * 10_000),
    "ternaries": "a ? b : " * 10_000 + "c",
    "one megabyte": "a" * 1_000_000,
}


@pytest.mark.parametrize("name", DEEP)
def test_limits_end_in_a_compile_error_quickly(name: str) -> None:
    started = time.perf_counter()
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(DEEP[name])
    assert time.perf_counter() - started < 5.0  # stopped by a limit, not run to the end (a loaded CI machine is slow)
    assert str(info.value).startswith("ERROR: <input>:-1:0: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 250 + "]" * 250, None),
        ("[" * 251 + "]" * 251, "expression recursion limit exceeded: 250"),
        ("[" * 249 + "1" + "]" * 249, None),
        ("[" * 250 + "1" + "]" * 250, "expression recursion limit exceeded: 250"),
        ("a" + ".b" * 250, None),
        ("a" + ".b" * 251, "max recursion depth exceeded"),
        ("x" * 100_000, None),
        ("x" * 100_001, "expression code point size exceeds limit: size: 100001, limit 100000"),
    ],
)
def test_limits_are_cel_gos(text: str, message: str | None) -> None:
    if message is None:
        kcel.parse(text)
        return
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(text)
    assert info.value.messages == (message,)


def test_random_bytes_end_in_a_compile_error() -> None:
    rng = random.Random(7)
    for _ in range(200):
        text = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).decode("latin-1")
        try:
            kcel.parse(text)
        except kcel.CompileError:
            pass
    kcel.parse(os.linesep.join(["// comment", "a // trailing", "+ 1"]))
