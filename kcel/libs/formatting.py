"""The strings extension's `format()`: cel-go's `ext/formatting.go` and `ext/formatting_v2.go`.

Kept apart from `kcel.libs.strings` because it is a small printf of its own: a clause parser
(`%[.precision]verb`), one table of clauses per dialect, and ports of the Go printers they rely on.
Strings versions 1-3 use cel-go's legacy formatter, whose `%f`/`%e` go through golang.org/x/text's
`en_US` number printer (digit grouping, `×10` superscript exponents); version 4 uses the
cel-spec formatter. `go_value` (Go's `%v`) is also what `join` shows in its error message.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from kcel.checker.types import CelType
from kcel.errors import EvalError, Issue
from kcel.eval.runtime import type_name
from kcel.eval.sizes import refuse_oversized, text_size
from kcel.gofloat import format_double, plain_decimal, shortest_digits
from kcel.parser.ast import Call, Const, CreateList, CreateMap, Expr, walk
from kcel.temporal import Timestamp, go_quote
from kcel.values import INT64_MAX, decimal_int

__all__ = [
    "LEGACY_CLAUSES", "V2_CLAUSES", "Clause", "format_issues", "go_value", "string_format", "string_format_v2",
    "string_format_narrow_spaced",
]  # fmt: skip

# -- runtime kinds and Go's renderings of values -------------------------------------------------

_TIMESTAMP, _DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"


def go_value(value: Any) -> str:
    """Go's `%v` of a CEL value (what `join`'s error message shows)."""
    kind = type_name(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int", "uint"):
        return format(value, "d")
    if kind == "double":
        return format_double(value)
    if kind == "bytes":
        return "[" + " ".join(map(str, value)) + "]"
    if kind == "null_type":
        return "0"  # types.Null is a bare int32 type without a String method
    if kind == "list":
        return "[" + ", ".join(map(go_value, value)) + "]"
    if kind == "map":
        return "{" + ", ".join(f"{go_value(k)}: {go_value(v)}" for k, v in value.items()) + "}"
    if kind == "optional_type":
        return f"optional({go_value(value.value)})" if value.has_value() else "optional.none()"
    if kind == "type":
        return str(value.name)
    return str(value)  # strings; timestamps and durations only approximately (Go's time.Time.String differs)


def _decimal_digits(text: str) -> tuple[str, int]:
    """`'0012.3400'` -> `('1234', 2)`: significant digits and the decimal point's position."""
    whole, _, fraction = text.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) - (len(whole) + len(fraction) - len(digits))
    digits = digits.rstrip("0")
    return (digits, point) if digits else ("", 0)


def _go_shortest_fixed(x: float) -> str:
    """Go's strconv 'f' with precision -1: shortest digits, never an exponent."""
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    digits, point = shortest_digits(x)
    return sign + (plain_decimal(digits, point) if digits else "0")


def _go_fixed(x: float, precision: int) -> str:
    """Go's fmt `%.Nf`: like Python's except for the spelling of NaN and the infinities."""
    if math.isfinite(x):
        return format(x, f".{precision}f")
    return "NaN" if x != x else ("+Inf" if x > 0 else "-Inf")


def _bytes_text(value: bytes) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise _ClauseError(
            'could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string'
        ) from None


# -- golang.org/x/text's en_US number printer (legacy %f and %e) ---------------------------------

_NO_VERB = "%!(NOVERB)"
_SUPERSCRIPT = str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _too_large_for_printf(number: int) -> bool:
    """Go's printf parsers give up on a width/precision once a prefix of its digits exceeds 1e6."""
    return number // 10 > 1_000_000


def _xtext_fixed(x: float, precision: int) -> str:
    """`message.NewPrinter(en_US).Sprintf("%.Nf", x)`: grouped integer digits, `∞`, no sign on -0.

    x/text stores the precision as uint8 minimum and int16 maximum fraction digits, so
    precisions past 255 (and past 32767) behave oddly; this reproduces that.
    """
    if _too_large_for_printf(precision):
        return _NO_VERB
    if x != x:
        return "NaN"
    sign = "-" if x < 0 else ""
    if math.isinf(x):
        return sign + "\u221e"
    max_fraction = (precision + 0x8000) % 0x10000 - 0x8000
    min_fraction = precision & 0xFF
    if max_fraction >= 0:
        digits, point = _decimal_digits(format(abs(x), f".{max_fraction}f"))
    else:
        digits, point = shortest_digits(x)
    end = max(len(digits), point + min_fraction) if digits else min_fraction
    whole = digits[:point].ljust(point, "0") if point > 0 else "0"
    text = sign + f"{int(whole):,}"
    if end - point > 0:
        fraction = "0" * -point + digits if point <= 0 else digits[point:]
        text += "." + fraction.ljust(end - point, "0")
    return text


def _xtext_scientific(x: float, width: int, times: str = "\u00d7") -> str:
    """`message.NewPrinter(en_US).Sprintf("%<width>e", x)`: cel-go passes the precision as the width.

    The digits are always 6 after the point; the result is left-padded with spaces to `width`
    (x/text keeps the width in a uint16).
    """
    if _too_large_for_printf(width):
        return _NO_VERB
    sign = "-" if x < 0 else ""
    if x != x:
        text = "NaN"
    elif math.isinf(x):
        text = sign + "\u221e"
    else:
        mantissa, _, exponent_text = format(abs(x), ".6e").partition("e")
        exponent = int(exponent_text)
        power = ("\u207b" if exponent < 0 else "") + f"{abs(exponent):02d}".translate(_SUPERSCRIPT)
        text = f"{sign}{mantissa}{times}10{power}"  # as the x/text Kubernetes vendors prints it
    return text.rjust(width & 0xFFFF)


# -- format: the shared clause parser ------------------------------------------------------------


class _ClauseError(Exception):
    """A clause could not format its argument; reported as `error during formatting: ...`."""


Clause = Callable[[Any, int | None], str]
"""Formats one argument given the clause's precision (None when the clause has none)."""


def _format(clauses: Mapping[str, Clause], text: str, args: Sequence[Any], checking: bool = False) -> str:
    """cel-go's parseFormatString: walk the format string, substituting one argument per clause. Its compile-time
    check (`checking`) finds a `%` that ends the string before it counts the arguments; evaluation, after."""
    if not checking:  # `%s` of a list whose elements share sublists: text exponential in the list's size
        refuse_oversized(text_size(args), "format")
    out: list[str] = []
    pos, arg_index = 0, 0
    while (percent := text.find("%", pos)) >= 0:
        out.append(text[pos:percent])
        if text.startswith("%", percent + 1):
            out.append("%")
            pos = percent + 2
            continue
        if checking and percent + 1 >= len(text):
            raise EvalError("unexpected end of string")
        if arg_index >= len(args):
            raise EvalError(f"index {arg_index} out of range")
        if percent + 1 >= len(text):
            raise EvalError("unexpected end of string")
        pos, clause, precision = _parse_clause(clauses, text, percent + 1)
        try:
            out.append(clause(args[arg_index], precision))
        except _ClauseError as err:
            raise EvalError(f"error during formatting: {err}") from err
        arg_index += 1
    out.append(text[pos:])
    return "".join(out)


def _parse_clause(clauses: Mapping[str, Clause], text: str, pos: int) -> tuple[int, Clause, int | None]:
    """Read `[.digits]verb` at `pos`; returns the position after it, the clause and the precision."""
    precision = None
    if text[pos] == ".":
        end = pos + 1
        while end < len(text) and text[end] in "0123456789":
            end += 1
        if end >= len(text):
            _bad_clause("error while parsing precision: could not find end of precision specifier")
        precision = _atoi(text[pos + 1 : end])
        pos = end
    verb = text[pos]
    clause = clauses.get(verb)
    if clause is None:
        # Go reads the verb as one byte, so a multi-byte character shows as its lead byte's Latin-1 letter.
        shown = verb if verb.isascii() else chr(verb.encode("utf-8", "surrogatepass")[0])
        _bad_clause(f'unrecognized formatting clause "{shown}"')
    return pos + 1, clause, precision


def _atoi(digits: str) -> int:
    """Go's strconv.Atoi on the precision digits, with its error texts."""
    problem = "invalid syntax" if not digits else "value out of range" if decimal_int(digits) > INT64_MAX else ""
    if problem:
        _bad_clause(
            "error while parsing precision: error while converting precision to integer: "
            f'strconv.Atoi: parsing "{digits}": {problem}'
        )
    return int(digits)


def _bad_clause(message: str) -> NoReturn:
    raise EvalError(f"could not parse formatting clause: {message}")


def _expect(value: Any, kinds: tuple[str, ...], problem: str) -> str:
    """The value's kind if it is one of `kinds`, else the clause's error naming the given type."""
    kind = type_name(value)
    if kind not in kinds:
        raise _ClauseError(f"{problem}, was given {kind}")
    return kind


def _go_integer(value: Any, base: str) -> str:
    """Go's %b/%o/%x/%X of an int64/uint64 (a minus sign, not two's complement)."""
    return format(int(value), base)


# -- format: the legacy formatter (versions 1-3) -------------------------------------------------

_STRING_PROBLEM = (
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, "
    "and timestamps"
)
_FLOAT_WORDS = ("NaN", "Infinity", "-Infinity")


def _legacy_string(value: Any, precision: int | None = None) -> str:
    """`%s`: cel-go's string() of scalars; lists and maps are printed as CEL literals."""
    kind = type_name(value)
    if kind == "string":
        return str(value)
    if kind in ("int", "uint"):
        return format(value, "d")
    if kind == "double":
        return format_double(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "null_type":
        return "null"
    if kind == "bytes":
        return _bytes_text(value)
    if kind == "type":
        return str(value.name)
    if kind in (_TIMESTAMP, _DURATION):
        return str(value.format())
    if kind == "list":
        return "[" + ", ".join(map(_legacy_literal, value)) + "]"
    if kind == "map":
        return _legacy_map(value)
    raise _ClauseError(f"{_STRING_PROBLEM}, was given {kind}")


def _legacy_literal(value: Any) -> str:
    """A list element or map value: formatted by its type and quoted so that it reads as CEL."""
    kind = type_name(value)
    if kind == "string":
        return go_quote(value)
    if kind == "bytes":
        return "b" + go_quote(_bytes_text(value))
    if kind == "double":
        text = _go_fixed(value, 6)
        return text if math.isfinite(value) else f'"{text}"'
    if kind in (_TIMESTAMP, _DURATION):
        return f"{'timestamp' if kind == _TIMESTAMP else 'duration'}({go_quote(value.format())})"
    if kind in ("int", "uint", "bool", "null_type", "type", "list", "map"):
        return _legacy_string(value)
    raise _ClauseError(f"no formatting function for {kind}")


def _legacy_map(value: Mapping[Any, Any]) -> str:
    entries = sorted([(_legacy_key(key), _legacy_literal(item)) for key, item in value.items()], key=_first)
    return "{" + ", ".join(f"{key}:{item}" for key, item in entries) + "}"


def _first(entry: tuple[str, str]) -> str:
    """Sort map entries by their formatted key only, keeping equal keys in map order (Go's SliceStable)."""
    return entry[0]


def _legacy_key(key: Any) -> str:
    kind = type_name(key)
    if kind == "string":
        return go_quote(key)
    if kind in ("bool", "int", "uint"):
        return _legacy_string(key)
    raise _ClauseError(f"no formatting function for map key of type {kind}")


def _legacy_decimal(value: Any, precision: int | None) -> str:
    _expect(value, ("int", "uint"), "decimal clause can only be used on integers")
    return format(value, "d")


def _legacy_float_arg(value: Any, problem: str) -> float:
    """A double, or one of the strings "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, str) and value in _FLOAT_WORDS:
        return float(value)
    _expect(value, ("double",), problem)
    return float(value)


def _legacy_fixed(value: Any, precision: int | None) -> str:
    x = _legacy_float_arg(value, "fixed-point clause can only be used on doubles")
    return _xtext_fixed(x, 6 if precision is None else precision)


def _legacy_scientific(value: Any, precision: int | None) -> str:
    x = _legacy_float_arg(value, "scientific clause can only be used on doubles")
    return _xtext_scientific(x, 6 if precision is None else precision)


def _legacy_binary(value: Any, precision: int | None) -> str:
    kind = _expect(value, ("int", "uint", "bool"), "only integers and bools can be formatted as binary")
    return ("1" if value else "0") if kind == "bool" else _go_integer(value, "b")


def _hex(upper: bool, problem: str) -> Clause:
    base = "X" if upper else "x"

    def clause(value: Any, precision: int | None) -> str:
        kind = _expect(value, ("int", "uint", "string", "bytes"), problem)
        if kind in ("int", "uint"):
            return _go_integer(value, base)
        data: bytes = value.encode("utf-8", "surrogatepass") if kind == "string" else value
        return data.hex().upper() if upper else data.hex()

    return clause


def _legacy_octal(value: Any, precision: int | None) -> str:
    _expect(value, ("int", "uint"), "octal clause can only be used on integers")
    return _go_integer(value, "o")


_LEGACY_HEX_PROBLEM = "only integers, byte buffers, and strings can be formatted as hex"
LEGACY_CLAUSES: Mapping[str, Clause] = {
    "s": _legacy_string,
    "d": _legacy_decimal,
    "f": _legacy_fixed,
    "e": _legacy_scientific,
    "b": _legacy_binary,
    "x": _hex(False, _LEGACY_HEX_PROBLEM),
    "X": _hex(True, _LEGACY_HEX_PROBLEM),
    "o": _legacy_octal,
}


def string_format(text: str, args: Sequence[Any]) -> str:
    """Versions 1-3 (Kubernetes): `'%d items'.format([3])` with the legacy formatter."""
    return _format(LEGACY_CLAUSES, text, args)


def _narrow_spaced_scientific(value: Any, precision: int | None) -> str:
    x = _legacy_float_arg(value, "scientific clause can only be used on doubles")
    return _xtext_scientific(x, 6 if precision is None else precision, "\u202f\u00d7\u202f")


_NARROW_SPACED_CLAUSES: Mapping[str, Clause] = {**LEGACY_CLAUSES, "e": _narrow_spaced_scientific}


def string_format_narrow_spaced(text: str, args: Sequence[Any]) -> str:
    """Kubernetes 1.30's golang.org/x/text sets `×10` between narrow no-break spaces: `1.500000 × 10⁰⁰`."""
    return _format(_NARROW_SPACED_CLAUSES, text, args)


# -- format: the cel-spec formatter (version 4) --------------------------------------------------


def _v2_string(value: Any, precision: int | None = None) -> str:
    """`%s` in version 4: plain text everywhere, doubles in shortest fixed notation."""
    kind = type_name(value)
    if kind == "string":
        return str(value)
    if kind in ("int", "uint", "double"):
        return _v2_number(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "null_type":
        return "null"
    if kind == "bytes":
        return str(value.decode("utf-8", "replace"))  # Go copies the raw bytes into the string
    if kind == "type":
        return str(value.name)
    if kind == _TIMESTAMP:
        return Timestamp(value.nanos).format()  # in UTC, unlike string(timestamp)
    if kind == _DURATION:
        return str(value.format())
    if kind == "list":
        return "[" + ", ".join(map(_v2_string, value)) + "]"
    if kind == "map":
        entries = sorted([(_v2_string(key), _v2_string(item)) for key, item in value.items()], key=_first)
        return "{" + ", ".join(f"{key}: {item}" for key, item in entries) + "}"
    raise _ClauseError(f"{_STRING_PROBLEM}, was given {kind}")


def _v2_number(value: Any) -> str:
    if not isinstance(value, float):
        return format(value, "d")
    if math.isfinite(value):
        return _go_shortest_fixed(value)
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _v2_decimal(value: Any, precision: int | None) -> str:
    _expect(value, ("int", "uint", "double"), "decimal clause can only be used on ints, uints, and doubles")
    return _v2_number(value)


def _v2_float_clause(problem: str, render: Callable[[float, int], str]) -> Clause:
    def clause(value: Any, precision: int | None) -> str:
        _expect(value, ("int", "uint", "double"), problem)
        x = float(value)
        if not math.isfinite(x):
            return _v2_number(x)
        precision = 6 if precision is None else precision
        if _too_large_for_printf(precision):
            return f"{_NO_VERB}%!(EXTRA float64={format_double(x)})"
        return render(x, precision)

    return clause


def _v2_binary(value: Any, precision: int | None) -> str:
    kind = _expect(value, ("int", "uint", "bool"), "only ints, uints, and bools can be formatted as binary")
    return ("1" if value else "0") if kind == "bool" else _go_integer(value, "b")


def _v2_octal(value: Any, precision: int | None) -> str:
    _expect(value, ("int", "uint"), "octal clause can only be used on ints and uints")
    return _go_integer(value, "o")


_V2_HEX_PROBLEM = "only ints, uints, bytes, and strings can be formatted as hex"
V2_CLAUSES: Mapping[str, Clause] = {
    "s": _v2_string,
    "d": _v2_decimal,
    "f": _v2_float_clause(
        "fixed-point clause can only be used on ints, uints, and doubles", lambda x, p: format(x, f".{p}f")
    ),
    "e": _v2_float_clause(
        "scientific clause can only be used on ints, uints, and doubles", lambda x, p: format(x, f".{p}e")
    ),
    "b": _v2_binary,
    "x": _hex(False, _V2_HEX_PROBLEM),
    "X": _hex(True, _V2_HEX_PROBLEM),
    "o": _v2_octal,
}


def string_format_v2(text: str, args: Sequence[Any]) -> str:
    """Version 4: the cel-spec formatter (`'%.1f'.format([2])` is `'2.0'`)."""
    return _format(V2_CLAUSES, text, args)


# -- format: the check of literal calls (cel-go's stringFormatValidator, strings versions 1-3) -----------------


class _Unformattable(_ClauseError):
    """A clause given an argument whose checked type it cannot format; `node` is where to report it."""

    def __init__(self, message: str, node: Expr) -> None:
        super().__init__(message)
        self.node = node


def _kind(t: CelType) -> str:
    """cel-go's Type.Kind(): what the validator compares (parameters of lists and maps do not count)."""
    if t.kind == "opaque" and t.name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        return t.name
    return t.name if t.kind == "primitive" else t.kind


class _CheckedArgs:
    """The list literal's elements as the clauses see them: the element nodes, counting how many were asked for."""

    def __init__(self, elements: Sequence[Expr]) -> None:
        self.elements, self.requested = elements, 0

    def __len__(self) -> int:
        return len(self.elements)

    def __getitem__(self, index: int) -> Expr:
        self.requested += 1
        return self.elements[index]


def _type_clause(types: Mapping[int, CelType], kinds: frozenset[str], problem: str) -> Clause:
    def clause(node: Expr, precision: int | None) -> str:
        t = types[node.id]
        if t.kind != "dyn" and _kind(t) not in kinds:
            raise _Unformattable(f"{problem}, was given {t.name}", node)
        return ""

    return clause


_STRING_KINDS = frozenset({"list", "map", "int", "uint", "double", "bool", "string", "google.protobuf.Timestamp",
                           "bytes", "google.protobuf.Duration", "type", "null"})  # fmt: skip


def _string_clause(types: Mapping[int, CelType]) -> Clause:
    """`%s`: any printable type, looking into list and map literals element by element (verifyString)."""

    def verify(node: Expr) -> None:
        t = types[node.id]
        if t.kind != "dyn" and _kind(t) not in _STRING_KINDS:
            raise _Unformattable(f"{_STRING_PROBLEM}, was given {t.name}", node)
        if isinstance(node, CreateList):
            for element in node.elements:
                verify(element)
        elif isinstance(node, CreateMap):
            for entry in node.entries:
                verify(entry.key)
                verify(entry.value)

    def clause(node: Expr, precision: int | None) -> str:
        verify(node)
        return ""

    return clause


def _type_clauses(types: Mapping[int, CelType]) -> dict[str, Clause]:
    numbers, doubles = frozenset({"int", "uint"}), frozenset({"double", "string"})
    return {
        "s": _string_clause(types),
        "d": _type_clause(types, numbers, "decimal clause can only be used on integers"),
        "f": _type_clause(types, doubles, "fixed-point clause can only be used on doubles"),
        "e": _type_clause(types, doubles, "scientific clause can only be used on doubles"),
        "b": _type_clause(types, numbers | {"bool"}, "only integers and bools can be formatted as binary"),
        "x": _type_clause(types, numbers | {"string", "bytes"}, _LEGACY_HEX_PROBLEM),
        "X": _type_clause(types, numbers | {"string", "bytes"}, _LEGACY_HEX_PROBLEM),
        "o": _type_clause(types, numbers, "octal clause can only be used on integers"),
    }


def _literal_format_calls(root: Expr, overloads: Mapping[int, tuple[str, ...]]) -> list[Call]:
    """The `'<literal>'.format([...])` calls the validator looks at (matchConstantFormatStringWithListLiteralArgs)."""
    found = []
    for node in walk(root):
        if not (isinstance(node, Call) and node.function == "format" and node.target is not None):
            continue
        chosen = overloads.get(node.id, ())
        literal = isinstance(node.target, Const) and type(node.target.value) is str
        if (not chosen or "string_format" in chosen) and literal and len(node.args) == 1:
            if isinstance(node.args[0], CreateList):
                found.append(node)
    return found


def format_issues(root: Expr, types: Mapping[int, CelType], overloads: Mapping[int, tuple[str, ...]]) -> list[Issue]:
    """`'<literal>'.format([<list literal>])` checked against its arguments' types: a clause that cannot format
    its argument, a malformed format string, or arguments left over are compile errors, as cel-go reports them
    (ext/formatting.go `stringFormatValidator`, on from strings version 1)."""
    calls = _literal_format_calls(root, overloads)
    clauses = _type_clauses(types) if calls else {}
    issues = []
    for call in calls:
        assert isinstance(call.target, Const) and isinstance(call.args[0], CreateList)
        checked = _CheckedArgs(call.args[0].elements)
        try:
            _format(clauses, call.target.value, checked, checking=True)  # type: ignore[arg-type]
        except EvalError as err:
            cause = err.__cause__
            where = cause.node if isinstance(cause, _Unformattable) else call
            issues.append(Issue(err.message, where.pos, where.id))
            continue
        if len(checked) > checked.requested:
            message = f"too many arguments supplied to string.format (expected {checked.requested}, got {len(checked)})"
            issues.append(Issue(message, call.pos, call.id))
    return issues
