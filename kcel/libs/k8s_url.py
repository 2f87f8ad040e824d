"""Kubernetes' URL library (`kubernetes.URL`): URLs parsed, printed and queried by Go 1.26's net/url rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from kcel.checker.types import BOOL, STRING, CelType, list_of, map_of, opaque
from kcel.errors import EvalError
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.libs import Library, Overload, size_cost, size_estimate, unit_cost, unit_estimate
from kcel.libs.network import NetipError, parse_netip_addr
from kcel.temporal import go_quote

__all__ = [
    "LIBRARY", "URL", "URL_TYPE", "Userinfo", "UrlError", "parse", "parse_query", "parse_request_uri",
]  # fmt: skip

URL_TYPE = opaque("kubernetes.URL")

# Go strings are bytes. Parsing works on "byte text": str values whose characters are the UTF-8
# bytes of the input (U+0000-U+00FF), so indexing, `find` and slicing follow Go's byte offsets.

_string_traversal_cost = size_cost(0.1)
_string_traversal_estimate = size_estimate(0.1)
_unit_cost = unit_cost
_unit_estimate = unit_estimate


def _bytes_of(text: str) -> str:
    """The byte text of a CEL string."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


def _text_of(raw: str) -> str:
    """A CEL string from byte text; bytes that are not UTF-8 (from `%ff` escapes) become U+FFFD."""
    return raw.encode("latin-1").decode("utf-8", "replace")


def _quote(raw: str) -> str:
    """Go's strconv.Quote of byte text: bytes that are not UTF-8 print as `\\xff`."""
    decoded = raw.encode("latin-1").decode("utf-8", "surrogateescape")
    return '"' + "".join(_quote_char(ch) for ch in decoded) + '"'


def _quote_char(ch: str) -> str:
    if 0xDC80 <= ord(ch) <= 0xDCFF:  # a byte surrogateescape could not decode
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return go_quote(ch)[1:-1]


class UrlError(ValueError):
    """A net/url failure; `str()` is Go's error text."""


# -- escaping (Go's shouldEscape, escape, unescape) --------------------------------------------

_PATH, _PATH_SEGMENT, _HOST, _ZONE, _USER_PASSWORD, _QUERY_COMPONENT, _FRAGMENT = range(1, 8)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_RESERVED_ALLOWED = {  # mode -> the reserved characters `$&+,/:;=?@` it keeps unescaped
    _PATH: frozenset("$&+,/:;=@"), _PATH_SEGMENT: frozenset("$&+:=@"), _USER_PASSWORD: frozenset("$&+,;="),
    _QUERY_COMPONENT: frozenset(), _FRAGMENT: frozenset("$&+,/:;=?@"),
}  # fmt: skip


def _should_escape(c: str, mode: int) -> bool:
    """RFC 3986 as Go applies it: which characters a URL part must percent-encode."""
    if c in _ALNUM or c in "-_.~":
        return False
    if mode in (_HOST, _ZONE) and c in "!$&'()*+,;=:[]<>\"":
        return False  # sub-delims, plus the characters of `[ipv6]:port` and those hosts cannot escape
    if c in "$&+,/:;=?@" and mode in _RESERVED_ALLOWED:
        return c not in _RESERVED_ALLOWED[mode]
    return not (mode == _FRAGMENT and c in "!()*")


def _escape(raw: str, mode: int) -> str:
    out = []
    for c in raw:
        if c == " " and mode == _QUERY_COMPONENT:
            out.append("+")
        elif _should_escape(c, mode):
            out.append(f"%{ord(c):02X}")
        else:
            out.append(c)
    return "".join(out)


def _unescape(raw: str, mode: int) -> str:
    """Go's unescape: validate every `%XX` (and, in hosts, every character), then decode."""
    _check_escapes(raw, mode)
    plus = " " if mode == _QUERY_COMPONENT else "+"
    return re.sub(r"%[0-9a-fA-F]{2}|\+", lambda m: plus if m[0] == "+" else chr(int(m[0][1:], 16)), raw)


def _check_escapes(raw: str, mode: int) -> None:
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "%":
            if i + 2 >= len(raw) or raw[i + 1] not in _HEX or raw[i + 2] not in _HEX:
                raise _escape_error(raw[i : i + 3])
            _check_host_escape(raw[i : i + 3], mode)
            i += 3
            continue
        if mode in (_HOST, _ZONE) and c < "\x80" and c != "+" and _should_escape(c, mode):
            raise UrlError(f"invalid character {_quote(c)} in host name")
        i += 1


def _check_host_escape(escape: str, mode: int) -> None:
    """Hosts may only %-encode non-ASCII bytes (and `%25`); zones only bytes a host may contain."""
    value = int(escape[1:], 16)
    if escape == "%25":
        return
    if mode == _HOST and value < 0x80:
        raise _escape_error(escape)
    if mode == _ZONE and value != 0x20 and _should_escape(chr(value), _HOST):
        raise _escape_error(escape)


def _escape_error(escape: str) -> UrlError:
    return UrlError(f"invalid URL escape {_quote(escape)}")


def _valid_encoded(raw: str, mode: int) -> bool:
    """Whether raw needs no further escaping (sub-delims, `:@[]` and `%` are accepted as they are)."""
    return all(c in "!$&'()*+,;=:@[]%" or not _should_escape(c, mode) for c in raw)


# -- the URL value -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Userinfo:
    """Go's url.Userinfo: a username and maybe a password (`password_set` tells an empty one from none)."""

    username: str
    password: str = ""
    password_set: bool = False

    def __str__(self) -> str:
        text = _escape(self.username, _USER_PASSWORD)
        return text + (":" + _escape(self.password, _USER_PASSWORD) if self.password_set else "")


@dataclass(frozen=True, slots=True, eq=False)
class URL:
    """Go's url.URL; text fields hold byte text (see `_bytes_of`), decoded as Go stores them.

    Equality is Kubernetes' `URL.Equal`: the two `String()` forms are the same.
    """

    scheme: str = ""
    opaque: str = ""
    user: Userinfo | None = None
    host: str = ""
    path: str = ""
    raw_path: str = ""
    omit_host: bool = False
    force_query: bool = False
    raw_query: str = ""
    fragment: str = ""
    raw_fragment: str = ""
    cel_type_name: ClassVar[str] = "kubernetes.URL"

    def escaped_path(self) -> str:
        """Go's EscapedPath: the path as written if that is a valid encoding of it, else re-escaped."""
        if self.raw_path and _valid_encoded(self.raw_path, _PATH) and _unescapes_to(self.raw_path, _PATH, self.path):
            return self.raw_path
        if self.path == "*":
            return "*"
        return _escape(self.path, _PATH)

    def escaped_fragment(self) -> str:
        raw = self.raw_fragment
        if raw and _valid_encoded(raw, _FRAGMENT) and _unescapes_to(raw, _FRAGMENT, self.fragment):
            return raw
        return _escape(self.fragment, _FRAGMENT)

    def hostname(self) -> str:
        return _split_host_port(self.host)[0]

    def port(self) -> str:
        return _split_host_port(self.host)[1]

    def go_string(self) -> str:
        """Go's URL.String() as byte text."""
        out = [self.scheme + ":"] if self.scheme else []
        if self.opaque:
            out.append(self.opaque)
        else:
            out += self._authority()
            out.append(self._printed_path(bool(out)))
        if self.force_query or self.raw_query:
            out.append("?" + self.raw_query)
        if self.fragment:
            out.append("#" + self.escaped_fragment())
        return "".join(out)

    def _authority(self) -> list[str]:
        if not (self.scheme or self.host or self.user) or self._no_authority():
            return []
        out = ["//"] if self.host or self.path or self.user else []
        if self.user is not None:
            out.append(f"{self.user}@")
        if self.host:
            out.append(_escape(self.host, _HOST))
        return out

    def _no_authority(self) -> bool:
        return self.omit_host and not self.host and self.user is None

    def _printed_path(self, after_something: bool) -> str:
        path = self.escaped_path()
        prefix = ""
        if self._no_authority() and path.startswith("//"):
            prefix, path = "%2F", path[1:]  # so that printing and parsing again keeps it a path
        if path and path[0] != "/" and self.host:
            prefix += "/"
        if not after_something and not prefix and ":" in path.partition("/")[0]:
            prefix = "./"  # a first segment with a colon would read as a scheme
        return prefix + path

    def __str__(self) -> str:
        return _text_of(self.go_string())

    def __repr__(self) -> str:
        return f"URL({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.go_string() == other.go_string()

    def __hash__(self) -> int:
        return hash(self.go_string())

    def cel_equals(self, other: Any) -> bool:
        """Kubernetes' URL.Equal with another kind of value is `no such overload`, not false."""
        raise EvalError("no such overload")


def _unescapes_to(raw: str, mode: int, want: str) -> bool:
    try:
        return _unescape(raw, mode) == want
    except UrlError:
        return False


def _split_host_port(host_port: str) -> tuple[str, str]:
    """Go's splitHostPort: a trailing `:digits` is the port; brackets around the host are dropped."""
    host, port = host_port, ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _valid_optional_port(port: str) -> bool:
    """Empty, or `:` followed by ASCII digits only."""
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


# -- parsing (Go's parse, parseAuthority, parseHost) -------------------------------------------


@dataclass
class _Parts:
    """The fields as parse fills them in, before they become an immutable URL."""

    scheme: str = ""
    opaque: str = ""
    user: Userinfo | None = None
    host: str = ""
    path: str = ""
    raw_path: str = ""
    omit_host: bool = False
    force_query: bool = False
    raw_query: str = ""
    fragment: str = ""
    raw_fragment: str = ""

    def freeze(self) -> URL:
        return URL(
            self.scheme, self.opaque, self.user, self.host, self.path, self.raw_path, self.omit_host,
            self.force_query, self.raw_query, self.fragment, self.raw_fragment,
        )  # fmt: skip


def parse_request_uri(text: str) -> URL:
    """Go's url.ParseRequestURI: an absolute URI or an absolute path; `#` is not special."""
    raw = _bytes_of(text)
    try:
        return _parse(raw, via_request=True).freeze()
    except UrlError as err:
        raise UrlError(f"parse {_quote(raw)}: {err}") from None


def parse(text: str) -> URL:
    """Go's url.Parse: any URI reference, with a `#fragment` split off."""
    raw = _bytes_of(text)
    head, has_fragment, fragment = raw.partition("#")
    try:
        parts = _parse(head, via_request=False)
    except UrlError as err:
        raise UrlError(f"parse {_quote(head)}: {err}") from None
    if has_fragment and fragment:
        try:
            parts.fragment, parts.raw_fragment = _decoded_and_hint(fragment, _FRAGMENT)
        except UrlError as err:
            raise UrlError(f"parse {_quote(raw)}: {err}") from None
    return parts.freeze()


def _parse(raw: str, via_request: bool) -> _Parts:
    if any(c < " " or c == "\x7f" for c in raw):
        raise UrlError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise UrlError("empty url")
    parts = _Parts()
    if raw == "*":
        parts.path = "*"
        return parts
    parts.scheme, rest = _split_scheme(raw)
    parts.scheme = parts.scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        parts.force_query, rest = True, rest[:-1]
    else:
        rest, _, parts.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if parts.scheme:
            parts.opaque = rest  # a rootless path, as in mailto:a@b
            return parts
        if via_request:
            raise UrlError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise UrlError("first path segment in URL cannot contain colon")
    if (parts.scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        parts.user, parts.host = _parse_authority(parts.scheme, authority)
        rest = slash + path
    elif parts.scheme and rest.startswith("/"):
        parts.omit_host = True  # `scheme:/path`: an empty authority, kept that way when printed
    parts.path, parts.raw_path = _decoded_and_hint(rest, _PATH)
    return parts


def _split_scheme(raw: str) -> tuple[str, str]:
    """Go's getScheme: `[a-zA-Z][a-zA-Z0-9+.-]*:` starts the URL, else there is no scheme."""
    for i, c in enumerate(raw):
        if "a" <= c <= "z" or "A" <= c <= "Z":
            continue
        if "0" <= c <= "9" or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise UrlError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _decoded_and_hint(raw: str, mode: int) -> tuple[str, str]:
    """Go's setPath/setFragment: the decoded text, and the raw text only when re-escaping differs."""
    decoded = _unescape(raw, mode)
    return decoded, ("" if _escape(decoded, mode) == raw else raw)


_USERINFO_CHARS = _ALNUM | frozenset("-._:~!$&'()*+,;=%@")


def _parse_authority(scheme: str, authority: str) -> tuple[Userinfo | None, str]:
    at = authority.rfind("@")
    host = _parse_host(scheme, authority[at + 1 :])
    if at < 0:
        return None, host
    userinfo = authority[:at]
    if not all(c in _USERINFO_CHARS for c in userinfo):
        raise UrlError("net/url: invalid userinfo")
    name, colon, password = userinfo.partition(":")
    return Userinfo(_unescape(name, _USER_PASSWORD), _unescape(password, _USER_PASSWORD), bool(colon)), host


def _parse_host(scheme: str, host: str) -> str:
    """`host[:port]` or `[ipv6[%25zone]][:port]`, unescaped; Go 1.26 is strict about colons."""
    bracket = host.rfind("[")
    if bracket > 0:
        raise UrlError("invalid IP-literal")
    if bracket == 0:
        return _parse_ip_literal(host)
    first = host.find(":")
    if first != -1:
        last = host.rfind(":")
        # Only http and https reject `a:1:2` (go.dev/issue/75223, 78077); others take the last colon.
        colon = first if scheme in ("http", "https") else last
        if not _valid_optional_port(host[colon:]):
            raise UrlError(f"invalid port {_quote(host[colon:])} after host")
    return _unescape(host, _HOST)


def _parse_ip_literal(host: str) -> str:
    """RFC 3986/6874 `[address%25zone]:port`: the bracketed part must be an IPv6 address."""
    close = host.rfind("]")
    if close < 0:
        raise UrlError("missing ']' in host")
    colon_port = host[close + 1 :]
    if not _valid_optional_port(colon_port):
        raise UrlError(f"invalid port {_quote(colon_port)} after host")
    hostname = host[1:close]
    zone = hostname.find("%25")
    if zone >= 0:
        address = _unescape(hostname[:zone], _HOST) + _unescape(hostname[zone:], _ZONE)
    else:
        address = _unescape(hostname, _HOST)
    if _netip_is4(address):
        raise UrlError("invalid IP-literal")
    return "[" + address + "]" + colon_port


def _netip_is4(address: str) -> bool:
    """netip.ParseAddr(address).Is4(); a failure is Go's `invalid host: ParseAddr(...)` error."""
    text = address.encode("latin-1").decode("utf-8", "surrogateescape")
    try:
        ip, _ = parse_netip_addr(text)
    except NetipError as err:
        # network.py quotes undecodable bytes as \udcXX; Go's strconv.Quote writes \xXX.
        message = re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", str(err))
        raise UrlError(f"invalid host: {message}") from None
    return ip.is4


# -- queries (Go's ParseQuery) -----------------------------------------------------------------

_MAX_QUERY_PARAMS = 10000
"""Go 1.26's default `urlmaxqueryparams`: a longer query parses to nothing."""


def parse_query(raw_query: str) -> dict[str, list[str]]:
    """Go's URL.Query() on a raw query (byte text): `k=v&k=w` decoded; pairs with `;` or a bad escape are dropped."""
    values: dict[str, list[str]] = {}
    if raw_query.count("&") + 1 > _MAX_QUERY_PARAMS:
        return values
    for pair in raw_query.split("&"):
        if ";" in pair or not pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, _QUERY_COMPONENT), _unescape(value, _QUERY_COMPONENT)
        except UrlError:
            continue
        values.setdefault(_text_of(key), []).append(_text_of(value))
    return values


# -- functions ---------------------------------------------------------------------------------


def string_to_url(text: str) -> URL:
    """Kubernetes checks with ParseRequestURI, then keeps url.Parse's result, which splits off `#frag`."""
    try:
        parse_request_uri(text)
        return parse(text)
    except UrlError as err:
        raise EvalError(f"URL parse error during conversion from string: {err}") from None


def is_url_string(text: str) -> bool:
    """Only ParseRequestURI: `/?q#%zz` is a URL here (its `#` stays in the raw query), but url() rejects it."""
    try:
        parse_request_uri(text)
    except UrlError:
        return False
    return True


def url_get_scheme(value: URL) -> str:
    return _text_of(value.scheme)


def url_get_host(value: URL) -> str:
    """The host with its port; an IPv6 host keeps its brackets."""
    return _text_of(value.host)


def url_get_hostname(value: URL) -> str:
    return _text_of(value.hostname())


def url_get_port(value: URL) -> str:
    return _text_of(value.port())


def url_get_escaped_path(value: URL) -> str:
    return _text_of(value.escaped_path())


def url_get_query(value: URL) -> dict[str, list[str]]:
    return parse_query(value.raw_query)


# -- costs (k8s-cel-cost.md §2.4 and §3.3) -----------------------------------------------------


# -- registration and the table ----------------------------------------------------------------


def _register_types() -> None:
    """Runtime dispatch and type() must know the class."""
    register_class(URL_TYPE.name, URL)
    register_type_name(URL, URL_TYPE.name)


_register_types()


def _accessor(oid: str, function: str, result: CelType, impl: Any, doc: str) -> Overload:
    return Overload(oid, function, (URL_TYPE,), result, impl, member=True, cost=_unit_cost, doc=doc,
                    estimate=_unit_estimate)  # fmt: skip


LIBRARY = Library(
    "kubernetes.urls",
    overloads=(
        Overload("string_to_url", "url", (STRING,), URL_TYPE, string_to_url, cost=_string_traversal_cost,
                 doc="url('https://example.com/path')", estimate=size_estimate(0.1, result_size=True)),
        _accessor("url_get_scheme", "getScheme", STRING, url_get_scheme,
                  "url('https://example.com/').getScheme() == 'https'"),
        _accessor("url_get_host", "getHost", STRING, url_get_host, "url('https://[::1]:80/').getHost() == '[::1]:80'"),
        _accessor("url_get_hostname", "getHostname", STRING, url_get_hostname,
                  "url('https://[::1]:80/').getHostname() == '::1'"),
        _accessor("url_get_port", "getPort", STRING, url_get_port, "url('https://example.com:80/').getPort() == '80'"),
        _accessor("url_get_escaped_path", "getEscapedPath", STRING, url_get_escaped_path,
                  "url('https://example.com/a%20b').getEscapedPath() == '/a%20b'"),
        _accessor("url_get_query", "getQuery", map_of(STRING, list_of(STRING)), url_get_query,
                  "url('https://example.com/?k=a&k=b').getQuery() == {'k': ['a', 'b']}"),
        Overload("is_url_string", "isURL", (STRING,), BOOL, is_url_string, cost=_unit_cost,
                 doc="isURL('https://example.com/')", estimate=_unit_estimate),
    ),
    types=(URL_TYPE,),
)  # fmt: skip
