"""The string formats CRD schemas can name, checked as k8s.io/kube-openapi's strfmt registry checks them.

Which formats count is apiextensions-apiserver's pkg/apiserver/validation/formats.go: a format the API server
does not support at the compatibility version is dropped from the schema (so never checked), as are integer
formats other than int32/int64 and number formats other than float/double. Names are compared without dashes
(`date-time` is `datetime`), as strfmt normalises them.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable

from kcel.errors import EvalError
from kcel.goregex import compile_go_regex, search_matches
from kcel.k8s.environment import compatibility
from kcel.libs.k8s_format import is_base64, is_date, is_date_time, is_uuid, parse_request_uri
from kcel.temporal import Duration

Check = Callable[[str], bool]


def normalize(name: str) -> str:
    """strfmt's DefaultNameNormalizer: dashes removed."""
    return name.replace("-", "")


# -- network -------------------------------------------------------------------------------------


def _ipv4(text: str, sloppy: bool) -> bool:
    """Go's IPv4 parsing; `sloppy` (k8s.io/utils/net ParseIPSloppy) also takes leading zeros as decimal."""
    parts = text.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if not part or not part.isascii() or not part.isdigit() or len(part) > 10:
            return False
        if not sloppy and len(part) > 1 and part[0] == "0":
            return False
        if int(part) > 255:
            return False
    return True


def _ipv6(text: str, sloppy: bool) -> bool:
    if "%" in text or ":" not in text:
        return False
    head, _, tail = text.rpartition(":")
    if "." in tail:  # an embedded IPv4 address takes the last two groups
        if not _ipv4(tail, sloppy):
            return False
        text = f"{head}:0:0"
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def parse_ip(text: str, sloppy: bool = False) -> bool:
    """Whether Go's net.ParseIP (or ParseIPSloppy) accepts `text`."""
    return _ipv4(text, sloppy) or _ipv6(text, sloppy)


def _cidr(text: str) -> bool:
    """k8s.io/utils/net ParseCIDRSloppy."""
    address, slash, bits = text.partition("/")
    if not slash or not bits.isascii() or not bits.isdigit() or len(bits) > 10:
        return False
    if _ipv4(address, True):
        return int(bits) <= 32
    return _ipv6(address, True) and int(bits) <= 128


_MAC_COLON = re.compile(r"[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2})(?:\1[0-9a-fA-F]{2})*")
_MAC_DOT = re.compile(r"[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4})+")


def _mac(text: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 bytes as `xx:xx:...`, `xx-xx-...` or `xxxx.xxxx.xxxx`."""
    if _MAC_COLON.fullmatch(text):
        return (len(text) + 1) // 3 in (6, 8, 20)
    if _MAC_DOT.fullmatch(text):
        return 2 * (len(text) + 1) // 5 in (6, 8, 20)
    return False


_HOSTNAME = (
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}"
    r"[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
)


def _hostname(text: str) -> bool:
    if not search_matches(compile_go_regex(_HOSTNAME), text) or len(text.encode()) > 255:
        return False
    return all(len(part.encode()) <= 63 for part in text.split("."))


# net/mail.ParseAddress, approximated: an addr-spec (optionally followed by a comment), or a display name and an
# addr-spec in angle brackets. Go's atext allows any non-ASCII character.
_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\U0010ffff]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_QUOTED = r'"(?:[^"\\\r\n]|\\.)+"'
_ADDR_SPEC = rf"(?:{_DOT_ATOM}|{_QUOTED})@ *(?:{_DOT_ATOM}|\[[^\[\]\\]*\])"
_WORD = rf"(?:(?:{_ATEXT}|\.)+|{_QUOTED})"
_EMAIL = rf" *(?:{_ADDR_SPEC} *(?:\([^()]*\))?|(?:{_WORD}(?: +{_WORD})*)? *<{_ADDR_SPEC}>) *"


@functools.cache
def _email_pattern() -> re.Pattern[str]:
    """Compiled on first use: its character class spans all of Unicode, which takes Python's `re` some 30 ms."""
    return re.compile(_EMAIL)


def _email(text: str) -> bool:
    return _email_pattern().fullmatch(text) is not None


# -- numbers and codes (asaskevich/govalidator as vendored by kube-openapi) ------------------------

_CREDIT_CARD = re.compile(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])"
    r"[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})"
)


def _credit_card(text: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", text)
    if not _CREDIT_CARD.fullmatch(digits):
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        number = int(char) * (2 if position % 2 else 1)
        total += number % 10 + 1 if number >= 10 else number
    return total % 10 == 0


def _isbn10(text: str) -> bool:
    digits = re.sub(r"[\t\n\f\r -]+", "", text)
    if not re.fullmatch(r"[0-9]{9}X|[0-9]{10}", digits):
        return False
    total = sum((i + 1) * int(digits[i]) for i in range(9))
    total += 100 if digits[9] == "X" else 10 * int(digits[9])
    return total % 11 == 0


def _isbn13(text: str) -> bool:
    digits = re.sub(r"[\t\n\f\r -]+", "", text)
    if not re.fullmatch(r"[0-9]{13}", digits):
        return False
    total = sum((1, 3)[i % 2] * int(digits[i]) for i in range(12))
    return int(digits[12]) - (10 - total % 10) % 10 == 0


def _regex(pattern: str) -> Check:
    compiled = re.compile(pattern)
    return lambda text: compiled.fullmatch(text) is not None


_UUID3 = _regex(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_UUID4 = _regex(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}")
_UUID5 = _regex(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}")
_SSN = _regex(r"[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}")
_HEX_COLOR = _regex(r"#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_BYTE = r"(?:0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])"
_RGB_COLOR = _regex(rf"rgb\([\t\n\f\r ]*{_BYTE}[\t\n\f\r ]*,[\t\n\f\r ]*{_BYTE}[\t\n\f\r ]*,[\t\n\f\r ]*{_BYTE}"
                    r"[\t\n\f\r ]*\)")  # fmt: skip
_SHORT_NAME = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_K8S_SHORT = _regex(_SHORT_NAME)
_K8S_LONG = _regex(f"{_SHORT_NAME}(\\.{_SHORT_NAME})*")
_OBJECT_ID = _regex("[0-9a-fA-F]{24}")


# -- durations (strfmt.ParseDuration) -----------------------------------------------------------------

_DURATION_TERM = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
_UNIT_VARIANTS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
                  ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))  # fmt: skip


def _duration(text: str) -> bool:
    """time.ParseDuration, else any `<digits><unit>` term anywhere in the text with a unit strfmt knows."""
    try:
        Duration.parse(text)
        return True
    except (EvalError, ValueError, OverflowError):
        pass
    ok = False
    for digits, unit in _DURATION_TERM.findall(text):
        if int(digits) > 2**63 - 1:
            return False  # strconv.Atoi fails, and so does the parse
        unit = unit.lower()
        for variants in _UNIT_VARIANTS:
            last = len(variants) - 1
            ok = ok or any(
                (i == last and unit.startswith(v)) or unit.casefold() == v.casefold() for i, v in enumerate(variants)
            )
    return ok


FORMATS: dict[str, Check] = {
    "bsonobjectid": _OBJECT_ID,
    "uri": lambda text: parse_request_uri(text) is None,
    "email": _email,
    "hostname": _hostname,
    "ipv4": lambda text: parse_ip(text, sloppy=True) and "." in text,
    "ipv6": lambda text: parse_ip(text) and ":" in text,
    "cidr": _cidr,
    "mac": _mac,
    "uuid": is_uuid,
    "uuid3": _UUID3,
    "uuid4": _UUID4,
    "uuid5": _UUID5,
    "isbn": lambda text: _isbn10(text) or _isbn13(text),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _credit_card,
    "ssn": lambda text: len(text.encode()) == 11 and _SSN(text),
    "hexcolor": _HEX_COLOR,
    "rgbcolor": _RGB_COLOR,
    "byte": is_base64,
    "password": lambda text: True,
    "date": is_date,
    "duration": _duration,
    "datetime": is_date_time,
    "k8sshortname": lambda text: len(text.encode()) <= 63 and _K8S_SHORT(text),
    "k8slongname": lambda text: len(text.encode()) <= 253 and _K8S_LONG(text),
}
"""strfmt.Default's validators by normalised name."""

_SINCE_1_34 = frozenset(("k8sshortname", "k8slongname"))


NUMBER_FORMATS_KEPT = (1, 36)
"""API servers from 1.36 keep int32/int64/float/double on numbers (apiextensions 0835a2fa9, "Stop stripping valid
formats for number/integer types") and strip string formats from other types; before, every node kept only the
string formats."""


def supported_format(schema_type: str, format_name: str, server: tuple[int, int]) -> str:
    """The format an API server of version `server` keeps for a schema node ("" when StripUnsupportedFormats drops
    it). String formats are those known at its compatibility version (one minor before it).

    >>> supported_format("string", "date-time", (1, 36)), supported_format("string", "int32", (1, 36))
    ('date-time', '')
    >>> supported_format("integer", "int32", (1, 36)), supported_format("integer", "int32", (1, 35))
    ('int32', '')
    """
    if not format_name:
        return ""
    name = normalize(format_name)
    known = name in FORMATS and (name not in _SINCE_1_34 or compatibility(server) >= (1, 34))
    if schema_type in ("", "string") or server < NUMBER_FORMATS_KEPT:
        return format_name if known else ""
    if schema_type == "integer":
        return format_name if format_name in ("int32", "int64") else ""
    if schema_type == "number":
        return format_name if format_name in ("float", "double") else ""
    return ""


def unrecognized_format(schema_type: str, format_name: str, server: tuple[int, int]) -> bool:
    """Whether an API server warns `unrecognized format` for a schema node on CRD create (GetUnrecognizedFormats):
    from 1.34 only for strings (7f8392865 warned for any type in 1.34.0; 53a711153, backported to 1.34.1, limited
    it to strings), from 1.36 for what StripUnsupportedFormats drops (0835a2fa9)."""
    if not format_name or server < (1, 34) or (server < NUMBER_FORMATS_KEPT and schema_type != "string"):
        return False
    return supported_format(schema_type, format_name, server) == ""


def check_format(format_name: str, text: str) -> bool | None:
    """Whether `text` is valid for a kept format (None when strfmt has no validator: int32, float, ...)."""
    check = FORMATS.get(normalize(format_name))
    return None if check is None else check(text)
