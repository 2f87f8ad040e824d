"""Go's shortest float formatting (strconv.FormatFloat with precision -1), which cel-go's `string(double)`, `%v`,
error texts and apimachinery's messages all print doubles with.

Python's `repr` and Go agree on the shortest round-tripping digits; only the layout differs.
"""

from __future__ import annotations

import math


def shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-tripping digits of |x| and where the decimal point goes (`""` for zero).

    >>> shortest_digits(1250.0), shortest_digits(0.0015), shortest_digits(0.0)
    (('125', 4), ('15', -2), ('', 0))
    """
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) - (len(whole) + len(fraction) - len(digits)) + int(exponent or 0)
    digits = digits.rstrip("0")
    return (digits, point) if digits else ("", 0)


def plain_decimal(digits: str, point: int) -> str:
    """Digits laid out without an exponent (`'125', 4` -> `1250`)."""
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return f"{digits[:point]}.{digits[point:]}"


def format_double(x: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 64): `1`, `1.5`, `1e+06`, `1e-05`, `+Inf`, `NaN` (exponent form outside
    [1e-4, 1e6)).

    >>> [format_double(v) for v in (1.0, 1.5, 1e6, 1e-05, -0.0, float("inf"))]
    ['1', '1.5', '1e+06', '1e-05', '-0', '+Inf']
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    digits, point = shortest_digits(x)
    if not digits:
        return sign + "0"
    exponent = point - 1
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return sign + plain_decimal(digits, point)
