"""Kubernetes' regex library (k8s.io/apiserver pkg/cel/library/regex.go): `find` and `findAll` with Go's RE2."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kcel.checker.types import INT, STRING, list_of
from kcel.errors import EvalError
from kcel.eval.sizes import actual_size
from kcel.goregex import GoRegexError, compile_go_regex
from kcel.libs import CallEstimate, CallSite, ConstantCheck, Library, Overload, SizeEstimate
from kcel.libs.standard import matches_estimate
from kcel.values import UINT64_MAX

__all__ = ["LIBRARY", "find", "find_all"]

_STRING_TRAVERSAL_FACTOR = 0.1  # common.StringTraversalCostFactor
_REGEX_LENGTH_FACTOR = 0.25  # common.RegexStringLengthCostFactor


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


def _estimate(call: CallSite) -> CallEstimate:
    """EstimateCallCost: the cost of `matches`, and at most one match per character."""
    return CallEstimate(matches_estimate(call).cost, SizeEstimate(0, call.size(0).max))


# Kubernetes compiles literal patterns when the program is created (cel-go OptimizeRegex), so a bad
# one fails the expression before any evaluation: "program instantiation failed".
_PATTERN = ConstantCheck(1, compile_go_regex)


LIBRARY = Library(
    "kubernetes.regex",
    overloads=(
        Overload("string_find_string", "find", (STRING, STRING), STRING, find, member=True, cost=_runtime_cost,
                 doc="'abc 123'.find('[0-9]+') == '123'", estimate=_estimate, constant_check=_PATTERN),
        Overload("string_find_all_string", "findAll", (STRING, STRING), list_of(STRING), find_all_string,
                 member=True, cost=_runtime_cost, doc="'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
                 estimate=_estimate, constant_check=_PATTERN),
        Overload("string_find_all_string_int", "findAll", (STRING, STRING, INT), list_of(STRING), find_all,
                 member=True, cost=_runtime_cost, doc="'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
                 estimate=_estimate, constant_check=_PATTERN),
    ),
)  # fmt: skip
