"""The math extension table: every overload and error, from cel-spec's math_ext suite and cel-go's math tests."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

import kcel
from kcel.errors import EvalError
from kcel.libs.math import LIBRARY, VARARG_LIMIT
from kcel.parser.unparser import unparse
from kcel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

U = Uint
NAN, INF = math.nan, math.inf
BIG = 1.797693e308
OVERLOADS = {o.id: o for o in LIBRARY.overloads}


@dataclasses.dataclass(frozen=True)
class Err:
    message: str


def assert_same(actual: Any, expected: Any) -> None:
    """Equal with the CEL type kept: 1, 1u, 1.0 and true differ; NaN equals NaN; -0.0 differs from 0.0."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, float):
        assert (math.isnan(actual) and math.isnan(expected)) or (
            actual == expected and math.copysign(1, actual) == math.copysign(1, expected)
        ), (actual, expected)
    else:
        assert actual == expected


def check(overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    impl = OVERLOADS[overload_id].impl
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as info:
            impl(*args)
        assert info.value.message == expected.message
    else:
        assert_same(impl(*args), expected)


# (overload id, arguments, result or Err). Macro calls with 3+ arguments become the list overloads.
GREATEST = [
    ("math_@max_int", (-5,), -5),
    ("math_@max_int", (5,), 5),
    ("math_@max_int_int", (1, 1), 1),
    ("math_@max_int_double", (1, 1.0), 1),
    ("math_@max_int_uint", (1, U(1)), 1),
    ("math_@max_int_int", (3, -3), 3),
    ("math_@max_int_int", (-7, 5), 5),
    ("math_@max_int_int", (INT64_MAX, 1), INT64_MAX),
    ("math_@max_int_int", (1, INT64_MAX), INT64_MAX),
    ("math_@max_int_int", (INT64_MIN, 1), 1),
    ("math_@max_int_int", (1, INT64_MIN), 1),
    ("math_@max_list_int", ([1, 1, 1],), 1),
    ("math_@max_list_int", ([1, 1.0, 1.0],), 1),
    ("math_@max_list_int", ([1, U(1), U(1)],), 1),
    ("math_@max_list_int", ([10, 1, 3],), 10),
    ("math_@max_list_int", ([1, 3, 10],), 10),
    ("math_@max_list_int", ([-1, -2, -3],), -1),
    ("math_@max_list_int", ([INT64_MAX, 1, 5],), INT64_MAX),
    ("math_@max_list_int", ([-INT64_MAX, -1, -5],), -1),
    ("math_@max_list_int", ([5.4, 10, U(3), -5.0, INT64_MAX],), INT64_MAX),
    ("math_@max_list_int", ([5.4, 10, U(3), -5.0, 3.5],), 10),
    ("math_@max_double", (-5.0,), -5.0),
    ("math_@max_double", (5.0,), 5.0),
    ("math_@max_double_double", (1.0, 1.0), 1.0),
    ("math_@max_double_int", (1.0, 1), 1.0),
    ("math_@max_double_uint", (1.0, U(1)), 1.0),
    ("math_@max_double_double", (5.0, -7.0), 5.0),
    ("math_@max_double_double", (-3.0, 3.0), 3.0),
    ("math_@max_double_int", (BIG, 1), BIG),
    ("math_@max_int_double", (1, BIG), BIG),
    ("math_@max_double_double", (-BIG, 1.5), 1.5),
    ("math_@max_double_double", (1.5, -BIG), 1.5),
    ("math_@max_list_double", ([1.0, 1.0, 1.0],), 1.0),
    ("math_@max_list_double", ([1.0, 1, 1],), 1.0),
    ("math_@max_list_double", ([1.0, U(1), U(1)],), 1.0),
    ("math_@max_list_double", ([10.5, 1.5, 3.5],), 10.5),
    ("math_@max_list_double", ([1.5, 3.5, 10.5],), 10.5),
    ("math_@max_list_double", ([-1.5, -2.5, -3.5],), -1.5),
    ("math_@max_list_double", ([BIG, 1, 5],), BIG),
    ("math_@max_list_double", ([-BIG, -1, -5],), -1),
    ("math_@max_list_double", ([5.4, 10, U(3), -5.0, BIG],), BIG),
    ("math_@max_list_double", ([5.4, 10.5, U(3), -5.0, 3.5],), 10.5),
    ("math_@max_uint", (U(5),), U(5)),
    ("math_@max_uint_uint", (U(1), U(1)), U(1)),
    ("math_@max_uint_double", (U(1), 1.0), U(1)),
    ("math_@max_uint_int", (U(1), 1), U(1)),
    ("math_@max_uint_int", (U(5), -7), U(5)),
    ("math_@max_int_uint", (-3, U(3)), U(3)),
    ("math_@max_uint_uint", (U(UINT64_MAX), U(1)), U(UINT64_MAX)),
    ("math_@max_uint_uint", (U(1), U(UINT64_MAX)), U(UINT64_MAX)),
    ("math_@max_list_uint", ([U(1), U(1), U(1)],), U(1)),
    ("math_@max_list_uint", ([U(1), 1.0, 1.0],), U(1)),
    ("math_@max_list_uint", ([U(1), 1, 1],), U(1)),
    ("math_@max_list_uint", ([U(10), U(1), U(3)],), U(10)),
    ("math_@max_list_uint", ([U(1), U(3), U(10)],), U(10)),
    ("math_@max_list_uint", ([U(UINT64_MAX), U(1), U(5)],), U(UINT64_MAX)),
    ("math_@max_list_uint", ([5.4, 10, U(3), -5.0, U(UINT64_MAX)],), U(UINT64_MAX)),
    ("math_@max_list_uint", ([5.4, U(10), U(3), -5.0, 3.5],), U(10)),
    # cel-go compares ints with doubles as doubles, so these are ties and the first argument wins.
    ("math_@max_double_int", (9007199254740992.0, 9007199254740993), 9007199254740992.0),
    ("math_@max_int_double", (INT64_MAX, 2.0**63), INT64_MAX),
    ("math_@max_double_uint", (2.0**65, U(UINT64_MAX)), 2.0**65),
    ("math_@max_uint_double", (U(0), -0.5), U(0)),
    ("math_@max_int_double", (1, INF), INF),
    ("math_@max_double_double", (1.0, NAN), Err("NaN values cannot be ordered: math.@max")),
    ("math_@max_int_double", (1, NAN), Err("NaN values cannot be ordered: math.@max")),
    ("math_@max_double_uint", (NAN, U(1)), Err("NaN values cannot be ordered: math.@max")),
    ("math_@max_list_double", ([NAN],), NAN),
    ("math_@max_list_double", ([1.0, NAN, 2.0],), Err("no such overload: math.@max")),
    ("math_@max_list_int", ([],), Err("math.@max(list) argument must not be empty")),
    ("math_@max_list_int", ([True],), Err("no such overload: math.@max")),
    ("math_@max_list_int", ([1, True, 2],), Err("no such overload: math.@max")),
    ("math_@max_list_int", (["a", "b"],), Err("no such overload: math.@max")),
]

LEAST = [
    ("math_@min_int", (-5,), -5),
    ("math_@min_int", (5,), 5),
    ("math_@min_int_int", (1, 1), 1),
    ("math_@min_int_double", (1, 1.0), 1),
    ("math_@min_int_uint", (1, U(1)), 1),
    ("math_@min_int_int", (-3, 3), -3),
    ("math_@min_int_int", (5, -7), -7),
    ("math_@min_int_int", (INT64_MAX, 1), 1),
    ("math_@min_int_int", (1, INT64_MAX), 1),
    ("math_@min_int_int", (INT64_MIN, 1), INT64_MIN),
    ("math_@min_int_int", (1, INT64_MIN), INT64_MIN),
    ("math_@min_list_int", ([1, 1, 1],), 1),
    ("math_@min_list_int", ([1, 1.0, 1.0],), 1),
    ("math_@min_list_int", ([1, U(1), U(1)],), 1),
    ("math_@min_list_int", ([0, 1, 3],), 0),
    ("math_@min_list_int", ([1, 3, 0],), 0),
    ("math_@min_list_int", ([-1, -2, -3],), -3),
    ("math_@min_list_int", ([INT64_MAX, 1, 5],), 1),
    ("math_@min_list_int", ([INT64_MIN, -1, -5],), INT64_MIN),
    ("math_@min_list_int", ([5.4, 10, U(3), -5.0, INT64_MAX],), -5.0),
    ("math_@min_list_int", ([5.4, 10, U(3), -5.0, 3.5],), -5.0),
    ("math_@min_double", (-5.5,), -5.5),
    ("math_@min_double", (5.5,), 5.5),
    ("math_@min_double_double", (1.5, 1.5), 1.5),
    ("math_@min_double_int", (1.0, 1), 1.0),
    ("math_@min_double_double", (-3.5, 3.5), -3.5),
    ("math_@min_double_double", (5.5, -7.5), -7.5),
    ("math_@min_double_double", (BIG, 1.5), 1.5),
    ("math_@min_double_double", (1.5, BIG), 1.5),
    ("math_@min_double_double", (-BIG, 1.5), -BIG),
    ("math_@min_double_double", (1.5, -BIG), -BIG),
    ("math_@min_list_double", ([1.5, 1.5, 1.5],), 1.5),
    ("math_@min_list_double", ([1.0, 1, 1],), 1.0),
    ("math_@min_list_double", ([1.0, U(1), U(1)],), 1.0),
    ("math_@min_list_double", ([0.5, 1.5, 3.5],), 0.5),
    ("math_@min_list_double", ([1.5, 3.5, 0.5],), 0.5),
    ("math_@min_list_double", ([-1.5, -2.5, -3.5],), -3.5),
    ("math_@min_list_double", ([BIG, 1, 5],), 1),
    ("math_@min_list_double", ([-BIG, -1, -5],), -BIG),
    ("math_@min_list_double", ([5.4, 10, U(3), -5.0, BIG],), -5.0),
    ("math_@min_list_double", ([42.0, -0.5, -0.25],), -0.5),
    ("math_@min_uint", (U(5),), U(5)),
    ("math_@min_uint_uint", (U(1), U(1)), U(1)),
    ("math_@min_uint_double", (U(1), 1.0), U(1)),
    ("math_@min_uint_int", (U(1), 1), U(1)),
    ("math_@min_uint_uint", (U(1), U(3)), U(1)),
    ("math_@min_uint_uint", (U(5), U(2)), U(2)),
    ("math_@min_uint_uint", (U(UINT64_MAX), U(1)), U(1)),
    ("math_@min_uint_int", (U(0), -1), -1),
    ("math_@min_int_uint", (-1, U(0)), -1),
    ("math_@min_list_uint", ([U(1), U(1), U(1)],), U(1)),
    ("math_@min_list_uint", ([U(1), 1.0, 1.0],), U(1)),
    ("math_@min_list_uint", ([U(1), 1, 1],), U(1)),
    ("math_@min_list_uint", ([U(1), U(10), U(3)],), U(1)),
    ("math_@min_list_uint", ([U(10), U(3), U(1)],), U(1)),
    ("math_@min_list_uint", ([5.4, 10, U(3), U(1), U(UINT64_MAX)],), U(1)),
    ("math_@min_list_uint", ([5.4, U(10), U(3), U(1), 3.5],), U(1)),
    ("math_@min_double_int", (-INF, INT64_MIN), -INF),
    ("math_@min_uint_double", (U(1), NAN), Err("NaN values cannot be ordered: math.@min")),
    ("math_@min_list_int", ([],), Err("math.@min(list) argument must not be empty")),
    ("math_@min_list_int", (["hello"],), Err("no such overload: math.@min")),
    ("math_@min_list_int", ([[], []],), Err("no such overload: math.@min")),
    ("math_@min_list_int", ([1, True, 2],), Err("no such overload: math.@min")),
    ("math_@min_list_double", ([NAN, 1.0],), Err("no such overload: math.@min")),
]

ROUNDING = [
    ("math_ceil_double", (-1.2,), -1.0),
    ("math_ceil_double", (1.2,), 2.0),
    ("math_ceil_double", (-0.5,), -0.0),
    ("math_ceil_double", (INF,), INF),
    ("math_ceil_double", (NAN,), NAN),
    ("math_ceil_double", (1e300,), 1e300),
    ("math_floor_double", (-1.2,), -2.0),
    ("math_floor_double", (1.2,), 1.0),
    ("math_floor_double", (-0.0,), -0.0),
    ("math_floor_double", (-INF,), -INF),
    ("math_round_double", (-1.6,), -2.0),
    ("math_round_double", (-1.4,), -1.0),
    ("math_round_double", (-1.5,), -2.0),
    ("math_round_double", (1.2,), 1.0),
    ("math_round_double", (1.5,), 2.0),
    ("math_round_double", (2.5,), 3.0),
    ("math_round_double", (-0.3,), -0.0),
    ("math_round_double", (0.49999999999999994,), 0.0),
    ("math_round_double", (4503599627370497.0,), 4503599627370497.0),
    ("math_round_double", (NAN,), NAN),
    ("math_trunc_double", (-1.2,), -1.0),
    ("math_trunc_double", (1.2,), 1.0),
    ("math_trunc_double", (-0.7,), -0.0),
    ("math_trunc_double", (NAN,), NAN),
    ("math_trunc_double", (-INF,), -INF),
]

SIGNS = [
    ("math_abs_uint", (U(1),), U(1)),
    ("math_abs_int", (1,), 1),
    ("math_abs_int", (-11,), 11),
    ("math_abs_int", (INT64_MAX,), INT64_MAX),
    ("math_abs_int", (INT64_MIN,), Err("integer overflow")),
    ("math_abs_double", (1.5,), 1.5),
    ("math_abs_double", (-11.5,), 11.5),
    ("math_abs_double", (-0.0,), 0.0),
    ("math_abs_double", (-INF,), INF),
    ("math_abs_double", (NAN,), NAN),
    ("math_sign_uint", (U(100),), U(1)),
    ("math_sign_uint", (U(0),), U(0)),
    ("math_sign_int", (100,), 1),
    ("math_sign_int", (-11,), -1),
    ("math_sign_int", (0,), 0),
    ("math_sign_double", (100.5,), 1.0),
    ("math_sign_double", (-32.0,), -1.0),
    ("math_sign_double", (-0.3,), -1.0),
    ("math_sign_double", (0.0,), 0.0),
    ("math_sign_double", (-0.0,), 0.0),
    ("math_sign_double", (NAN,), NAN),
    ("math_isNaN_double", (NAN,), True),
    ("math_isNaN_double", (INF,), False),
    ("math_isInf_double", (INF,), True),
    ("math_isInf_double", (-INF,), True),
    ("math_isInf_double", (NAN,), False),
    ("math_isInf_double", (1.2,), False),
    ("math_isFinite_double", (1.0 / 1.5,), True),
    ("math_isFinite_double", (NAN,), False),
    ("math_isFinite_double", (-INF,), False),
    ("math_sqrt_double", (49.0,), 7.0),
    ("math_sqrt_int", (0,), 0.0),
    ("math_sqrt_int", (1,), 1.0),
    ("math_sqrt_uint", (U(25),), 5.0),
    ("math_sqrt_int", (82,), 9.055385138137417),
    ("math_sqrt_double", (985.25,), 31.388692231439016),
    ("math_sqrt_double", (-15.34,), NAN),
    ("math_sqrt_int", (-15,), NAN),
    ("math_sqrt_double", (-0.0,), -0.0),
    ("math_sqrt_double", (INF,), INF),
    ("math_sqrt_uint", (U(UINT64_MAX),), 4294967296.0),
]

BITS = [
    ("math_bitAnd_int_int", (1, 2), 0),
    ("math_bitAnd_int_int", (1, 3), 1),
    ("math_bitAnd_int_int", (1, -1), 1),
    ("math_bitAnd_int_int", (3, 5), 1),
    ("math_bitAnd_int_int", (-3, -5), -7),
    ("math_bitAnd_uint_uint", (U(1), U(2)), U(0)),
    ("math_bitAnd_uint_uint", (U(1), U(3)), U(1)),
    ("math_bitOr_int_int", (1, 2), 3),
    ("math_bitOr_int_int", (4, -2), -2),
    ("math_bitOr_int_int", (-2, -4), -2),
    ("math_bitOr_uint_uint", (U(1), U(4)), U(5)),
    ("math_bitXor_int_int", (1, 3), 2),
    ("math_bitXor_int_int", (4, -2), -6),
    ("math_bitXor_uint_uint", (U(1), U(3)), U(2)),
    ("math_bitXor_uint_uint", (U(3), U(5)), U(6)),
    ("math_bitNot_int_int", (1,), -2),
    ("math_bitNot_int_int", (-1,), 0),
    ("math_bitNot_int_int", (0,), -1),
    ("math_bitNot_int_int", (INT64_MIN,), INT64_MAX),
    ("math_bitNot_uint_uint", (U(1),), U(UINT64_MAX - 1)),
    ("math_bitNot_uint_uint", (U(0),), U(UINT64_MAX)),
    ("math_bitShiftLeft_int_int", (1, 2), 4),
    ("math_bitShiftLeft_int_int", (-1, 2), -4),
    ("math_bitShiftLeft_int_int", (1, 63), INT64_MIN),
    ("math_bitShiftLeft_int_int", (INT64_MAX, 1), -2),
    ("math_bitShiftLeft_int_int", (1, 64), 0),
    ("math_bitShiftLeft_int_int", (1, 200), 0),
    ("math_bitShiftLeft_int_int", (-1, 200), 0),
    ("math_bitShiftLeft_int_int", (1, -2), Err("math.bitShiftLeft() negative offset: -2")),
    ("math_bitShiftLeft_uint_int", (U(1), 2), U(4)),
    ("math_bitShiftLeft_uint_int", (U(1), 200), U(0)),
    ("math_bitShiftLeft_uint_int", (U(2**63), 1), U(0)),
    ("math_bitShiftLeft_uint_int", (U(1), -1), Err("math.bitShiftLeft() negative offset: -1")),
    ("math_bitShiftRight_int_int", (1024, 2), 256),
    ("math_bitShiftRight_int_int", (1024, 64), 0),
    ("math_bitShiftRight_int_int", (-1024, 3), 2305843009213693824),
    ("math_bitShiftRight_int_int", (-1024, 64), 0),
    ("math_bitShiftRight_int_int", (-1, 0), -1),
    ("math_bitShiftRight_int_int", (-1, 63), 1),
    ("math_bitShiftRight_int_int", (-1024, -3), Err("math.bitShiftRight() negative offset: -3")),
    ("math_bitShiftRight_uint_int", (U(1024), 2), U(256)),
    ("math_bitShiftRight_uint_int", (U(1024), 200), U(0)),
    ("math_bitShiftRight_uint_int", (U(1), -1), Err("math.bitShiftRight() negative offset: -1")),
]


@pytest.mark.parametrize(("overload_id", "args", "expected"), GREATEST + LEAST + ROUNDING + SIGNS + BITS)
def test_overload(overload_id: str, args: tuple[Any, ...], expected: Any) -> None:
    check(overload_id, args, expected)


def test_overload_ids_are_cel_gos() -> None:
    suffixes = (
        "double int uint double_double int_int uint_uint int_uint int_double double_int double_uint uint_int "
        "uint_double list_double list_int list_uint"
    ).split()
    min_max = [f"math_@{kind}_{suffix}" for kind in ("min", "max") for suffix in suffixes]
    others = [
        "math_ceil_double", "math_floor_double", "math_round_double", "math_trunc_double", "math_isInf_double",
        "math_isNaN_double", "math_isFinite_double", "math_abs_double", "math_abs_int", "math_abs_uint",
        "math_sign_double", "math_sign_int", "math_sign_uint", "math_bitAnd_int_int", "math_bitAnd_uint_uint",
        "math_bitOr_int_int", "math_bitOr_uint_uint", "math_bitXor_int_int", "math_bitXor_uint_uint",
        "math_bitNot_int_int", "math_bitNot_uint_uint", "math_bitShiftLeft_int_int", "math_bitShiftLeft_uint_int",
        "math_bitShiftRight_int_int", "math_bitShiftRight_uint_int", "math_sqrt_double", "math_sqrt_int",
        "math_sqrt_uint",
    ]  # fmt: skip
    assert [o.id for o in LIBRARY.overloads] == min_max + others


@pytest.mark.parametrize(
    ("overload_id", "signature"),
    [
        ("math_@max_int_uint", "(int, uint) -> dyn"),
        ("math_@min_double_double", "(double, double) -> double"),
        ("math_@max_list_uint", "(list(uint)) -> uint"),
        ("math_sqrt_int", "(int) -> double"),
        ("math_bitShiftLeft_uint_int", "(uint, int) -> uint"),
        ("math_isNaN_double", "(double) -> bool"),
    ],
)
def test_signature(overload_id: str, signature: str) -> None:
    overload = OVERLOADS[overload_id]
    assert f"({', '.join(map(str, overload.args))}) -> {overload.result}" == signature
    assert not overload.member and overload.cost is None


def expand(text: str) -> str:
    parsed = kcel.parse(text, macros=LIBRARY.macros)
    return unparse(dataclasses.replace(parsed, macro_calls={}))


@pytest.mark.parametrize(
    ("text", "expansion"),
    [
        ("math.greatest(1, 2.0)", "math.@max(1, 2.0)"),
        ("math.greatest(-5)", "math.@max(-5)"),
        ("math.least(1u)", "math.@min(1u)"),
        ("math.least([1, 2.5, 3u])", "math.@min([1, 2.5, 3u])"),
        ("math.greatest(1, 2, 3)", "math.@max([1, 2, 3])"),
        ("math.least(a, b.c, f(x), 1)", "math.@min([a, b.c, f(x), 1])"),
        ("math.greatest(x)", "math.@max(x)"),
        ("math.greatest(dyn('string'))", 'math.@max(dyn("string"))'),
        ("math.greatest([a, 1])", "math.@max([a, 1])"),
        ("other.greatest(1, 2)", "other.greatest(1, 2)"),  # only the `math` namespace expands
        ("math.x.greatest(1, 2)", "math.x.greatest(1, 2)"),
    ],
)
def test_macro_expansion(text: str, expansion: str) -> None:
    assert expand(text) == expansion


def test_macro_accepts_many_arguments() -> None:
    args = ", ".join(map(str, range(VARARG_LIMIT)))
    assert expand(f"math.least({args})") == f"math.@min([{args}])"


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("math.least()", "math.least() requires at least one argument", 1),
        ("math.greatest()", "math.greatest() requires at least one argument", 1),
        ("math.least('hello')", "math.least() invalid single argument value", 12),
        ("math.least({})", "math.least() invalid single argument value", 12),
        ("math.greatest(true)", "math.greatest() invalid single argument value", 15),
        ("math.greatest([])", "math.greatest() invalid single argument value", 15),
        ("math.greatest([1, true])", "math.greatest() invalid single argument value", 15),
        ("math.greatest(null)", "math.greatest() invalid single argument value", 15),
        ("math.least(1, true)", "math.least() simple literal arguments must be numeric", 15),
        ("math.least(1, 2, true)", "math.least() simple literal arguments must be numeric", 18),
        ("math.greatest(1, true)", "math.greatest() simple literal arguments must be numeric", 18),
        ("math.greatest(1, 2, true)", "math.greatest() simple literal arguments must be numeric", 21),
        ("math.greatest(1, [2])", "math.greatest() simple literal arguments must be numeric", 18),
        ("math.greatest(b'1', 2)", "math.greatest() simple literal arguments must be numeric", 15),
    ],
)
def test_macro_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(text, macros=LIBRARY.macros)
    assert info.value.messages == (message,)
    assert str(info.value).startswith(f"ERROR: <input>:1:{column}: {message}")
