"""Go's `%v` of CEL values: how cel-go's runtime errors print the key or value they are about.

`no such key: 1` for the key `1u` or `1.0`, `unsupported index value 1.5 in list`, `cannot initialize optional
entry 'a' from non-optional value [1 2]`... cel-go formats these with `fmt` and its value types have no
`String()` method, so a uint prints bare, a double as Go's shortest `%g`, null as 0 and bytes as numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kcel.values import Optional, TypedList, TypeValue


def go_text(value: Any) -> str:
    """Go's `%v` of a CEL value (lists and maps as their `String()` methods write them)."""
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "0"  # types.Null is a bare int32 type
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return "[" + " ".join(map(str, value)) + "]"
    if isinstance(value, (list, tuple, TypedList)):
        return "[" + ", ".join(map(go_text, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{go_text(k)}: {go_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Optional):
        return f"optional({go_text(value.value)})" if value.has_value() else "optional.none()"
    if isinstance(value, TypeValue):
        return value.name
    return str(value)


def go_float(x: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 64), which `%v` uses: `1`, `1.5`, `1e+06`, `1e-05`, `+Inf`, `NaN`."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    mantissa, _, exponent_text = repr(abs(x)).partition("e")  # Python's shortest round-trip digits, as Go's
    whole, _, fraction = mantissa.partition(".")
    significant = (whole + fraction).lstrip("0")
    point = len(whole) - (len(whole) + len(fraction) - len(significant)) + int(exponent_text or 0)
    digits = significant.rstrip("0")
    exponent = point - 1
    if exponent < -4 or exponent >= 6:  # %e outside [1e-4, 1e6) when the precision is the shortest
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"
