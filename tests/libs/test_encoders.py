"""The encoders extension table: base64 in both directions, with Go's decoder leniency and error offsets.

Rows come from cel-spec's encoders_ext suite (translated into direct calls), cel-go v0.29.2's
ext/encoders_test.go, and Go's encoding/base64 rules (newlines skipped, padding optional
through the RawStdEncoding retry, offsets in UTF-8 bytes).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kcel.checker.types import BYTES, STRING
from kcel.errors import EvalError
from kcel.libs.encoders import LIBRARY

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


@dataclasses.dataclass(frozen=True)
class Err:
    message: str


def illegal(offset: int) -> Err:
    return Err(f"illegal base64 data at input byte {offset}")


CALLS = [
    ("base64_encode_bytes", b"hello", "aGVsbG8="),
    ("base64_encode_bytes", b"", ""),
    ("base64_encode_bytes", b"Hello World!", "SGVsbG8gV29ybGQh"),
    ("base64_encode_bytes", b"\xff\xfe\x00", "//4A"),
    ("base64_encode_bytes", b"h", "aA=="),
    ("base64_decode_string", "aGVsbG8=", b"hello"),
    ("base64_decode_string", "aGVsbG8", b"hello"),
    ("base64_decode_string", "SGVsbG8gV29ybGQh", b"Hello World!"),
    ("base64_decode_string", "", b""),
    ("base64_decode_string", "aA", b"h"),
    ("base64_decode_string", "aA==", b"h"),
    ("base64_decode_string", "//4A", b"\xff\xfe\x00"),
    # Go skips \r and \n anywhere, even between padding characters
    ("base64_decode_string", "aGVs\r\nbG8=\n", b"hello"),
    ("base64_decode_string", "aA=\n=", b"h"),
    ("base64_decode_string", "\n", b""),
    # non-zero trailing bits are accepted (the encodings are not Strict)
    ("base64_decode_string", "aGVsbG9=", b"hello"),
    ("base64_decode_string", "aB", b"h"),
    # failures report the unpadded retry's offset
    ("base64_decode_string", "a", illegal(0)),
    ("base64_decode_string", "aGVsb", illegal(4)),
    ("base64_decode_string", "aGVsbG8=x", illegal(7)),
    ("base64_decode_string", "aGVsbG8==", illegal(7)),
    ("base64_decode_string", "aA===", illegal(2)),
    ("base64_decode_string", "aA=", illegal(2)),
    ("base64_decode_string", "=", illegal(0)),
    ("base64_decode_string", "aA==aA==", illegal(2)),
    ("base64_decode_string", "aGVs bG8=", illegal(4)),
    ("base64_decode_string", "aGVs-bG8", illegal(4)),
    ("base64_decode_string", "QUJDR\n", illegal(5)),
    ("base64_decode_string", "éaGVs", illegal(0)),
    ("base64_decode_string", "aGVsé", illegal(4)),
    ("base64_decode_string", "ab©", illegal(2)),
]


@pytest.mark.parametrize(("overload_id", "arg", "expected"), CALLS)
def test_call(overload_id: str, arg: Any, expected: Any) -> None:
    function = OVERLOADS[overload_id].impl
    if isinstance(expected, Err):
        with pytest.raises(EvalError) as info:
            function(arg)
        assert str(info.value) == expected.message
    else:
        result = function(arg)
        assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("data", [b"", b"a", b"ab", b"abc", bytes(range(256)), "✓ unicode".encode()])
def test_round_trip(data: bytes) -> None:
    encoded = OVERLOADS["base64_encode_bytes"].impl(data)
    decode = OVERLOADS["base64_decode_string"].impl
    assert decode(encoded) == data
    assert decode(encoded.rstrip("=")) == data


def test_table() -> None:
    assert LIBRARY.name == "encoders"
    assert {(o.id, o.function, o.args, o.result, o.member, o.cost) for o in LIBRARY.overloads} == {
        ("base64_decode_string", "base64.decode", (STRING,), BYTES, False, None),
        ("base64_encode_bytes", "base64.encode", (BYTES,), STRING, False, None),
    }
    assert all(o.doc for o in LIBRARY.overloads)
