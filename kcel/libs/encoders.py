"""cel-go's encoders extension (`ext/encoders.go`): `base64.encode` and `base64.decode`."""

from __future__ import annotations

import base64
import binascii
import re

from kcel.checker.types import BYTES, STRING
from kcel.errors import EvalError
from kcel.libs import Library, Overload

__all__ = ["LIBRARY"]

_CLEAN = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/\r\n]")
_NEWLINES = b"\r\n"


def base64_encode_bytes(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def base64_decode_string(text: str) -> bytes:
    """Go's StdEncoding, retried with RawStdEncoding (no padding) when the input is corrupt.

    Both Go decoders skip `\\r` and `\\n` wherever they occur and ignore non-zero trailing
    bits, so the input decodes exactly when it does without its newlines. A failure reports
    the unpadded attempt's error, whose offset counts UTF-8 bytes of the original input.
    """
    data = text.encode("utf-8", "surrogatepass")
    clean = data.translate(None, _NEWLINES)
    if not _decodes(clean):
        raise EvalError(f"illegal base64 data at input byte {_raw_error_offset(data)}")
    return binascii.a2b_base64(clean + b"=" * (-len(clean) % 4))


def _decodes(clean: bytes) -> bool:
    """Padded with a length that is a multiple of 4, or unpadded without a lone final symbol."""
    if not _CLEAN.fullmatch(clean):
        return False
    return len(clean) % 4 == 0 if clean.endswith(b"=") else len(clean) % 4 != 1


def _raw_error_offset(data: bytes) -> int:
    """Where RawStdEncoding stops: the first byte outside the alphabet (`=` included), else the lone last symbol."""
    bad = _NOT_BASE64.search(data)
    return bad.start() if bad else len(data) - 1


LIBRARY = Library(
    "encoders",
    overloads=(
        Overload(
            "base64_decode_string",
            "base64.decode",
            (STRING,),
            BYTES,
            base64_decode_string,
            doc="base64.decode('aGVsbG8') == b'hello'",
        ),
        Overload(
            "base64_encode_bytes",
            "base64.encode",
            (BYTES,),
            STRING,
            base64_encode_bytes,
            doc="base64.encode(b'hello') == 'aGVsbG8='",
        ),
    ),
)
