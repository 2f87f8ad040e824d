"""Kubernetes' quantity library (`kubernetes.Quantity`): apimachinery's resource.Quantity, exact to the digit."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, ClassVar, NamedTuple

from kcel.checker.types import BOOL, DOUBLE, INT, STRING, CelType, opaque
from kcel.errors import EvalError
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.libs import Library, Overload, size_cost, size_estimate, unit_cost, unit_estimate
from kcel.values import INT64_MAX, INT64_MIN, decimal_int

__all__ = [
    "BINARY_SI", "DECIMAL_EXPONENT", "DECIMAL_SI", "ERR_FORMAT", "ERR_NUMERIC", "ERR_SUFFIX", "LIBRARY",
    "QUANTITY_TYPE", "Quantity", "QuantityError", "QuantityTooLarge", "canonical_text", "parse_quantity",
]  # fmt: skip

QUANTITY_TYPE = opaque("kubernetes.Quantity")

# Go's resource.Format values: the suffix family a quantity was written in and is printed in.
DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
BINARY_SI = "BinarySI"  # 12Mi
DECIMAL_SI = "DecimalSI"  # 12M

ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_NANO = -9
"""The finest scale a quantity keeps; parsing rounds anything finer up to it."""
_MAX_INT64_DIGITS = 18
_MAX_POW10 = 100_000
"""kcel's own limit on 10**n. Go would build such numbers (slowly); kcel refuses rather than hang."""

_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in _BINARY_SUFFIXES.items()}
_EXPONENT = re.compile(r"[+-]?[0-9]+")

_string_traversal_estimate = size_estimate(0.1)
_unit_cost = unit_cost
_unit_estimate = unit_estimate


class QuantityError(ValueError):
    """A resource.ParseQuantity failure; `str()` is Go's error text, which CEL reports unchanged."""


class QuantityTooLarge(EvalError):
    """kcel's refusal to build a power of ten beyond `_MAX_POW10`; Go would (slowly) succeed."""


# -- exact integer helpers ---------------------------------------------------------------------


def _fits_int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def _wrap_int64(value: int) -> int:
    """Go's int64 wrap-around, which `int64Amount.Sub` relies on when it negates."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


def _wrap_int32(value: int) -> int:
    """Go's int32 conversion: the exponent and scale of a quantity are int32."""
    return (value + 2**31) % 2**32 - 2**31


def _pow10(n: int) -> int:
    if n > _MAX_POW10:
        raise QuantityTooLarge(f"quantity exponent too large to compute exactly: 10^{n}")
    return int(10**n)


def _digit_count(n: int) -> int:
    """Decimal digits of abs(n) (1 for 0), without str(), which Python limits to 4300 digits."""
    n = abs(n)
    count = max(1, int(n.bit_length() * 0.30102999566398120))
    while n >= 10**count:
        count += 1
    while count > 1 and n < 10 ** (count - 1):
        count -= 1
    return count


def _int_text(n: int) -> str:
    """str(n) for integers of any length (Decimal has no digit limit)."""
    return str(Decimal(n))


def _positive_scale(value: int, scale: int) -> int | None:
    """Go's positiveScaleInt64: value × 10^scale, or None when it leaves int64."""
    if value == 0 or scale == 0:
        return value
    if scale > _MAX_INT64_DIGITS:
        return None
    scaled = value * _pow10(scale)
    return scaled if _fits_int64(scaled) else None


def _compare(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Order two values coefficient × 10^exponent without building huge powers of ten."""
    (n1, e1), (n2, e2) = a, b
    s1, s2 = (n1 > 0) - (n1 < 0), (n2 > 0) - (n2 < 0)
    if s1 != s2 or s1 == 0:
        return (s1 > s2) - (s1 < s2)
    m1, m2 = _digit_count(n1) + e1, _digit_count(n2) + e2
    if m1 != m2:
        return s1 if m1 > m2 else -s1
    low = min(e1, e2)  # equal magnitudes: the shift is at most a coefficient's length
    x, y = n1 * _pow10(e1 - low), n2 * _pow10(e2 - low)
    return (x > y) - (x < y)


def _aligned(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int, int]:
    """Both coefficients at the smaller exponent, as inf.Dec's upscale does before adding."""
    (n1, e1), (n2, e2) = a, b
    low = min(e1, e2)
    return n1 * _pow10(e1 - low), n2 * _pow10(e2 - low), low


def _round_up(n: int, e: int, target: int) -> tuple[int, int]:
    """inf.Dec Round(scale -target, RoundUp) of a positive n × 10^e: away from zero."""
    if e >= target:
        return n * _pow10(e - target), target
    shift = target - e
    if _digit_count(n) <= shift:  # n < 10^shift: only the rounding unit is left
        return 1, target
    quotient, remainder = divmod(n, _pow10(shift))
    return quotient + (remainder != 0), target


def _go_pow10_table(sign: str, step: int, count: int) -> tuple[float, ...]:
    return tuple(float(f"1e{sign}{step * i}") for i in range(count))


_POW10 = _go_pow10_table("", 1, 32)
_POW10_POS32 = _go_pow10_table("", 32, 10)
_POW10_NEG32 = _go_pow10_table("-", 32, 11)


def _go_pow10(n: int) -> float:
    """Go's math.Pow10, computed from the same tables so every rounding agrees."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return math.inf if n > 0 else 0.0


def _to_float(n: int) -> float:
    """big.Float(53 bits, nearest even).Float64(): ±Inf beyond the double range."""
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


# -- values ------------------------------------------------------------------------------------


class Quantity:
    """A `resource.Quantity` as Kubernetes' CEL sees it: coefficient × 10^exponent, exactly.

    Go keeps either an int64 with a base-10 scale (`int64Amount`) or an arbitrary-precision
    `inf.Dec`; `is_dec` records which, because `isInteger()` and `asInteger()` answer false for
    the second form whatever the value. `notation` is Go's Format (DecimalSI, BinarySI or
    DecimalExponent). `text` is the string Go caches when the input was already canonical, and
    `str()` returns it unchanged (so `+1` prints as `+1`).

    `pointer` marks results of add/sub, which Kubernetes returns as `*cel.Quantity`: its
    `Quantity.Equal` accepts only the non-pointer form, so `a == b` with such a `b` is
    `no such overload` in Kubernetes, and here.

    >>> q = parse_quantity("1.5Gi")
    >>> str(q), q.is_dec, str(parse_quantity("1500m").add(parse_quantity("500m")))
    ('1536Mi', True, '2')
    """

    __slots__ = ("coefficient", "exponent", "is_dec", "notation", "pointer", "text")
    cel_type_name: ClassVar[str] = "kubernetes.Quantity"

    def __init__(
        self, coefficient: int, exponent: int, notation: str, *, is_dec: bool = False, text: str = "",
        pointer: bool = False,
    ) -> None:  # fmt: skip
        self.coefficient = coefficient
        self.exponent = exponent
        self.notation = notation
        self.is_dec = is_dec
        self.text = text
        self.pointer = pointer

    @property
    def amount(self) -> tuple[int, int]:
        return self.coefficient, self.exponent

    def sign(self) -> int:
        return (self.coefficient > 0) - (self.coefficient < 0)

    def compare(self, other: Quantity) -> int:
        """Go's `*Quantity.Cmp`, including its side effect.

        When either side is an inf.Dec, Go converts the receiver to one in place (`AsDec`), so a
        quantity compared with a huge one stops being an integer for `isInteger()`.
        """
        if self.is_dec or other.is_dec:
            self.is_dec = True
        return _compare(self.amount, other.amount)

    def as_int64(self) -> int | None:
        """Go's AsInt64: only the int64 form with a scale >= 0 that still fits converts."""
        if self.is_dec or self.exponent < 0:
            return None
        return _positive_scale(self.coefficient, self.exponent)

    def approximate_float(self) -> float:
        """Go's AsApproximateFloat64: the coefficient as a double times math.Pow10(exponent)."""
        base = _to_float(self.coefficient)
        return base if self.exponent == 0 else base * _go_pow10(self.exponent)

    def add(self, other: Quantity) -> Quantity:
        """`q.DeepCopy()` then `Add(other)`: int64 arithmetic while it fits, else inf.Dec."""
        notation = other.notation if self.coefficient == 0 else self.notation
        if not self.is_dec and not other.is_dec:
            summed = _int64_add(self.amount, other.amount)
            if summed is not None:
                return Quantity(*summed, notation, pointer=True)
        x, y, exponent = _aligned(self.amount, other.amount)
        return Quantity(x + y, exponent, notation, is_dec=True, pointer=True)

    def sub(self, other: Quantity) -> Quantity:
        """`q.DeepCopy()` then `Sub(other)`; the int64 path negates with Go's wrap-around."""
        notation = other.notation if self.coefficient == 0 else self.notation
        if not self.is_dec and not other.is_dec:
            negated = (_wrap_int64(-other.coefficient), other.exponent)
            difference = _int64_add(self.amount, negated)
            if difference is not None:
                return Quantity(*difference, notation, pointer=True)
        x, y, exponent = _aligned(self.amount, other.amount)
        return Quantity(x - y, exponent, notation, is_dec=True, pointer=True)

    def as_decimal(self) -> Decimal:
        """The exact value (for tests and debugging)."""
        return Decimal(f"{_int_text(self.coefficient)}e{self.exponent}")

    def __eq__(self, other: object) -> bool:
        """Kubernetes' `Quantity.Equal`: numeric, and `no such overload` for the pointer form."""
        if not isinstance(other, Quantity):
            return NotImplemented
        if other.pointer:
            raise EvalError("no such overload")
        return _compare(self.amount, other.amount) == 0

    def __hash__(self) -> int:
        if self.coefficient == 0:
            return 0
        digits = _int_text(self.coefficient)
        stripped = digits.rstrip("0") or "0"
        return hash((stripped, self.exponent + len(digits) - len(stripped)))

    def cel_equals(self, other: Any) -> bool:
        """Kubernetes' Quantity.Equal with another kind of value is `no such overload`, not false."""
        raise EvalError("no such overload")

    def __str__(self) -> str:
        """Go's `Quantity.String()`: the cached input text, else the canonical form."""
        return self.text or canonical_text(self)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _int64_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """Go's int64Amount.Add: the sum at the smaller scale, or None if it overflows int64.

    A zero operand leaves the other's scale untouched, which is why `500m - 500m` keeps scale
    -3 and is not an integer for `isInteger()`.
    """
    (x, xs), (y, ys) = a, b
    if y == 0:
        return a
    if x == 0:
        return b
    if xs > ys:
        scaled = _positive_scale(x, xs - ys)
        if scaled is None:
            return None
        x, xs = scaled, ys
    elif ys > xs:
        scaled = _positive_scale(y, ys - xs)
        if scaled is None:
            return None
        y = scaled
    total = x + y
    return (total, xs) if _fits_int64(total) else None


# -- parsing (resource.ParseQuantity) ----------------------------------------------------------


class _Scanned(NamedTuple):
    """parseQuantityString's pieces: `value` is the signed number text, `num`/`denom` its digits."""

    positive: bool
    value: str
    num: str
    denom: str
    suffix: str


def _run(text: str, start: int, accepted: frozenset[str]) -> int:
    """The index just past the run of `accepted` characters beginning at `start`."""
    end = start
    while end < len(text) and text[end] in accepted:
        end += 1
    return end


def _scan(text: str) -> _Scanned:
    """Go's parseQuantityString: sign, number, then suffix letters, an optional sign and digits."""
    positive = not text.startswith("-")
    pos = 1 if text[:1] in ("-", "+") else 0
    pos = _run(text, pos, frozenset("0"))  # leading zeros
    if pos == len(text):
        return _Scanned(positive, "0", "0", "", "")
    end = _run(text, pos, _DIGITS)
    num = text[pos:end] or "0"
    if end == len(text):
        return _Scanned(positive, text, num, "", "")
    denom = ""
    if text[end] == ".":
        denom_end = _run(text, end + 1, _DIGITS)
        denom, end = text[end + 1 : denom_end], denom_end
        if end == len(text):
            return _Scanned(positive, text, num, denom, "")
    return _Scanned(positive, text[:end], num, denom, _scan_suffix(text, end))


def _scan_suffix(text: str, start: int) -> str:
    pos = _run(text, start, _SUFFIX_LETTERS)
    if pos < len(text) and text[pos] in "+-":
        pos += 1
    if _run(text, pos, _DIGITS) != len(text):
        raise QuantityError(ERR_FORMAT)
    return text[start:]


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """Go's suffixer.interpret: (base, exponent, format), or None for an unknown suffix."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix[1:]):
        exponent = decimal_int(suffix[1:])  # strconv.ParseInt(..., 10, 64), then int32()
        return (10, _wrap_int32(exponent), DECIMAL_EXPONENT) if _fits_int64(exponent) else None
    return None


def parse_quantity(text: str) -> Quantity:
    """Go's `resource.ParseQuantity`, error texts included.

    >>> str(parse_quantity("1.5")), str(parse_quantity("0.5Mi")), parse_quantity("1000m").as_int64()
    ('1500m', '512Ki', None)
    """
    if not text:
        raise QuantityError(ERR_FORMAT)
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, text="0")
    scanned = _scan(text)
    interpreted = _interpret(scanned.suffix)
    if interpreted is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, notation = interpreted
    fast = _parse_int64(text, scanned, exponent, notation)
    return fast if fast is not None else _parse_dec(scanned, base, exponent, notation)


def _parse_int64(text: str, scanned: _Scanned, exponent: int, notation: str) -> Quantity | None:
    """The int64 fast path: few enough digits and a scale no finer than nano; None otherwise."""
    num, denom = scanned.num, scanned.denom
    if notation == BINARY_SI:
        if denom:
            return None
        scale, multiplier = 0, 1 << exponent
        precision = 15 - len(num) - exponent * 3 // 10 - 1
    else:
        scale, multiplier = exponent, 1
        precision = _MAX_INT64_DIGITS - len(num + denom)
    scale = _wrap_int32(scale - len(denom))
    if precision < 0 or scale < _NANO:
        return None
    digits = num + denom
    value = int(digits)
    result = value * multiplier
    if not _fits_int64(result):
        return None
    cached = text if _is_canonical(digits, value, scale, exponent, notation) else ""
    return Quantity(result if scanned.positive else -result, scale, notation, text=cached)


def _is_canonical(digits: str, value: int, scale: int, exponent: int, notation: str) -> bool:
    """Go's test for reusing the input as String(); it is looser than canonical form (`1.500`)."""
    if notation == BINARY_SI:
        return exponent % 10 == 0 and value & 0x07 != 0
    return scale % 3 == 0 and not digits.endswith("000") and digits[0] != "0"


def _parse_dec(scanned: _Scanned, base: int, exponent: int, notation: str) -> Quantity:
    """The inf.Dec path: exact, rounded up to nano, BinarySI capped at the largest int64."""
    n, e = _dec_from_string(scanned.value)
    if base == 10:
        e = -_wrap_int32(-e - exponent)  # inf.Dec's int32 scale, which counts the other way
    else:
        n <<= exponent
    sign, n = (-1 if n < 0 else 1), abs(n)
    if n:
        n, e = _round_up(n, e, _NANO)
    if notation == BINARY_SI and _compare((n, e), (INT64_MAX, 0)) > 0:
        n, e = INT64_MAX, 0
    if notation == BINARY_SI and n and _compare((n, e), (1, 0)) < 0:
        notation = DECIMAL_SI  # a fraction of one cannot be written in binary units
    return Quantity(sign * n, e, notation, is_dec=True)


def _dec_from_string(value: str) -> tuple[int, int]:
    """inf.Dec SetString on the scanner's number text: (coefficient, exponent)."""
    digits = value.lstrip("+-")
    whole, _, fraction = digits.partition(".")
    if not (whole + fraction):
        raise QuantityError(ERR_NUMERIC)
    coefficient = int(Decimal(whole + fraction))  # no 4300-digit limit, unlike int(str)
    return (-coefficient if value.startswith("-") else coefficient), -len(fraction)


# -- canonical text (Quantity.String) ----------------------------------------------------------


def canonical_text(q: Quantity) -> str:
    """Go's CanonicalizeBytes: no fraction, the largest exponent that loses nothing, suffix kept.

    BinarySI values in (-1024, 1024) or with a fraction print as DecimalSI. An exponent with no
    suffix (1e21 in DecimalSI, 2^70 in BinarySI) prints bare, as Go does.
    """
    if q.coefficient == 0:
        return "0"
    if q.notation == BINARY_SI:
        whole = _binary_whole(q)
        if whole is not None:
            return _binary_text(whole)
    return _decimal_text(q.coefficient, q.exponent, q.notation)


def _binary_whole(q: Quantity) -> int | None:
    """The integer value when BinarySI can print it, else None (small or fractional)."""
    if _compare(q.amount, (-1024, 0)) > 0 and _compare(q.amount, (1024, 0)) < 0:
        return None
    n, e = q.amount
    if e >= 0:
        return n * _pow10(e)
    if _digit_count(n) <= -e:
        return None
    whole, fraction = divmod(abs(n), _pow10(-e))
    return None if fraction else (whole if n > 0 else -whole)


def _binary_text(value: int) -> str:
    magnitude = abs(value)
    times = ((magnitude & -magnitude).bit_length() - 1) // 10  # whole factors of 1024
    value >>= 10 * times
    return _int_text(value) + _BINARY_BY_EXPONENT.get(10 * times, "")


def _decimal_text(n: int, e: int, notation: str) -> str:
    digits = _int_text(n)
    stripped = digits.rstrip("0")
    e += len(digits) - len(stripped)
    shift = e % 3  # down to a multiple of three
    mantissa = stripped + "0" * shift
    e -= shift
    if notation == DECIMAL_EXPONENT:
        return mantissa + (f"e{e}" if e else "")
    return mantissa + _DECIMAL_BY_EXPONENT.get(e, "")


# -- functions ---------------------------------------------------------------------------------


def string_to_quantity(text: str) -> Quantity:
    try:
        return parse_quantity(text)
    except QuantityError as err:
        raise EvalError(str(err)) from None


def is_quantity_string(text: str) -> bool:
    """Whether Go's ParseQuantity accepts the text (it would also accept what kcel finds too large)."""
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    except QuantityTooLarge:
        return True
    return True


def quantity_sign(q: Quantity) -> int:
    return q.sign()


def quantity_is_greater_than(q: Quantity, other: Quantity) -> bool:
    return q.compare(other) == 1


def quantity_is_less_than(q: Quantity, other: Quantity) -> bool:
    return q.compare(other) == -1


def quantity_compare_to(q: Quantity, other: Quantity) -> int:
    return q.compare(other)


def quantity_get_float(q: Quantity) -> float:
    return q.approximate_float()


def quantity_get_int(q: Quantity) -> int:
    value = q.as_int64()
    if value is None:
        raise EvalError("cannot convert value to integer")
    return value


def quantity_is_integer(q: Quantity) -> bool:
    return q.as_int64() is not None


def _int_quantity(value: int) -> Quantity:
    """resource.NewQuantity(n, DecimalExponent), how Kubernetes turns an int operand into a quantity."""
    return Quantity(value, 0, DECIMAL_EXPONENT)


def quantity_add(q: Quantity, other: Quantity) -> Quantity:
    return q.add(other)


def quantity_add_int(q: Quantity, other: int) -> Quantity:
    return q.add(_int_quantity(other))


def quantity_sub(q: Quantity, other: Quantity) -> Quantity:
    return q.sub(other)


def quantity_sub_int(q: Quantity, other: int) -> Quantity:
    return q.sub(_int_quantity(other))


# -- costs (k8s-cel-cost.md §2.4 and §3.3) -----------------------------------------------------

_string_traversal_cost = size_cost(0.1)
"""quantity() and isQuantity() read their string once: ceil(size × 0.1)."""


# -- registration and the table ----------------------------------------------------------------


def _register_types() -> None:
    """Runtime dispatch and type() must know the class."""
    register_class(QUANTITY_TYPE.name, Quantity)
    register_type_name(Quantity, QUANTITY_TYPE.name)


_register_types()


def _parser(oid: str, function: str, result: CelType, impl: Any, doc: str) -> Overload:
    """A global function of a string that parses it: a tenth of the string's length."""
    return Overload(
        oid, function, (STRING,), result, impl, cost=_string_traversal_cost, doc=doc,
        estimate=_string_traversal_estimate,
    )  # fmt: skip


def _unit(
    oid: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any, doc: str, member: bool = True
) -> Overload:
    """An accessor, comparison or sum on quantities: constant cost 1."""
    return Overload(oid, function, args, result, impl, member=member, cost=_unit_cost, doc=doc, estimate=_unit_estimate)


_Q = QUANTITY_TYPE

LIBRARY = Library(
    "kubernetes.quantity",
    overloads=(
        _parser("string_to_quantity", "quantity", _Q, string_to_quantity, "quantity('1.5G')"),
        _parser("is_quantity_string", "isQuantity", BOOL, is_quantity_string, "isQuantity('1.3Gi') == true"),
        _unit("quantity_sign", "sign", (_Q,), INT, quantity_sign, "sign(quantity('-1')) == -1", member=False),
        _unit("quantity_is_greater_than", "isGreaterThan", (_Q, _Q), BOOL, quantity_is_greater_than,
              "quantity('150Mi').isGreaterThan(quantity('100Mi'))"),
        _unit("quantity_is_less_than", "isLessThan", (_Q, _Q), BOOL, quantity_is_less_than,
              "quantity('50M').isLessThan(quantity('100M'))"),
        _unit("quantity_compare_to", "compareTo", (_Q, _Q), INT, quantity_compare_to,
              "quantity('50M').compareTo(quantity('50Mi')) == -1"),
        _unit("quantity_get_float", "asApproximateFloat", (_Q,), DOUBLE, quantity_get_float,
              "quantity('50.703k').asApproximateFloat() == 50703.0"),
        _unit("quantity_get_int", "asInteger", (_Q,), INT, quantity_get_int, "quantity('50k').asInteger() == 50000"),
        _unit("quantity_is_integer", "isInteger", (_Q,), BOOL, quantity_is_integer, "quantity('50k').isInteger()"),
        _unit("quantity_add", "add", (_Q, _Q), _Q, quantity_add, "quantity('50k').add(quantity('20k'))"),
        _unit("quantity_add_int", "add", (_Q, INT), _Q, quantity_add_int, "quantity('50k').add(20)"),
        _unit("quantity_sub", "sub", (_Q, _Q), _Q, quantity_sub, "quantity('50k').sub(quantity('20k'))"),
        _unit("quantity_sub_int", "sub", (_Q, INT), _Q, quantity_sub_int, "quantity('50k').sub(20000)"),
    ),
    types=(QUANTITY_TYPE,),
)  # fmt: skip
