"""cel-go's network extension (ext/network.go): `net.IP` and `net.CIDR` values parsed by Go's net/netip rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from kcel.checker.types import BOOL, INT, STRING, CelType, opaque
from kcel.errors import EvalError
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.libs import Library, Overload
from kcel.parser.ast import Const, Expr
from kcel.parser.macros import Expander, Macro, MacroError, NodeFactory
from kcel.temporal import go_quote
from kcel.values import INT64_MAX, decimal_int

__all__ = [
    "CIDR", "CIDR_TYPE", "IP", "IP_TYPE", "LIBRARY", "NetipError", "parse_cidr", "parse_ip", "parse_netip_addr",
    "parse_netip_prefix",
]  # fmt: skip

IP_TYPE = opaque("net.IP")
CIDR_TYPE = opaque("net.CIDR")

_V4_BITS = 32
_V6_BITS = 128


# -- values ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class IP:
    """cel-go's `net.IP` (a netip.Addr without zone): `value` holds `bits` bits, 32 for IPv4, 128 for IPv6.

    Equality is Go's `Addr ==`: 1.2.3.4 and ::ffff:1.2.3.4 are different addresses.
    """

    value: int
    bits: int
    cel_type_name: ClassVar[str] = "net.IP"

    def __post_init__(self) -> None:
        if self.bits not in (_V4_BITS, _V6_BITS) or not 0 <= self.value < 1 << self.bits:
            raise ValueError(f"invalid IP: value {self.value:#x} with {self.bits} bits")

    @property
    def is4(self) -> bool:
        return self.bits == _V4_BITS

    @property
    def is4in6(self) -> bool:
        return not self.is4 and self.value >> 32 == 0xFFFF  # ::ffff:0:0/96

    def cel_size(self) -> int:
        """The size cost functions charge (Kubernetes' `IP.Size()`: 4 or 16 bytes; kcel.eval.sizes)."""
        return self.bits // 8

    def unmap(self) -> IP:
        """Go's Addr.Unmap: the classification predicates look through IPv4-mapped IPv6 addresses."""
        return IP(self.value & 0xFFFFFFFF, _V4_BITS) if self.is4in6 else self

    def octet(self, index: int) -> int:
        """Byte `index` of the address (big-endian), 0-3 for IPv4 and 0-15 for IPv6."""
        return (self.value >> (self.bits - 8 * (index + 1))) & 0xFF

    def word(self, index: int) -> int:
        """The 16-bit group `index` (0-7) of an IPv6 address."""
        return (self.value >> (_V6_BITS - 16 * (index + 1))) & 0xFFFF

    def __str__(self) -> str:
        """Go's Addr.String: dotted quad, `::ffff:` plus dotted quad, or RFC 5952 IPv6 text."""
        if self.is4:
            return ".".join(str(self.octet(i)) for i in range(4))
        if self.is4in6:
            return "::ffff:" + str(self.unmap())
        return _format_ipv6([self.word(i) for i in range(8)])

    def __repr__(self) -> str:
        return f"IP({str(self)!r})"


@dataclass(frozen=True, slots=True, repr=False)
class CIDR:
    """cel-go's `net.CIDR` (a netip.Prefix): an address, host bits kept, and a prefix length."""

    ip: IP
    prefix_length: int
    cel_type_name: ClassVar[str] = "net.CIDR"

    def __post_init__(self) -> None:
        if not 0 <= self.prefix_length <= self.ip.bits:
            raise ValueError(f"invalid prefix length {self.prefix_length} for {self.ip}")

    def cel_size(self) -> int:
        """The size cost functions charge (Kubernetes' `CIDR.Size()`: the prefix's bytes, rounded up)."""
        return -(-self.prefix_length // 8)

    def masked(self) -> CIDR:
        return CIDR(_mask(self.ip, self.prefix_length), self.prefix_length)

    def contains(self, ip: IP) -> bool:
        """Go's Prefix.Contains: same family and the same leading `prefix_length` bits."""
        return ip.bits == self.ip.bits and _mask(ip, self.prefix_length) == _mask(self.ip, self.prefix_length)

    def overlaps(self, other: CIDR) -> bool:
        """Go's Prefix.Overlaps: same family and equal under the shorter of the two masks."""
        if self == other:
            return True
        if self.ip.is4 != other.ip.is4:
            return False
        shortest = min(self.prefix_length, other.prefix_length)
        return _mask(self.ip, shortest) == _mask(other.ip, shortest)

    def __str__(self) -> str:
        return f"{self.ip}/{self.prefix_length}"

    def __repr__(self) -> str:
        return f"CIDR({str(self)!r})"


def _mask(ip: IP, length: int) -> IP:
    """The address with all but its leading `length` bits cleared."""
    host_bits = ip.bits - length
    return IP(ip.value >> host_bits << host_bits, ip.bits)


def _format_ipv6(words: list[int]) -> str:
    """Go's appendTo6: `::` replaces the first longest run of two or more zero groups."""
    start, end = 0, 0
    for i in range(8):
        j = i
        while j < 8 and words[j] == 0:
            j += 1
        if j - i >= 2 and j - i > end - start:
            start, end = i, j
    if end == 0:
        return ":".join(f"{w:x}" for w in words)
    head = ":".join(f"{w:x}" for w in words[:start])
    tail = ":".join(f"{w:x}" for w in words[end:])
    return f"{head}::{tail}"


# -- Go's netip.ParseAddr and netip.ParsePrefix -----------------------------------------------


class NetipError(ValueError):
    """A netip parse failure; `str()` is Go's error text, which cel-go puts into its own messages."""


def _addr_error(text: str, message: str, at: str = "") -> NetipError:
    suffix = f" (at {go_quote(at)})" if at else ""
    return NetipError(f"ParseAddr({go_quote(text)}): {message}{suffix}")


_DIGITS = "0123456789"
_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}


def parse_netip_addr(text: str) -> tuple[IP, str]:
    """Go's netip.ParseAddr: the address and its IPv6 zone ("" if none); no leading zeros, no shorthand."""
    for ch in text:
        if ch == ".":
            return _parse_ipv4(text), ""
        if ch == ":":
            return _parse_ipv6(text)
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _parse_ipv4(text: str) -> IP:
    value = 0
    for octet in _ipv4_fields(text, 0, len(text)):
        value = value << 8 | octet
    return IP(value, _V4_BITS)


def _ipv4_fields(text: str, start: int, end: int) -> list[int]:
    """Go's parseIPv4Fields on text[start:end]; errors name the whole input."""
    s = text[start:end]
    fields: list[int] = []
    value, digits = 0, 0
    for i, ch in enumerate(s):
        if ch in _DIGITS:
            if digits == 1 and value == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(ch), digits + 1
            if value > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(value)
            value, digits = 0, 0
        else:
            raise _addr_error(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    return [*fields, value]


def _parse_ipv6(text: str) -> tuple[IP, str]:
    """Go's parseIPv6: hex groups, one `::`, an optional trailing dotted quad and `%zone`."""
    s, zone = text, ""
    if "%" in text:
        s, zone = text.split("%", 1)
        if not zone:
            raise _addr_error(text, "zone must be a non-empty string")
    groups = bytearray(16)
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return IP(0, _V6_BITS), zone
    i = 0
    while i < 16:
        count, acc = _hex_group(text, s)
        if count < len(s) and s[count] == ".":
            _check_embedded_ipv4(text, s, i, ellipsis)
            end = len(text) - (len(zone) + 1 if zone else 0)
            groups[i : i + 4] = bytes(_ipv4_fields(text, end - len(s), end))
            s, i = "", i + 4
            break
        groups[i : i + 2] = acc.to_bytes(2, "big")
        i += 2
        s = s[count:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(text, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise _addr_error(text, "trailing garbage after address", s)
    return IP(int.from_bytes(_expand_ellipsis(text, groups, i, ellipsis), "big"), _V6_BITS), zone


def _hex_group(text: str, s: str) -> tuple[int, int]:
    """The leading hex group of s: (digits read, value)."""
    count, acc = 0, 0
    while count < len(s) and s[count] in _HEX:
        acc = acc << 4 | _HEX[s[count]]
        if count > 3:
            raise _addr_error(text, "each group must have 4 or less digits", s)
        count += 1
    if count == 0:
        raise _addr_error(text, "each colon-separated field must have at least one digit", s)
    return count, acc


def _check_embedded_ipv4(text: str, s: str, filled: int, ellipsis: int) -> None:
    if ellipsis < 0 and filled != 12:
        raise _addr_error(text, "embedded IPv4 address must replace the final 2 fields of the address", s)
    if filled + 4 > 16:
        raise _addr_error(text, "too many hex fields to fit an embedded IPv4 at the end of the address", s)


def _expand_ellipsis(text: str, groups: bytearray, filled: int, ellipsis: int) -> bytearray:
    """Move the bytes after `::` to the end; `::` must stand for at least one zero group."""
    if filled < 16:
        if ellipsis < 0:
            raise _addr_error(text, "address string too short")
        gap = 16 - filled
        groups[ellipsis + gap :] = groups[ellipsis:filled]
        groups[ellipsis : ellipsis + gap] = bytes(gap)
    elif ellipsis >= 0:
        raise _addr_error(text, "the :: must expand to at least one field of zeros")
    return groups


def parse_netip_prefix(text: str) -> CIDR:
    """Go's netip.ParsePrefix: `addr/bits`, no zone, bits in decimal without sign or leading zero."""
    slash = text.rfind("/")
    if slash < 0:
        raise _prefix_error(text, "no '/'")
    try:
        ip, zone = parse_netip_addr(text[:slash])
    except NetipError as err:
        raise _prefix_error(text, str(err)) from None
    if zone:
        raise _prefix_error(text, "IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    length = _prefix_bits(bits_text)
    if length is None:
        raise _prefix_error(text, f"bad bits after slash: {go_quote(bits_text)}")
    if length > ip.bits:
        raise _prefix_error(text, "prefix length out of range")
    return CIDR(ip, length)


def _prefix_bits(text: str) -> int | None:
    """strconv.Atoi limited to plain decimal digits, as ParsePrefix requires; None if it fails."""
    if not text or any(ch not in _DIGITS for ch in text) or (len(text) > 1 and text[0] == "0"):
        return None
    value = decimal_int(text)
    return value if value <= INT64_MAX else None


def _prefix_error(text: str, message: str) -> NetipError:
    return NetipError(f"netip.ParsePrefix({go_quote(text)}): {message}")


# -- cel-go's stricter parsing -----------------------------------------------------------------


def parse_ip(text: str) -> IP:
    """cel-go's parseIPAddr: netip.ParseAddr, then no zone and no IPv4-mapped IPv6 address."""
    try:
        ip, zone = parse_netip_addr(text)
    except NetipError as err:
        raise EvalError(f"IP Address {go_quote(text)} parse error during conversion from string: {err}") from None
    if zone:
        raise EvalError(f"IP address {go_quote(text)} with zone value is not allowed")
    if ip.is4in6:
        raise EvalError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return ip


def parse_cidr(text: str) -> CIDR:
    """cel-go's parseCIDR: netip.ParsePrefix (which already rejects zones), then no IPv4-mapped IPv6."""
    try:
        cidr = parse_netip_prefix(text)
    except NetipError as err:
        raise EvalError(f"CIDR {go_quote(text)} parse error during conversion from string: {err}") from None
    if cidr.ip.is4in6:
        raise EvalError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return cidr


# -- functions ---------------------------------------------------------------------------------


def is_ip(text: str) -> bool:
    return _parses(parse_ip, text)


def is_cidr(text: str) -> bool:
    """True for host bits set too ('10.0.0.1/8'), as in Kubernetes."""
    return _parses(parse_cidr, text)


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except EvalError:
        return False
    return True


def ip_is_canonical(text: str) -> bool:
    """Whether the text is exactly Go's String() of the address it parses to (RFC 5952 for IPv6)."""
    return str(parse_ip(text)) == text


def ip_family(ip: IP) -> int:
    return 4 if ip.is4 else 6


def ip_is_unspecified(ip: IP) -> bool:
    """0.0.0.0 or ::, but not ::ffff:0.0.0.0 (Go compares against the two constants)."""
    return ip.value == 0


def ip_is_loopback(ip: IP) -> bool:
    ip = ip.unmap()
    return ip.octet(0) == 127 if ip.is4 else ip.value == 1


def _is_multicast(ip: IP) -> bool:
    ip = ip.unmap()
    return ip.octet(0) & 0xF0 == 0xE0 if ip.is4 else ip.octet(0) == 0xFF


def ip_is_link_local_multicast(ip: IP) -> bool:
    """224.0.0.0/24 or ff02::/16 (any flags nibble)."""
    ip = ip.unmap()
    if ip.is4:
        return ip.octet(0) == 224 and ip.octet(1) == 0 and ip.octet(2) == 0
    return ip.word(0) & 0xFF0F == 0xFF02


def ip_is_link_local_unicast(ip: IP) -> bool:
    """169.254.0.0/16 or fe80::/10."""
    ip = ip.unmap()
    if ip.is4:
        return ip.octet(0) == 169 and ip.octet(1) == 254
    return ip.word(0) & 0xFFC0 == 0xFE80


def ip_is_global_unicast(ip: IP) -> bool:
    """Go's rule: anything but unspecified, broadcast, loopback, multicast and link-local unicast."""
    ip = ip.unmap()
    if ip.value == 0 or (ip.is4 and ip.value == 0xFFFFFFFF):  # 0.0.0.0, :: or 255.255.255.255
        return False
    return not (ip_is_loopback(ip) or _is_multicast(ip) or ip_is_link_local_unicast(ip))


def ip_to_string(ip: IP) -> str:
    return str(ip)


def cidr_to_string(cidr: CIDR) -> str:
    return str(cidr)


def cidr_contains_ip(cidr: CIDR, ip: IP) -> bool:
    return cidr.contains(ip)


def cidr_contains_ip_string(cidr: CIDR, text: str) -> bool:
    return cidr.contains(parse_ip(text))


def cidr_contains_cidr(parent: CIDR, child: CIDR) -> bool:
    """The child overlaps the parent and is no wider (cel-go's definition)."""
    return parent.overlaps(child) and parent.prefix_length <= child.prefix_length


def cidr_contains_cidr_string(parent: CIDR, text: str) -> bool:
    return cidr_contains_cidr(parent, parse_cidr(text))


def cidr_ip(cidr: CIDR) -> IP:
    """The address as written, host bits included ('192.168.1.5/24' gives 192.168.1.5)."""
    return cidr.ip


def cidr_is_mask(cidr: CIDR) -> bool:
    """Whether no host bits are set."""
    return cidr.ip == cidr.masked().ip


def cidr_masked(cidr: CIDR) -> CIDR:
    return cidr.masked()


def cidr_prefix_length(cidr: CIDR) -> int:
    return cidr.prefix_length


# -- compile-time literal checks ---------------------------------------------------------------


def _literal_validator(function: str, parse: Callable[[str], object]) -> Expander:
    """cel-go's networkFormatValidator: a string literal passed to ip()/cidr() must parse, else compile error.

    cel-go runs it as an AST validator after type checking; kcel has no such hook, so it runs when the
    parser builds the call and leaves the call unexpanded.
    """

    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
        arg = args[0]
        if isinstance(arg, Const) and isinstance(arg.value, str):
            try:
                parse(arg.value)
            except EvalError as err:
                raise MacroError(f"invalid {function} argument: {err}", arg) from None
        return None

    return expand


MACROS = (
    Macro("ip", 1, False, _literal_validator("ip", parse_ip), "rejects a malformed ip() string literal"),
    Macro("cidr", 1, False, _literal_validator("cidr", parse_cidr), "rejects a malformed cidr() string literal"),
)


# -- registration ------------------------------------------------------------------------------


def _register_types() -> None:
    """Runtime dispatch and type() must know the two classes."""
    for cls, cel_type in ((IP, IP_TYPE), (CIDR, CIDR_TYPE)):
        register_class(cel_type.name, cls)
        register_type_name(cls, cel_type.name)


_register_types()


def _member(overload_id: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any) -> Overload:
    return Overload(overload_id, function, args, result, impl, member=True)


LIBRARY = Library(
    "network",
    overloads=(
        Overload("string_to_cidr", "cidr", (STRING,), CIDR_TYPE, parse_cidr),
        Overload("cidr_to_string", "string", (CIDR_TYPE,), STRING, cidr_to_string),
        _member("cidr_contains_cidr", "containsCIDR", (CIDR_TYPE, CIDR_TYPE), BOOL, cidr_contains_cidr),
        _member("cidr_contains_cidr_string", "containsCIDR", (CIDR_TYPE, STRING), BOOL, cidr_contains_cidr_string),
        _member("cidr_contains_ip_ip", "containsIP", (CIDR_TYPE, IP_TYPE), BOOL, cidr_contains_ip),
        _member("cidr_contains_ip_string", "containsIP", (CIDR_TYPE, STRING), BOOL, cidr_contains_ip_string),
        _member("ip_family", "family", (IP_TYPE,), INT, ip_family),
        Overload("string_to_ip", "ip", (STRING,), IP_TYPE, parse_ip),
        _member("cidr_ip", "ip", (CIDR_TYPE,), IP_TYPE, cidr_ip),
        Overload("ip_to_string", "string", (IP_TYPE,), STRING, ip_to_string),
        Overload("ip_is_canonical", "ip.isCanonical", (STRING,), BOOL, ip_is_canonical),
        Overload("is_cidr", "isCIDR", (STRING,), BOOL, is_cidr),
        _member("ip_is_global_unicast", "isGlobalUnicast", (IP_TYPE,), BOOL, ip_is_global_unicast),
        Overload("is_ip", "isIP", (STRING,), BOOL, is_ip),
        _member("ip_is_link_local_multicast", "isLinkLocalMulticast", (IP_TYPE,), BOOL, ip_is_link_local_multicast),
        _member("ip_is_link_local_unicast", "isLinkLocalUnicast", (IP_TYPE,), BOOL, ip_is_link_local_unicast),
        _member("ip_is_loopback", "isLoopback", (IP_TYPE,), BOOL, ip_is_loopback),
        _member("cidr_is_mask", "isMask", (CIDR_TYPE,), BOOL, cidr_is_mask),
        _member("ip_is_unspecified", "isUnspecified", (IP_TYPE,), BOOL, ip_is_unspecified),
        _member("cidr_masked", "masked", (CIDR_TYPE,), CIDR_TYPE, cidr_masked),
        _member("cidr_prefix_length", "prefixLength", (CIDR_TYPE,), INT, cidr_prefix_length),
    ),
    macros=MACROS,
    types=(IP_TYPE, CIDR_TYPE),
)
