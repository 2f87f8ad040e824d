"""Table tests of the network extension against cel-go v0.29.2 (ext/network.go) and Go's net/netip.

Parsing rows follow Go's netip_test.go; predicate and containment rows follow cel-go's
network_test.go and the cel-spec network_ext suite. Error texts are cel-go's, which wrap Go's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

import kcel
from kcel.env import cel_libraries
from kcel.errors import CompileError, EvalError
from kcel.eval.dispatch import predicate
from kcel.eval.runtime import type_of
from kcel.libs.network import (
    CIDR,
    CIDR_TYPE,
    IP,
    IP_TYPE,
    LIBRARY,
    NetipError,
    parse_cidr,
    parse_ip,
    parse_netip_addr,
    parse_netip_prefix,
)
from kcel.values import TypeValue

CEL_GO = cel_libraries()  # cel-go's network extension, not Kubernetes' IP and CIDR library

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


@dataclass(frozen=True)
class Err:
    message: str


def ip(text: str) -> IP:
    return parse_ip(text)


def cidr(text: str) -> CIDR:
    return parse_cidr(text)


def v6(text: str) -> IP:
    """An IPv6 address netip accepts but cel-go's ip() rejects (IPv4-mapped), for predicate rows."""
    return parse_netip_addr(text)[0]


def ParseAddr(text: str, message: str, at: str = "") -> Err:  # noqa: N802 - named after the Go function
    suffix = f' (at "{at}")' if at else ""
    return Err(f'ParseAddr("{text}"): {message}{suffix}')


def ParsePrefix(text: str, message: str) -> Err:  # noqa: N802 - named after the Go function
    return Err(f'netip.ParsePrefix("{text}"): {message}')


# -- netip.ParseAddr ---------------------------------------------------------------------------

# (input, (String(), zone) or Err)
ADDR_ROWS: list[tuple[str, Any]] = [
    ("0.0.0.0", ("0.0.0.0", "")),
    ("192.168.140.255", ("192.168.140.255", "")),
    ("::", ("::", "")),
    ("::1", ("::1", "")),
    ("fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", ("fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", "")),
    ("fd7a:115c::626b:430b", ("fd7a:115c::626b:430b", "")),
    ("fd7a:115c:a1e0:ab12:4843:cd96::", ("fd7a:115c:a1e0:ab12:4843:cd96::", "")),
    ("fd7a:115c:a1e0:ab12:4843:cd96:626b::", ("fd7a:115c:a1e0:ab12:4843:cd96:626b:0", "")),
    ("fd7a:115c:a1e0::4843:cd96:626b:430b", ("fd7a:115c:a1e0:0:4843:cd96:626b:430b", "")),
    ("::ffff:192.168.140.255", ("::ffff:192.168.140.255", "")),
    ("::ffff:c0a8:1", ("::ffff:192.168.0.1", "")),
    ("fd7a:115c:a1e0:ab12:4843:cd96:626b:430b%eth0", ("fd7a:115c:a1e0:ab12:4843:cd96:626b:430b", "eth0")),
    ("1:2::ffff:192.168.140.255%eth1", ("1:2::ffff:c0a8:8cff", "eth1")),
    ("fe80::1%a%b", ("fe80::1", "a%b")),
    ("FD9E:1A04:F01D::1", ("fd9e:1a04:f01d::1", "")),
    ("2001:db8:0:0:0:0:0:1", ("2001:db8::1", "")),
    ("2001:0db8::0001", ("2001:db8::1", "")),
    ("1:0:0:1:0:0:0:1", ("1:0:0:1::1", "")),  # the longest run of zeros is elided
    ("1:0:0:1:0:0:1:1", ("1::1:0:0:1:1", "")),  # the first of equal runs
    ("1:0:1:1:1:1:1:1", ("1:0:1:1:1:1:1:1", "")),  # never a single zero group
    ("::ffff", ("::ffff", "")),
    ("", ParseAddr("", "unable to parse IP")),
    ("bad", ParseAddr("bad", "unable to parse IP")),
    ("1234", ParseAddr("1234", "unable to parse IP")),
    ("%eth0", ParseAddr("%eth0", "missing IPv6 address")),
    ("1.2.3.4%eth0", ParseAddr("1.2.3.4%eth0", "unexpected character", "%eth0")),
    (".1.2.3", ParseAddr(".1.2.3", "IPv4 field must have at least one digit", ".1.2.3")),
    ("1.2.3.", ParseAddr("1.2.3.", "IPv4 field must have at least one digit", ".")),
    ("1..2.3", ParseAddr("1..2.3", "IPv4 field must have at least one digit", ".2.3")),
    ("1.2.3.4.5", ParseAddr("1.2.3.4.5", "IPv4 address too long")),
    ("010.000.015.001", ParseAddr("010.000.015.001", "IPv4 field has octet with leading zero")),
    ("0xc0.0xa8.0x8c.0xff", ParseAddr("0xc0.0xa8.0x8c.0xff", "unexpected character", "xc0.0xa8.0x8c.0xff")),
    ("127.0.1", ParseAddr("127.0.1", "IPv4 address too short")),
    ("192.168.300.1", ParseAddr("192.168.300.1", "IPv4 field has value >255")),
    ("1:2:3:4:5:6:7", ParseAddr("1:2:3:4:5:6:7", "address string too short")),
    ("1:2:3:4:5:6:7:8:9", ParseAddr("1:2:3:4:5:6:7:8:9", "trailing garbage after address", "9")),
    ("1:2:3:4::5:6:7:8", ParseAddr("1:2:3:4::5:6:7:8", "the :: must expand to at least one field of zeros")),
    ("fe801::1", ParseAddr("fe801::1", "each group must have 4 or less digits", "fe801::1")),
    ("0:0:0:0:0:ffff:0:00000", ParseAddr("0:0:0:0:0:ffff:0:00000", "each group must have 4 or less digits", "00000")),
    (
        "fe80:tail:scal:e::",
        ParseAddr("fe80:tail:scal:e::", "each colon-separated field must have at least one digit", "tail:scal:e::"),
    ),
    ("fe80::1%", ParseAddr("fe80::1%", "zone must be a non-empty string")),
    ("fe80::1::1", ParseAddr("fe80::1::1", "multiple :: in address", ":1")),
    ("fe80:1?:1", ParseAddr("fe80:1?:1", "unexpected character, want colon", "?:1")),
    ("fe80:", ParseAddr("fe80:", "colon must be followed by more characters", ":")),
    ("2001:db8:::68", ParseAddr("2001:db8:::68", "each colon-separated field must have at least one digit", ":68")),
    ("::ffff:1.2.03.4", ParseAddr("::ffff:1.2.03.4", "IPv4 field has octet with leading zero")),
    ("::ffff:1.2.3.z", ParseAddr("::ffff:1.2.3.z", "unexpected character", "z")),
    (
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
        ParseAddr(
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
            "embedded IPv4 address must replace the final 2 fields of the address",
            "192.168.140.255",
        ),
    ),
    (
        "ffff::ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
        ParseAddr(
            "ffff::ffff:ffff:ffff:ffff:ffff:ffff:192.168.140.255",
            "too many hex fields to fit an embedded IPv4 at the end of the address",
            "192.168.140.255",
        ),
    ),
    ("é.1", ParseAddr("é.1", "unexpected character", "é.1")),
    ('1.2.3."', Err('ParseAddr("1.2.3.\\""): unexpected character (at "\\"")')),
]


@pytest.mark.parametrize(("text", "want"), ADDR_ROWS)
def test_parse_netip_addr(text: str, want: Any) -> None:
    if isinstance(want, Err):
        with pytest.raises(NetipError) as info:
            parse_netip_addr(text)
        assert str(info.value) == want.message
    else:
        parsed, zone = parse_netip_addr(text)
        assert (str(parsed), zone) == want


# -- netip.ParsePrefix -------------------------------------------------------------------------

PREFIX_ROWS: list[tuple[str, Any]] = [
    ("1.2.3.4/24", "1.2.3.4/24"),
    ("0.0.0.0/0", "0.0.0.0/0"),
    ("::/0", "::/0"),
    ("::1/128", "::1/128"),
    ("2001:DB8::/32", "2001:db8::/32"),
    ("::ffff:c000:0280/96", "::ffff:192.0.2.128/96"),
    ("10.0.0.0/8", "10.0.0.0/8"),
    ("1.2.3.4", ParsePrefix("1.2.3.4", "no '/'")),
    ("1.2.3.4/", ParsePrefix("1.2.3.4/", 'bad bits after slash: ""')),
    ("1.2.3.4/08", ParsePrefix("1.2.3.4/08", 'bad bits after slash: "08"')),
    ("1.2.3.4/+8", ParsePrefix("1.2.3.4/+8", 'bad bits after slash: "+8"')),
    ("1.2.3.4/-0", ParsePrefix("1.2.3.4/-0", 'bad bits after slash: "-0"')),
    ("1.2.3.4/ 8", ParsePrefix("1.2.3.4/ 8", 'bad bits after slash: " 8"')),
    ("1.2.3.4/٨", ParsePrefix("1.2.3.4/٨", 'bad bits after slash: "٨"')),
    (
        "1.2.3.4/99999999999999999999",
        ParsePrefix("1.2.3.4/99999999999999999999", 'bad bits after slash: "99999999999999999999"'),
    ),
    ("1.2.3.4/33", ParsePrefix("1.2.3.4/33", "prefix length out of range")),
    ("::/129", ParsePrefix("::/129", "prefix length out of range")),
    ("fe80::1%en0/24", ParsePrefix("fe80::1%en0/24", "IPv6 zones cannot be present in a prefix")),
    ("1.2.3/8", ParsePrefix("1.2.3/8", 'ParseAddr("1.2.3"): IPv4 address too short')),
    ("1.2.3.4/8/8", ParsePrefix("1.2.3.4/8/8", 'ParseAddr("1.2.3.4/8"): unexpected character (at "/8")')),
]


@pytest.mark.parametrize(("text", "want"), PREFIX_ROWS)
def test_parse_netip_prefix(text: str, want: Any) -> None:
    if isinstance(want, Err):
        with pytest.raises(NetipError) as info:
            parse_netip_prefix(text)
        assert str(info.value) == want.message
    else:
        assert str(parse_netip_prefix(text)) == want


# -- cel-go's ip() and cidr() ------------------------------------------------------------------

IP_PARSE_ERROR = 'IP Address "{0}" parse error during conversion from string: ParseAddr("{0}"): {1}'
CIDR_PARSE_ERROR = 'CIDR "{0}" parse error during conversion from string: netip.ParsePrefix("{0}"): {1}'

# (overload id, argument, expected)
CONVERSION_ROWS: list[tuple[str, str, Any]] = [
    ("string_to_ip", "192.168.0.1", IP(0xC0A80001, 32)),
    ("string_to_ip", "::1", IP(1, 128)),
    ("string_to_ip", "127.0.0.1.0", Err(IP_PARSE_ERROR.format("127.0.0.1.0", "IPv4 address too long"))),
    ("string_to_ip", "fe80::1%en0", Err('IP address "fe80::1%en0" with zone value is not allowed')),
    ("string_to_ip", "::ffff:192.168.0.1", Err('IPv4-mapped IPv6 address "::ffff:192.168.0.1" is not allowed')),
    ("string_to_ip", "::ffff:c0a8:1", Err('IPv4-mapped IPv6 address "::ffff:c0a8:1" is not allowed')),
    ("string_to_ip", "127.0.0.1:80", Err(IP_PARSE_ERROR.format("127.0.0.1:80", 'unexpected character (at ":80")'))),
    ("string_to_cidr", "192.168.0.0/24", CIDR(IP(0xC0A80000, 32), 24)),
    ("string_to_cidr", "10.0.0.1/8", CIDR(IP(0x0A000001, 32), 8)),
    ("string_to_cidr", "192.168.0.0/", Err(CIDR_PARSE_ERROR.format("192.168.0.0/", 'bad bits after slash: ""'))),
    (
        "string_to_cidr",
        "fe80::1%en0/24",
        Err(CIDR_PARSE_ERROR.format("fe80::1%en0/24", "IPv6 zones cannot be present in a prefix")),
    ),
    ("string_to_cidr", "::ffff:192.168.0.1/24", Err('IPv4-mapped IPv6 address "::ffff:192.168.0.1/24" is not allowed')),
    ("is_ip", "1.2.3.4", True),
    ("is_ip", "2001:db8::1", True),
    ("is_ip", "not.an.ip", False),
    ("is_ip", "127.0.0.1:80", False),
    ("is_ip", "fe80::1%en0", False),
    ("is_ip", "::ffff:1.2.3.4", False),
    ("is_cidr", "10.0.0.0/8", True),
    ("is_cidr", "10.0.0.1/8", True),
    ("is_cidr", "10.0.0.0/999", False),
    ("is_cidr", "::ffff:1.2.3.4/120", False),
    ("ip_is_canonical", "127.0.0.1", True),
    ("ip_is_canonical", "2001:db8::1", True),
    ("ip_is_canonical", "2001:DB8::1", False),
    ("ip_is_canonical", "2001:db8:0:0:0:0:0:1", False),
    ("ip_is_canonical", "2001:db8::0:1", False),
    ("ip_is_canonical", "127.0.0.1.0", Err(IP_PARSE_ERROR.format("127.0.0.1.0", "IPv4 address too long"))),
    ("ip_is_canonical", "::ffff:1.2.3.4", Err('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed')),
]


@pytest.mark.parametrize(("overload_id", "arg", "want"), CONVERSION_ROWS)
def test_string_functions(overload_id: str, arg: str, want: Any) -> None:
    impl = OVERLOADS[overload_id].impl
    if isinstance(want, Err):
        with pytest.raises(EvalError) as info:
            impl(arg)
        assert info.value.message == want.message
    else:
        result = impl(arg)
        assert type(result) is type(want)
        assert result == want


# -- IP predicates -----------------------------------------------------------------------------

PREDICATES = (
    "ip_is_unspecified", "ip_is_loopback", "ip_is_global_unicast", "ip_is_link_local_multicast",
    "ip_is_link_local_unicast",
)  # fmt: skip

# (address, family, then PREDICATES in order); mapped rows check Go's Unmap inside the predicates.
PROPERTY_ROWS: list[tuple[IP, int, tuple[bool, ...]]] = [
    (ip("192.0.2.1"), 4, (False, False, True, False, False)),
    (ip("2001:db8::1"), 6, (False, False, True, False, False)),
    (ip("4000::1"), 6, (False, False, True, False, False)),
    (ip("224.0.0.1"), 4, (False, False, False, True, False)),
    (ip("224.0.1.1"), 4, (False, False, False, False, False)),
    (ip("ff02::1"), 6, (False, False, False, True, False)),
    (ip("ff12::1"), 6, (False, False, False, True, False)),
    (ip("ff01::1"), 6, (False, False, False, False, False)),
    (ip("fd00::1"), 6, (False, False, True, False, False)),
    (ip("169.254.169.254"), 4, (False, False, False, False, True)),
    (ip("fe80::1"), 6, (False, False, False, False, True)),
    (ip("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), 6, (False, False, False, False, True)),
    (ip("fec0::1"), 6, (False, False, True, False, False)),
    (ip("127.0.0.1"), 4, (False, True, False, False, False)),
    (ip("127.255.0.9"), 4, (False, True, False, False, False)),
    (ip("::1"), 6, (False, True, False, False, False)),
    (ip("0.0.0.0"), 4, (True, False, False, False, False)),
    (ip("::"), 6, (True, False, False, False, False)),
    (ip("255.255.255.255"), 4, (False, False, False, False, False)),
    (ip("10.0.0.1"), 4, (False, False, True, False, False)),
    (ip("192.168.0.1"), 4, (False, False, True, False, False)),
    (v6("::ffff:127.0.0.1"), 6, (False, True, False, False, False)),
    (v6("::ffff:224.0.0.1"), 6, (False, False, False, True, False)),
    (v6("::ffff:169.254.0.1"), 6, (False, False, False, False, True)),
    (v6("::ffff:10.0.0.1"), 6, (False, False, True, False, False)),
    (v6("::ffff:0.0.0.0"), 6, (False, False, False, False, False)),
    (v6("::ffff:255.255.255.255"), 6, (False, False, False, False, False)),
]


@pytest.mark.parametrize(("address", "family", "expected"), PROPERTY_ROWS)
def test_ip_properties(address: IP, family: int, expected: tuple[bool, ...]) -> None:
    assert OVERLOADS["ip_family"].impl(address) == family
    assert tuple(OVERLOADS[name].impl(address) for name in PREDICATES) == expected


# -- CIDR members ------------------------------------------------------------------------------

# (overload id, receiver, argument, expected)
CIDR_ROWS: list[tuple[str, CIDR, Any, Any]] = [
    ("cidr_contains_ip_ip", cidr("10.0.0.0/8"), ip("10.255.255.255"), True),
    ("cidr_contains_ip_ip", cidr("10.0.0.0/8"), ip("10.0.0.0"), True),
    ("cidr_contains_ip_ip", cidr("10.0.0.0/8"), ip("11.0.0.0"), False),
    ("cidr_contains_ip_ip", cidr("10.0.0.1/8"), ip("10.1.2.3"), True),
    ("cidr_contains_ip_ip", cidr("0.0.0.0/0"), ip("8.8.8.8"), True),
    ("cidr_contains_ip_ip", cidr("0.0.0.0/0"), ip("::"), False),
    ("cidr_contains_ip_ip", cidr("2001:db8::/32"), ip("192.168.1.1"), False),
    ("cidr_contains_ip_ip", cidr("192.168.1.1/32"), ip("2001:db8::1"), False),
    ("cidr_contains_ip_ip", cidr("2001:db8::/32"), ip("2001:db8:ffff::1"), True),
    ("cidr_contains_ip_ip", cidr("2001:db8::/33"), ip("2001:db8:8000::"), False),
    ("cidr_contains_ip_ip", cidr("::/0"), v6("::ffff:1.2.3.4"), True),
    ("cidr_contains_ip_ip", cidr("0.0.0.0/0"), v6("::ffff:1.2.3.4"), False),
    ("cidr_contains_ip_string", cidr("10.0.0.0/8"), "10.1.2.3", True),
    ("cidr_contains_ip_string", cidr("192.168.0.0/24"), "192.168.1.1", False),
    (
        "cidr_contains_ip_string",
        cidr("10.0.0.0/8"),
        "not-an-ip",
        Err(IP_PARSE_ERROR.format("not-an-ip", "unable to parse IP")),
    ),
    (
        "cidr_contains_ip_string",
        cidr("10.0.0.0/8"),
        "::ffff:10.0.0.1",
        Err('IPv4-mapped IPv6 address "::ffff:10.0.0.1" is not allowed'),
    ),
    ("cidr_contains_cidr", cidr("10.0.0.0/8"), cidr("10.1.0.0/16"), True),
    ("cidr_contains_cidr", cidr("10.0.0.0/8"), cidr("10.0.0.0/8"), True),
    ("cidr_contains_cidr", cidr("10.0.0.0/8"), cidr("11.0.0.0/8"), False),
    ("cidr_contains_cidr", cidr("10.0.0.0/8"), cidr("0.0.0.0/4"), False),
    ("cidr_contains_cidr", cidr("10.0.0.0/8"), cidr("::1/128"), False),
    ("cidr_contains_cidr", cidr("192.168.0.0/24"), cidr("192.168.0.1/32"), True),
    ("cidr_contains_cidr", cidr("192.168.0.0/24"), cidr("192.168.0.0/23"), False),
    ("cidr_contains_cidr", cidr("10.9.9.9/8"), cidr("10.1.0.0/16"), True),
    ("cidr_contains_cidr", cidr("0.0.0.0/0"), cidr("255.0.0.0/8"), True),
    ("cidr_contains_cidr", cidr("::/0"), cidr("0.0.0.0/0"), False),
    ("cidr_contains_cidr", cidr("2001:db8::/32"), cidr("2001:db8::/33"), True),
    ("cidr_contains_cidr_string", cidr("10.0.0.0/8"), "10.1.0.0/16", True),
    ("cidr_contains_cidr_string", cidr("10.0.0.0/8"), "10.0.0.0/7", False),
    (
        "cidr_contains_cidr_string",
        cidr("10.0.0.0/8"),
        "not-a-cidr",
        Err(CIDR_PARSE_ERROR.format("not-a-cidr", "no '/'")),
    ),
]


@pytest.mark.parametrize(("overload_id", "receiver", "arg", "want"), CIDR_ROWS)
def test_cidr_containment(overload_id: str, receiver: CIDR, arg: Any, want: Any) -> None:
    impl = OVERLOADS[overload_id].impl
    if isinstance(want, Err):
        with pytest.raises(EvalError) as info:
            impl(receiver, arg)
        assert info.value.message == want.message
    else:
        assert impl(receiver, arg) is want


# (cidr, ip(), masked(), isMask(), prefixLength(), string())
CIDR_ACCESSOR_ROWS: list[tuple[str, str, str, bool, int, str]] = [
    ("192.168.0.0/24", "192.168.0.0", "192.168.0.0/24", True, 24, "192.168.0.0/24"),
    ("192.168.1.5/24", "192.168.1.5", "192.168.1.0/24", False, 24, "192.168.1.5/24"),
    ("100.98.156.66/10", "100.98.156.66", "100.64.0.0/10", False, 10, "100.98.156.66/10"),
    ("255.255.255.255/20", "255.255.255.255", "255.255.240.0/20", False, 20, "255.255.255.255/20"),
    ("1.2.3.4/0", "1.2.3.4", "0.0.0.0/0", False, 0, "1.2.3.4/0"),
    ("1.2.3.4/32", "1.2.3.4", "1.2.3.4/32", True, 32, "1.2.3.4/32"),
    ("2001:db8::/32", "2001:db8::", "2001:db8::/32", True, 32, "2001:db8::/32"),
    ("2001:db8::1/32", "2001:db8::1", "2001:db8::/32", False, 32, "2001:db8::1/32"),
    (
        "fe80::dead:beef:dead:beef/96",
        "fe80::dead:beef:dead:beef",
        "fe80::dead:beef:0:0/96",
        False,
        96,
        "fe80::dead:beef:dead:beef/96",
    ),
    ("aaaa::/4", "aaaa::", "a000::/4", False, 4, "aaaa::/4"),
    ("::1/128", "::1", "::1/128", True, 128, "::1/128"),
]


@pytest.mark.parametrize(("text", "address", "masked", "is_mask", "length", "string"), CIDR_ACCESSOR_ROWS)
def test_cidr_accessors(text: str, address: str, masked: str, is_mask: bool, length: int, string: str) -> None:
    value = cidr(text)
    assert OVERLOADS["cidr_ip"].impl(value) == ip(address)
    assert OVERLOADS["cidr_masked"].impl(value) == cidr(masked)
    assert OVERLOADS["cidr_is_mask"].impl(value) is is_mask
    assert OVERLOADS["cidr_prefix_length"].impl(value) == length
    assert OVERLOADS["cidr_to_string"].impl(value) == string


@pytest.mark.parametrize(
    ("value", "text"),
    [(ip("1.2.3.4"), "1.2.3.4"), (ip("2001:DB8::68"), "2001:db8::68"), (v6("::ffff:1.2.3.4"), "::ffff:1.2.3.4")],
)
def test_ip_to_string(value: IP, text: str) -> None:
    assert OVERLOADS["ip_to_string"].impl(value) == text


# -- expressions -------------------------------------------------------------------------------

# (expression, expected value or Err(eval error message))
EXPR_ROWS: list[tuple[str, Any]] = [
    ("string(ip('192.168.0.1'))", "192.168.0.1"),
    ("string(ip('2001:db8::68'))", "2001:db8::68"),
    ("string(cidr('2001:db8::/32'))", "2001:db8::/32"),
    ("isIP('192.168.0.1')", True),
    ("isIP('192.168.0.1.0')", False),
    ("isCIDR('10.0.0.1/8')", True),
    ("ip.isCanonical('127.0.0.1')", True),
    ("ip.isCanonical('2001:DB8::68')", False),
    ("ip('192.168.0.1').family()", 4),
    ("ip('2001:db8::68').family()", 6),
    ("ip('0.0.0.0').isUnspecified()", True),
    ("ip('127.0.0.1').isLoopback()", True),
    ("ip('255.255.255.255').isGlobalUnicast()", False),
    ("ip('224.0.0.1').isLinkLocalMulticast()", True),
    ("ip('fe80::1').isLinkLocalUnicast()", True),
    ("ip('127.0.0.1') == ip('127.0.0.1')", True),
    ("ip('2001:db8::1') == ip('2001:DB8::1')", True),
    ("ip('::') == ip('::ffff')", False),
    ("ip('0.0.0.0') == ip('::')", False),
    ("cidr('127.0.0.1/24') == cidr('127.0.0.1/24')", True),
    ("cidr('127.0.0.1/24') == cidr('127.0.0.0/24')", False),
    ("cidr('2001:db8::/32') == cidr('10.0.0.1/32')", False),
    ("ip('1.2.3.4') != ip('1.2.3.5')", True),
    ("[ip('1.2.3.4')] == [ip('1.2.3.4')]", True),
    ("ip('1.2.3.4') in [ip('::1'), ip('1.2.3.4')]", True),
    ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
    ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", False),
    ("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", True),
    ("cidr('10.0.0.0/8').containsCIDR('10.0.0.0/8')", True),
    ("cidr('192.168.0.0/24').ip() == ip('192.168.0.0')", True),
    ("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", True),
    ("cidr('192.168.0.1/24').isMask()", False),
    ("cidr('2001:db8::/32').prefixLength()", 32),
    ("type(ip('192.168.0.1')) == net.IP", True),
    ("type(cidr('192.168.0.0/24')) == net.CIDR", True),
    ("type(ip('::1')) == net.CIDR", False),
    ("type(net.IP)", TypeValue("type")),
    ("dyn(ip('1.2.3.4')).family()", 4),
    ("string(dyn(cidr('::1/128')))", "::1/128"),
    ("dyn(cidr('10.0.0.0/8')).containsIP(dyn('10.1.2.3'))", True),
    ("ip(x)", IP(0x01020304, 32)),
    ("cidr(y).masked()", CIDR(IP(0x0A000000, 32), 8)),
    ("ip(x + '.5')", Err(IP_PARSE_ERROR.format("1.2.3.4.5", "IPv4 address too long"))),
    ("cidr(x)", Err(CIDR_PARSE_ERROR.format("1.2.3.4", "no '/'"))),
    ("ip.isCanonical(x + '.5')", Err(IP_PARSE_ERROR.format("1.2.3.4.5", "IPv4 address too long"))),
    ("cidr('10.0.0.0/8').containsIP('not-an-ip')", Err(IP_PARSE_ERROR.format("not-an-ip", "unable to parse IP"))),
    (
        "cidr('10.0.0.0/8').containsCIDR('10.0.0.0/08')",
        Err(CIDR_PARSE_ERROR.format("10.0.0.0/08", 'bad bits after slash: "08"')),
    ),
    ("isIP(dyn(cidr('192.168.0.0/24')))", Err("no such overload: isIP(net.CIDR)")),  # cel-go's answers
    ("dyn(ip('1.2.3.4')) < dyn(ip('1.2.3.5'))", Err("no such overload: _<_")),
    ("dyn(ip('1.2.3.4')).prefixLength()", Err("no such overload: prefixLength(net.IP)")),
]


@pytest.mark.parametrize(("expr", "want"), EXPR_ROWS)
def test_expressions(expr: str, want: Any) -> None:
    program = kcel.Env(variables={"x": "string", "y": "string"}, libraries=CEL_GO).compile(expr)
    bindings = {"x": "1.2.3.4", "y": "10.1.2.3/8"}
    if isinstance(want, Err):
        with pytest.raises(EvalError) as info:
            program.evaluate(bindings)
        assert info.value.message == want.message
    else:
        result = program.evaluate(bindings)
        assert type(result) is type(want)
        assert result == want


# cel-go's networkFormatValidator: a malformed string literal given to ip()/cidr() fails compilation.
COMPILE_ERROR_ROWS: list[tuple[str, str]] = [
    (
        "ip('192.168.0.1.0')",
        "ERROR: <input>:1:4: invalid ip argument: "
        + IP_PARSE_ERROR.format("192.168.0.1.0", "IPv4 address too long")
        + "\n | ip('192.168.0.1.0')\n | ...^",
    ),
    (
        "1 == 1 && ip('fe80::1%en0').isLoopback()",
        'ERROR: <input>:1:14: invalid ip argument: IP address "fe80::1%en0" with zone value is not allowed'
        "\n | 1 == 1 && ip('fe80::1%en0').isLoopback()\n | .............^",
    ),
    (
        "ip('::ffff:c0a8:1') == ip('192.168.0.1')",
        'ERROR: <input>:1:4: invalid ip argument: IPv4-mapped IPv6 address "::ffff:c0a8:1" is not allowed'
        "\n | ip('::ffff:c0a8:1') == ip('192.168.0.1')\n | ...^",
    ),
    (
        "cidr('192.168.0.0/')",
        "ERROR: <input>:1:6: invalid cidr argument: "
        + CIDR_PARSE_ERROR.format("192.168.0.0/", 'bad bits after slash: ""')
        + "\n | cidr('192.168.0.0/')\n | .....^",
    ),
    (
        "[1].all(i, cidr('::ffff:1.2.3.4/120').containsIP('::1'))",
        'ERROR: <input>:1:17: invalid cidr argument: IPv4-mapped IPv6 address "::ffff:1.2.3.4/120" is not allowed'
        "\n | [1].all(i, cidr('::ffff:1.2.3.4/120').containsIP('::1'))\n | ................^",
    ),
]


@pytest.mark.parametrize(("expr", "rendered"), COMPILE_ERROR_ROWS)
def test_literal_validation(expr: str, rendered: str) -> None:
    with pytest.raises(CompileError) as info:
        kcel.Env(libraries=CEL_GO).compile(expr)
    assert str(info.value) == rendered


@pytest.mark.parametrize(
    "expr", ["ip(b'1.2.3.4.5')", "ip(1)", "cidr(x)", "x.ip('1.2.3.4.5')", "ip.isCanonical('1.2.3.4.5')"]
)
def test_validation_only_checks_string_literals_of_global_calls(expr: str) -> None:
    kcel.Env(variables={"x": "string"}, libraries=CEL_GO).compile(expr, check=False)


# -- declarations and values -------------------------------------------------------------------

CEL_GO_OVERLOADS = {
    "string_to_cidr": ("cidr", False), "cidr_to_string": ("string", False),
    "cidr_contains_cidr": ("containsCIDR", True),
    "cidr_contains_cidr_string": ("containsCIDR", True), "cidr_contains_ip_ip": ("containsIP", True),
    "cidr_contains_ip_string": ("containsIP", True), "ip_family": ("family", True), "string_to_ip": ("ip", False),
    "cidr_ip": ("ip", True), "ip_to_string": ("string", False), "ip_is_canonical": ("ip.isCanonical", False),
    "is_cidr": ("isCIDR", False), "ip_is_global_unicast": ("isGlobalUnicast", True), "is_ip": ("isIP", False),
    "ip_is_link_local_multicast": ("isLinkLocalMulticast", True),
    "ip_is_link_local_unicast": ("isLinkLocalUnicast", True), "ip_is_loopback": ("isLoopback", True),
    "cidr_is_mask": ("isMask", True), "ip_is_unspecified": ("isUnspecified", True), "cidr_masked": ("masked", True),
    "cidr_prefix_length": ("prefixLength", True),
}  # fmt: skip


def test_overloads_are_cel_gos() -> None:
    assert {o.id: (o.function, o.member) for o in LIBRARY.overloads} == CEL_GO_OVERLOADS
    assert all(o.cost is None for o in LIBRARY.overloads)  # v0.29.2 has no network cost functions


def test_network_library_is_one_of_cel_gos_and_gives_way_to_kubernetes() -> None:
    """Both declare the same overloads: `Env()`, which has every library, keeps Kubernetes' IP and CIDR library."""
    assert any(library.name == "network" for library in CEL_GO)
    names = [library.name for library in kcel.Env().libraries]
    assert "kubernetes.net" in names and "network" not in names


@pytest.mark.parametrize(("value", "cel_type"), [(ip("1.2.3.4"), IP_TYPE), (cidr("::/0"), CIDR_TYPE)])
def test_runtime_type_registration(value: Any, cel_type: Any) -> None:
    assert type_of(value) == TypeValue(cel_type.name)
    assert value.cel_type_name == cel_type.name
    assert predicate(cel_type)(value)
    assert not predicate(cel_type)(str(value))


def test_values_are_immutable_and_hashable() -> None:
    address = ip("10.0.0.1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        address.value = 0  # type: ignore[misc]
    assert {address, ip("10.0.0.1"), cidr("10.0.0.1/8"), cidr("10.0.0.1/8")} == {address, cidr("10.0.0.1/8")}
    assert ip("1.2.3.4") != v6("::ffff:1.2.3.4")
    assert cidr("10.0.0.1/8") != cidr("10.0.0.0/8")
    assert repr(address) == "IP('10.0.0.1')"
    assert repr(cidr("::/0")) == "CIDR('::/0')"


@pytest.mark.parametrize(
    ("cls", "args"), [(IP, (1 << 32, 32)), (IP, (-1, 128)), (IP, (0, 64)), (CIDR, (IP(0, 32), 33))]
)
def test_invalid_values_are_rejected(cls: type, args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError):
        cls(*args)
