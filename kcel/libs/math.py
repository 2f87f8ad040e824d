"""cel-go's math extension (latest version): `math.greatest`/`math.least` macros and the `math.*` functions."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from kcel.checker.types import BOOL, DOUBLE, DYN, INT, UINT, CelType, list_of
from kcel.errors import EvalError
from kcel.libs import Library, Overload
from kcel.parser.ast import Const, CreateList, CreateMap, CreateStruct, Expr, Ident
from kcel.parser.macros import Expander, Macro, MacroError, NodeFactory
from kcel.values import INT64_MIN, UINT64_MAX, Uint

__all__ = ["LIBRARY", "MAX_FUNCTION", "MIN_FUNCTION", "VARARG_LIMIT"]

MAX_FUNCTION = "math.@max"
MIN_FUNCTION = "math.@min"
VARARG_LIMIT = 64
"""cel-go's greatest/least are var-arg macros; kcel's parser looks macros up by exact arity, so we
register one macro per arity up to this many arguments."""

_MASK64 = UINT64_MAX
_INT64_FLOAT_MAX = 2.0**63  # float64(math.MaxInt64): Go rounds the bound up
_UINT64_FLOAT_MAX = 2.0**64


# -- macros -------------------------------------------------------------------------------


def _is_numeric_arg(arg: Expr) -> bool:
    """cel-go's isNumericArgType: numeric literals pass, other literals and aggregates fail, the checker decides."""
    if isinstance(arg, Const):
        value = arg.value
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return not isinstance(arg, (CreateList, CreateMap, CreateStruct))


def _is_numeric_list_literal(arg: Expr) -> bool:
    return isinstance(arg, CreateList) and bool(arg.elements) and all(map(_is_numeric_arg, arg.elements))


def _min_max_expander(macro: str, function: str) -> Expander:
    """Expand `math.<macro>(...)` to `function(...)`, validating literal arguments as cel-go does at parse time."""
    name = f"math.{macro}()"

    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
        if not (isinstance(target, Ident) and target.name == "math"):
            return None
        if not args:
            raise MacroError(f"{name} requires at least one argument", target)
        if len(args) == 1:
            if _is_numeric_list_literal(args[0]) or _is_numeric_arg(args[0]):
                return f.call(function, args[0])
            raise MacroError(f"{name} invalid single argument value", args[0])
        for arg in args:
            if not _is_numeric_arg(arg):
                raise MacroError(f"{name} simple literal arguments must be numeric", arg)
        return f.call(function, *args) if len(args) == 2 else f.call(function, f.list(*args))

    return expand


def _vararg_macros(macro: str, function: str, doc: str) -> tuple[Macro, ...]:
    expand = _min_max_expander(macro, function)
    return tuple(Macro(macro, count, True, expand, doc) for count in range(VARARG_LIMIT + 1))


# -- math.@max / math.@min ----------------------------------------------------------------


def _compare_double_integer(d: float, i: int) -> int:
    """cel-go's compareDoubleInt/compareDoubleUint: out-of-range doubles first, then compare as doubles."""
    low, high = (0.0, _UINT64_FLOAT_MAX) if isinstance(i, Uint) else (-_INT64_FLOAT_MAX, _INT64_FLOAT_MAX)
    if d < low:
        return -1
    if d > high:
        return 1
    other = float(i)
    return (d > other) - (d < other)


def _compare_numbers(a: Any, b: Any) -> int:
    """Order two numbers the way cel-go's Compare does (ints against doubles are compared as doubles)."""
    a_float, b_float = isinstance(a, float), isinstance(b, float)
    if a_float or b_float:
        if a != a or b != b:
            raise EvalError("NaN values cannot be ordered")
        if not b_float:
            return _compare_double_integer(a, b)
        if not a_float:
            return -_compare_double_integer(b, a)
    return int(a > b) - int(a < b)


def _pick(a: Any, b: Any, replace_when: int, function: str) -> Any:
    """Return b when compare(a, b) equals `replace_when`, else a (ties keep the first argument)."""
    try:
        return b if _compare_numbers(a, b) == replace_when else a
    except EvalError as err:
        raise EvalError(f"{err.message}: {function}") from None


def math_max_pair(a: Any, b: Any) -> Any:
    return _pick(a, b, -1, MAX_FUNCTION)


def math_min_pair(a: Any, b: Any) -> Any:
    return _pick(a, b, 1, MIN_FUNCTION)


def identity(value: Any) -> Any:
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fold_list(values: Sequence[Any], replace_when: int, function: str) -> Any:
    """cel-go's maxList/minList: any failure, even a NaN comparison, ends as `no such overload: <function>`."""
    if not values:
        raise EvalError(f"{function}(list) argument must not be empty")
    best = values[0]
    try:
        for value in values[1:]:
            if not _is_number(best) or not _is_number(value):
                raise EvalError("no such overload")
            if _compare_numbers(best, value) == replace_when:
                best = value
    except EvalError:
        raise EvalError(f"no such overload: {function}") from None
    if not _is_number(best):
        raise EvalError(f"no such overload: {function}")
    return best


def math_max_list(values: Sequence[Any]) -> Any:
    return _fold_list(values, -1, MAX_FUNCTION)


def math_min_list(values: Sequence[Any]) -> Any:
    return _fold_list(values, 1, MIN_FUNCTION)


# -- rounding, signs, floating point helpers -----------------------------------------------


def _rounded(function: Callable[[float], int]) -> Callable[[float], float]:
    """Wrap an int-returning rounding function so it behaves like Go's: NaN/±Inf pass, zero keeps its sign."""

    def apply(x: float) -> float:
        if not math.isfinite(x) or abs(x) >= 2.0**52:  # already integral (or not a number)
            return x
        return math.copysign(float(function(x)), x)

    return apply


def _round_half_away(x: float) -> int:
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:  # exact: |x| < 2**52 so x - whole has no rounding error
        whole += 1 if x > 0 else -1
    return whole


math_ceil_double = _rounded(math.ceil)
math_floor_double = _rounded(math.floor)
math_round_double = _rounded(_round_half_away)
math_trunc_double = _rounded(math.trunc)


def math_is_inf_double(x: float) -> bool:
    return math.isinf(x)


def math_is_nan_double(x: float) -> bool:
    return math.isnan(x)


def math_is_finite_double(x: float) -> bool:
    return math.isfinite(x)


def math_abs_double(x: float) -> float:
    return math.fabs(x)


def math_abs_int(x: int) -> int:
    if x == INT64_MIN:
        raise EvalError("integer overflow")
    return -x if x < 0 else x


def math_sign_double(x: float) -> float:
    if x != x:
        return x
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


def math_sign_int(x: int) -> int:
    return (x > 0) - (x < 0)


def math_sign_uint(x: Uint) -> Uint:
    return Uint(1 if x else 0)


def math_sqrt(x: float) -> float:
    """Go's math.Sqrt: negative input gives NaN instead of Python's ValueError."""
    x = float(x)
    return math.sqrt(x) if x >= 0 or x != x else math.nan


# -- bitwise ------------------------------------------------------------------------------


def _signed(value: int) -> int:
    """Reinterpret the low 64 bits as a two's-complement int64, as Go's integer conversions do."""
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def math_bit_and_int_int(a: int, b: int) -> int:
    return a & b


def math_bit_and_uint_uint(a: Uint, b: Uint) -> Uint:
    return Uint(a & b)


def math_bit_or_int_int(a: int, b: int) -> int:
    return a | b


def math_bit_or_uint_uint(a: Uint, b: Uint) -> Uint:
    return Uint(a | b)


def math_bit_xor_int_int(a: int, b: int) -> int:
    return a ^ b


def math_bit_xor_uint_uint(a: Uint, b: Uint) -> Uint:
    return Uint(a ^ b)


def math_bit_not_int(a: int) -> int:
    return ~a


def math_bit_not_uint(a: Uint) -> Uint:
    return Uint(a ^ _MASK64)


def _shift_offset(function: str, bits: int) -> int:
    if bits < 0:
        raise EvalError(f"math.{function}() negative offset: {bits}")
    return bits


def math_bit_shift_left_int_int(value: int, bits: int) -> int:
    bits = _shift_offset("bitShiftLeft", bits)
    return 0 if bits >= 64 else _signed(value << bits)


def math_bit_shift_left_uint_int(value: Uint, bits: int) -> Uint:
    bits = _shift_offset("bitShiftLeft", bits)
    return Uint(0 if bits >= 64 else (value << bits) & _MASK64)


def math_bit_shift_right_int_int(value: int, bits: int) -> int:
    """A logical shift: the int is shifted as a uint64, so the sign bit is not extended."""
    bits = _shift_offset("bitShiftRight", bits)
    return 0 if bits >= 64 else _signed((value & _MASK64) >> bits)


def math_bit_shift_right_uint_int(value: Uint, bits: int) -> Uint:
    bits = _shift_offset("bitShiftRight", bits)
    return Uint(0 if bits >= 64 else value >> bits)


# -- the table ----------------------------------------------------------------------------

_NUMERIC: tuple[tuple[str, CelType], ...] = (("double", DOUBLE), ("int", INT), ("uint", UINT))
# cel-go's declaration order: same-type pairs first, then the mixed ones (which return dyn).
_PAIRS: tuple[tuple[str, str], ...] = (
    ("double", "double"), ("int", "int"), ("uint", "uint"), ("int", "uint"), ("int", "double"),
    ("double", "int"), ("double", "uint"), ("uint", "int"), ("uint", "double"),
)  # fmt: skip


def _min_max_overloads(kind: str, function: str, pair: Callable[..., Any], fold: Callable[..., Any]) -> list[Overload]:
    types = dict(_NUMERIC)
    out = [Overload(f"math_@{kind}_{n}", function, (t,), t, identity) for n, t in _NUMERIC]
    for left, right in _PAIRS:
        result = types[left] if left == right else DYN
        out.append(Overload(f"math_@{kind}_{left}_{right}", function, (types[left], types[right]), result, pair))
    out += [Overload(f"math_@{kind}_list_{n}", function, (list_of(t),), t, fold) for n, t in _NUMERIC]
    return out


def _unary(name: str, arg: CelType, result: CelType, impl: Callable[..., Any], doc: str, suffix: str = "") -> Overload:
    type_name = str(arg)
    return Overload(f"math_{name}_{type_name}{suffix}", f"math.{name}", (arg,), result, impl, doc=doc)


def _binary(name: str, arg: CelType, impl: Callable[..., Any], doc: str, second: CelType | None = None) -> Overload:
    other = second or arg
    return Overload(f"math_{name}_{arg}_{other}", f"math.{name}", (arg, other), arg, impl, doc=doc)


OVERLOADS: tuple[Overload, ...] = (
    *_min_max_overloads("min", MIN_FUNCTION, math_min_pair, math_min_list),
    *_min_max_overloads("max", MAX_FUNCTION, math_max_pair, math_max_list),
    _unary("ceil", DOUBLE, DOUBLE, math_ceil_double, "math.ceil(1.2) == 2.0"),
    _unary("floor", DOUBLE, DOUBLE, math_floor_double, "math.floor(1.2) == 1.0"),
    _unary("round", DOUBLE, DOUBLE, math_round_double, "math.round(-1.5) == -2.0"),
    _unary("trunc", DOUBLE, DOUBLE, math_trunc_double, "math.trunc(-1.3) == -1.0"),
    _unary("isInf", DOUBLE, BOOL, math_is_inf_double, "math.isInf(1.0/0.0) == true"),
    _unary("isNaN", DOUBLE, BOOL, math_is_nan_double, "math.isNaN(0.0/0.0) == true"),
    _unary("isFinite", DOUBLE, BOOL, math_is_finite_double, "math.isFinite(1.2) == true"),
    _unary("abs", DOUBLE, DOUBLE, math_abs_double, "math.abs(-1.5) == 1.5"),
    _unary("abs", INT, INT, math_abs_int, "math.abs(-1) == 1"),
    _unary("abs", UINT, UINT, identity, "math.abs(1u) == 1u"),
    _unary("sign", DOUBLE, DOUBLE, math_sign_double, "math.sign(-42.0) == -1.0"),
    _unary("sign", INT, INT, math_sign_int, "math.sign(-42) == -1"),
    _unary("sign", UINT, UINT, math_sign_uint, "math.sign(42u) == 1u"),
    _binary("bitAnd", INT, math_bit_and_int_int, "math.bitAnd(3, 5) == 1"),
    _binary("bitAnd", UINT, math_bit_and_uint_uint, "math.bitAnd(3u, 2u) == 2u"),
    _binary("bitOr", INT, math_bit_or_int_int, "math.bitOr(-2, -4) == -2"),
    _binary("bitOr", UINT, math_bit_or_uint_uint, "math.bitOr(1u, 2u) == 3u"),
    _binary("bitXor", INT, math_bit_xor_int_int, "math.bitXor(1, 3) == 2"),
    _binary("bitXor", UINT, math_bit_xor_uint_uint, "math.bitXor(3u, 5u) == 6u"),
    # cel-go's ids for bitNot repeat the type: math_bitNot_int_int, math_bitNot_uint_uint.
    _unary("bitNot", INT, INT, math_bit_not_int, "math.bitNot(1) == -2", suffix="_int"),
    _unary("bitNot", UINT, UINT, math_bit_not_uint, "math.bitNot(0u) == 18446744073709551615u", suffix="_uint"),
    _binary("bitShiftLeft", INT, math_bit_shift_left_int_int, "math.bitShiftLeft(1, 2) == 4", INT),
    _binary("bitShiftLeft", UINT, math_bit_shift_left_uint_int, "math.bitShiftLeft(1u, 200) == 0u", INT),
    _binary("bitShiftRight", INT, math_bit_shift_right_int_int, "math.bitShiftRight(1024, 2) == 256", INT),
    _binary("bitShiftRight", UINT, math_bit_shift_right_uint_int, "math.bitShiftRight(1024u, 64) == 0u", INT),
    _unary("sqrt", DOUBLE, DOUBLE, math_sqrt, "math.sqrt(985.25) == 31.388692231439016"),
    _unary("sqrt", INT, DOUBLE, math_sqrt, "math.sqrt(81) == 9.0"),
    _unary("sqrt", UINT, DOUBLE, math_sqrt, "math.sqrt(81u) == 9.0"),
)

MACROS: tuple[Macro, ...] = (
    *_vararg_macros("least", MIN_FUNCTION, "math.least(1, 2.5, 3u) == 1"),
    *_vararg_macros("greatest", MAX_FUNCTION, "math.greatest([1, 2.5]) == 2.5"),
)

LIBRARY = Library("math", overloads=OVERLOADS, macros=MACROS)
