"""Fixed-width arithmetic with cel-go's overflow errors: int64 and uint64 wrap into errors, doubles divide as IEEE."""

from __future__ import annotations

import math

from kcel.errors import EvalError
from kcel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint


def check_int(value: int) -> int:
    if INT64_MIN <= value <= INT64_MAX:
        return value
    raise EvalError("integer overflow")


def check_uint(value: int) -> Uint:
    if 0 <= value <= UINT64_MAX:
        return Uint(value)
    raise EvalError("unsigned integer overflow")


def add_int64(a: int, b: int) -> int:
    return check_int(a + b)


def subtract_int64(a: int, b: int) -> int:
    return check_int(a - b)


def divide_int64(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("division by zero")
    quotient = abs(a) // abs(b)
    return check_int(quotient if (a < 0) == (b < 0) else -quotient)


def modulo_int64(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("modulus by zero")
    if a == INT64_MIN and b == -1:
        raise EvalError("integer overflow")
    remainder = abs(a) % abs(b)
    return -remainder if a < 0 else remainder


def add_uint64(a: int, b: int) -> Uint:
    return check_uint(a + b)


def subtract_uint64(a: int, b: int) -> Uint:
    return check_uint(a - b)


def multiply_uint64(a: int, b: int) -> Uint:
    return check_uint(a * b)


def divide_uint64(a: int, b: int) -> Uint:
    if b == 0:
        raise EvalError("division by zero")
    return Uint(a // b)


def modulo_uint64(a: int, b: int) -> Uint:
    if b == 0:
        raise EvalError("modulus by zero")
    return Uint(a % b)


def divide_double(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
