"""cel-go's strings extension (`ext/strings.go`) at versions 0-4; Kubernetes uses version 2.

All indices count code points, as cel-go's `[]rune` conversions do. `format`'s two dialects
(legacy for versions 1-3, cel-spec for version 4) live in `kcel.libs.formatting`. Runtime costs
are the Kubernetes ones (`k8s-cel-cost.md` §2.3-2.4), which match on the function name, so they
hold for every version here.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from kcel.checker.types import DYN, INT, STRING, CelType, list_of
from kcel.errors import EvalError
from kcel.eval.runtime import type_name
from kcel.eval.sizes import actual_size, refuse_oversized
from kcel.libs import (
    NOT_LITERAL,
    UINT64_MAX,
    CallEstimate,
    CallSite,
    Estimate,
    Library,
    Overload,
    RuntimeCost,
    SizeEstimate,
    size_cost,
    size_estimate,
)
from kcel.libs.formatting import format_issues, go_value, string_format, string_format_narrow_spaced, string_format_v2

__all__ = ["LIBRARY", "MAX_VERSION", "library"]

MAX_VERSION = 4
"""Highest strings version modelled. Version 5 only adds cost trackers and a precision cap."""

# -- the plain string functions -----------------------------------------------------------------

# Go's unicode.IsSpace set; str.strip() would also drop U+001C..U+001F, which Go keeps.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_TO_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TO_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


def _out_of_range(index: int) -> NoReturn:
    raise EvalError(f"index out of range: {index}")


def string_char_at_int(text: str, index: int) -> str:
    """`'abc'.charAt(3)` is `''`: the position just past the end is allowed."""
    if index < 0 or index > len(text):
        _out_of_range(index)
    return text[index : index + 1]


def string_index_of_string(text: str, sub: str) -> int:
    return text.find(sub)


def string_index_of_string_int(text: str, sub: str, offset: int) -> int:
    """An offset past the end finds nothing (-1), except that `''` is found at the clamped offset."""
    if offset < 0:
        _out_of_range(offset)
    if not sub:
        return min(offset, len(text))
    return text.find(sub, offset) if offset < len(text) else -1


def string_last_index_of_string(text: str, sub: str) -> int:
    return text.rfind(sub)


def string_last_index_of_string_int(text: str, sub: str, offset: int) -> int:
    """The last match that starts at or before `offset`; an offset past the end finds nothing."""
    if offset < 0:
        _out_of_range(offset)
    if not sub:
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, offset + len(sub))


def _legacy_offset(found: Callable[[str, str, int], int], past_end_fails: bool) -> Callable[[str, str, int], int]:
    """An empty substring found at the offset given, unchecked; `past_end_fails`: an offset past the last character
    is out of range."""

    def legacy(text: str, sub: str, offset: int) -> int:
        if not sub:
            return offset
        if past_end_fails and offset >= len(text):
            _out_of_range(offset)
        return found(text, sub, offset)

    return legacy


def _empty_text_fails(found: Callable[[str, str], int], index: int) -> Callable[[str, str], int]:
    """cel-go searched `''` for a non-empty substring from an offset it then found out of range."""

    def legacy(text: str, sub: str) -> int:
        if not text and sub:
            _out_of_range(index)
        return found(text, sub)

    return legacy


def as_older_api_servers_evaluate(library: Library, server: tuple[int, int]) -> Library:
    """The strings extension as an older API server (`server`, Kubernetes' version) evaluates it: with cel-go before
    v0.29 (1.37) an empty substring is found at the offset given; before v0.22 (1.32) an offset past the last
    character, or `''.indexOf(s)`, is out of range; before v0.26 (1.34) so is `''.lastIndexOf(s)`; and the
    golang.org/x/text of 1.30-1.32 prints `%e` with `×` between narrow no-break spaces."""
    legacy: dict[str, Callable[..., Any]] = {}
    if server < (1, 33):
        legacy["string_format"] = string_format_narrow_spaced
    if server < (1, 37):
        legacy["string_index_of_string_int"] = _legacy_offset(string_index_of_string_int, server < (1, 32))
        legacy["string_last_index_of_string_int"] = _legacy_offset(string_last_index_of_string_int, server < (1, 32))
    if server < (1, 32):
        legacy["string_index_of_string"] = _empty_text_fails(string_index_of_string, 0)
    if server < (1, 34):
        legacy["string_last_index_of_string"] = _empty_text_fails(string_last_index_of_string, -1)
    overloads = tuple(replace(o, impl=legacy[o.id]) if o.id in legacy else o for o in library.overloads)
    return replace(library, overloads=overloads)


def string_lower_ascii(text: str) -> str:
    """Only A-Z change; `str.lower()` would also fold non-ASCII letters."""
    return text.lower() if text.isascii() else text.translate(_TO_LOWER)


def string_upper_ascii(text: str) -> str:
    return text.upper() if text.isascii() else text.translate(_TO_UPPER)


def string_replace_string_string(text: str, old: str, new: str) -> str:
    return string_replace_string_string_int(text, old, new, -1)


def string_replace_string_string_int(text: str, old: str, new: str, count: int) -> str:
    """Go's strings.Replace: a negative count replaces all, like Python's. Its cost does not grow with the result,
    so a result past what kcel builds is refused before it is built."""
    if len(new) > len(old):
        found = text.count(old)  # for old == "", len(text) + 1, as Python and Go both insert
        replaced = found if count < 0 else min(found, count)
        refuse_oversized(len(text) + replaced * (len(new) - len(old)), "replace")
    return text.replace(old, new, count)


def string_split_string(text: str, sep: str) -> list[str]:
    return string_split_string_int(text, sep, -1)


def string_split_string_int(text: str, sep: str, limit: int) -> list[str]:
    """Go's strings.SplitN: limit 0 gives `[]`, an empty separator splits into code points."""
    if limit == 0:
        return []
    if sep:
        return text.split(sep, limit - 1 if limit > 0 else -1)
    if limit < 0 or limit >= len(text):
        return list(text)
    return [*text[: limit - 1], text[limit - 1 :]]


def string_substring_int(text: str, start: int) -> str:
    if start < 0 or start > len(text):
        _out_of_range(start)
    return text[start:]


def string_substring_int_int(text: str, start: int, end: int) -> str:
    if start > end:
        raise EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(text):
        _out_of_range(start)
    if end < 0 or end > len(text):
        _out_of_range(end)
    return text[start:end]


def string_trim(text: str) -> str:
    """Go's strings.TrimSpace: Unicode White_Space, not the zero-width characters."""
    return text.strip(_GO_SPACE)


def string_reverse(text: str) -> str:
    return text[::-1]


_QUOTE_ESCAPES = str.maketrans(
    {
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
        "\\": "\\\\",
        '"': '\\"',
    }
)


def strings_quote(text: str) -> str:
    """Only CEL's escape sequences are escaped; other characters (even control ones) pass through."""
    return '"' + _sanitize(text).translate(_QUOTE_ESCAPES) + '"'


def _sanitize(text: str) -> str:
    """Lone surrogates (possible after json.loads) become U+FFFD, as invalid UTF-8 does in Go."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


# -- join -------------------------------------------------------------------------------------


def list_join(items: Sequence[Any]) -> str:
    _guard_list_of_strings(items, "join(list)")
    return list_join_string(items, "")


def list_join_string(items: Sequence[Any], sep: str) -> str:
    """Versions 2+: a non-string element is reported with Go's `%v` of the CEL value."""
    _guard_list_of_strings(items, "join(list, string)")
    try:
        return _join(items, sep)
    except TypeError:
        bad = next(item for item in items if not isinstance(item, str))
        raise EvalError(f"join: invalid input: {go_value(bad)}") from None


def _guard_list_of_strings(items: Sequence[Any], call: str) -> None:
    """cel-go's runtime type guard of an overload taking `list(string)` (decls.go, IsAssignableRuntimeType) looks at
    the first element only: `dyn([1, 2]).join(',')` finds no overload, `dyn(['a', 1])` reaches join's own error."""
    if items and items[0].__class__ is not str:
        raise EvalError(f"no such overload: {call}")


def _join(items: Sequence[Any], sep: str) -> str:
    """`sep.join(items)`, refused past what kcel builds (the list may hold one long string many times)."""
    refuse_oversized(sum(map(len, items)) + len(sep) * (len(items) - 1), "join")
    return sep.join(items)


def list_join_v0(items: Sequence[Any]) -> str:
    return list_join_string_v0(items, "")


def list_join_string_v0(items: Sequence[Any], sep: str) -> str:
    """Versions 0-1 convert the list to a Go []string first; the error is that conversion's."""
    try:
        return _join(items, sep)
    except TypeError:
        bad = next(item for item in items if not isinstance(item, str))
        kind = type_name(bad)
        raise EvalError(_V0_CONVERSION_ERRORS.get(kind, f"type conversion error from '{kind}' to 'string'")) from None


_V0_CONVERSION_ERRORS = {
    "int": "unsupported type conversion from 'int' to string",
    "uint": "unsupported type conversion from 'uint' to string",
    "double": "type conversion error from Double to 'string'",
    "bool": "type conversion error from bool to 'string'",
    "bytes": "type conversion error from Bytes to 'string'",
    "null_type": "type conversion error from 'null_type' to 'string'",
    "list": "type conversion error from list to 'string'",
    "map": "type conversion error from map to 'string'",
    "google.protobuf.Timestamp": "type conversion error from 'Timestamp' to 'string'",
    "google.protobuf.Duration": "type conversion error from 'Duration' to 'string'",
}

# -- runtime costs (Kubernetes CallCost, by function name) --------------------------------------


def _utf8_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def traversal_cost(args: Sequence[Any], result: Any) -> int:
    """indexOf/lastIndexOf: floor(UTF-8 bytes of the receiver * 0.1), truncated as Kubernetes does (its
    traversalCost is 1 for a receiver that is no string: the error of a failed operand)."""
    return int(_utf8_length(args[0]) * 0.1) if isinstance(args[0], str) else 1


def _twice_size_cost(arg: int | None) -> RuntimeCost:
    """ceil(size * 2 * 0.1) of the receiver (arg 0) or the result (None), multiplied in Go's order."""

    def cost(args: Sequence[Any], result: Any) -> int:
        return math.ceil(actual_size(args[0] if arg == 0 else result) * 2 * 0.1)

    return cost


RECEIVER_COST = size_cost(0.1)
REPLACE_SPLIT_COST = _twice_size_cost(0)
JOIN_COST = _twice_size_cost(None)

# -- estimated costs (Kubernetes EstimateCallCost by function name, else cel-go's formulas) ----------

SCAN_ESTIMATE = size_estimate(0.1)  # indexOf, lastIndexOf, format: a tenth of the receiver's size
SAME_SIZE_ESTIMATE = size_estimate(0.1, result_size=True)  # lowerAscii, upperAscii, substring, trim


def _wrap(value: int) -> int:
    """Go's uint64 arithmetic, which wraps where cel-go does not guard it."""
    return value % 2**64


def quote_estimate(call: CallSite) -> CallEstimate:
    """cel-go: each character may be escaped, and two quotes are added."""
    size = call.size(0)
    return CallEstimate(size.times(0.1), SizeEstimate(_wrap(size.min + 2), _wrap(size.max * 2 + 2)))


def _replace_count(size: int, old_bound: int, new_bound: int, widest: bool) -> tuple[int, int]:
    """(replacements, retained size) for the largest (`widest`) or smallest result of `replace`."""
    if old_bound == 0:  # an empty `old` surrounds every character
        return (size + 1 if size < UINT64_MAX else size), size
    if (new_bound <= old_bound) if widest else (old_bound <= new_bound):
        return 0, size
    return math.ceil(float(size) / float(old_bound)), 0


def replace_estimate(call: CallSite) -> CallEstimate:
    """Traversal plus construction; the result may grow to every `old` replaced by the longest `new`."""
    size, old, new = call.size(0), call.size(1), call.size(2)
    most, kept_most = _replace_count(size.max, old.min, new.max, True)
    least, kept_least = _replace_count(size.min, old.max, new.min, False)
    result = SizeEstimate(least, most).multiply(new).add(SizeEstimate(kept_least, kept_most))
    return CallEstimate(size.times(2 * 0.1), result)


def split_estimate(call: CallSite) -> CallEstimate:
    """At worst every character becomes an element, or as many as a literal limit allows."""
    size = call.size(0)
    limit = call.literal(2) if len(call) > 2 else NOT_LITERAL
    most = limit % 2**64 if type(limit) is int else size.max
    return CallEstimate(size.times(2 * 0.1), SizeEstimate(0, most))


def join_estimate(call: CallSite) -> CallEstimate:
    """Every element at its longest, plus a separator between each two."""
    elements = call.size(0)
    size = elements.multiply(call.element_size(0)) if call.type(0).params else SizeEstimate(0, 0)
    if len(call) > 1:
        separators = SizeEstimate(max(elements.min - 1, 0), max(elements.max - 1, 0))
        size = size.add(call.size(1).multiply(separators))
    return CallEstimate(size.times(0.1), size)


# -- the table ------------------------------------------------------------------------------------


def _versions(first: int, last: int = MAX_VERSION) -> range:
    return range(first, last + 1)


def _member(
    versions: range,
    overload_id: str,
    function: str,
    args: tuple[CelType, ...],
    result: CelType,
    impl: Callable[..., Any],
    cost: RuntimeCost | None,
    doc: str,
    estimate: Estimate | None = None,
) -> tuple[range, Overload]:
    return versions, Overload(
        overload_id, function, args, result, impl, member=True, cost=cost, doc=doc, estimate=estimate
    )


_ALL, _V1, _V2, _V3, _V4 = (_versions(first) for first in range(5))
_V0_1, _V1_3 = _versions(0, 1), _versions(1, 3)
S, L_S = STRING, list_of(STRING)

# fmt: off
OVERLOADS: tuple[tuple[range, Overload], ...] = (
    _member(_ALL, "string_char_at_int", "charAt", (S, INT), S, string_char_at_int, None, "'hello'.charAt(4) == 'o'"),
    _member(_ALL, "string_index_of_string", "indexOf", (S, S), INT, string_index_of_string, traversal_cost,
            "'hello mellow'.indexOf('ello') == 1", SCAN_ESTIMATE),
    _member(_ALL, "string_index_of_string_int", "indexOf", (S, S, INT), INT, string_index_of_string_int,
            traversal_cost, "'hello mellow'.indexOf('ello', 2) == 7", SCAN_ESTIMATE),
    _member(_ALL, "string_last_index_of_string", "lastIndexOf", (S, S), INT, string_last_index_of_string,
            traversal_cost, "'hello mellow'.lastIndexOf('ello') == 7", SCAN_ESTIMATE),
    _member(_ALL, "string_last_index_of_string_int", "lastIndexOf", (S, S, INT), INT, string_last_index_of_string_int,
            traversal_cost, "'hello mellow'.lastIndexOf('ello', 6) == 1", SCAN_ESTIMATE),
    _member(_ALL, "string_lower_ascii", "lowerAscii", (S,), S, string_lower_ascii, RECEIVER_COST,
            "'TacoCÆt'.lowerAscii() == 'tacocÆt'", SAME_SIZE_ESTIMATE),
    _member(_ALL, "string_replace_string_string", "replace", (S, S, S), S, string_replace_string_string,
            REPLACE_SPLIT_COST, "'hello hello'.replace('he', 'we') == 'wello wello'", replace_estimate),
    _member(_ALL, "string_replace_string_string_int", "replace", (S, S, S, INT), S, string_replace_string_string_int,
            REPLACE_SPLIT_COST, "'hello hello'.replace('he', 'we', 1) == 'wello hello'", replace_estimate),
    _member(_ALL, "string_split_string", "split", (S, S), L_S, string_split_string, REPLACE_SPLIT_COST,
            "'a b c'.split(' ') == ['a', 'b', 'c']", split_estimate),
    _member(_ALL, "string_split_string_int", "split", (S, S, INT), L_S, string_split_string_int, REPLACE_SPLIT_COST,
            "'a b c'.split(' ', 2) == ['a', 'b c']", split_estimate),
    _member(_ALL, "string_substring_int", "substring", (S, INT), S, string_substring_int, RECEIVER_COST,
            "'tacocat'.substring(4) == 'cat'", SAME_SIZE_ESTIMATE),
    _member(_ALL, "string_substring_int_int", "substring", (S, INT, INT), S, string_substring_int_int, RECEIVER_COST,
            "'tacocat'.substring(0, 4) == 'taco'", SAME_SIZE_ESTIMATE),
    _member(_ALL, "string_trim", "trim", (S,), S, string_trim, RECEIVER_COST,
            "' \\ttrim\\n '.trim() == 'trim'", SAME_SIZE_ESTIMATE),
    _member(_ALL, "string_upper_ascii", "upperAscii", (S,), S, string_upper_ascii, RECEIVER_COST,
            "'TacoCÆt'.upperAscii() == 'TACOCÆT'", SAME_SIZE_ESTIMATE),
    _member(_V1_3, "string_format", "format", (S, list_of(DYN)), S, string_format, RECEIVER_COST,
            "'%s is %.2f'.format(['pi', 3.14159]) == 'pi is 3.14'", SCAN_ESTIMATE),
    _member(_V4, "string_format", "format", (S, list_of(DYN)), S, string_format_v2, RECEIVER_COST,
            "'%.1f'.format([2]) == '2.0'", SCAN_ESTIMATE),
    (_V1, Overload("strings_quote", "strings.quote", (S,), S, strings_quote, cost=RECEIVER_COST,
                   estimate=quote_estimate, doc="strings.quote('a\\nb') == '\"a\\\\nb\"'")),
    _member(_V0_1, "list_join", "join", (L_S,), S, list_join_v0, JOIN_COST, "['a', 'b'].join() == 'ab'", join_estimate),
    _member(_V0_1, "list_join_string", "join", (L_S, S), S, list_join_string_v0, JOIN_COST,
            "['a', 'b'].join('-') == 'a-b'", join_estimate),
    _member(_V2, "list_join", "join", (L_S,), S, list_join, JOIN_COST, "['a', 'b'].join() == 'ab'", join_estimate),
    _member(_V2, "list_join_string", "join", (L_S, S), S, list_join_string, JOIN_COST,
            "['a', 'b'].join('-') == 'a-b'", join_estimate),
    _member(_V3, "string_reverse", "reverse", (S,), S, string_reverse, None, "'gums'.reverse() == 'smug'"),
)
"""Every overload, each with the strings versions that declare it (cel-go's ids; costs: None = 1)."""
# fmt: on


def library(version: int = 2) -> Library:
    """The strings extension as cel-go's `ext.Strings(ext.StringsVersion(version))` declares it.

    >>> [o.id for o in library(3).overloads if o.function in ("join", "reverse")]
    ['list_join', 'list_join_string', 'string_reverse']
    """
    if version not in _ALL:
        raise ValueError(f"strings extension version {version} is not supported (0-{MAX_VERSION})")
    overloads = tuple(overload for versions, overload in OVERLOADS if version in versions)
    validators = (format_issues,) if version in _V1_3 else ()
    return Library("strings", overloads=overloads, validators=validators,
                   mixed_literal_functions=("format",) if version >= 1 else ())  # fmt: skip


LIBRARY = library(2)
