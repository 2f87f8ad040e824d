"""The quantity library against apiserver's quantity.go and cost.go and apimachinery's resource.Quantity.

Parse, String() and float rows follow apimachinery's quantity_test.go; CEL rows are every case of
apiserver's quantity_test.go (`TestQuantity`) plus rows for the Go behaviours kcel reproduces.
Kubernetes' own cases come from ../shared/k8s-cases (skipped, with the reason shown, when absent).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

import kcel
from kcel.checker.types import BOOL
from kcel.cost import StringSizes
from kcel.env import cel_libraries, load_library
from kcel.errors import CompileError, EvalError
from kcel.eval.equality import cel_equals
from kcel.libs import SizedCall, SizeEstimate
from kcel.libs.k8s_quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT,
    ERR_NUMERIC,
    ERR_SUFFIX,
    LIBRARY,
    QUANTITY_TYPE,
    Quantity,
    QuantityError,
    QuantityTooLarge,
    parse_quantity,
)
from kcel.values import TypeValue
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}
ENV = kcel.Env(libraries=[*cel_libraries(), LIBRARY])


def q(text: str) -> Quantity:
    return parse_quantity(text)


def dec(value: int, exponent: int, notation: str) -> Quantity:
    """apimachinery's test helper decQuantity: an inf.Dec quantity value × 10^exponent."""
    return Quantity(value, exponent, notation, is_dec=True)


def evaluate(expr: str) -> Any:
    return ENV.compile(expr).evaluate()


# -- resource.ParseQuantity --------------------------------------------------------------------

# apimachinery TestQuantityParse: (input, exact value, format, held as inf.Dec)
PARSE_ROWS: list[tuple[str, str, str, bool]] = [
    ("0", "0", DECIMAL_SI, False), ("0n", "0", DECIMAL_SI, False), ("0u", "0", DECIMAL_SI, False),
    ("0m", "0", DECIMAL_SI, False), ("0Ki", "0", BINARY_SI, False), ("0k", "0", DECIMAL_SI, False),
    ("0Mi", "0", BINARY_SI, False), ("0M", "0", DECIMAL_SI, False), ("0Gi", "0", BINARY_SI, False),
    ("0G", "0", DECIMAL_SI, False), ("0Ti", "0", BINARY_SI, False), ("0T", "0", DECIMAL_SI, False),
    ("1", "1", DECIMAL_SI, False),
    ("1Ki", "1024", BINARY_SI, False), ("8Ki", "8192", BINARY_SI, False), ("7Mi", str(7 * 2**20), BINARY_SI, False),
    ("6Gi", str(6 * 2**30), BINARY_SI, False), ("5Ti", str(5 * 2**40), BINARY_SI, False),
    ("4Pi", str(4 * 2**50), BINARY_SI, True), ("3Ei", str(3 * 2**60), BINARY_SI, True),
    ("10Ti", str(10 * 2**40), BINARY_SI, False), ("100Ti", str(100 * 2**40), BINARY_SI, True),
    ("5n", "5e-9", DECIMAL_SI, False), ("4u", "4e-6", DECIMAL_SI, False), ("3m", "3e-3", DECIMAL_SI, False),
    ("9", "9", DECIMAL_SI, False), ("8k", "8e3", DECIMAL_SI, False), ("50k", "5e4", DECIMAL_SI, False),
    ("7M", "7e6", DECIMAL_SI, False), ("6G", "6e9", DECIMAL_SI, False), ("5T", "5e12", DECIMAL_SI, False),
    ("40T", "4e13", DECIMAL_SI, False), ("300T", "3e14", DECIMAL_SI, False), ("2P", "2e15", DECIMAL_SI, False),
    ("1E", "1e18", DECIMAL_SI, False),
    ("1E-3", "1e-3", DECIMAL_EXPONENT, False), ("1e3", "1e3", DECIMAL_EXPONENT, False),
    ("1E6", "1e6", DECIMAL_EXPONENT, False), ("1e9", "1e9", DECIMAL_EXPONENT, False),
    ("1E12", "1e12", DECIMAL_EXPONENT, False), ("1e15", "1e15", DECIMAL_EXPONENT, False),
    ("1E18", "1e18", DECIMAL_EXPONENT, False), ("1e14", "1e14", DECIMAL_EXPONENT, False),
    ("1e13", "1e13", DECIMAL_EXPONENT, False), ("100.035k", "100035", DECIMAL_SI, False),
    ("0.001", "1e-3", DECIMAL_SI, False), ("0.0005k", "5e-1", DECIMAL_SI, False), ("0.005", "5e-3", DECIMAL_SI, False),
    ("0.05", "5e-2", DECIMAL_SI, False), ("0.5", "5e-1", DECIMAL_SI, False), ("0.00050k", "5e-1", DECIMAL_SI, False),
    ("0.00500", "5e-3", DECIMAL_SI, False), ("0.05000", "5e-2", DECIMAL_SI, False),
    ("0.50000", "5e-1", DECIMAL_SI, False), ("0.5e0", "5e-1", DECIMAL_EXPONENT, False),
    ("0.5e-1", "5e-2", DECIMAL_EXPONENT, False), ("0.5e-2", "5e-3", DECIMAL_EXPONENT, False),
    ("10.035M", "10035e3", DECIMAL_SI, False), ("1.2e3", "12e2", DECIMAL_EXPONENT, False),
    ("1.3E+6", "13e5", DECIMAL_EXPONENT, False), ("1.40e9", "14e8", DECIMAL_EXPONENT, False),
    ("1.53E12", "153e10", DECIMAL_EXPONENT, False), ("1.6e15", "16e14", DECIMAL_EXPONENT, False),
    ("1.7E18", "17e17", DECIMAL_EXPONENT, False), ("9.01", "901e-2", DECIMAL_SI, False),
    ("8.1k", "81e2", DECIMAL_SI, False), ("7.123456M", "7123456", DECIMAL_SI, False),
    ("6.987654321G", "6987654321", DECIMAL_SI, False), ("5.444T", "5444e9", DECIMAL_SI, False),
    ("40.1T", "401e11", DECIMAL_SI, False), ("300.2T", "3002e11", DECIMAL_SI, False),
    ("2.5P", "25e14", DECIMAL_SI, False), ("1.01E", "101e16", DECIMAL_SI, False),
    # things that saturate or round up to nano
    ("3.001n", "4e-9", DECIMAL_SI, True), ("1.1E-9", "2e-9", DECIMAL_EXPONENT, True),
    ("0.0000000001", "1e-9", DECIMAL_SI, True), ("0.0000000005", "1e-9", DECIMAL_SI, True),
    ("0.00000000050", "1e-9", DECIMAL_SI, True), ("0.5e-9", "1e-9", DECIMAL_EXPONENT, True),
    ("0.9n", "1e-9", DECIMAL_SI, True), ("0.00000012345", "124e-9", DECIMAL_SI, True),
    ("0.00000012354", "124e-9", DECIMAL_SI, True), ("9Ei", str(2**63 - 1), BINARY_SI, True),
    ("9223372036854775807Ki", str(2**63 - 1), BINARY_SI, True), ("12E", "12e18", DECIMAL_SI, False),
    # fractional binary values
    ("100.035Ki", "10243584e-2", BINARY_SI, True), ("0.5Mi", "524288", BINARY_SI, True),
    ("0.05Gi", "536870912e-1", BINARY_SI, True), ("0.025Ti", "274877906944e-1", BINARY_SI, True),
    # "things written by trolls"
    ("0.000000000001Ki", "2e-9", DECIMAL_SI, True), (".001", "1e-3", DECIMAL_SI, False),
    (".0001k", "100e-3", DECIMAL_SI, False), ("1.", "1", DECIMAL_SI, False), ("1.G", "1e9", DECIMAL_SI, False),
    # more of Go's grammar: bare suffixes and signs are zero (apimachinery issue 165), int32 exponents wrap
    ("Mi", "0", BINARY_SI, False), ("k", "0", DECIMAL_SI, False), ("-", "0", DECIMAL_SI, False),
    (".", "0", DECIMAL_SI, False), ("-.", "0", DECIMAL_SI, False), ("000", "0", DECIMAL_SI, False),
    ("1e4294967296", "1", DECIMAL_EXPONENT, False), ("1e-10", "1e-9", DECIMAL_EXPONENT, True),
    ("9999999999999999999", "9999999999999999999", DECIMAL_SI, True),
    ("-9223372036854775808", "-9223372036854775808", DECIMAL_SI, True),
    ("0.0000000000000000000000e-100", "0", DECIMAL_EXPONENT, True),
]  # fmt: skip


@pytest.mark.parametrize(("text", "value", "notation", "is_dec"), PARSE_ROWS)
def test_parse(text: str, value: str, notation: str, is_dec: bool) -> None:
    parsed = q(text)
    assert (parsed.as_decimal(), parsed.notation, parsed.is_dec) == (Decimal(value), notation, is_dec)


@pytest.mark.parametrize(("text", "value", "notation", "is_dec"), [r for r in PARSE_ROWS if r[0][:1] not in "+-"])
def test_parse_signed(text: str, value: str, notation: str, is_dec: bool) -> None:
    """As apimachinery checks: '-' negates every row and '+' changes nothing."""
    negative, positive = q("-" + text), q("+" + text)
    assert (negative.as_decimal(), negative.notation) == (-Decimal(value), notation)
    assert (positive.as_decimal(), positive.notation) == (Decimal(value), notation)


PARSE_ERROR_ROWS = [
    ("", ERR_FORMAT), ("1.1.M", ERR_FORMAT), ("1+1.0M", ERR_FORMAT), ("0.1mi", ERR_SUFFIX), ("0.1am", ERR_FORMAT),
    ("aoeu", ERR_FORMAT), (".5i", ERR_SUFFIX), ("1i", ERR_SUFFIX), ("-3.01i", ERR_SUFFIX), ("-3.01e-", ERR_SUFFIX),
    (" 1", ERR_FORMAT), ("1 ", ERR_FORMAT), ("10Mo", ERR_FORMAT), ("10Mm", ERR_SUFFIX), ("20Mo", ERR_FORMAT),
    ("200K", ERR_SUFFIX), ("Three", ERR_FORMAT), ("1,3G", ERR_FORMAT), ("1e", ERR_SUFFIX), ("1e+", ERR_SUFFIX),
    ("1e9223372036854775808", ERR_SUFFIX), ("1Ki5", ERR_SUFFIX), ("1é", ERR_FORMAT), ("٣", ERR_FORMAT),
    (".e-10", ERR_NUMERIC), ("e-10", ERR_NUMERIC), ("-e-10", ERR_NUMERIC),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), PARSE_ERROR_ROWS)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as caught:
        q(text)
    assert str(caught.value) == message


# -- Quantity.String() -------------------------------------------------------------------------

# apimachinery TestQuantityString: (quantity, String()) and the negated quantity prints with "-"
STRING_ROWS = [
    (dec(2**30, 0, BINARY_SI), "1Gi"), (dec(300 * 2**20, 0, BINARY_SI), "300Mi"), (dec(6 * 1024, 0, BINARY_SI), "6Ki"),
    (dec(1001 * 2**30, 0, BINARY_SI), "1001Gi"), (dec(2**40, 0, BINARY_SI), "1Ti"), (dec(5, 0, BINARY_SI), "5"),
    (dec(500, -3, BINARY_SI), "500m"), (dec(1, 9, DECIMAL_SI), "1G"), (dec(1000, 6, DECIMAL_SI), "1G"),
    (dec(1000000, 3, DECIMAL_SI), "1G"), (dec(1000000000, 0, DECIMAL_SI), "1G"), (dec(1, -3, DECIMAL_SI), "1m"),
    (dec(80, -3, DECIMAL_SI), "80m"), (dec(1080, -3, DECIMAL_SI), "1080m"), (dec(108, -2, DECIMAL_SI), "1080m"),
    (dec(10800, -4, DECIMAL_SI), "1080m"), (dec(300, 6, DECIMAL_SI), "300M"), (dec(1, 12, DECIMAL_SI), "1T"),
    (dec(1234567, 6, DECIMAL_SI), "1234567M"), (dec(1234567, -3, BINARY_SI), "1234567m"),
    (dec(3, 3, DECIMAL_SI), "3k"), (dec(1025, 0, BINARY_SI), "1025"), (dec(0, 0, DECIMAL_SI), "0"),
    (dec(0, 0, BINARY_SI), "0"), (dec(1, 9, DECIMAL_EXPONENT), "1e9"), (dec(1, -3, DECIMAL_EXPONENT), "1e-3"),
    (dec(1, -9, DECIMAL_EXPONENT), "1e-9"), (dec(80, -3, DECIMAL_EXPONENT), "80e-3"),
    (dec(300, 6, DECIMAL_EXPONENT), "300e6"), (dec(1, 12, DECIMAL_EXPONENT), "1e12"),
    (dec(1, 3, DECIMAL_EXPONENT), "1e3"), (dec(3, 3, DECIMAL_EXPONENT), "3e3"), (dec(0, 0, DECIMAL_EXPONENT), "0"),
    (dec(1, -9, DECIMAL_SI), "1n"), (dec(80, -9, DECIMAL_SI), "80n"), (dec(1080, -9, DECIMAL_SI), "1080n"),
    (dec(108, -8, DECIMAL_SI), "1080n"), (dec(10800, -10, DECIMAL_SI), "1080n"), (dec(1, -6, DECIMAL_SI), "1u"),
    (dec(80, -6, DECIMAL_SI), "80u"), (dec(1080, -6, DECIMAL_SI), "1080u"),
    # exponents without a suffix print bare, as Go does
    (dec(1, 21, DECIMAL_SI), "1"), (dec(2**70, 0, BINARY_SI), "1"), (dec(3, 21, DECIMAL_EXPONENT), "3e21"),
]  # fmt: skip


@pytest.mark.parametrize(("quantity", "text"), STRING_ROWS)
def test_string(quantity: Quantity, text: str) -> None:
    assert str(quantity) == text
    as_int = Quantity(quantity.coefficient, quantity.exponent, quantity.notation)
    assert str(as_int) == text  # the int64 form prints the same
    if quantity.coefficient:
        negated = Quantity(-quantity.coefficient, quantity.exponent, quantity.notation, is_dec=True)
        assert str(negated) == "-" + text


# (input, String()): apimachinery's alternates and TestQuantityParseEmit, then inputs Go reuses verbatim
PARSED_STRING_ROWS = [
    ("1024Mi", "1Gi"), ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"), ("1024Gi", "1Ti"), ("5000m", "5"),
    ("0.5", "500m"), ("1000M", "1G"), ("0.001T", "1G"), ("1000u", "1m"), ("1.08", "1080m"),
    ("1080000000n", "1080m"), (".001e12", "1e9"), ("0.001e0", "1e-3"), ("1000e-12", "1e-9"), ("00", "0"),
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), (".001Ki", "1024m"), (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"), (".000000000001Ki", "2n"), ("1.5", "1500m"), ("1.5Gi", "1536Mi"),
    ("-1.5Gi", "-1536Mi"), ("12Mi", "12Mi"), ("9Ei", "9223372036854775807"), ("1023Ki", "1023Ki"),
    ("0.5Ki", "512"), ("1000E", "1"),
    # Go caches the input when it looks canonical, so String() returns it unchanged
    ("+1", "+1"), ("1.", "1."), ("1.500", "1.500"), ("012Mi", "012Mi"), ("1E3", "1E3"), ("100.035k", "100.035k"),
    ("+12Mi", "+12Mi"), ("-5", "-5"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "canonical"), PARSED_STRING_ROWS)
def test_parsed_string(text: str, canonical: str) -> None:
    assert str(q(text)) == canonical
    assert repr(q(text)) == f"Quantity({canonical!r})"


# -- conversions -------------------------------------------------------------------------------

# apimachinery TestQuantityAsApproximateFloat64 and TestStringQuantityAsApproximateFloat64
FLOAT_ROWS = [
    (dec(0, 0, DECIMAL_SI), 0.0), (dec(1, 0, BINARY_SI), 1.0), (dec(1024, 0, BINARY_SI), 1024.0),
    (dec(7 * 2**20, 1, BINARY_SI), 7 * 2**20 * 10.0), (dec(7 * 2**20, 8, DECIMAL_SI), 7 * 2**20 * 100000000.0),
    (dec(7 * 2**20, -1, DECIMAL_EXPONENT), 7 * 2**20 * 0.1), (dec(7 * 2**20, -8, DECIMAL_SI), 7 * 2**20 / 1e8),
    (dec(2**63 - 1, 0, DECIMAL_SI), 9.223372036854775807e18), (dec(12, 18, DECIMAL_SI), 1.2e19),
    (dec(12, 500, DECIMAL_SI), math.inf), (dec(-12, 500, DECIMAL_SI), -math.inf),
    (dec(10**400, 0, DECIMAL_SI), math.inf),
    (q("2Ki"), 2048.0), (q("1.1Ki"), 1126.4), (q("1Mi"), 1048576.0), (q("2Gi"), 2147483648.0),
    (q("50.703k"), 50703.0), (q("1n"), 1e-9), (q("-1.5"), -1.5),
]  # fmt: skip


@pytest.mark.parametrize(("quantity", "expected"), FLOAT_ROWS)
def test_approximate_float(quantity: Quantity, expected: float) -> None:
    assert quantity.approximate_float() == expected


def test_zero_with_a_huge_exponent_is_nan() -> None:
    """Go multiplies 0 by math.Pow10(400) = +Inf."""
    assert math.isnan(q("0e400").approximate_float())


# (quantity, AsInt64() or None): the int64 form with a scale >= 0 that fits, nothing else
INT_ROWS = [
    (q("50k"), 50000), (q("50"), 50), (q("-50k"), -50000), (q("1000m"), None), (q("1k"), 1000),
    (q("50000000G"), 50000000000000000), (q("9999999999999999999999999999999999999G"), None), (q("1.5Gi"), None),
    (q("12E"), None), (q("9E"), 9 * 10**18), (q("0n"), None), (q("0"), 0), (q("4Pi"), None), (q("5Ti"), 5 * 2**40),
    (dec(5, 0, DECIMAL_SI), None), (Quantity(5, 19, DECIMAL_SI), None), (Quantity(0, 30, DECIMAL_SI), 0),
]  # fmt: skip


@pytest.mark.parametrize(("quantity", "expected"), INT_ROWS)
def test_as_int64(quantity: Quantity, expected: int | None) -> None:
    assert quantity.as_int64() == expected


# -- arithmetic --------------------------------------------------------------------------------

# apimachinery TestAdd / TestSub and the format rules: (a, b, a+b, a-b) as (value, String())
ARITH_ROWS = [
    (Quantity(10, 0, DECIMAL_SI), Quantity(1, 1, DECIMAL_SI), ("20", "20"), ("0", "0")),
    (Quantity(10, 0, DECIMAL_SI), Quantity(1, 0, BINARY_SI), ("11", "11"), ("9", "9")),
    (Quantity(10, 0, BINARY_SI), Quantity(1, 0, DECIMAL_SI), ("11", "11"), ("9", "9")),
    (Quantity(0, 0, DECIMAL_SI), Quantity(50, 0, DECIMAL_SI), ("50", "50"), ("-50", "-50")),
    (q("0"), q("100m"), ("0.1", "100m"), ("-0.1", "-100m")),
    (q("100m"), q("0"), ("0.1", "100m"), ("0.1", "100m")),
    (q("0"), q("1Gi"), (str(2**30), "1Gi"), (str(-(2**30)), "-1Gi")),
    (q("1Gi"), q("0"), (str(2**30), "1Gi"), (str(2**30), "1Gi")),
    (q("50k"), q("20"), ("50020", "50020"), ("49980", "49980")),
    (q("1.5Gi"), q("512Mi"), (str(2**31), "2Gi"), (str(2**30), "1Gi")),
    (q("9E"), q("9E"), ("18e18", "18E"), ("0", "0")),
    (q("9999999999999999999"), q("1"), ("1e19", "10E"), ("9999999999999999998", "9999999999999999998")),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b", "total", "difference"), ARITH_ROWS)
def test_add_sub(a: Quantity, b: Quantity, total: tuple[str, str], difference: tuple[str, str]) -> None:
    summed, subtracted = a.add(b), a.sub(b)
    assert (summed.as_decimal(), str(summed)) == (Decimal(total[0]), total[1])
    assert (subtracted.as_decimal(), str(subtracted)) == (Decimal(difference[0]), difference[1])


def test_arithmetic_does_not_mutate() -> None:
    a, b = q("9999999999999999999999999999999999999"), q("1")
    a.add(b), a.sub(b)
    assert (str(a), str(b)) == ("9999999999999999999999999999999999999", "1")


def test_int64_sub_wraps_like_go() -> None:
    """0 - (-2^63): Go negates the int64 (still -2^63) before adding, so the sign comes out wrong."""
    assert evaluate("quantity('0').sub(-9223372036854775808).asInteger()") == -(2**63)


def test_zero_sum_keeps_its_scale() -> None:
    assert q("500m").sub(q("500m")).as_int64() is None


def test_comparing_with_an_inf_dec_converts_the_receiver() -> None:
    """Go's Cmp calls AsDec on the receiver when either side is an inf.Dec, in place."""
    one, huge = q("1"), q("99999999999999999999")
    assert one.as_int64() == 1
    assert one.compare(huge) == -1
    assert one.as_int64() is None
    assert huge.compare(one) == 1


def test_huge_exponents_are_refused() -> None:
    with pytest.raises(QuantityTooLarge, match="too large"):
        q("1e2000000000").add(q("1"))
    assert q("1e2000000000").compare(q("1")) == 1  # comparison never builds the number
    assert q("1.5e-2000000000").as_decimal() == Decimal("1e-9")  # rounding never builds it either
    with pytest.raises(QuantityTooLarge):
        evaluate("quantity('12345678901234567890e2000000000')")
    assert evaluate("isQuantity('12345678901234567890e2000000000')") is True  # Go parses it, slowly


# -- equality and hashing ----------------------------------------------------------------------


def test_equality_is_numeric_and_hash_agrees() -> None:
    assert q("200M") == q("0.2G") and hash(q("200M")) == hash(q("0.2G"))
    assert q("0") == q("0n") and hash(q("0")) == hash(q("0n"))
    assert q("1Ki") == q("1024") and q("1Ki") != q("1k")


def test_equality_with_the_pointer_form_is_no_such_overload() -> None:
    with pytest.raises(EvalError, match="no such overload"):
        _ = q("2") == q("1").add(q("1"))
    assert q("1").add(q("1")) == q("2")


# -- the CEL functions -------------------------------------------------------------------------


class Err:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern


# apiserver quantity_test.go TestQuantity, every row, then more
EVAL_ROWS: list[tuple[str, Any]] = [
    ('quantity("12Mi")', q("12Mi")),
    ('quantity("10Mo")', Err("quantities must match the regular expression.*")),
    ('quantity("10Mm")', Err("unable to parse quantity's suffix")),
    ('isQuantity("20")', True), ('isQuantity("20M")', True), ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False), ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
     'quantity("0.002G") == quantity("2000k")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True), ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False), ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0), ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', Err("cannot convert value to integer")),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    ('[quantity("9999999999999999999999999999999999999")].all(x, '
     'x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)', True),
    # the doc comment's examples (its quantity('Mi') error is wrong: Go parses a bare suffix as 0)
    ("quantity('200K')", Err(r"^unable to parse quantity's suffix$")), ("quantity('Three')", Err("regular expression")),
    ("quantity('Mi') == quantity('0')", True), ("isQuantity('1,3G')", False), ("isQuantity('10000k')", True),
    ('quantity("50000000G").isInteger()', True), ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")', True),
    # sign is a global function only
    ('sign(quantity("-5"))', -1), ('sign(quantity("0"))', 0), ('sign(quantity("1n"))', 1),
    ('sign(quantity("1").sub(quantity("2")))', -1),
    # isInteger is Go's AsInt64: negative scales and inf.Dec values are never integers
    ('quantity("1000m").isInteger()', False), ('quantity("1k").isInteger()', True),
    ('quantity("500m").add(quantity("500m")).isInteger()', False), ('quantity("1.5Gi").isInteger()', False),
    ('quantity("1000m").asInteger()', Err("^cannot convert value to integer$")),
    ('quantity("9223372036854775807").asInteger()', Err("cannot convert")),  # 19 digits: parsed as inf.Dec
    ('quantity("9223372036854775k").add(quantity("807")).asInteger()', 9223372036854775807),
    ('quantity("9223372036854775k").add(quantity("807")).add(1).isInteger()', False),
    ('quantity("1").add(quantity("1m")).asApproximateFloat()', 1.0010000000000001),  # 1001 * Pow10(-3)
    ('[quantity("1")].all(x, x.isLessThan(quantity("99999999999999999999")) && x.isInteger())', False),
    # equality: numeric, `no such overload` against other kinds and against add/sub results on the right
    ('quantity("1Ki") == quantity("1024")', True), ('quantity("1Ki") != quantity("1k")', True),
    ('quantity("1").add(1) == quantity("2")', True),
    ('quantity("2") == quantity("1").add(1)', Err("^no such overload$")),
    ('quantity("1").add(1) != quantity("1").sub(-1)', Err("^no such overload$")),
    ('dyn(quantity("1")) == 1', Err("^no such overload$")), ('1 == dyn(quantity("1"))', False),
    ('dyn(quantity("1")) == null', False),
    ('type(quantity("1")) == kubernetes.Quantity', True),
    ('dyn(quantity("1")).add(dyn(2)).asInteger()', 3),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), EVAL_ROWS)
def test_eval(expr: str, expected: Any) -> None:
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as caught:
            evaluate(expr)
        assert re.search(expected.pattern, str(caught.value)), str(caught.value)
        return
    result = evaluate(expr)
    assert type(result) is type(expected)
    assert cel_equals(result, expected)


def test_type_value() -> None:
    assert evaluate('type(quantity("1"))') == TypeValue("kubernetes.Quantity")


COMPILE_ERROR_ROWS = [
    ("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity' applied to '(list(int))'"),
    ('quantity("1").sign()', "found no matching overload for 'sign'"),
    ('quantity("1") < quantity("2")', "found no matching overload for '_<_' applied to "
                                      "'(kubernetes.Quantity, kubernetes.Quantity)'"),
    ('quantity("1").add(1.0)', "found no matching overload for 'add'"),
    ('string(quantity("1"))', "found no matching overload for 'string'"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "message"), COMPILE_ERROR_ROWS)
def test_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(CompileError) as caught:
        ENV.compile(expr)
    assert message in str(caught.value)


def test_overload_ids() -> None:
    assert LIBRARY.name == "kubernetes.quantity"
    assert LIBRARY.types == (QUANTITY_TYPE,)
    assert sorted(OVERLOADS) == sorted([
        "string_to_quantity", "is_quantity_string", "quantity_sign", "quantity_is_greater_than",
        "quantity_is_less_than", "quantity_compare_to", "quantity_get_float", "quantity_get_int",
        "quantity_is_integer", "quantity_add", "quantity_add_int", "quantity_sub", "quantity_sub_int",
    ])  # fmt: skip
    globals_ = {o.id for o in LIBRARY.overloads if not o.member}
    assert globals_ == {"string_to_quantity", "is_quantity_string", "quantity_sign"}
    assert OVERLOADS["is_quantity_string"].result == BOOL


# -- costs -------------------------------------------------------------------------------------


def estimate(program: Any) -> tuple[int, int]:
    """kcel's estimator with cost_test.go's sizes (strings of unknown size are at most 12 long)."""
    found = ENV.estimate_cost(program, StringSizes(12))
    return found.min, found.max


# apiserver cost_test.go TestQuantityCost: (expression, estimated {min, max}, runtime cost)
COST_ROWS = [
    ('quantity("12Mi")', (1, 1), 1), ('isQuantity("20M")', (1, 1), 1),
    ('quantity("200M") == quantity("200M")', (3, 3), 3),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
     'quantity("0.002G") == quantity("2000k")', (3, 9), 9),
    ('quantity("50M").isLessThan(quantity("50Mi"))', (3, 3), 3),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', (3, 3), 3),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', (5, 5), 5),
    ('quantity("50k").sub(20) == quantity("49980")', (4, 4), 4), ('quantity("50k").asInteger() > 0', (3, 3), 3),
    ('isQuantity("' + "1" * 25 + '")', (3, 3), 3), ('sign(quantity("-1")) == -1', (3, 3), 3),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "estimated", "runtime"), COST_ROWS)
def test_costs(expr: str, estimated: tuple[int, int], runtime: int) -> None:
    program = ENV.compile(expr)
    assert program.evaluate_with_cost()[1] == runtime
    assert estimate(program) == estimated


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (SizeEstimate(0, 12), (0, 2)),
        (SizeEstimate(4, 4), (1, 1)),
        (SizeEstimate(0, 2**64 - 1), (0, 1844674407370955264)),
    ],
)
def test_parse_estimate(size: SizeEstimate, expected: tuple[int, int]) -> None:
    for oid in ("string_to_quantity", "is_quantity_string"):
        estimate_fn = OVERLOADS[oid].estimate
        assert estimate_fn is not None
        call = estimate_fn(SizedCall([size]))
        assert call is not None and (call.cost.min, call.cost.max) == expected


# -- Kubernetes' own cases (../shared/k8s-cases) -----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
QUANTITY_FILE = CASES_DIR / "apiserver-library-quantity_test.json"
COST_FILE = CASES_DIR / "apiserver-library-cost_test.json"
QUANTITY_FUNCTIONS = {o.function for o in LIBRARY.overloads}
STANDARD_FUNCTIONS = {o.function for name in ("operators", "standard") for o in load_library(name).overloads}
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _absent(path: Any) -> list[Any]:
    reason = f"k8s-cases not found at {path} (../shared is absent)"
    print(reason)
    return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="k8s-cases-absent")]


def _quantity_cases() -> list[Any]:
    if not QUANTITY_FILE.exists():
        return _absent(QUANTITY_FILE)
    cases = json.loads(QUANTITY_FILE.read_text())["cases"]
    return [pytest.param(c, id=c["id"]) for c in cases if c["kind"] == "eval"]


def _uses_only_quantity(expression: str) -> bool:
    """The cost cases kcel can run here: quantity functions plus the standard library, nothing else."""
    called = set(_CALLED.findall(expression))
    return bool(called & QUANTITY_FUNCTIONS) and called <= QUANTITY_FUNCTIONS | STANDARD_FUNCTIONS


def _cost_cases() -> list[Any]:
    if not COST_FILE.exists():
        return _absent(COST_FILE)
    cases = json.loads(COST_FILE.read_text())["cases"]
    chosen = [c for c in cases if c["kind"] == "cost" and _uses_only_quantity(c["expression"])]
    print(f"{len(chosen)} quantity cost cases of {len(cases)} in {COST_FILE.name}")
    return [pytest.param(c, id=c["id"]) for c in chosen]


def decode(value: Any) -> Any:
    """A case value in the k8s-cases encoding (README, "Value encoding")."""
    if not isinstance(value, dict):
        return value
    ((tag, payload),) = value.items()
    decoders: dict[str, Callable[[str], Any]] = {"int": int, "double": float, "quantity": parse_quantity}
    return decoders[tag](payload)


@pytest.mark.parametrize("case", _quantity_cases())
def test_k8s_quantity_cases(case: dict[str, Any]) -> None:
    expect = case["expect"]
    try:
        program = ENV.compile(case["expression"])
    except CompileError as err:
        assert "compile_error" in expect, str(err)
        patterns = expect["compile_error"].get("patterns", [])
        assert all(re.search(p, str(err)) for p in patterns), str(err)
        return
    assert "compile_error" not in expect
    variables = {name: decode(v) for name, v in case["inputs"]["variables"].items()}
    if "runtime_error" in expect:
        with pytest.raises(EvalError) as caught:
            program.evaluate(variables)
        spec = expect["runtime_error"]
        message = str(caught.value)
        assert message == spec["pattern"] if spec["match"] == "exact" else re.search(spec["pattern"], message)
        return
    result, wanted = program.evaluate(variables), decode(expect["value"])
    assert type(result) is type(wanted)
    assert cel_equals(result, wanted)  # result first, as the Go test calls res.Equal(expected)


@pytest.mark.parametrize("case", _cost_cases())
def test_k8s_cost_cases(case: dict[str, Any]) -> None:
    program = ENV.compile(case["expression"])
    expect = case["expect"]
    assert program.evaluate_with_cost()[1] == expect["runtime_cost"]
    assert estimate(program) == (expect["estimated_cost"]["min"], expect["estimated_cost"]["max"])


def test_k8s_cases_cover_the_library() -> None:
    if not COST_FILE.exists():
        pytest.skip(f"k8s-cases not found at {COST_FILE} (../shared is absent)")
    assert len(_cost_cases()) == 9
    assert len(_quantity_cases()) == 23
