"""The CEL standard library's named functions: size, string tests, regex, conversions, type().

Operators (`+`, `<`, `[]`, ...) are planned directly from kcel.eval.runtime; timestamp and
duration functions live in kcel.libs.timestamps.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from typing import Any

from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    INT,
    STRING,
    UINT,
    A,
    B,
    list_of,
    map_of,
    type_of,
)
from kcel.errors import EvalError
from kcel.eval.arithmetic import check_int
from kcel.eval.runtime import type_of as runtime_type_of
from kcel.eval.sizes import actual_size
from kcel.gofloat import format_double
from kcel.goregex import GoRegexError, compile_go_regex, search_matches
from kcel.libs import CallEstimate, CallSite, ConstantCheck, Library, Overload, SizeEstimate, size_estimate
from kcel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint, decimal_int


def _tenth(n: int) -> int:
    return math.ceil(n * 0.1)


def _size(value: Any) -> int:
    return len(value)


# -- strings -----------------------------------------------------------------------------------


def contains_string(s: str, sub: str) -> bool:
    return sub in s


def starts_with_string(s: str, prefix: str) -> bool:
    return s.startswith(prefix)


def ends_with_string(s: str, suffix: str) -> bool:
    return s.endswith(suffix)


def compile_regex(pattern: str) -> Any:
    """Go's regexp (RE2 syntax), as cel-go uses; bad patterns are CEL errors with Go's text."""
    try:
        return compile_go_regex(pattern)
    except GoRegexError as err:
        raise EvalError(str(err)) from None


_PATTERN = ConstantCheck(1, compile_go_regex)  # OptOptimize compiles a literal pattern with the program


def matches_string(s: str, pattern: str) -> bool:
    return search_matches(compile_regex(pattern), s)


def _contains_cost(args: Sequence[Any], result: Any) -> int:
    return _tenth(actual_size(args[0])) * _tenth(actual_size(args[1]))


def _matches_cost(args: Sequence[Any], result: Any) -> int:
    return math.ceil((1 + actual_size(args[0])) * 0.1) * math.ceil(actual_size(args[1]) * 0.25)


def _affix_cost(args: Sequence[Any], result: Any) -> int:
    return _tenth(actual_size(args[1]))


def _first_arg_cost(args: Sequence[Any], result: Any) -> int:
    return _tenth(actual_size(args[0]))


# -- estimated costs (cel-go checker/cost.go functionCost) -------------------------------------------


def _contains_estimate(call: CallSite) -> CallEstimate:
    return CallEstimate(call.size(0).times(0.1).multiply(call.size(1).times(0.1)))


def matches_estimate(call: CallSite) -> CallEstimate:
    """The string (plus one, so that an empty one still costs) times a guess at the regex's states."""
    text = call.size(0).add(SizeEstimate(1, 1)).times(0.1)
    return CallEstimate(text.multiply(call.size(1).times(0.25)))


def _string_to_bytes_estimate(call: CallSite) -> CallEstimate:
    size = call.size(0)  # a code point is at most four bytes (Go's unguarded uint64 product wraps)
    return CallEstimate(size.times(0.1), SizeEstimate(size.min, size.max * 4 % 2**64))


def _bytes_to_string_estimate(call: CallSite) -> CallEstimate:
    size = call.size(0)
    return CallEstimate(size.times(0.1), SizeEstimate(size.min // 4, size.max))


_AFFIX_ESTIMATE = size_estimate(0.1, 1)  # the prefix or suffix (since cel-go v0.29)


# -- conversions -------------------------------------------------------------------------------
# cel-go's texts (common/types): a number out of range is `integer overflow` / `unsigned integer overflow`
# (overflow.go); text that strconv cannot parse, for whatever reason, is String.ConvertToType's one sentence.


def _string_conversion_error(target: str) -> EvalError:
    return EvalError(f"type conversion error from 'string' to '{target}'")


def double_to_int64(value: float) -> int:
    if math.isnan(value) or value <= float(INT64_MIN) or value >= float(INT64_MAX):
        raise EvalError("integer overflow")
    return int(value)


def uint64_to_int64(value: int) -> int:
    if value > INT64_MAX:
        raise EvalError("integer overflow")
    return int(value)


_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
_UINT_TEXT = re.compile(r"[0-9]+\Z")  # strconv.ParseUint takes no sign, not even `+`


def string_to_int64(text: str) -> int:
    if not _INT_TEXT.match(text):
        raise _string_conversion_error("int")
    value = decimal_int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _string_conversion_error("int")
    return value


def int64_to_uint64(value: int) -> Uint:
    if value < 0:
        raise EvalError("unsigned integer overflow")
    return Uint(value)


def double_to_uint64(value: float) -> Uint:
    if math.isnan(value) or value < 0 or value >= float(UINT64_MAX):
        raise EvalError("unsigned integer overflow")
    return Uint(int(value))


def string_to_uint64(text: str) -> Uint:
    if not _UINT_TEXT.match(text):
        raise _string_conversion_error("uint")
    value = decimal_int(text)
    if value > UINT64_MAX:
        raise _string_conversion_error("uint")
    return Uint(value)


# Go's strconv.ParseFloat, which cel-go's double(string) calls: a decimal mantissa with an optional e exponent, or a
# hexadecimal one (0x...) with a required p exponent, `_` between digits (strconv's underscoreOK), or a signed
# inf/infinity or an unsigned nan in any case. A finite number too large for a double is a range error.
_DECIMAL_FLOAT = re.compile(r"[+-]?(?P<m>[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?P<m>[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9][0-9_]*\Z")
_SPECIAL_FLOAT = re.compile(r"[+-]?inf(?:inity)?\Z|nan\Z", re.IGNORECASE)


def _go_underscores_ok(text: str) -> bool:
    """strconv's underscoreOK: every `_` stands between two digits (a `0x` prefix counts as a digit)."""
    saw = "^"
    if text[:1] in ("+", "-"):
        text = text[1:]
    hexadecimal = text[:2] in ("0x", "0X")
    if hexadecimal:
        saw, text = "0", text[2:]
    for ch in text:
        if "0" <= ch <= "9" or (hexadecimal and ch in "abcdefABCDEF"):
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def string_to_double(text: str) -> float:
    """Go's strconv.ParseFloat: decimal, hexadecimal and special values (`inf`, `NaN`), no Python-only forms."""
    if _SPECIAL_FLOAT.match(text):
        return float(text)
    decimal, hexadecimal = _DECIMAL_FLOAT.match(text), _HEX_FLOAT.match(text)
    found = decimal or hexadecimal
    if found is None or found["m"].strip("._") == "" or ("_" in text and not _go_underscores_ok(text)):
        raise _string_conversion_error("double")
    digits = text.replace("_", "")
    try:
        value = float(digits) if decimal else float.fromhex(digits)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise _string_conversion_error("double")
    return value


def bool_to_string(value: bool) -> str:
    return "true" if value else "false"


def bytes_to_string(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None


_BOOL_TEXT = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
              "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}  # fmt: skip


def string_to_bool(text: str) -> bool:
    try:
        return _BOOL_TEXT[text]
    except KeyError:
        raise _string_conversion_error("bool") from None


def _identity(value: Any) -> Any:
    return value


def _overloads() -> tuple[Overload, ...]:
    lst, mp = list_of(A), map_of(A, B)
    # Python's len counts a str's code points, as CEL's size does; builtin, it costs no Python frame.
    sized = (("string", STRING, len), ("bytes", BYTES, len), ("list", lst, len), ("map", mp, len))
    table = [Overload(f"size_{name}", "size", (t,), INT, impl) for name, t, impl in sized]
    table += [Overload(f"{name}_size", "size", (t,), INT, impl, member=True) for name, t, impl in sized]
    table += [
        Overload(
            "contains_string",
            "contains",
            (STRING, STRING),
            BOOL,
            contains_string,
            True,
            _contains_cost,
            estimate=_contains_estimate,
        ),
        Overload(
            "starts_with_string",
            "startsWith",
            (STRING, STRING),
            BOOL,
            starts_with_string,
            True,
            _affix_cost,
            estimate=_AFFIX_ESTIMATE,
        ),
        Overload(
            "ends_with_string",
            "endsWith",
            (STRING, STRING),
            BOOL,
            ends_with_string,
            True,
            _affix_cost,
            estimate=_AFFIX_ESTIMATE,
        ),
        Overload(
            "matches",
            "matches",
            (STRING, STRING),
            BOOL,
            matches_string,
            False,
            _matches_cost,
            estimate=matches_estimate,
            constant_check=_PATTERN,
        ),
        Overload(
            "matches_string",
            "matches",
            (STRING, STRING),
            BOOL,
            matches_string,
            True,
            _matches_cost,
            estimate=matches_estimate,
            constant_check=_PATTERN,
        ),
        # conversions
        Overload("int64_to_int64", "int", (INT,), INT, _identity),
        Overload("uint64_to_int64", "int", (UINT,), INT, uint64_to_int64),
        Overload("double_to_int64", "int", (DOUBLE,), INT, double_to_int64),
        Overload("string_to_int64", "int", (STRING,), INT, string_to_int64),
        Overload("uint64_to_uint64", "uint", (UINT,), UINT, _identity),
        Overload("int64_to_uint64", "uint", (INT,), UINT, int64_to_uint64),
        Overload("double_to_uint64", "uint", (DOUBLE,), UINT, double_to_uint64),
        Overload("string_to_uint64", "uint", (STRING,), UINT, string_to_uint64),
        Overload("double_to_double", "double", (DOUBLE,), DOUBLE, _identity),
        Overload("int64_to_double", "double", (INT,), DOUBLE, float),
        Overload("uint64_to_double", "double", (UINT,), DOUBLE, float),
        Overload("string_to_double", "double", (STRING,), DOUBLE, string_to_double),
        Overload("string_to_string", "string", (STRING,), STRING, _identity),
        Overload("bool_to_string", "string", (BOOL,), STRING, bool_to_string),
        Overload("int64_to_string", "string", (INT,), STRING, str),
        Overload("uint64_to_string", "string", (UINT,), STRING, lambda v: str(int(v))),
        Overload("double_to_string", "string", (DOUBLE,), STRING, format_double),
        Overload(
            "bytes_to_string",
            "string",
            (BYTES,),
            STRING,
            bytes_to_string,
            cost=_first_arg_cost,
            estimate=_bytes_to_string_estimate,
        ),
        Overload("bytes_to_bytes", "bytes", (BYTES,), BYTES, _identity),
        Overload(
            "string_to_bytes",
            "bytes",
            (STRING,),
            BYTES,
            lambda s: s.encode("utf-8"),
            cost=_first_arg_cost,
            estimate=_string_to_bytes_estimate,
        ),
        Overload("bool_to_bool", "bool", (BOOL,), BOOL, _identity),
        Overload("string_to_bool", "bool", (STRING,), BOOL, string_to_bool),
        Overload("to_dyn", "dyn", (A,), DYN, _identity),
        Overload("type", "type", (A,), type_of(A), runtime_type_of),
    ]
    return tuple(table)


def _before_v0_29(overload: Overload) -> Overload:
    """cel-go before v0.29 (d4efa771, a4d0d643): startsWith/endsWith cost a tenth of the receiver at run time, and
    the global `matches(s, re)` had no cost of its own (1, estimated 1)."""
    if overload.id in ("starts_with_string", "ends_with_string"):
        return dataclasses.replace(overload, cost=_first_arg_cost)
    if overload.id == "matches":
        return dataclasses.replace(overload, cost=None, estimate=None)
    return overload


def library(version: int = 1) -> Library:
    """The standard library: version 0 is cel-go's before v0.29 (Kubernetes up to 1.36), which costed startsWith,
    endsWith and the global matches differently; 1 is v0.29's."""
    overloads = _overloads()
    return Library("standard", overloads=overloads if version >= 1 else tuple(map(_before_v0_29, overloads)))


LIBRARY = library(1)

__all__ = ["LIBRARY", "check_int", "compile_regex", "library"]
