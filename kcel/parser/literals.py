"""Decoding of CEL literal tokens: numbers and quoted strings/bytes with cel-go's rules."""

from __future__ import annotations

import math

from kcel.values import Uint, decimal_int

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}  # fmt: skip
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class LiteralError(ValueError):
    """A literal token that lexes but has no value (bad escape, out of range)."""


def parse_int(text: str) -> int:
    digits = "".join(text.split())  # a `- 1` literal may hold spaces after its sign
    negative = digits.startswith("-")
    body = digits.lstrip("-")
    value = int(body[2:], 16) if body.startswith("0x") else decimal_int(body)
    value = -value if negative else value
    if not INT64_MIN <= value <= INT64_MAX:
        raise LiteralError("invalid int literal")
    return value


def parse_uint(text: str) -> Uint:
    body = text[:-1]
    value = int(body[2:], 16) if body.startswith("0x") else decimal_int(body)
    if value > UINT64_MAX:
        raise LiteralError("invalid uint literal")
    return Uint(value)


def parse_double(text: str) -> float:
    value = float("".join(text.split()))
    if math.isinf(value):
        raise LiteralError("invalid double literal")
    return value


def parse_string(text: str, lenient_code_points: bool = False) -> str:
    """`lenient_code_points`: cel-go before v0.23 (Kubernetes 1.30-1.32) took a surrogate's escape as U+FFFD (Go's
    encoding of an invalid rune) and rejected only one past U+10FFFF, as `unable to unescape string`."""
    body, raw = _strip_quotes(text)
    if raw or "\\" not in body:
        return body
    return "".join(_decode_escapes(body, as_bytes=False, lenient=lenient_code_points))


def parse_bytes(text: str) -> bytes:
    body, raw = _strip_quotes(text[1:])
    if raw or "\\" not in body:
        return body.encode()
    out = bytearray()
    for piece in _decode_escapes(body, as_bytes=True):
        out += piece.encode("latin-1") if isinstance(piece, _Byte) else piece.encode()
    return bytes(out)


class _Byte(str):
    """A decoded `\\x`/octal escape inside a bytes literal: one raw byte, not a code point."""


def _strip_quotes(text: str) -> tuple[str, bool]:
    raw = text[0] in "rR"
    if raw:
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    quote = 3 if text[:3] in ('"""', "'''") and len(text) >= 6 else 1
    return text[quote:-quote], raw


def _decode_escapes(body: str, as_bytes: bool, lenient: bool = False) -> list[str]:
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise LiteralError("unable to unescape string, found '\\' as last character")
        code, i = _decode_one(body, i + 1, as_bytes, lenient)
        out.append(code)
    return out


def _decode_one(body: str, i: int, as_bytes: bool, lenient: bool = False) -> tuple[str, int]:
    """Decode the escape whose letter is at body[i]; return its text and the next index."""
    kind = body[i]
    if kind in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[kind], i + 1
    if kind in "xXuU":
        width = {"x": 2, "X": 2, "u": 4, "U": 8}[kind]
        if as_bytes and kind in "uU":
            raise LiteralError("unable to unescape string")
        digits = body[i + 1 : i + 1 + width]
        if len(digits) < width or not set(digits) <= _HEX_DIGITS:
            raise LiteralError("unable to unescape string")
        return _code_point(int(digits, 16), as_bytes and kind in "xX", lenient), i + 1 + width
    if kind in "0123":
        digits = body[i : i + 3]
        if len(digits) < 3 or not set(digits[1:]) <= set("01234567"):
            raise LiteralError("unable to unescape octal sequence in string")
        return _code_point(int(digits, 8), as_bytes, lenient), i + 3
    raise LiteralError("unable to unescape string")


def _code_point(value: int, raw_byte: bool, lenient: bool = False) -> str:
    if raw_byte:
        return _Byte(chr(value))
    if lenient and value > 0x10FFFF:
        raise LiteralError("unable to unescape string")
    if lenient and 0xD800 <= value <= 0xDFFF:
        return "\ufffd"
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise LiteralError("invalid unicode code point")
    return chr(value)
