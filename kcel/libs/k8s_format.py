"""Kubernetes' format library (k8s.io/apiserver pkg/cel/library/format.go): named string formats and validate()."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kcel.checker.types import STRING, CelType, list_of, optional_of
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.eval.sizes import actual_size
from kcel.libs import CallEstimate, CallSite, Library, Overload
from kcel.libs.network import NetipError, parse_netip_addr
from kcel.temporal import go_quote
from kcel.values import NONE, UINT64_MAX, Optional

__all__ = [
    "FORMATS", "FORMAT_TYPE", "LIBRARY", "NamedFormat", "label_key_errors", "label_value_errors", "parse_request_uri",
]  # fmt: skip

FORMAT_TYPE = CelType("kubernetes.NamedFormat", kind="message")
"""An object type in Kubernetes (cel.ObjectType), so it is a message type here."""

Validator = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class NamedFormat:
    """A named format: Kubernetes' `cel.Format`. Two formats are equal when their names are (Go's Equal)."""

    name: str
    validator: Validator = field(compare=False, repr=False)
    max_regex_size: int = field(compare=False)
    """Length of the regex behind the check, or an estimate of it; only the runtime cost uses it."""
    cel_type_name: ClassVar[str] = "kubernetes.NamedFormat"


# -- k8s.io/apimachinery name and label checks -------------------------------------------------
# Go measures these strings in bytes and matches ASCII patterns, so they work on the UTF-8 bytes.

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _LABEL_KEY + ")?"
_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character"
)
_LABEL_KEY_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)


def _matcher(pattern: str) -> Callable[[bytes], bool]:
    """Go's MatchString of `^pattern$`: the whole value, with no allowance for a trailing newline."""
    compiled = re.compile(pattern.encode())
    return lambda value: compiled.fullmatch(value) is not None


_is_label = _matcher(_DNS1123_LABEL)
_is_subdomain = _matcher(_DNS1123_SUBDOMAIN)
_is_dns1035 = _matcher(_DNS1035_LABEL)
_is_label_key = _matcher(_LABEL_KEY)
_is_label_value = _matcher(_LABEL_VALUE)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError; its example list really has two spaces before each `or`."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int, unit: str) -> str:
    """MaxLenError: pkg/util/validation says characters, pkg/api/validate/content says bytes."""
    return f"must be no more than {limit} {unit}"


def _dns1123_label(value: bytes) -> list[str]:
    errors = [_too_long(63, "characters")] if len(value) > 63 else []
    if not _is_label(value):
        if _is_subdomain(value):  # a valid subdomain of the right length: the dots are the problem
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(_LABEL_MESSAGE, _DNS1123_LABEL, "my-name", "123-abc"))
    return errors


def _dns1123_subdomain(value: bytes, unit: str = "characters") -> list[str]:
    errors = [_too_long(253, unit)] if len(value) > 253 else []
    if not _is_subdomain(value):
        errors.append(_regex_error(_SUBDOMAIN_MESSAGE, _DNS1123_SUBDOMAIN, "example.com"))
    return errors


def _dns1035_label(value: bytes) -> list[str]:
    errors = [_too_long(63, "characters")] if len(value) > 63 else []
    if not _is_dns1035(value):
        errors.append(_regex_error(_DNS1035_MESSAGE, _DNS1035_LABEL, "my-name", "abc-123"))
    return errors


def _label_key(value: bytes, legacy: bool = False) -> list[str]:
    """content.IsLabelKey: an optional DNS subdomain prefix, '/', and a name. Before 1.35 (`legacy`) it was
    util/validation's IsQualifiedName, which says "a qualified name" and counts in "characters" (apimachinery
    da7b67ed); the bytes counted are the same."""
    unit = "characters" if legacy else "bytes"
    parts = value.split(b"/")
    if len(parts) > 2:
        shape = _regex_error(_LABEL_KEY_MESSAGE, _LABEL_KEY, "MyName", "my.name", "123-abc")
        what = "a qualified name" if legacy else "a valid label key"
        return [f"{what} {shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errors: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += ["prefix part " + message for message in _dns1123_subdomain(prefix, unit)]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part " + _too_long(63, unit))
    if not _is_label_key(name):
        errors.append("name part " + _regex_error(_LABEL_KEY_MESSAGE, _LABEL_KEY, "MyName", "my.name", "123-abc"))
    return errors


def _label_value(value: bytes, legacy: bool = False) -> list[str]:
    """content.IsLabelValue; before 1.35 (`legacy`) util/validation's IsValidLabelValue, in "characters"."""
    errors = [_too_long(63, "characters" if legacy else "bytes")] if len(value) > 63 else []
    if not _is_label_value(value):
        errors.append(_regex_error(_LABEL_VALUE_MESSAGE, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errors


def _legacy(check: Callable[[bytes, bool], list[str]]) -> Callable[[bytes], list[str]]:
    return lambda value: check(value, True)


def _mask_trailing_dash(value: bytes) -> bytes:
    """maskTrailingDash: a generated suffix will follow, so a final '-' is fine. Go drops the *two* last
    bytes and appends 'a' (`name[:len(name)-2] + "a"`), which is what it checks."""
    return value[:-2] + b"a" if len(value) > 1 and value.endswith(b"-") else value


def _on_bytes(check: Callable[[bytes], list[str]], prefix: bool = False) -> Validator:
    def validate(text: str) -> list[str]:
        value = text.encode("utf-8", "surrogatepass")
        return check(_mask_trailing_dash(value) if prefix else value)

    return validate


# -- k8s.io/kube-openapi strfmt checks ---------------------------------------------------------

UUID_PATTERN = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
BASE64_PATTERN = "^(?:[A-Za-z0-9+\\/]{4})*(?:[A-Za-z0-9+\\/]{2}==|[A-Za-z0-9+\\/]{3}=|[A-Za-z0-9+\\/]{4})$"
DATE_TIME_PATTERN = "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
BASE64_LENGTH = 84  # govalidator's base64 regex length, format.go's base64Length
URL_LENGTH = 1103  # govalidator's URL regex length, format.go's urlLength

_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_BASE64 = re.compile(BASE64_PATTERN[1:-1])
_TIME = re.compile(DATE_TIME_PATTERN[1:-1])  # `.` is any character but a newline, as in Go
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def is_uuid(text: str) -> bool:
    """strfmt's UUID: hex in any case ((?i) folds no other character onto a-f), hyphens optional."""
    return _UUID.fullmatch(text) is not None


def is_base64(text: str) -> bool:
    """govalidator.IsBase64: padded standard base64, at least one quantum ("" is not base64)."""
    return _BASE64.fullmatch(text) is not None


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(text: str) -> bool:
    """Go's time.Parse("2006-01-02", text): four-digit year, two-digit month and day, a real calendar day."""
    match = _DATE.fullmatch(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    return 1 <= month <= 12 and 1 <= day <= _days_in(month, year)


def _go_lower(text: str) -> str:
    """Go's strings.ToLower maps rune by rune; Python would turn 'İ' into two characters."""
    return text.replace("\u0130", "i").lower()


def is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: split the lower-cased text at 't'; a date, then hh:mm:ss[.frac](z|±hh:mm).

    Hours, minutes and seconds are compared as strings ("23", "59", "59"), and anything after a
    second 't' is ignored, as in strfmt.
    """
    if len(text.encode("utf-8", "surrogatepass")) < 4:
        return False
    parts = _go_lower(text).split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    match = _TIME.fullmatch(parts[1])
    return match is not None and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _predicate(check: Callable[[str], bool], message: str) -> Validator:
    return lambda text: [] if check(text) else [message]


# -- Go's url.ParseRequestURI (net/url, Go 1.26) -----------------------------------------------


class _URLError(Exception):
    """One of net/url's inner errors; ParseRequestURI wraps it as `parse "<url>": <error>`."""


_PATH, _HOST, _ZONE, _USERINFO = range(4)
_HEX = b"0123456789abcdefABCDEF"
_HOST_SAFE = frozenset(b"!$&'()*+,;=:[]<>\"-_.~")
_USERINFO_SAFE = frozenset(b"-._:~!$&'()*+,;=%@")
_PERCENT_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


def _quote_bytes(data: bytes) -> str:
    """strconv.Quote of Go bytes: invalid UTF-8 shows as \\xNN."""
    text = data.decode("utf-8", "surrogateescape")
    parts = [f"\\x{ord(ch) - 0xDC00:02x}" if 0xDC80 <= ord(ch) <= 0xDCFF else go_quote(ch)[1:-1] for ch in text]
    return '"' + "".join(parts) + '"'


def _is_alnum(c: int) -> bool:
    return 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


def _host_should_escape(c: int) -> bool:
    """shouldEscape(c, encodeHost): host names may hold sub-delims, ':' '[' ']' '<' '>' '"' but no '/', '?', '@'."""
    return not (_is_alnum(c) or c in _HOST_SAFE)


def _escape_error(text: bytes) -> _URLError:
    return _URLError("invalid URL escape " + _quote_bytes(text))


def _check_percent(s: bytes, i: int, mode: int) -> None:
    """One `%XX` at s[i]: two hex digits; in a host only non-ASCII bytes or %25, in a zone host bytes."""
    if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
        raise _escape_error(s[i : i + 3])
    triple = s[i : i + 3]
    value = int(triple[1:], 16)
    if mode == _HOST and value < 0x80 and triple != b"%25":
        raise _escape_error(triple)
    if mode == _ZONE and triple != b"%25" and value != 0x20 and _host_should_escape(value):
        raise _escape_error(triple)


def _unescape(s: bytes, mode: int) -> bytes:
    """net/url's unescape: check every escape (and host characters), then decode."""
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # '%'
            _check_percent(s, i, mode)
            i += 3
            continue
        if mode in (_HOST, _ZONE) and c < 0x80 and _host_should_escape(c):
            raise _URLError(f"invalid character {_quote_bytes(bytes([c]))} in host name")
        i += 1
    return _PERCENT_ESCAPE.sub(lambda m: bytes([int(m[1], 16)]), s)


def _valid_optional_port(port: bytes) -> bool:
    return not port or (port[:1] == b":" and all(0x30 <= c <= 0x39 for c in port[1:]))


def _invalid_port(port: bytes) -> _URLError:
    return _URLError(f"invalid port {_quote_bytes(port)} after host")


def _parse_bracketed_host(host: bytes) -> None:
    """`[IPv6]` or `[IPv6%25zone]`, then an optional port: the address must be IPv6 (netip.ParseAddr)."""
    close = host.rfind(b"]")
    if close < 0:
        raise _URLError("missing ']' in host")
    port = host[close + 1 :]
    if not _valid_optional_port(port):
        raise _invalid_port(port)
    name = host[1:close]
    zone = name.find(b"%25")
    if zone >= 0:
        address = _unescape(name[:zone], _HOST) + _unescape(name[zone:], _ZONE)
    else:
        address = _unescape(name, _HOST)
    try:
        ip, _ = parse_netip_addr(address.decode("utf-8", "surrogateescape"))
    except NetipError as err:
        raise _URLError(f"invalid host: {err}") from None
    if ip.is4:
        raise _URLError("invalid IP-literal")


def _parse_host(host: bytes) -> None:
    """parseHost with Go 1.26's default `urlstrictcolons=1`: the first ':' outside brackets starts the port."""
    bracket = host.rfind(b"[")
    if bracket > 0:
        raise _URLError("invalid IP-literal")
    if bracket == 0:
        _parse_bracketed_host(host)
        return
    colon = host.find(b":")
    if colon >= 0 and not _valid_optional_port(host[colon:]):
        raise _invalid_port(host[colon:])
    _unescape(host, _HOST)


def _parse_authority(authority: bytes) -> None:
    at = authority.rfind(b"@")
    _parse_host(authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    if not all(_is_alnum(c) or c in _USERINFO_SAFE for c in userinfo):
        raise _URLError("net/url: invalid userinfo")
    username, _, password = userinfo.partition(b":")
    _unescape(username, _USERINFO)
    _unescape(password, _USERINFO)


def _split_scheme(raw: bytes) -> tuple[bytes, bytes]:
    """getScheme: `[a-zA-Z][a-zA-Z0-9+-.]*:`, or no scheme at all."""
    for i, c in enumerate(raw):
        if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:  # ':'
            if i == 0:
                raise _URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_request(raw: bytes) -> None:
    """parse(rawURL, viaRequest=true): only an absolute URI or an absolute path is a request URI."""
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise _URLError("net/url: invalid control character in URL")
    if not raw:
        raise _URLError("empty url")
    if raw == b"*":
        return
    scheme, rest = _split_scheme(raw)
    rest = rest[:-1] if rest.endswith(b"?") and rest.count(b"?") == 1 else rest.split(b"?", 1)[0]
    if not rest.startswith(b"/"):
        if scheme:
            return  # scheme:opaque
        raise _URLError("invalid URI for request")
    if scheme and rest.startswith(b"//"):
        authority, slash, path = rest[2:].partition(b"/")
        _parse_authority(authority)
        rest = slash + path
    _unescape(rest, _PATH)


def parse_request_uri(text: str) -> str | None:
    """Go's url.ParseRequestURI: None when it parses, else its error text.

    >>> parse_request_uri("foo")
    'parse "foo": invalid URI for request'
    """
    try:
        _parse_request(text.encode("utf-8", "surrogatepass"))
    except _URLError as err:
        return f"parse {go_quote(text)}: {err}"
    return None


def _uri(text: str) -> list[str]:
    error = parse_request_uri(text)
    return [] if error is None else [error]


# -- the formats -------------------------------------------------------------------------------


def _formats(legacy: bool) -> dict[str, NamedFormat]:
    label_key, label_value = (_legacy(_label_key), _legacy(_label_value)) if legacy else (_label_key, _label_value)
    return {
        "dns1123Label": NamedFormat("DNS1123Label", _on_bytes(_dns1123_label), 30),
        "dns1123Subdomain": NamedFormat("DNS1123Subdomain", _on_bytes(_dns1123_subdomain), 60),
        "dns1035Label": NamedFormat("DNS1035Label", _on_bytes(_dns1035_label), 30),
        "qualifiedName": NamedFormat("QualifiedName", _on_bytes(label_key), 60),
        "dns1123LabelPrefix": NamedFormat("DNS1123LabelPrefix", _on_bytes(_dns1123_label, prefix=True), 30),
        "dns1123SubdomainPrefix": NamedFormat("DNS1123SubdomainPrefix", _on_bytes(_dns1123_subdomain, prefix=True), 60),
        "dns1035LabelPrefix": NamedFormat("DNS1035LabelPrefix", _on_bytes(_dns1035_label, prefix=True), 30),
        "labelValue": NamedFormat("LabelValue", _on_bytes(label_value), 40),
        "uri": NamedFormat("URI", _uri, URL_LENGTH),
        "uuid": NamedFormat("uuid", _predicate(is_uuid, "does not match the UUID format"), len(UUID_PATTERN)),
        "byte": NamedFormat("byte", _predicate(is_base64, "invalid base64"), BASE64_LENGTH),
        "date": NamedFormat("date", _predicate(is_date, "invalid date"), len(DATE_TIME_PATTERN)),
        "datetime": NamedFormat("datetime", _predicate(is_date_time, "invalid datetime"), len(DATE_TIME_PATTERN)),
    }


FORMATS = _formats(legacy=False)
"""Kubernetes' ConstantFormats: `format.named(key)` and `format.<key>()`, as API servers from 1.35 check them."""
LEGACY_FORMATS = _formats(legacy=True)
"""The same before 1.35, when label keys and values were checked with util/validation's texts."""


def label_key_errors(key: str, legacy: bool = False) -> list[str]:
    """content.IsLabelKey (the qualifiedName format), which label selectors and metadata checks use too;
    `legacy`: the texts before 1.35."""
    return (LEGACY_FORMATS if legacy else FORMATS)["qualifiedName"].validator(key)


def label_value_errors(value: str, legacy: bool = False) -> list[str]:
    """content.IsLabelValue: empty, or at most 63 bytes of label-key characters; `legacy`: the texts before 1.35."""
    return (LEGACY_FORMATS if legacy else FORMATS)["labelValue"].validator(value)


def _format_named(formats: dict[str, NamedFormat]) -> Callable[[str], Optional]:
    def format_named(name: str) -> Optional:
        found = formats.get(name)
        return NONE if found is None else Optional(found)

    return format_named


def format_validate(named: NamedFormat, text: str) -> Optional:
    """optional.none() when the text is valid, else optional.of(the messages)."""
    errors = named.validator(text)
    return Optional(errors) if errors else NONE


def _constant(named: NamedFormat) -> Callable[[], NamedFormat]:
    return lambda: named


# -- costs -------------------------------------------------------------------------------------

_STRING_TRAVERSAL_FACTOR = 0.1  # common.StringTraversalCostFactor
_REGEX_LENGTH_FACTOR = 0.25  # common.RegexStringLengthCostFactor
_MAX_NAME_FORMAT_REGEX_SIZE = 128  # apiserver cel.MaxNameFormatRegexSize


def _factor(x: int, factor: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(x * factor), saturating at 2^64 - 1."""
    if x > 0 and float(x) > UINT64_MAX / factor:
        return UINT64_MAX
    result = math.ceil(float(x) * factor)
    return UINT64_MAX if result >= 2.0**64 else result


def _validate_cost(args: Sequence[Any], result: Any) -> int:
    """CallCost: ceil((1 + size(s)) * 0.1) * ceil(MaxRegexSize * 0.25), as for a regex match."""
    named: NamedFormat = args[0]
    text_cost = math.ceil((1 + actual_size(args[1])) * _STRING_TRAVERSAL_FACTOR)
    return text_cost * math.ceil(named.max_regex_size * _REGEX_LENGTH_FACTOR)


def _validate_estimate(call: CallSite) -> CallEstimate:
    """EstimateCallCost: the format is unknown statically, so assume the longest regex (128 characters)."""
    worst = _MAX_NAME_FORMAT_REGEX_SIZE * _REGEX_LENGTH_FACTOR
    return CallEstimate(call.size(1).times(_STRING_TRAVERSAL_FACTOR).times(worst))


# -- registration ------------------------------------------------------------------------------


def _register_type() -> None:
    register_class(FORMAT_TYPE.name, NamedFormat)
    register_type_name(NamedFormat, FORMAT_TYPE.name)


_register_type()


def _overloads(formats: dict[str, NamedFormat]) -> tuple[Overload, ...]:
    table = [
        Overload("format-named", "format.named", (STRING,), optional_of(FORMAT_TYPE), _format_named(formats),
                 doc="format.named('dns1123Label').hasValue()"),
        Overload("format-validate", "validate", (FORMAT_TYPE, STRING), optional_of(list_of(STRING)),
                 format_validate, member=True, cost=_validate_cost, estimate=_validate_estimate,
                 doc="format.dns1123Label().validate('my-name') == optional.none()"),
    ]  # fmt: skip
    table += [Overload(f"format.{key}", f"format.{key}", (), FORMAT_TYPE, _constant(named),
                       doc=f"format.{key}().validate(s)") for key, named in formats.items()]  # fmt: skip
    return tuple(table)


def library(version: int = 1) -> Library:
    """The library as an API server runs it: version 0 before 1.35 (label texts of util/validation), else 1."""
    return Library("kubernetes.format", overloads=_overloads(FORMATS if version >= 1 else LEGACY_FORMATS),
                   types=(FORMAT_TYPE,))  # fmt: skip


LIBRARY = library(1)
