"""The strings extension table (versions 0-4): every overload, error text, format clause and runtime cost.

Rows come from cel-spec's string_ext suite (translated into direct calls) and from cel-go
v0.29.2's ext/strings_test.go and ext/formatting_test.go. Where cel-go v0.29.2 and the suite
disagree, cel-go wins and the row says so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import kcel
from kcel.checker.types import DYN, INT, STRING, list_of
from kcel.errors import EvalError
from kcel.libs.strings import LIBRARY, MAX_VERSION, library
from kcel.temporal import Duration, Timestamp
from kcel.values import Optional, TypeValue, Uint

U = Uint
NAN, INF = math.nan, math.inf


@dataclasses.dataclass(frozen=True)
class Err:
    message: str


class Pairs(Mapping[Any, Any]):
    """A CEL map whose keys Python would merge (`true` and `1`), kept in the order written."""

    def __init__(self, *pairs: tuple[Any, Any]) -> None:
        self._pairs = pairs

    def __getitem__(self, key: Any) -> Any:
        return next(v for k, v in self._pairs if type(k) is type(key) and k == key)

    def __iter__(self) -> Iterator[Any]:
        return (k for k, _ in self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)


def impl(overload_id: str, version: int = 2) -> Any:
    return next(o.impl for o in library(version).overloads if o.id == overload_id)


def check(actual: Any, expected: Any) -> None:
    assert actual == expected and type(actual) is type(expected), (actual, expected)


def run(overload_id: str, args: tuple[Any, ...], expected: Any, version: int = 2) -> None:
    function = impl(overload_id, version)
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as info:
            function(*args)
        assert str(info.value) == expected.message
    else:
        check(function(*args), expected)


CALLS = [
    # charAt
    ("string_char_at_int", ("tacocat", 3), "o"),
    ("string_char_at_int", ("tacocat", 7), ""),
    ("string_char_at_int", ("©αT", 0), "©"),
    ("string_char_at_int", ("©αT", 1), "α"),
    ("string_char_at_int", ("©αT", 2), "T"),
    ("string_char_at_int", ("tacocat", 30), Err("index out of range: 30")),
    ("string_char_at_int", ("tacocat", -1), Err("index out of range: -1")),
    ("string_char_at_int", ("", 0), ""),
    # indexOf
    ("string_index_of_string", ("tacocat", ""), 0),
    ("string_index_of_string", ("tacocat", "ac"), 1),
    ("string_index_of_string", ("tacocat", "none"), -1),
    ("string_index_of_string", ("ta©o©αT", "©"), 2),
    ("string_index_of_string", ("ijk", "k"), 2),
    ("string_index_of_string", ("hello wello", "hello wello"), 0),
    ("string_index_of_string", ("hello wello", "elbo room!!"), -1),
    ("string_index_of_string", ("hello wello", "elbo room!!!"), -1),
    ("string_index_of_string", ("", ""), 0),
    ("string_index_of_string", ("", "a"), -1),
    ("string_index_of_string_int", ("tacocat", "", 3), 3),
    ("string_index_of_string_int", ("tacocat", "a", 3), 5),
    ("string_index_of_string_int", ("tacocat", "at", 3), 5),
    ("string_index_of_string_int", ("ta©o©αT", "©", 3), 4),
    ("string_index_of_string_int", ("ta©o©αT", "©αT", 3), 4),
    ("string_index_of_string_int", ("ta©o©αT", "©α", 5), -1),
    ("string_index_of_string_int", ("hello wello", "ello", 6), 7),
    # cel-spec's value_errors expects an error here; cel-go v0.29.2 returns -1 (and clamps '').
    ("string_index_of_string_int", ("tacocat", "a", 30), -1),
    ("string_index_of_string_int", ("tacocat", "", 7), 7),
    ("string_index_of_string_int", ("tacocat", "", 30), 7),
    ("string_index_of_string_int", ("tacocat", "", -1), Err("index out of range: -1")),
    ("string_index_of_string_int", ("tacocat", "a", -5), Err("index out of range: -5")),
    # lastIndexOf
    ("string_last_index_of_string", ("", "@@"), -1),
    ("string_last_index_of_string", ("tacocat", ""), 7),
    ("string_last_index_of_string", ("tacocat", "at"), 5),
    ("string_last_index_of_string", ("tacocat", "none"), -1),
    ("string_last_index_of_string", ("ta©o©αT", "©"), 4),
    ("string_last_index_of_string", ("hello wello", "low"), -1),
    ("string_last_index_of_string", ("hello wello", "elbo room!!"), -1),
    ("string_last_index_of_string", ("hello wello", "hello wello"), 0),
    ("string_last_index_of_string", ("é", "ab"), -1),
    ("string_last_index_of_string_int", ("tacocat", "", 3), 3),
    ("string_last_index_of_string_int", ("tacocat", "a", 3), 1),
    ("string_last_index_of_string_int", ("ta©o©αT", "©", 3), 2),
    ("string_last_index_of_string_int", ("ta©o©αT", "©α", 4), 4),
    ("string_last_index_of_string_int", ("hello wello", "ello", 6), 1),
    ("string_last_index_of_string_int", ("bananananana", "nana", 7), 6),
    ("string_last_index_of_string_int", ("bananananana", "nana", 10), 8),
    # cel-spec's value_errors expects an error here; cel-go v0.29.2 returns -1 (and clamps '').
    ("string_last_index_of_string_int", ("tacocat", "a", 30), -1),
    ("string_last_index_of_string_int", ("tacocat", "", 7), 7),
    ("string_last_index_of_string_int", ("tacocat", "", 30), 7),
    ("string_last_index_of_string_int", ("tacocat", "a", -1), Err("index out of range: -1")),
    ("string_last_index_of_string_int", ("tacocat", "", -1), Err("index out of range: -1")),
    # lowerAscii / upperAscii
    ("string_lower_ascii", ("TacoCat",), "tacocat"),
    ("string_lower_ascii", ("TacoCÆt",), "tacocÆt"),
    ("string_lower_ascii", ("TacoCÆt Xii",), "tacocÆt xii"),
    ("string_lower_ascii", ("İSTANBUL",), "İstanbul"),
    ("string_upper_ascii", ("tacoCat",), "TACOCAT"),
    ("string_upper_ascii", ("tacoCαt",), "TACOCαT"),
    ("string_upper_ascii", ("TacoCÆt Xii",), "TACOCÆT XII"),
    ("string_upper_ascii", ("straße",), "STRAßE"),
    # replace
    ("string_replace_string_string", ("12 days 12 hours", "{0}", "2"), "12 days 12 hours"),
    ("string_replace_string_string", ("{0} days {0} hours", "{0}", "2"), "2 days 2 hours"),
    ("string_replace_string_string", ("1 ©αT taco", "αT", "o©α"), "1 ©o©α taco"),
    ("string_replace_string_string", ("hello hello", "", "_"), "_h_e_l_l_o_ _h_e_l_l_o_"),
    ("string_replace_string_string", ("hello hello", "h", ""), "ello ello"),
    ("string_replace_string_string_int", ("{0} days {0} hours", "{0}", "2", 1), "2 days {0} hours"),
    ("string_replace_string_string_int", ("hello hello", "he", "we", -1), "wello wello"),
    ("string_replace_string_string_int", ("hello hello", "he", "we", -7), "wello wello"),
    ("string_replace_string_string_int", ("hello hello", "he", "we", 0), "hello hello"),
    ("string_replace_string_string_int", ("©©", "", "_", 2), "_©_©"),
    # split
    ("string_split_string", ("hello world", " "), ["hello", "world"]),
    ("string_split_string", ("a©c", ""), ["a", "©", "c"]),
    ("string_split_string", ("", ""), []),
    ("string_split_string", ("", ","), [""]),
    ("string_split_string_int", ("hello world events!", " ", 0), []),
    ("string_split_string_int", ("hello world events!", " ", 1), ["hello world events!"]),
    ("string_split_string_int", ("hello world events!", " ", 2), ["hello", "world events!"]),
    ("string_split_string_int", ("o©o©o©o", "©", -1), ["o", "o", "o", "o"]),
    ("string_split_string_int", ("a©c", "", 2), ["a", "©c"]),
    ("string_split_string_int", ("a©c", "", 5), ["a", "©", "c"]),
    ("string_split_string_int", ("", "", 3), []),
    # substring
    ("string_substring_int", ("tacocat", 4), "cat"),
    ("string_substring_int", ("tacocat", 7), ""),
    ("string_substring_int", ("tacocat", 40), Err("index out of range: 40")),
    ("string_substring_int", ("tacocat", -1), Err("index out of range: -1")),
    ("string_substring_int_int", ("tacocat", 0, 4), "taco"),
    ("string_substring_int_int", ("tacocat", 4, 4), ""),
    ("string_substring_int_int", ("ta©o©αT", 2, 6), "©o©α"),
    ("string_substring_int_int", ("ta©o©αT", 7, 7), ""),
    ("string_substring_int_int", ("tacocat", 1, 50), Err("index out of range: 50")),
    ("string_substring_int_int", ("tacocat", 49, 50), Err("index out of range: 49")),
    ("string_substring_int_int", ("tacocat", -1, 2), Err("index out of range: -1")),
    ("string_substring_int_int", ("tacocat", 4, 3), Err("invalid substring range. start: 4, end: 3")),
    # trim: Unicode White_Space only; U+001C..U+001F (which str.strip() drops) stay
    ("string_trim", (" \f\n\r\t\vtext  ",), "text"),
    ("string_trim", ("\u0085\u00a0\u1680text",), "text"),
    ("string_trim", ("text\u2000\u2001\u2002\u2003\u2004\u2004\u2006\u2007\u2008\u2009",), "text"),
    ("string_trim", ("\u200atext\u2028\u2029\u202f\u205f\u3000",), "text"),
    ("string_trim", ("\u180etext\u200b\u200c\u200d\u2060\ufeff",), "\u180etext\u200b\u200c\u200d\u2060\ufeff"),
    ("string_trim", ("\x1ctext\x1f",), "\x1ctext\x1f"),
    # join (version 2)
    ("list_join", (["x", "y"],), "xy"),
    ("list_join", ([],), ""),
    ("list_join_string", (["x", "y"], "-"), "x-y"),
    ("list_join_string", ([], "-"), ""),
    ("list_join_string", (("©", "α"), "·"), "©·α"),
    ("list_join", (["a", 1],), Err("join: invalid input: 1")),
    ("list_join_string", (["a", U(2)], ","), Err("join: invalid input: 2")),
    ("list_join_string", (["a", 1e6], ","), Err("join: invalid input: 1e+06")),
    ("list_join_string", (["a", True], ","), Err("join: invalid input: true")),
    ("list_join_string", (["a", None], ","), Err("join: invalid input: 0")),
    ("list_join_string", (["a", b"hi"], ","), Err("join: invalid input: [104 105]")),
    ("list_join_string", (["a", [1, "a"]], ","), Err("join: invalid input: [1, a]")),
    ("list_join_string", (["a", {"k": 1.5}], ","), Err("join: invalid input: {k: 1.5}")),
    ("list_join_string", (["a", Optional(1)], ","), Err("join: invalid input: optional(1)")),
    ("list_join_string", ([True, "a"], ","), Err("no such overload: join(list, string)")),  # the type guard's first
    # strings.quote
    ("strings_quote", ("first\nsecond",), '"first\\nsecond"'),
    ("strings_quote", ("bell\a",), '"bell\\a"'),
    ("strings_quote", ("\bbackspace",), '"\\bbackspace"'),
    ("strings_quote", ("\fform feed",), '"\\fform feed"'),
    ("strings_quote", ("carriage \r return",), '"carriage \\r return"'),
    ("strings_quote", ("horizontal tab\t",), '"horizontal tab\\t"'),
    ("strings_quote", ("vertical \v tab",), '"vertical \\v tab"'),
    ("strings_quote", ("double \\\\ slash",), '"double \\\\\\\\ slash"'),
    ("strings_quote", ("two escape sequences \a\n",), '"two escape sequences \\a\\n"'),
    ("strings_quote", ("verbatim",), '"verbatim"'),
    ("strings_quote", ("ends with \\",), '"ends with \\\\"'),
    ("strings_quote", ("\\ starts with",), '"\\\\ starts with"'),
    ("strings_quote", ("printable unicode😀",), '"printable unicode😀"'),
    ("strings_quote", ('mid string " quote',), '"mid string \\" quote"'),
    ("strings_quote", ('single-quote with "double quote"',), '"single-quote with \\"double quote\\""'),
    ("strings_quote", ("size('ÿ')",), "\"size('ÿ')\""),
    ("strings_quote", ("size('πέντε')",), "\"size('πέντε')\""),
    ("strings_quote", ("завтра",), '"завтра"'),
    ("strings_quote", ("\U0001f431\U0001f600\U0001f61b",), '"\U0001f431\U0001f600\U0001f61b"'),
    ("strings_quote", ("ta©o©αT",), '"ta©o©αT"'),
    ("strings_quote", ("",), '""'),
    ("strings_quote", ("nul \x00 stays",), '"nul \x00 stays"'),
    ("strings_quote", ("lone \ud800",), '"lone \ufffd"'),
    # reverse (version 3)
    ("string_reverse", ("",), ""),
    ("string_reverse", ("☺",), "☺"),
    ("string_reverse", ("Ta©oCαt",), "tαCo©aT"),
    ("string_reverse", ("John Smith",), "htimS nhoJ"),
    ("string_reverse", ("\u180e\u200b\u200c\u200d\u2060\ufeff",), "\ufeff\u2060\u200d\u200c\u200b\u180e"),
]


@pytest.mark.parametrize(("overload_id", "args", "expected"), CALLS)
def test_call(overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    run(overload_id, args, expected, version=3 if overload_id == "string_reverse" else 2)


JOIN_V0 = [
    ("list_join", (["x", "y"],), "xy"),
    ("list_join_string", (["x", "y"], "-"), "x-y"),
    ("list_join", (["a", 1],), Err("unsupported type conversion from 'int' to string")),
    ("list_join", ([U(1)],), Err("unsupported type conversion from 'uint' to string")),
    ("list_join", ([1.5],), Err("type conversion error from Double to 'string'")),
    ("list_join", ([False],), Err("type conversion error from bool to 'string'")),
    ("list_join", ([b""],), Err("type conversion error from Bytes to 'string'")),
    ("list_join", ([None],), Err("type conversion error from 'null_type' to 'string'")),
    ("list_join_string", ([[]], "-"), Err("type conversion error from list to 'string'")),
    ("list_join_string", ([{}], "-"), Err("type conversion error from map to 'string'")),
]


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize(("overload_id", "args", "expected"), JOIN_V0)
def test_join_before_version_2(version: int, overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    run(overload_id, args, expected, version)


T_UTC = Timestamp.parse("2023-02-03T23:31:20+00:00")
T_PARIS = Timestamp.parse("2023-02-03T23:31:20.5+01:00")
MSG = "cel.expr.conformance.proto3.TestAllTypes"
STRING_PROBLEM = (
    "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
    "types, durations, and timestamps, was given "
)
NO_FUNCTION = "error during formatting: no formatting function for "

# The legacy formatter (versions 1-3, Kubernetes): cel-go's formatting_test.go runs it at version 3.
LEGACY_FORMAT = [
    ("no substitution", [], "no substitution"),
    ("str is %s and some more", ["filler"], "str is filler and some more"),
    ("%% and also %%", [], "% and also %"),
    ("%%%s%%", ["text"], "%text%"),
    ("%s%%", ["percent on the right"], "percent on the right%"),
    ("%%%s", ["percent on the left"], "%percent on the left"),
    ("%d %d %d, %s %s %s, %d %d %d, %s %s %s", [1, 2, 3, "A", "B", "C", 4, 5, 6, "D", "E", "F"],
     "1 2 3, A B C, 4 5 6, D E F"),
    ("%%escaped %s%%", ["percent"], "%escaped percent%"),
    ("ünïcödé %s ✓", ["ok"], "ünïcödé ok ✓"),
    ("%.3f", [1.2345], "1.234"),
    ("%.3f", ["NaN"], "NaN"),
    ("%f", [2.71828], "2.718280"),
    ("%f", ["Infinity"], "\u221e"),
    ("%f", ["-Infinity"], "-\u221e"),
    ("NaN: %f, infinity: %f", [NAN, INF], "NaN: NaN, infinity: \u221e"),
    ("%f", [1234567.891], "1,234,567.891000"),
    ("%.2f", [-1234.5], "-1,234.50"),
    ("%.2f", [-0.001], "-0.00"),
    ("%.2f", [-0.0], "0.00"),
    ("%.0f", [123.0], "123"),
    ("%.0f", [3.5001], "4"),
    ("%.0f", [3.4999], "3"),
    ("%.0f", [1.5], "2"),
    ("%.0f", [2.5], "2"),
    ("%.0f", [0.3], "0"),
    ("%.3f", [123.4999], "123.500"),
    ("%.3f", [123.4994], "123.499"),
    ("%.3f", [-123.4999], "-123.500"),
    ("%.5f", [-1.2], "-1.20000"),
    ("%.1f", [1.0], "1.0"),
    ("%.200f", [1.0], "1." + "0" * 200),
    # x/text keeps the minimum fraction digits in a uint8: 300 & 0xFF = 44
    ("%.300f", [1.0], "1." + "0" * 44),
    ("%.99999999f", [1.0], "%!(NOVERB)"),
    ("%e", [2.71828], "2.718280\u00d710\u2070\u2070"),
    ("%.6e", [1052.032911275], "1.052033\u00d710\u2070\u00b3"),
    ("%e", [-0.000123], "-1.230000\u00d710\u207b\u2070\u2074"),
    ("%e", [0.0], "0.000000\u00d710\u2070\u2070"),
    ("%e", [1e300], "1.000000\u00d710\u00b3\u2070\u2070"),
    # cel-go passes the precision as a width, so digits stay at 6 and short results are padded
    ("%.2e", [2.5], "2.500000\u00d710\u2070\u2070"),
    ("%.20e", [1.0], "       1.000000\u00d710\u2070\u2070"),
    ("%e", [NAN], "   NaN"),
    ("%e", ["-Infinity"], "    -\u221e"),
    ("%.0e", [INF], "\u221e"),
    ("this is 5 in binary: %b", [5], "this is 5 in binary: 101"),
    ("this is -5 in binary: %b", [-5], "this is -5 in binary: -101"),
    ("unsigned 64 in binary: %b", [U(64)], "unsigned 64 in binary: 1000000"),
    ("bit set from bool: %b", [True], "bit set from bool: 1"),
    ("%b", [False], "0"),
    ("%o", [11], "13"),
    ("%o", [-11], "-13"),
    ("this is an unsigned octal: %o", [U(65535)], "this is an unsigned octal: 177777"),
    ("%x is 30 in hexadecimal", [30], "1e is 30 in hexadecimal"),
    ("%X is 20 in hexadecimal", [30], "1E is 20 in hexadecimal"),
    ("%x is -30 in hexadecimal", [-30], "-1e is -30 in hexadecimal"),
    ("%X is 6000 in hexadecimal", [U(6000)], "1770 is 6000 in hexadecimal"),
    ("%x", ["Hello world!"], "48656c6c6f20776f726c6421"),
    ("%X", ["Hello world!"], "48656C6C6F20776F726C6421"),
    ("%x", ["©"], "c2a9"),
    ("%x", [b"byte string"], "6279746520737472696e67"),
    ("%x", [b"\x00\x00byte string\x00"], "00006279746520737472696e6700"),
    ("%X", [b"byte string"], "6279746520737472696E67"),
    ("%d", [U(64)], "64"),
    ("%d", [-9223372036854775808], "-9223372036854775808"),
    ("%s", [2.71], "2.71"),
    ("%s", [0.000000002], "2e-09"),
    ("%s", [1e6], "1e+06"),
    ("%s", [123456.0], "123456"),
    ("%s", [-0.0], "-0"),
    ("%s", [NAN], "NaN"),
    ("%s", [INF], "+Inf"),
    ("%s", [-INF], "-Inf"),
    ("null: %s", [None], "null: null"),
    ("%s", [999999999999], "999999999999"),
    ("%s", [U(7)], "7"),
    ("some bytes: %s", [b"xyz"], "some bytes: xyz"),
    ("type is %s", [TypeValue("string")], "type is string"),
    ("%s", [T_UTC], "2023-02-03T23:31:20Z"),
    ("%s", [T_PARIS], "2023-02-03T23:31:20.5+01:00"),
    ("%s", [Duration.parse("1h45m47s")], "6347s"),
    ("%s", [Duration.parse("2ns")], "0.000000002s"),
    ("true bool: %s, false bool: %s", [True, False], "true bool: true, false bool: false"),
    ("%s", [[2.71]], "[2.710000]"),
    ("%s", [[0.000000002]], "[0.000000]"),
    ("%s", [[NAN, INF, -INF]], '["NaN", "+Inf", "-Inf"]'),
    ("%s", [["abc", 3.14, None, [9, 8, 7, 6], T_UTC]],
     '["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]'),
    ("%s", [[6, 4.2, "a string"]], '[6, 4.200000, "a string"]'),
    ("%s", [[[1, 2, [3.0, 4]]]], "[[1, 2, [3.000000, 4]]]"),
    ("%s", [[U(32), b"def", TypeValue("string"), Duration.parse("7m"), True]],
     '[32, b"def", string, duration("420s"), true]'),
    ("%s", [['quote " and \n', "\u00a0é😀\x7f"]], '["quote \\" and \\n", "\\u00a0é😀\\x7f"]'),
    ("%s", [{"key1": b"xyz", "key5": None, "key2": Duration.parse("2h"), "key4": True, "key3": 2.71828}],
     '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}'),
    ("map with multiple key types: %s", [Pairs((1, "value1"), (U(2), "value2"), (True, NAN))],
     'map with multiple key types: {1:"value1", 2:"value2", true:"NaN"}'),
    ("%s", [Pairs(("strKey", "x"), (True, 42), (6, Duration.parse("7m2s")))],
     '{"strKey":"x", 6:duration("422s"), true:42}'),
    ("%s", [{}], "{}"),
    ("%s", [[]], "[]"),
    ("%s %s", [{"a": [1]}, [{"b": None}]], '{"a":[1]} [{"b":null}]'),
    # errors
    ("%a", [1], Err('could not parse formatting clause: unrecognized formatting clause "a"')),
    ("double is %E", [0.5], Err('could not parse formatting clause: unrecognized formatting clause "E"')),
    ("%é", [1], Err('could not parse formatting clause: unrecognized formatting clause "\u00c3"')),
    ("%d %d %d", [0, 1], Err("index 2 out of range")),
    ("%s %s", ["abc"], Err("index 1 out of range")),
    ("%", [], Err("index 0 out of range")),
    ("filler %", [1], Err("unexpected end of string")),
    ("double is %.34", [5.0], Err(
        "could not parse formatting clause: error while parsing precision: could not find end of precision specifier")),
    ("%.f", [5.0], Err("could not parse formatting clause: error while parsing precision: "
                       'error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax')),
    ("%.99999999999999999999f", [5.0], Err(
        "could not parse formatting clause: error while parsing precision: error while converting precision to "
        'integer: strconv.Atoi: parsing "99999999999999999999": value out of range')),
    ("string is %b", ["abc"],
     Err("error during formatting: only integers and bools can be formatted as binary, was given string")),
    ("%d", [Duration.parse("30m2s")], Err(
        "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration")),
    ("%d", [2.5], Err("error during formatting: decimal clause can only be used on integers, was given double")),
    ("octal: %o", ["a string"],
     Err("error during formatting: octal clause can only be used on integers, was given string")),
    ("double is %x", [0.5], Err(
        "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double")),
    ("%f", [2], Err("error during formatting: fixed-point clause can only be used on doubles, was given int")),
    ("%f", ["1.5"], Err("error during formatting: fixed-point clause can only be used on doubles, was given string")),
    ("%e", [True], Err("error during formatting: scientific clause can only be used on doubles, was given bool")),
    ("null: %d", [None],
     Err("error during formatting: decimal clause can only be used on integers, was given null_type")),
    ("null: %e", [None],
     Err("error during formatting: scientific clause can only be used on doubles, was given null_type")),
    ("null: %f", [None],
     Err("error during formatting: fixed-point clause can only be used on doubles, was given null_type")),
    ("null: %X", [None], Err(
        "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given null_type"
    )),
    ("null: %b", [None],
     Err("error during formatting: only integers and bools can be formatted as binary, was given null_type")),
    ("null: %o", [None],
     Err("error during formatting: octal clause can only be used on integers, was given null_type")),
    ("%s", [Optional(1)], Err(STRING_PROBLEM + "optional_type")),
    ("%s", [[1, 2, Optional()]], Err(NO_FUNCTION + "optional_type")),
    ("%s", [Pairs((1, "a"), (2, Optional()))], Err(NO_FUNCTION + "optional_type")),
    ("%s", [{1.5: "a"}], Err("error during formatting: no formatting function for map key of type double")),
    ("%s", [b"\xff"], Err(
        'error during formatting: could not convert argument "invalid UTF-8 in bytes, cannot convert to string" '
        "to string")),
]  # fmt: skip


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize(("text", "args", "expected"), LEGACY_FORMAT)
def test_legacy_format(version: int, text: str, args: list[Any], expected: Any) -> None:
    run("string_format", (text, args), expected, version)


# The cel-spec formatter (version 4): cel-spec's string_ext format sections.
V4_FORMAT = [
    ("no substitution", [], "no substitution"),
    ("%%%s%%", ["text"], "%text%"),
    ("%d %d %d, %s %s %s, %d %d %d, %s %s %s", [1, 2, 3, "A", "B", "C", 4, 5, 6, "D", "E", "F"],
     "1 2 3, A B C, 4 5 6, D E F"),
    ("%.3f", [1.2345], "1.234"),
    ("this is 5 in binary: %b", [5], "this is 5 in binary: 101"),
    ("unsigned 64 in binary: %b", [U(64)], "unsigned 64 in binary: 1000000"),
    ("bit set from bool: %b", [True], "bit set from bool: 1"),
    ("%o", [11], "13"),
    ("this is an unsigned octal: %o", [U(65535)], "this is an unsigned octal: 177777"),
    ("%x is 20 in hexadecimal", [30], "1e is 20 in hexadecimal"),
    ("%X is 20 in hexadecimal", [30], "1E is 20 in hexadecimal"),
    ("%X is 6000 in hexadecimal", [U(6000)], "1770 is 6000 in hexadecimal"),
    ("%x", ["Hello world!"], "48656c6c6f20776f726c6421"),
    ("%X", [b"byte string"], "6279746520737472696E67"),
    ("%.6e", [1052.032911275], "1.052033e+03"),
    ("%f", [2.71828], "2.718280"),
    ("%f", [2], "2.000000"),
    ("%f", [U(3)], "3.000000"),
    ("%f", [1234567.891], "1234567.891000"),
    ("%e", [2.71828], "2.718280e+00"),
    ("%e", [2], "2.000000e+00"),
    ("%e", [U(3)], "3.000000e+00"),
    ("%.2e", [-0.000123], "-1.23e-04"),
    ("%e", [NAN], "NaN"),
    ("%e", [INF], "Infinity"),
    ("%e", [-INF], "-Infinity"),
    ("%d", [NAN], "NaN"),
    ("%d", [INF], "Infinity"),
    ("%d", [-INF], "-Infinity"),
    ("%d", [2.5], "2.5"),
    ("%f", [NAN], "NaN"),
    ("%f", [-INF], "-Infinity"),
    ("%d", [U(64)], "64"),
    ("%.99999999f", [1.5], "%!(NOVERB)%!(EXTRA float64=1.5)"),
    ("%s", [None], "null"),
    ("%s", [999999999999], "999999999999"),
    ("%s", [b"xyz"], "xyz"),
    ("%s", [TypeValue("string")], "string"),
    ("%s", [T_UTC], "2023-02-03T23:31:20Z"),
    ("%s", [T_PARIS], "2023-02-03T22:31:20.5Z"),
    ("%s", [Duration.parse("1h45m47s")], "6347s"),
    ("%s", [["abc", 3.14, None, [9, 8, 7, 6], Timestamp.parse("2023-02-03T23:31:20Z")]],
     "[abc, 3.14, null, [9, 8, 7, 6], 2023-02-03T23:31:20Z]"),
    ("%s", [{"key1": b"xyz", "key5": None, "key2": Duration.parse("2h"), "key4": True, "key3": 2.71828}],
     "{key1: xyz, key2: 7200s, key3: 2.71828, key4: true, key5: null}"),
    ("%s", [Pairs((1, "value1"), (U(2), "value2"), (True, NAN))], "{1: value1, 2: value2, true: NaN}"),
    ("%s", [Pairs(("strKey", "x"), (6, Duration.parse("422s")), (True, 42))], "{6: 422s, strKey: x, true: 42}"),
    ("%s, %s", [True, False], "true, false"),
    ("%s, %s", [32, 56.8], "32, 56.8"),
    ("%s", [[NAN, INF, -INF]], "[NaN, Infinity, -Infinity]"),
    ("%s", [1e21], "1000000000000000000000"),
    ("%s", [1e-7], "0.0000001"),
    ("%.0f", [2.5], "2"),
    ("%.3f", [-123.4999], "-123.500"),
    ("%.5f", [-1.2], "-1.20000"),
    ("%a", [1], Err('could not parse formatting clause: unrecognized formatting clause "a"')),
    ("%d %d %d", [0, 1], Err("index 2 out of range")),
    ("string is %b", ["abc"],
     Err("error during formatting: only ints, uints, and bools can be formatted as binary, was given string")),
    ("%d", [Duration.parse("30m2s")], Err("error during formatting: decimal clause can only be used on ints, uints, "
                                          "and doubles, was given google.protobuf.Duration")),
    ("octal: %o", ["a string"],
     Err("error during formatting: octal clause can only be used on ints and uints, was given string")),
    ("double is %x", [0.5],
     Err("error during formatting: only ints, uints, bytes, and strings can be formatted as hex, was given double")),
    ("null: %f", [None], Err(
        "error during formatting: fixed-point clause can only be used on ints, uints, and doubles, was given null_type"
    )),
    ("null: %e", [None], Err(
        "error during formatting: scientific clause can only be used on ints, uints, and doubles, was given null_type"
    )),
    ("%s", [[1, 2, Optional(1)]], Err(STRING_PROBLEM + "optional_type")),
]  # fmt: skip


@pytest.mark.parametrize(("text", "args", "expected"), V4_FORMAT)
def test_v4_format(text: str, args: list[Any], expected: Any) -> None:
    run("string_format", (text, args), expected, version=4)


COMMON_IDS = {
    "string_char_at_int", "string_index_of_string", "string_index_of_string_int", "string_last_index_of_string",
    "string_last_index_of_string_int", "string_lower_ascii", "string_upper_ascii", "string_replace_string_string",
    "string_replace_string_string_int", "string_split_string", "string_split_string_int", "string_substring_int",
    "string_substring_int_int", "string_trim", "list_join", "list_join_string",
}  # fmt: skip
V1_IDS = COMMON_IDS | {"string_format", "strings_quote"}
V3_IDS = V1_IDS | {"string_reverse"}


@pytest.mark.parametrize(("version", "ids"), [(0, COMMON_IDS), (1, V1_IDS), (2, V1_IDS), (3, V3_IDS), (4, V3_IDS)])
def test_overload_ids_per_version(version: int, ids: set[str]) -> None:
    overloads = library(version).overloads
    assert {o.id for o in overloads} == ids
    assert len(overloads) == len(ids)


@pytest.mark.parametrize(
    ("version", "overload_id", "name"),
    [
        (0, "list_join", "list_join_v0"),
        (1, "list_join_string", "list_join_string_v0"),
        (2, "list_join", "list_join"),
        (4, "list_join_string", "list_join_string"),
        (1, "string_format", "string_format"),
        (3, "string_format", "string_format"),
        (4, "string_format", "string_format_v2"),
    ],
)
def test_version_picks_implementation(version: int, overload_id: str, name: str) -> None:
    assert impl(overload_id, version).__name__ == name


@pytest.mark.parametrize("version", [-1, MAX_VERSION + 1])
def test_unsupported_version(version: int) -> None:
    with pytest.raises(ValueError, match="not supported"):
        library(version)


def test_kubernetes_uses_version_2() -> None:
    assert LIBRARY == library(2)
    assert LIBRARY.name == "strings"


SIGNATURES = [
    ("string_char_at_int", "charAt", (STRING, INT), STRING, True),
    ("string_index_of_string_int", "indexOf", (STRING, STRING, INT), INT, True),
    ("string_split_string_int", "split", (STRING, STRING, INT), list_of(STRING), True),
    ("list_join", "join", (list_of(STRING),), STRING, True),
    ("list_join_string", "join", (list_of(STRING), STRING), STRING, True),
    ("string_format", "format", (STRING, list_of(DYN)), STRING, True),
    ("strings_quote", "strings.quote", (STRING,), STRING, False),
]


@pytest.mark.parametrize(("overload_id", "function", "args", "result", "member"), SIGNATURES)
def test_signature(overload_id: str, function: str, args: tuple[Any, ...], result: Any, member: bool) -> None:
    overload = next(o for o in LIBRARY.overloads if o.id == overload_id)
    assert (overload.function, overload.args, overload.result, overload.member) == (function, args, result, member)


def test_every_overload_has_a_doc_example() -> None:
    for _, overloads in ((v, library(v).overloads) for v in range(MAX_VERSION + 1)):
        assert all(o.doc for o in overloads)


ROOK = "Rook takes 👑"  # 12 code points, 15 UTF-8 bytes
COSTS = [
    # indexOf/lastIndexOf: floor(UTF-8 bytes * 0.1)
    ("string_index_of_string", (ROOK, "o"), 1, 1),
    ("string_index_of_string", ("123456789", "o"), -1, 0),
    ("string_last_index_of_string_int", ("a" * 25, "a", 3), 3, 2),
    # ceil(code points * 0.1)
    ("string_lower_ascii", (ROOK,), ROOK.lower(), 2),
    ("string_upper_ascii", ("",), "", 0),
    ("string_substring_int", ("tacocat", 4), "cat", 1),
    ("string_substring_int_int", ("a" * 11, 0, 1), "a", 2),
    ("string_trim", ("  x  ",), "x", 1),
    # ceil(code points * 2 * 0.1): 12 code points cost ceil(2.4000000000000004)
    ("string_replace_string_string", (ROOK, " ", "x"), "Rookxtakesx👑", 3),
    ("string_split_string", ("a" * 15, ","), ["a" * 15], 3),
    ("string_split_string_int", ("a" * 5, ",", 1), ["a" * 5], 1),
    # join: ceil(size(result) * 2 * 0.1)
    ("list_join_string", (["a", "b"], "-"), "a-b", 1),
    ("list_join", (["a" * 16],), "a" * 16, 4),
    # strings.quote and format: ceil(size(first argument) * 0.1)
    ("strings_quote", ("a" * 11,), '"' + "a" * 11 + '"', 2),
    ("string_format", ("%s and %s and %s!!!", ["x", "y", "z"]), "x and y and z!!!", 2),
    # charAt and reverse: cel-go's default of 1
    ("string_char_at_int", (ROOK, 3), "k", 1),
    ("string_reverse", ("abc" * 20,), "cba" * 20, 1),
]


@pytest.mark.parametrize(("overload_id", "args", "result", "cost"), COSTS)
def test_runtime_cost(overload_id: str, args: tuple[Any, ...], result: Any, cost: int) -> None:
    overload = next(o for o in library(3).overloads if o.id == overload_id)
    assert overload.impl(*args) == result
    assert (1 if overload.cost is None else overload.cost(args, result)) == cost


# (expression, the compile error from 1.31 on, or None): cel-go's stringFormatValidator (ext/formatting.go), which
# Kubernetes' strings version 2 has since cel-go 0.18; a 1.30 API server (cel-go 0.17) checks these at run time only.
_DURING = "error during formatting: "
_PRINTABLE = "strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"
FORMAT_CHECKS = [
    ("'%d replicas'.format([name])", f"1:23: {_DURING}decimal clause can only be used on integers, was given string"),
    ("'%s'.format([n, n])", "1:12: too many arguments supplied to string.format (expected 1, got 2)"),
    ("'%x'.format([1.5])",
     f"1:14: {_DURING}only integers, byte buffers, and strings can be formatted as hex, was given double"),
    ("'%s'.format([[name, optional.of(1)]])",
     f"1:32: {_DURING}string clause can only be used on {_PRINTABLE}, was given optional_type"),
    ("'%a'.format([1])", '1:12: could not parse formatting clause: unrecognized formatting clause "a"'),
    ("'%d %s %f'.format([n, [name, d], 1.0])", None),
    ("'%d'.format([d])", None),  # dyn passes
    ("'%d'.format(l)", None),  # only list literals are checked
]  # fmt: skip


@pytest.mark.parametrize(("expr", "error"), FORMAT_CHECKS)
def test_literal_format_calls_are_checked_from_1_31(expr: str, error: str | None) -> None:
    variables = {"name": "string", "n": "int", "d": "dyn", "l": "list(int)"}
    try:  # 1.30 does not check format() (mixed lists still fail its homogeneous literal check)
        kcel.Env(variables=variables, k8s_version="1.30").compile(expr)
    except kcel.CompileError as err:
        assert all("expected type" in message for message in err.messages)
    env = kcel.Env(variables=variables, k8s_version="1.31")
    if error is None:
        env.compile(expr)
    else:
        with pytest.raises(kcel.CompileError) as info:
            env.compile(expr)
        assert str(info.value).splitlines()[0] == f"ERROR: <input>:{error}"


def test_format_lists_may_mix_types() -> None:
    """format()'s list is exempt from homogeneous literals in every version (1.30's cel-go, without the format
    validator, already exempted it: the reference engine answers `a 1`)."""
    for version in ("1.30", "1.31"):
        assert kcel.Env(k8s_version=version).compile("'%s %d'.format(['a', 1])").evaluate() == "a 1"
    with pytest.raises(kcel.CompileError, match="expected type 'string' but found 'int'"):
        kcel.Env(k8s_version="1.30").compile("['a', 1]")
