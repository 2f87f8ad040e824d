"""Table tests of Kubernetes' URL library (apiserver pkg/cel/library/urls.go) and its Go net/url parsing.

Parsing rows follow Go's net/url url_test.go (urltests, parseRequestURLTests, TestParseErrors,
parseTests, TestURLHostnameAndPort) as Go 1.26 behaves: strict colons in http(s) hosts,
`scheme:/path` printed without `//`, brackets only around IPv6 addresses. The last tests run the
URL cases of Kubernetes' cost_test.go and validation_test.go from ../shared/k8s-cases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import kcel
from kcel.checker.types import STRING, list_of, map_of
from kcel.errors import CompileError, EvalError
from kcel.eval.dispatch import predicate
from kcel.eval.runtime import type_of
from kcel.libs import SizedCall, SizeEstimate
from kcel.libs.k8s_url import LIBRARY, URL, URL_TYPE, UrlError, Userinfo, parse, parse_query, parse_request_uri
from kcel.values import TypeValue
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


def env(variables: dict[str, str] | None = None) -> kcel.Env:
    return kcel.Env(variables=variables, libraries=[*kcel.env.cel_libraries(), LIBRARY])


def evaluate(expr: str, **variables: Any) -> Any:
    return env({name: "dyn" for name in variables}).compile(expr).evaluate(variables)


# -- url.Parse and URL.String ------------------------------------------------------------------

# (input, expected fields (ASCII only), String() or "" for the input itself)
PARSE_ROWS: list[tuple[str, dict[str, Any], str]] = [
    ("http://www.google.com", {"scheme": "http", "host": "www.google.com"}, ""),
    ("http://www.google.com/", {"scheme": "http", "host": "www.google.com", "path": "/"}, ""),
    (
        "http://www.google.com/file%20one%26two",
        {"scheme": "http", "host": "www.google.com", "path": "/file one&two", "raw_path": "/file%20one%26two"},
        "",
    ),
    (
        "http://www.google.com/#file%20one%26two",
        {"host": "www.google.com", "path": "/", "fragment": "file one&two", "raw_fragment": "file%20one%26two"},
        "",
    ),
    ("ftp://webmaster@www.google.com/", {"scheme": "ftp", "user": Userinfo("webmaster"), "path": "/"}, ""),
    ("ftp://john%20doe@www.google.com/", {"user": Userinfo("john doe"), "host": "www.google.com"}, ""),
    ("http://www.google.com/?", {"path": "/", "force_query": True}, ""),
    ("http://www.google.com/?foo=bar?", {"path": "/", "raw_query": "foo=bar?", "force_query": False}, ""),
    ("http://www.google.com/?q=go+language", {"raw_query": "q=go+language"}, ""),
    ("http://www.google.com/?q=go%20language", {"raw_query": "q=go%20language"}, ""),
    ("http://www.google.com/a%20b?q=c+d", {"path": "/a b", "raw_path": "", "raw_query": "q=c+d"}, ""),
    ("http:www.google.com/?q=go+language", {"scheme": "http", "opaque": "www.google.com/", "host": ""}, ""),
    ("http:%2f%2fwww.google.com/?q=go+language", {"opaque": "%2f%2fwww.google.com/", "raw_query": "q=go+language"}, ""),
    ("mailto:/webmaster@golang.org", {"path": "/webmaster@golang.org", "omit_host": True}, ""),  # Go ≥ 1.19
    ("mailto:webmaster@golang.org", {"scheme": "mailto", "opaque": "webmaster@golang.org"}, ""),
    ("/foo?query=http://bad", {"scheme": "", "path": "/foo", "raw_query": "query=http://bad"}, ""),
    ("//foo", {"host": "foo", "path": ""}, ""),
    ("//user@foo/path?a=b", {"user": Userinfo("user"), "host": "foo", "path": "/path", "raw_query": "a=b"}, ""),
    ("///threeslashes", {"host": "", "path": "///threeslashes"}, ""),
    ("http://user:password@google.com", {"user": Userinfo("user", "password", True), "host": "google.com"}, ""),
    (
        "http://j@ne:password@google.com",
        {"user": Userinfo("j@ne", "password", True)},
        "http://j%40ne:password@google.com",
    ),
    (
        "http://jane:p@ssword@google.com",
        {"user": Userinfo("jane", "p@ssword", True)},
        "http://jane:p%40ssword@google.com",
    ),
    (
        "http://j@ne:password@google.com/p@th?q=@go",
        {"path": "/p@th", "raw_query": "q=@go"},
        "http://j%40ne:password@google.com/p@th?q=@go",
    ),
    ("http://www.google.com/?q=go+language#foo", {"raw_query": "q=go+language", "fragment": "foo"}, ""),
    ("http://www.google.com/?q=go+language#foo&bar", {"fragment": "foo&bar", "raw_fragment": ""}, ""),
    ("http://www.google.com/?q=go+language#foo%26bar", {"fragment": "foo&bar", "raw_fragment": "foo%26bar"}, ""),
    ("file:///home/adg/rabbits", {"scheme": "file", "host": "", "path": "/home/adg/rabbits"}, ""),
    ("file:///C:/FooBar/Baz.txt", {"path": "/C:/FooBar/Baz.txt"}, ""),
    ("MaIlTo:webmaster@golang.org", {"scheme": "mailto"}, "mailto:webmaster@golang.org"),
    ("a/b/c", {"path": "a/b/c"}, ""),
    ("http://%3Fam:pa%3Fsword@google.com", {"user": Userinfo("?am", "pa?sword", True)}, ""),
    ("http://192.168.0.1/", {"host": "192.168.0.1"}, ""),
    ("http://192.168.0.1:8080/", {"host": "192.168.0.1:8080"}, ""),
    ("http://[fe80::1]/", {"host": "[fe80::1]"}, ""),
    ("http://[fe80::1]:8080/", {"host": "[fe80::1]:8080"}, ""),
    ("http://[fe80::1%25en0]/", {"host": "[fe80::1%en0]"}, ""),
    ("http://[fe80::1%25en0]:8080/", {"host": "[fe80::1%en0]:8080"}, ""),
    ("http://[fe80::1%25%65%6e%301-._~]/", {"host": "[fe80::1%en01-._~]"}, "http://[fe80::1%25en01-._~]/"),
    (
        "http://[fe80::1%25%65%6e%301-._~]:8080/",
        {"host": "[fe80::1%en01-._~]:8080"},
        "http://[fe80::1%25en01-._~]:8080/",
    ),
    (
        "http://rest.rsc.io/foo%2fbar/baz%2Fquux?alt=media",
        {"path": "/foo/bar/baz/quux", "raw_path": "/foo%2fbar/baz%2Fquux", "raw_query": "alt=media"},
        "",
    ),
    ("mysql://a,b,c/bar", {"host": "a,b,c", "path": "/bar"}, ""),
    ("scheme://!$&'()*+,;=hello!:1/path", {"host": "!$&'()*+,;=hello!:1"}, ""),
    ("http://host/!$&'()*+,;=:@[hello]", {"path": "/!$&'()*+,;=:@[hello]", "raw_path": "/!$&'()*+,;=:@[hello]"}, ""),
    ("http://example.com/oid/[order_id]", {"path": "/oid/[order_id]", "raw_path": "/oid/[order_id]"}, ""),
    ("http://192.168.0.2:8080/foo", {"host": "192.168.0.2:8080"}, ""),
    ("http://192.168.0.2:/foo", {"host": "192.168.0.2:"}, ""),
    (
        "http://[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:8080/foo",
        {"host": "[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:8080"},
        "",
    ),
    ("http://[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:/foo", {"host": "[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:"}, ""),
    ("http://hello.世界.com/foo", {"path": "/foo"}, "http://hello.%E4%B8%96%E7%95%8C.com/foo"),
    ("http://hello.%e4%b8%96%e7%95%8c.com/foo", {}, "http://hello.%E4%B8%96%E7%95%8C.com/foo"),
    ("http://hello.%E4%B8%96%E7%95%8C.com/foo", {}, ""),
    ("http://example.com//foo", {"host": "example.com", "path": "//foo"}, ""),
    ('myscheme://authority<"hi">/foo', {"host": 'authority<"hi">'}, ""),
    (
        "tcp://[2020::2020:20:2020:2020%25Windows%20Loves%20Spaces]:2020",
        {"host": "[2020::2020:20:2020:2020%Windows Loves Spaces]:2020"},
        "",
    ),
    ("magnet:?xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a&dn", {"opaque": "", "path": ""}, ""),
    ("mailto:?subject=hi", {"raw_query": "subject=hi"}, ""),
    ("*", {"path": "*"}, ""),
    ("ftp://a:1:2/x", {"host": "a:1:2"}, ""),  # only http and https are strict about colons
    ("postgres://h1:5432,h2:5433/db", {"host": "h1:5432,h2:5433"}, ""),
    ("https:://kubernetes.io/", {"scheme": "https", "opaque": "://kubernetes.io/"}, ""),
    ("http:/x", {"host": "", "path": "/x", "omit_host": True}, ""),
    ("http:/%2F%2Fhost/p", {"path": "///host/p", "raw_path": "/%2F%2Fhost/p"}, ""),
    ("http://x/%7e%41", {"path": "/~A", "raw_path": "/%7e%41"}, ""),
    ("http://x/a%2Fb#c%2Fd", {"raw_path": "/a%2Fb", "fragment": "c/d", "raw_fragment": "c%2Fd"}, ""),
    ("http://x/ü", {}, "http://x/%C3%BC"),
    ("http://x/?ü=%C3%BC#ü", {}, "http://x/?ü=%C3%BC#%C3%BC"),  # the query is kept as written
    ("HTTP://X/", {"scheme": "http", "host": "X"}, "http://X/"),  # only the scheme is lower-cased
    ("http://x/a b", {"path": "/a b"}, "http://x/a%20b"),
    ("http://x/a?b c#d e", {"raw_query": "b c", "fragment": "d e"}, "http://x/a?b c#d%20e"),
    ("http://x/:b", {"path": "/:b"}, ""),
    ("http://[::ffff:1.2.3.4]/", {"host": "[::ffff:1.2.3.4]"}, ""),  # IPv4-mapped IPv6 is IPv6
]


@pytest.mark.parametrize(("text", "fields", "printed"), PARSE_ROWS)
def test_parse(text: str, fields: dict[str, Any], printed: str) -> None:
    parsed = parse(text)
    assert {name: getattr(parsed, name) for name in fields} == fields
    assert str(parsed) == (printed or text)
    assert parse(str(parsed)) == parsed  # what Go prints parses back to the same URL


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (URL(scheme="http", host="www.google.com", path="search"), "http://www.google.com/search"),
        (URL(path="this:that"), "./this:that"),  # a colon in the first segment would read as a scheme
        (URL(path="here/this:that"), "here/this:that"),
        (URL(scheme="http", host="www.google.com", path="this:that"), "http://www.google.com/this:that"),
        (URL(scheme="http", omit_host=True, path="//host/p"), "http:%2F/host/p"),
        (URL(scheme="http", host="h", path="/////", raw_path="/WRONG/"), "http://h/////"),  # hint ignored
        (URL(scheme="http", host="h", path="/a?b", raw_path="/a?b"), "http://h/a%3Fb"),  # invalid hint
        (URL(user=Userinfo("a:b", "c@d", True), host="h"), "//a%3Ab:c%40d@h"),
        (URL(), ""),
    ],
)
def test_string(value: URL, printed: str) -> None:
    assert str(value) == printed


# (input, ParseRequestURI accepts it)
REQUEST_URI_ROWS = [
    ("http://foo.com", True),
    ("http://foo.com/", True),
    ("http://foo.com/path", True),
    ("/", True),
    ("//not.a.user@not.a.host/just/a/path", True),
    ("//not.a.user@%66%6f%6f.com/just/a/path/also", True),
    ("*", True),
    ("http://192.168.0.1/", True),
    ("http://192.168.0.1:8080/", True),
    ("http://[fe80::1]/", True),
    ("http://[fe80::1]:8080/", True),
    ("http://[fe80::1%25en0]/", True),
    ("http://[fe80::1%25en0]:8080/", True),
    ("http://[fe80::1%25%65%6e%301-._~]/", True),
    ("http://[fe80::1%25%65%6e%301-._~]:8080/", True),
    ("/path#fragment", True),  # `#` is not special here
    ("https://user:pass@example.com:80/path?query=val#fragment", True),
    ("mailto:a@b", True),
    ("foo.html", False),
    ("../dir/", False),
    ("../relative-path", False),
    (" http://foo.com", False),
    ("http://192.168.0.%31/", False),
    ("http://192.168.0.%31:8080/", False),
    ("http://[fe80::%31]/", False),
    ("http://[fe80::%31]:8080/", False),
    ("http://[fe80::%31%25en0]/", False),
    ("http://[fe80::%31%25en0]:8080/", False),
    ("http://[fe80::1%en0]/", False),
    ("http://[fe80::1%en0]:8080/", False),
    ("", False),
    ("#fragment", False),
    ("?query", False),
]


@pytest.mark.parametrize(("text", "valid"), REQUEST_URI_ROWS)
def test_parse_request_uri(text: str, valid: bool) -> None:
    if valid:
        parse_request_uri(text)
    else:
        with pytest.raises(UrlError):
            parse_request_uri(text)


def test_parse_request_uri_keeps_scheme_relative_paths() -> None:
    parsed = parse_request_uri("//not.a.user@not.a.host/just/a/path")
    assert (parsed.host, parsed.path) == ("", "//not.a.user@not.a.host/just/a/path")


# (input, Go's url.Parse error, "" for none)
PARSE_ERROR_ROWS = [
    ("http://[::1]", ""),
    ("http://[::1]:80", ""),
    ("http://[::1]:namedport", 'parse "http://[::1]:namedport": invalid port ":namedport" after host'),
    ("http://x:namedport", 'parse "http://x:namedport": invalid port ":namedport" after host'),
    ("http://[::1]/", ""),
    ("http://[::1]a", 'parse "http://[::1]a": invalid port "a" after host'),
    ("http://[::1]%23", 'parse "http://[::1]%23": invalid port "%23" after host'),
    ("http://[::1%25en0]", ""),
    ("http://[::1]:", ""),
    ("http://x:", ""),
    ("http://[::1]:%38%30", 'parse "http://[::1]:%38%30": invalid port ":%38%30" after host'),
    ("http://[::1%25%41]", ""),
    ("http://[%10::1]", 'parse "http://[%10::1]": invalid URL escape "%10"'),
    ("http://[::1]/%48", ""),
    ("http://%41:8080/", 'parse "http://%41:8080/": invalid URL escape "%41"'),
    ("mysql://x@y(z:123)/foo", 'parse "mysql://x@y(z:123)/foo": invalid port ":123)" after host'),
    ("mysql://x@y(1.2.3.4:123)/foo", 'parse "mysql://x@y(1.2.3.4:123)/foo": invalid port ":123)" after host'),
    (" http://foo.com", 'parse " http://foo.com": first path segment in URL cannot contain colon'),
    ("ht tp://foo.com", 'parse "ht tp://foo.com": first path segment in URL cannot contain colon'),
    ("ahttp://foo.com", ""),
    ("1http://foo.com", 'parse "1http://foo.com": first path segment in URL cannot contain colon'),
    ("http://a b.com/", 'parse "http://a b.com/": invalid character " " in host name'),
    ("cache_object://foo", 'parse "cache_object://foo": first path segment in URL cannot contain colon'),
    ("cache_object:foo", 'parse "cache_object:foo": first path segment in URL cannot contain colon'),
    ("cache_object:foo/bar", 'parse "cache_object:foo/bar": first path segment in URL cannot contain colon'),
    ("cache_object/:foo/bar", ""),
    ("http://user^:passwo^rd@foo.com/", 'parse "http://user^:passwo^rd@foo.com/": net/url: invalid userinfo'),
    ("http://foo.com/?foo\nbar", 'parse "http://foo.com/?foo\\nbar": net/url: invalid control character in URL'),
    ("http\r://foo.com/", 'parse "http\\r://foo.com/": net/url: invalid control character in URL'),
    ("http://foo\x7f.com/", 'parse "http://foo\\x7f.com/": net/url: invalid control character in URL'),
    (":foo", 'parse ":foo": missing protocol scheme'),
    ("http://[::1", "parse \"http://[::1\": missing ']' in host"),
    ("http://x[::1]/", 'parse "http://x[::1]/": invalid IP-literal'),  # Go 1.26: brackets only at the start
    ("http://[1.2.3.4]/", 'parse "http://[1.2.3.4]/": invalid IP-literal'),  # ... and only around IPv6
    ("http://[]/", 'parse "http://[]/": invalid host: ParseAddr(""): unable to parse IP'),
    ("http://[::1%25]/", 'parse "http://[::1%25]/": invalid host: ParseAddr("::1%"): zone must be a non-empty string'),
    (
        "http://[google.com]/",
        'parse "http://[google.com]/": invalid host: ParseAddr("google.com"): unexpected character (at "google.com")',
    ),
    ("http://[::1%25%0A]/", 'parse "http://[::1%25%0A]/": invalid URL escape "%0A"'),
    ("http://[::1%25%20]/", ""),  # a space in a zone is allowed (Windows)
    ("http://::1/", 'parse "http://::1/": invalid port "::1" after host'),  # Go 1.26: strict colons
    ("http://localhost:80:80/", 'parse "http://localhost:80:80/": invalid port ":80:80" after host'),
    ("https://a:b:1/", 'parse "https://a:b:1/": invalid port ":b:1" after host'),
    ("ftp://a:b:1/", ""),
    ("ftp://a:1:b/", 'parse "ftp://a:1:b/": invalid port ":b" after host'),
    ("http://x/%zz", 'parse "http://x/%zz": invalid URL escape "%zz"'),
    ("http://x/%a", 'parse "http://x/%a": invalid URL escape "%a"'),
    ("http://x/%", 'parse "http://x/%": invalid URL escape "%"'),
    ("http://x/#%zz", 'parse "http://x/#%zz": invalid URL escape "%zz"'),  # the fragment error names it all
    ("http://x/?%zz", ""),  # the query is not decoded
    ("http://x%é/", 'parse "http://x%é/": invalid URL escape "%é"'),
    ("http://x%aé/", 'parse "http://x%aé/": invalid URL escape "%a\\xc3"'),  # Go quotes bytes, not runes
    ("http://é@x/", 'parse "http://é@x/": net/url: invalid userinfo'),
    ("http://a%zz@x/", 'parse "http://a%zz@x/": invalid URL escape "%zz"'),
    ("http://[fe80::1%25%e9]/", 'parse "http://[fe80::1%25%e9]/": invalid URL escape "%e9"'),  # zones: ASCII only
    ("http://[fe80::1%25é]/", ""),  # ... unless written as they are
    (
        "http://[%e9::1]/",  # hosts may escape non-ASCII bytes; this one is not UTF-8
        'parse "http://[%e9::1]/": invalid host: ParseAddr("\\xe9::1"): '
        'each colon-separated field must have at least one digit (at "\\xe9::1")',
    ),
]


@pytest.mark.parametrize(("text", "message"), PARSE_ERROR_ROWS)
def test_parse_errors(text: str, message: str) -> None:
    if not message:
        parse(text)
        return
    with pytest.raises(UrlError) as info:
        parse(text)
    if message.endswith("..."):
        assert str(info.value).startswith(message[:-3])
    else:
        assert str(info.value) == message


# -- Hostname, Port and Query ------------------------------------------------------------------

# (URL.Host, Hostname(), Port())
HOST_PORT_ROWS = [
    ("foo.com:80", "foo.com", "80"),
    ("foo.com", "foo.com", ""),
    ("foo.com:", "foo.com", ""),
    ("FOO.COM", "FOO.COM", ""),
    ("1.2.3.4", "1.2.3.4", ""),
    ("1.2.3.4:80", "1.2.3.4", "80"),
    ("[1:2:3:4]", "1:2:3:4", ""),
    ("[1:2:3:4]:80", "1:2:3:4", "80"),
    ("[::1]:80", "::1", "80"),
    ("[::1]", "::1", ""),
    ("[::1]:", "::1", ""),
    ("localhost", "localhost", ""),
    ("localhost:443", "localhost", "443"),
    ("[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:17000", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "17000"),
    ("[google.com]:80", "google.com", "80"),
    ("google.com]:80", "google.com]", "80"),
    ("google.com:80_invalid_port", "google.com:80_invalid_port", ""),
    ("[::1]extra]:80", "::1]extra", "80"),
    ("google.com]extra:extra", "google.com]extra:extra", ""),
]


@pytest.mark.parametrize(("host", "hostname", "port"), HOST_PORT_ROWS)
def test_hostname_and_port(host: str, hostname: str, port: str) -> None:
    value = URL(host=host)
    assert (value.hostname(), value.port()) == (hostname, port)


# (raw query, URL.Query())
QUERY_ROWS: list[tuple[str, dict[str, list[str]]]] = [
    ("a=1", {"a": ["1"]}),
    ("a=1&b=2", {"a": ["1"], "b": ["2"]}),
    ("a=1&a=2&a=banana", {"a": ["1", "2", "banana"]}),
    ("ascii=%3Ckey%3A+0x90%3E", {"ascii": ["<key: 0x90>"]}),
    ("a=1;b=2", {}),
    ("a;b=1", {}),
    ("a=%3B", {"a": [";"]}),
    ("a%3Bb=1", {"a;b": ["1"]}),
    ("a=1&a=2;a=banana", {"a": ["1"]}),
    ("a;b&c=1", {"c": ["1"]}),
    ("a=1&b=2;a=3&c=4", {"a": ["1"], "c": ["4"]}),
    ("a=1&b=2;c=3", {"a": ["1"]}),
    (";", {}),
    ("a=1;", {}),
    ("a=1&;", {"a": ["1"]}),
    (";a=1&b=2", {"b": ["2"]}),
    ("a=1&b=2;", {"a": ["1"]}),
    ("foo=bar&bar=1&bar=2&baz", {"foo": ["bar"], "bar": ["1", "2"], "baz": [""]}),
    ("%gh&%ij&k=v", {"k": ["v"]}),
    ("k=%zz&k=ok", {"k": ["ok"]}),
    ("=v&&k", {"": ["v"], "k": [""]}),
    ("a=b=c", {"a": ["b=c"]}),
    ("k=%e4%b8%96", {"k": ["世"]}),
    ("k=%ff", {"k": ["\ufffd"]}),  # not UTF-8: replaced when it becomes a CEL string
    ("&" * 9999, {}),  # 10000 parameters: the limit
    ("a=1" + "&" * 10000, {}),  # 10001: Go 1.26 parses none (urlmaxqueryparams)
    ("a=1" + "&" * 9999, {"a": ["1"]}),
]


@pytest.mark.parametrize(("raw", "values"), QUERY_ROWS, ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_parse_query(raw: str, values: dict[str, list[str]]) -> None:
    assert parse_query(raw) == values


# -- CEL expressions ---------------------------------------------------------------------------

EXPRESSION_ROWS: list[tuple[str, Any]] = [
    ("url('https://example.com/').getScheme()", "https"),
    ("url('/path').getScheme()", ""),
    ("url('HTTPS://example.com/').getScheme()", "https"),
    ("url('https://example.com:80/').getHost()", "example.com:80"),
    ("url('https://[::1]:80/').getHost()", "[::1]:80"),
    ("url('https://[::1]:80/').getHostname()", "::1"),
    ("url('https://[fe80::1%25en0]/').getHostname()", "fe80::1%en0"),
    ("url('https://user:pass@example.com/').getHost()", "example.com"),
    ("url('https://hello.%E4%B8%96%E7%95%8C.com/').getHost()", "hello.世界.com"),
    ("url('/path').getHost()", ""),
    ("url('https://example.com:80/').getPort()", "80"),
    ("url('https://example.com:/').getPort()", ""),
    ("url('https://example.com/').getPort()", ""),
    ("url('https://example.com/path').getEscapedPath()", "/path"),
    ("url('https://example.com').getEscapedPath()", ""),
    ("url('https://example.com/a b').getEscapedPath()", "/a%20b"),
    ("url('https://example.com/a%2Fb').getEscapedPath()", "/a%2Fb"),
    ("url('https://example.com/%7e').getEscapedPath()", "/%7e"),
    ("url('https://example.com/ü').getEscapedPath()", "/%C3%BC"),
    ("url('https://example.com/p#frag').getEscapedPath()", "/p"),  # url() splits the fragment off
    ("url('/p?q#frag').getQuery()", {"q": [""]}),  # ... before the query is split too
    ("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", {"k1": ["a"], "k2": ["b", "c"]}),
    (
        "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
        {"key with spaces": ["value with spaces"]},
    ),
    ("url('https://example.com/path').getQuery()", {}),
    ("url('https://example.com/?a=1;b=2&c=%20').getQuery()", {"c": [" "]}),
    ("url('https://example.com/?k=a&k=b').getQuery()['k'][1]", "b"),
    ("url('mailto:a@b').getScheme()", "mailto"),
    ("url('*').getEscapedPath()", "*"),
    ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
    ("isURL('/path')", True),
    ("isURL('../relative-path')", False),
    ("isURL('example.com')", False),
    ("isURL('')", False),
    ("isURL('https://example.com/#%zz')", False),  # ParseRequestURI decodes `#...` as part of the path
    ("isURL('https://example.com/?q#%zz')", True),  # ... or keeps it in the query, undecoded
    ("isURL('https://ex ample.com/')", False),
    ("url('https://example.com') == url('https://example.com')", True),
    ("url('https://example.com') == url('https://example.com/')", False),
    ("url('HTTPS://example.com/') == url('https://example.com/')", True),  # equal printed forms
    ("url('https://example.com/%7e') == url('https://example.com/~')", False),
    ("url('https://example.com/a b') == url('https://example.com/a%20b')", True),
    ("url('https://example.com/#a b') == url('https://example.com/#a%20b')", True),
    ("url('https://hello.世界.com/') == url('https://hello.%e4%b8%96%e7%95%8c.com/')", True),
    ("type(url('/')) == kubernetes.URL", True),
    ("[url('/a'), url('/b')].exists(u, u.getEscapedPath() == '/b')", True),
    ("url('/a') in [url('/b'), url('/a')]", True),
]


@pytest.mark.parametrize(("expr", "want"), EXPRESSION_ROWS)
def test_expressions(expr: str, want: Any) -> None:
    got = evaluate(expr)
    assert got == want and type(got) is type(want)


def test_url_values() -> None:
    got = evaluate("url('https://u@example.com:8443/a%2Fb?x=1#top')")
    assert isinstance(got, URL) and str(got) == "https://u@example.com:8443/a%2Fb?x=1#top"
    assert got == parse("https://u@example.com:8443/a%2Fb?x=1#top") and hash(got) == hash(parse(str(got)))


_PREFIX = "URL parse error during conversion from string: "

# (expression, exact evaluation error)
ERROR_ROWS = [
    ("url('../relative-path')", _PREFIX + 'parse "../relative-path": invalid URI for request'),
    ("url('example.com')", _PREFIX + 'parse "example.com": invalid URI for request'),
    ("url('')", _PREFIX + 'parse "": empty url'),
    ("url(':foo')", _PREFIX + 'parse ":foo": missing protocol scheme'),
    ("url('https://ex ample.com/')", _PREFIX + 'parse "https://ex ample.com/": invalid character " " in host name'),
    ("url('http://::1/')", _PREFIX + 'parse "http://::1/": invalid port "::1" after host'),
    ("url('https://example.com/%zz')", _PREFIX + 'parse "https://example.com/%zz": invalid URL escape "%zz"'),
    ("url('https://example.com/#%zz')", _PREFIX + 'parse "https://example.com/#%zz": invalid URL escape "%zz"'),
    # ParseRequestURI accepts these two; the second parse, with url.Parse, rejects them.
    ("url('https://example.com/?q#%zz')", _PREFIX + 'parse "https://example.com/?q#%zz": invalid URL escape "%zz"'),
    ("url('//ho st/p')", _PREFIX + 'parse "//ho st/p": invalid character " " in host name'),
    ("url('/p\\n')", _PREFIX + 'parse "/p\\n": net/url: invalid control character in URL'),
    ("url('/é%')", _PREFIX + 'parse "/é%": invalid URL escape "%"'),
    ("url(x)", _PREFIX + 'parse "x": invalid URI for request'),
    ("url('/a') == x", "no such overload"),  # Kubernetes' URL.Equal with another type
]


@pytest.mark.parametrize(("expr", "message"), ERROR_ROWS)
def test_evaluation_errors(expr: str, message: str) -> None:
    with pytest.raises(EvalError) as info:
        evaluate(expr, x="x")
    assert str(info.value) == message


def test_scheme_relative_url() -> None:
    """ParseRequestURI reads `//host/p` as a path; the kept url.Parse result has a host."""
    assert evaluate("url('//host/p').getHost()") == "host"
    assert evaluate("url('//host/p').getEscapedPath()") == "/p"


def test_other_values_equal_to_url_is_false() -> None:
    assert evaluate("x == url('/a')", x="/a") is False


@pytest.mark.parametrize(
    "expr",
    [
        "url('/a') < url('/b')",
        "url('/a').getHost(1)",
        "getHost(url('/a'))",
        "url(1)",
        "isURL(url('/a'))",
        "url('/a').getQuery()['k'] == 'v'",
    ],
)
def test_compile_errors(expr: str) -> None:
    with pytest.raises(CompileError):
        env().compile(expr)


def test_overloads() -> None:
    assert list(OVERLOADS) == [
        "string_to_url", "url_get_scheme", "url_get_host", "url_get_hostname", "url_get_port",
        "url_get_escaped_path", "url_get_query", "is_url_string",
    ]  # fmt: skip
    assert OVERLOADS["url_get_query"].result == map_of(STRING, list_of(STRING))
    assert all(o.member for o in LIBRARY.overloads if o.function.startswith("get"))
    assert LIBRARY.types == (URL_TYPE,)


def test_runtime_type_registration() -> None:
    assert type_of(parse("/a")) == TypeValue("kubernetes.URL")
    assert predicate(URL_TYPE)(parse("/a"))
    assert not predicate(URL_TYPE)("/a")


# -- costs (k8s-cel-cost.md §2.4 runtime, §3.3 estimate) ---------------------------------------

# (expression, runtime cost)
COST_ROWS = [
    ("url('https:://kubernetes.io/').getScheme()", 4),  # ceil(24 × 0.1) + 1
    ("url('/')", 1),
    ("url('https://example.com/a/very/long/path/indeed')", 5),
    ("isURL('https://example.com/a/very/long/path/indeed')", 1),  # no Kubernetes cost: cel-go's 1
    ("url('/a').getQuery()", 2),
    ("url('https:://kubernetes.io/') == url('http://x.b')", 5),  # URL equality costs 1
]


@pytest.mark.parametrize(("expr", "cost"), COST_ROWS)
def test_runtime_costs(expr: str, cost: int) -> None:
    assert env().compile(expr).evaluate_with_cost({})[1] == cost


@pytest.mark.parametrize(
    ("overload_id", "sizes", "expected"),
    [
        ("string_to_url", [SizeEstimate(24, 24)], (3, 3)),
        ("string_to_url", [SizeEstimate(0, 12)], (0, 2)),
        ("is_url_string", [SizeEstimate(0, 12)], (1, 1)),
        ("url_get_query", [SizeEstimate(1, 1)], (1, 1)),
    ],
)
def test_estimated_costs(overload_id: str, sizes: list[SizeEstimate], expected: tuple[int, int]) -> None:
    estimate = OVERLOADS[overload_id].estimate
    assert estimate is not None
    got = estimate(SizedCall(sizes))
    assert got is not None and (got.cost.min, got.cost.max) == expected


# -- Kubernetes' own tables (../shared/k8s-cases) ----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
if not CASES_DIR.is_dir():
    pytest.skip(f"k8s-cases not found at {CASES_DIR} (../shared is absent)", allow_module_level=True)


def _cases(file: str, marker: str) -> list[Any]:
    document = json.loads((CASES_DIR / file).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["id"]) for case in document["cases"] if marker in case["id"]]


@pytest.mark.parametrize("case", _cases("apiserver-library-cost_test.json", "/TestURLsCost/"))
def test_k8s_url_cost_cases(case: dict[str, Any]) -> None:
    """The runtime costs; the estimates need the static estimator (kcel/cost.py), checked separately above."""
    assert case["kind"] == "cost"
    _, cost = env().compile(case["expression"]).evaluate_with_cost({})
    assert cost == case["expect"]["runtime_cost"]


@pytest.mark.parametrize("case", _cases("apiextensions-cel-validation_test.json", "/URL_parsing/"))
def test_k8s_url_validation_rules(case: dict[str, Any]) -> None:
    """CRD rules that must hold (`errors: []`) for the test object, with `self` as untyped data."""
    assert case["expect"] == {"errors": []}
    program = env({"self": "dyn"}).compile(case["rule"])
    assert program.evaluate({"self": case["inputs"]["object"]}) is True
