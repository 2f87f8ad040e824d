"""Kubernetes' regex library (k8s.io/apiserver pkg/cel/library/regex.go): `find` and `findAll` with Go's RE2."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import re2

from kcel.checker.types import INT, STRING, list_of
from kcel.errors import EvalError
from kcel.eval.sizes import actual_size
from kcel.libs import CostRange, Library, Overload, SizeEstimate
from kcel.parser.ast import Const, Expr
from kcel.parser.macros import Expander, Macro, MacroError, NodeFactory
from kcel.values import UINT64_MAX

__all__ = ["LIBRARY", "GoRegexError", "compile_go_regex", "find", "find_all"]

_STRING_TRAVERSAL_FACTOR = 0.1  # common.StringTraversalCostFactor
_REGEX_LENGTH_FACTOR = 0.25  # common.RegexStringLengthCostFactor


# -- Go's regexp.Compile -----------------------------------------------------------------------


class GoRegexError(ValueError):
    """A pattern Go's regexp rejects; `str()` is Go's `error parsing regexp: <code>: `<expr>``."""


# RE2 (C++) error code texts -> Go's regexp/syntax ErrorCode texts for the same failures.
_GO_CODES = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


def _go_error(code: str, expr: str) -> GoRegexError:
    return GoRegexError(f"error parsing regexp: {code}: `{expr}`")


def _translate(error: re2.error, pattern: str) -> GoRegexError:
    """RE2 reports `<code text>: <arg>` (bytes); Go names the same failures with its own words."""
    raw = error.args[0] if error.args else b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, _, arg = text.partition(": ")
    if code in _GO_CODES:
        return _go_error(_GO_CODES[code], arg)
    if "too large" in text:
        return _go_error("expression too large", pattern)
    return _go_error(_GO_CODES["unexpected error"], pattern)


def _has_any_byte_escape(pattern: str) -> bool:
    """Whether the pattern uses `\\C` (any byte), which RE2 accepts and Go rejects; `\\Q...\\E` is literal."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
        elif pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i + 1] == "C":
            return True
        else:
            i += 2
    return False


@lru_cache(maxsize=512)
def compile_go_regex(pattern: str) -> Any:
    """Go's regexp.Compile through RE2, which shares its syntax; failures carry Go's error text.

    >>> compile_go_regex("[0-9]+").search("abc 123").group()
    '123'
    """
    if _has_any_byte_escape(pattern):
        raise _go_error("invalid escape sequence", "\\C")
    try:
        return re2.compile(pattern)
    except re2.error as err:
        raise _translate(err, pattern) from None


def _compile(pattern: str) -> Any:
    try:
        return compile_go_regex(pattern)
    except GoRegexError as err:
        raise EvalError(f"Illegal regex: {err}") from None


# -- find and findAll --------------------------------------------------------------------------


def find(text: str, pattern: str) -> str:
    """Go's FindString: the leftmost-first match, "" when there is none."""
    match = _compile(pattern).search(text)
    return "" if match is None else str(match.group())


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Go's FindAllString(text, limit): successive non-overlapping matches, all of them when limit < 0.

    An empty match right after the previous match is dropped, and the search then moves one
    character on, as Go's allMatches does.
    """
    regex = _compile(pattern)
    out: list[str] = []
    pos, previous_end = 0, -1
    while (limit < 0 or len(out) < limit) and pos <= len(text):
        match = regex.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        accept = not (end == pos and start == previous_end)
        pos = pos + 1 if end == pos else end
        previous_end = end
        if accept:
            out.append(str(match.group()))
    return out


def find_all_string(text: str, pattern: str) -> list[str]:
    return find_all(text, pattern)


# -- costs -------------------------------------------------------------------------------------


def _factor(x: int, factor: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(x * factor), saturating at 2^64 - 1."""
    if x > 0 and float(x) > UINT64_MAX / factor:
        return UINT64_MAX
    result = math.ceil(float(x) * factor)
    return UINT64_MAX if result >= 2.0**64 else result


def _regex_cost(text_size: int, pattern_size: int) -> int:
    """ceil((1 + size(text)) * 0.1) * ceil(size(pattern) * 0.25), each factor saturating."""
    text_cost = _factor(min(text_size + 1, UINT64_MAX), _STRING_TRAVERSAL_FACTOR)
    return min(text_cost * _factor(pattern_size, _REGEX_LENGTH_FACTOR), UINT64_MAX)


def _runtime_cost(args: Sequence[Any], result: Any) -> int:
    """Kubernetes' CallCost for `find`/`findAll`: the string traversal times a guess at the regex's states."""
    return _regex_cost(actual_size(args[0]), actual_size(args[1]))


def _estimate(sizes: Sequence[SizeEstimate]) -> CostRange:
    """EstimateCallCost: (size(s) + 1) * 0.1 times size(re) * 0.25, per bound (result size {0, size(s).max})."""
    text, pattern = sizes[0], sizes[1]
    return CostRange(_regex_cost(text.min, pattern.min), _regex_cost(text.max, pattern.max))


# -- literal patterns --------------------------------------------------------------------------


def _literal_pattern_check(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
    """A literal pattern Go cannot compile fails before evaluation, as Kubernetes' regex optimisation does.

    Kubernetes compiles `find`/`findAll` literal patterns when the program is created (cel-go's
    OptimizeRegex), so a bad one rejects the expression up front. kcel has no separate program
    creation step, so the check runs when the parser builds the call, which is left unexpanded.
    """
    pattern = args[0]
    if target is not None and isinstance(pattern, Const) and isinstance(pattern.value, str):
        try:
            compile_go_regex(pattern.value)
        except GoRegexError as err:
            raise MacroError(str(err), pattern) from None
    return None


def _checker(function: str, count: int) -> Macro:
    expander: Expander = _literal_pattern_check
    return Macro(function, count, True, expander, f"rejects a {function}() pattern literal Go cannot compile")


MACROS = (_checker("find", 1), _checker("findAll", 1), _checker("findAll", 2))


LIBRARY = Library(
    "kubernetes.regex",
    overloads=(
        Overload("string_find_string", "find", (STRING, STRING), STRING, find, member=True, cost=_runtime_cost,
                 doc="'abc 123'.find('[0-9]+') == '123'", estimate=_estimate),
        Overload("string_find_all_string", "findAll", (STRING, STRING), list_of(STRING), find_all_string,
                 member=True, cost=_runtime_cost, doc="'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
                 estimate=_estimate),
        Overload("string_find_all_string_int", "findAll", (STRING, STRING, INT), list_of(STRING), find_all,
                 member=True, cost=_runtime_cost, doc="'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
                 estimate=_estimate),
    ),
    macros=MACROS,
)  # fmt: skip
