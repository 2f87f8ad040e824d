"""Table tests of Kubernetes' format library (apiserver pkg/cel/library/format.go).

Message rows follow apimachinery's validation functions (pkg/util/validation, pkg/api/validate/
content), kube-openapi's strfmt checks and Go 1.26's url.ParseRequestURI (url_test.go's
parseRequestURLTests, with the errors its parser gives). The last tests run every case of
Kubernetes' format_test.go and the format cases of cost_test.go from ../shared/k8s-cases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import kcel
from kcel.cost import StringSizes
from kcel.errors import CompileError, EvalError
from kcel.eval.runtime import type_of
from kcel.libs import CallEstimate, CostEstimate, SizedCall, SizeEstimate
from kcel.libs.k8s_format import FORMAT_TYPE, FORMATS, LIBRARY, NamedFormat, parse_request_uri
from kcel.values import NONE, UINT64_MAX, Optional, TypeValue
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


def env(**variables: str) -> kcel.Env:
    return kcel.Env(variables=variables, libraries=[*kcel.env.cel_libraries(), LIBRARY])


def evaluate(expr: str, **values: Any) -> Any:
    return env(**{name: "dyn" for name in values}).compile(expr).evaluate(values)


def validate(name: str, text: str) -> list[str]:
    """format.<name>().validate(text), as a plain list ([] when valid)."""
    result = evaluate(f"format.{name}().validate(s)", s=text)
    assert isinstance(result, Optional)
    return list(result.value) if result.has_value() else []


LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")  # fmt: skip
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")  # fmt: skip
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")  # fmt: skip
KEY = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")  # fmt: skip
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
         "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
         "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")  # fmt: skip

EX = "'example.com/MyName'"

# (format, text, messages)
NAME_ROWS = [
    ("dns1123Label", "my-label-name", []),
    ("dns1123Label", "contains a space", [LABEL]),
    ("dns1123Label", "a.b", ["must not contain dots"]),
    ("dns1123Label", "a" * 63, []),
    ("dns1123Label", "a" * 64, ["must be no more than 63 characters"]),
    ("dns1123Label", "a" * 30 + "." + "a" * 33, ["must be no more than 63 characters", "must not contain dots"]),
    ("dns1123Label", "", [LABEL]),
    ("dns1123Label", "-a", [LABEL]),
    ("dns1123Label", "A", [LABEL]),
    ("dns1123Label", "é", [LABEL]),
    ("dns1123Label", "a\n", [LABEL]),  # Go's `$` does not allow a trailing newline
    ("dns1123Subdomain", "apiextensions.k8s.io", []),
    ("dns1123Subdomain", "example.com", []),
    ("dns1123Subdomain", "contains a space", [SUBDOMAIN]),
    ("dns1123Subdomain", "a.", [SUBDOMAIN]),
    ("dns1123Subdomain", "a" * 254, ["must be no more than 253 characters"]),
    ("dns1123Subdomain", "é" * 127, ["must be no more than 253 characters", SUBDOMAIN]),  # 254 bytes
    ("dns1035Label", "my-label-name", []),
    ("dns1035Label", "contains a space", [DNS1035]),
    ("dns1035Label", "1abc", [DNS1035]),
    ("dns1035Label", "a" * 64, ["must be no more than 63 characters"]),
    ("qualifiedName", "apiextensions.k8s.io/v1beta1", []),
    ("qualifiedName", "my.name", []),
    ("qualifiedName", "MyName", []),
    ("qualifiedName", "contains a space", ["name part " + KEY]),
    ("qualifiedName", "a/b/c", [f"a valid label key {KEY} with an optional DNS subdomain prefix and '/' (e.g. {EX})"]),
    ("qualifiedName", "/", ["prefix part must be non-empty", "name part must be non-empty", "name part " + KEY]),
    ("qualifiedName", "x/", ["name part must be non-empty", "name part " + KEY]),
    ("qualifiedName", "Example.com/a", ["prefix part " + SUBDOMAIN]),
    ("qualifiedName", "a" * 254 + "/b", ["prefix part must be no more than 253 bytes"]),  # content's message
    ("qualifiedName", "a" * 64, ["name part must be no more than 63 bytes"]),
    ("qualifiedName", "a/-b", ["name part " + KEY]),
    ("dns1123LabelPrefix", "my-label-prefix-", []),
    ("dns1123LabelPrefix", "contains a space-", [LABEL]),
    ("dns1123LabelPrefix", "-", [LABEL]),  # one character is not masked
    ("dns1123LabelPrefix", "a-", []),  # checked as "a"
    ("dns1123LabelPrefix", "é-", [LABEL]),  # Go cuts two bytes: half of é is left
    ("dns1123LabelPrefix", "a" * 63 + "-", []),  # checked as 63 a's
    ("dns1123LabelPrefix", "a" * 64 + "-", ["must be no more than 63 characters"]),
    ("dns1123LabelPrefix", "a" * 63, []),
    ("dns1123SubdomainPrefix", "mysubdomain.prefix.-", []),  # checked as "mysubdomain.prefixa"
    ("dns1123SubdomainPrefix", "contains a space-", [SUBDOMAIN]),
    ("dns1123SubdomainPrefix", "a.-", []),
    ("dns1035LabelPrefix", "my-label-prefix-", []),
    ("dns1035LabelPrefix", "contains a space-", [DNS1035]),
    ("dns1035LabelPrefix", "1-", []),  # checked as "a"
    ("dns1035LabelPrefix", "1a-", [DNS1035]),
    ("labelValue", "my-cool-label-Value", []),
    ("labelValue", "", []),
    ("labelValue", "my-cool-label-Value!!\n\n!!!", [VALUE]),
    ("labelValue", "a" * 64, ["must be no more than 63 bytes"]),
    ("labelValue", "é" * 32, ["must be no more than 63 bytes", VALUE]),
    ("labelValue", "_a", [VALUE]),
]


@pytest.mark.parametrize(("name", "text", "messages"), NAME_ROWS)
def test_name_formats(name: str, text: str, messages: list[str]) -> None:
    assert validate(name, text) == messages


# (text, Go's ParseRequestURI error; None: it parses)
URI_ROWS = [
    ("http://foo.com", None),
    ("http://foo.com/", None),
    ("http://foo.com/path", None),
    ("/", None),
    ("//not.a.user@not.a.host/just/a/path", None),  # a path: a request URI has no scheme-relative form
    ("//not.a.user@%66%6f%6f.com/just/a/path/also", None),
    ("/%2F/not.a.user@not.a.host/just/a/path", None),
    ("*", None),
    ("http://192.168.0.1/", None),
    ("http://192.168.0.1:8080/", None),
    ("http://[fe80::1]/", None),
    ("http://[fe80::1]:8080/", None),
    ("http://[fe80::1%25en0]/", None),
    ("http://[fe80::1%25en0]:8080/", None),
    ("http://[fe80::1%25%65%6e%301-._~]/", None),
    ("http://[fe80::1%25%65%6e%301-._~]:8080/", None),
    ("http://[::ffff:1.2.3.4]/", None),  # IPv4-mapped IPv6 is IPv6
    ("http://example.com", None),
    ("http://user:pass@host:80/?q=%zz", None),  # the query is not checked
    ("mailto:someone@example.com", None),  # scheme:opaque
    ("http://%c3%a9.com/", None),  # a host may escape non-ASCII bytes
    ("HTTP://EXAMPLE.COM/", None),
    ("foo.html", "invalid URI for request"),
    ("../dir/", "invalid URI for request"),
    (" http://foo.com", "invalid URI for request"),
    ("http://192.168.0.%31/", 'invalid URL escape "%31"'),
    ("http://192.168.0.%31:8080/", 'invalid URL escape "%31"'),
    ("http://[fe80::%31]/", 'invalid URL escape "%31"'),
    ("http://[fe80::%31]:8080/", 'invalid URL escape "%31"'),
    ("http://[fe80::%31%25en0]/", 'invalid URL escape "%31"'),
    ("http://[fe80::%31%25en0]:8080/", 'invalid URL escape "%31"'),
    ("http://[fe80::1%en0]/", 'invalid URL escape "%en"'),  # RFC 6874 wants %25 before the zone
    ("http://[fe80::1%en0]:8080/", 'invalid URL escape "%en"'),
    ("", "empty url"),
    (":foo", "missing protocol scheme"),
    ("http://a b.com/", 'invalid character " " in host name'),
    ("http://host:port/", 'invalid port ":port" after host'),
    ("http://localhost:1:2/", 'invalid port ":1:2" after host'),  # Go 1.26 (urlstrictcolons=1)
    ("http://::1/", 'invalid port "::1" after host'),
    ("http://[::1/", "missing ']' in host"),
    ("http://[1.2.3.4]/", "invalid IP-literal"),
    ("http://a[::1]/", "invalid IP-literal"),
    ("http://[::1]x/", 'invalid port "x" after host'),
    ("http://[zz]/", 'invalid host: ParseAddr("zz"): unable to parse IP'),
    ("http://[é]/", 'invalid host: ParseAddr("é"): unable to parse IP'),
    ("http://[fe80::1%25%0a]/", 'invalid URL escape "%0a"'),
    ("http://a^b@host/", "net/url: invalid userinfo"),
    ("http://us%zer@host/", 'invalid URL escape "%ze"'),
    ("http://%41.com/", 'invalid URL escape "%41"'),
    ("/a%2", 'invalid URL escape "%2"'),
    ("/a%é", 'invalid URL escape "%é"'),  # three bytes, here a whole character
    ("/a%aé", 'invalid URL escape "%a\\xc3"'),
    ("http://host/%zz", 'invalid URL escape "%zz"'),
    ("http://host/\x7f", "net/url: invalid control character in URL"),
    ("/\t", "net/url: invalid control character in URL"),
]


@pytest.mark.parametrize(("text", "error"), URI_ROWS)
def test_uri(text: str, error: str | None) -> None:
    from kcel.temporal import go_quote

    expected = None if error is None else f"parse {go_quote(text)}: {error}"
    assert parse_request_uri(text) == expected
    assert validate("uri", text) == ([] if expected is None else [expected])


# (format, text, valid)
STRFMT_ROWS = [
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid", "123E4567-E89B-12D3-A456-426614174000", True),
    ("uuid", "123e4567e89b12d3a456426614174000", True),
    ("uuid", "123e4567-e89b12d3-a456-426614174000", True),  # each hyphen is optional
    ("uuid", "123e4567-e89b-12d3-a456-42661417400", False),
    ("uuid", "g23e4567-e89b-12d3-a456-426614174000", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000\n", False),
    ("byte", "aGVsbG8=", True),
    ("byte", "aGVsbG8", False),
    ("byte", "aGVsbA==", True),
    ("byte", "aGVs", True),
    ("byte", "a+/=", True),
    ("byte", "", False),
    ("byte", "aGVsbG8-", False),  # the URL alphabet is not allowed
    ("byte", "aGVsbG8=\n", False),
    ("date", "2020-01-01", True),
    ("date", "2021-01-01", True),
    ("date", "2020-01-32", False),
    ("date", "2020-02-29", True),
    ("date", "2021-02-29", False),
    ("date", "1900-02-29", False),
    ("date", "2000-02-29", True),
    ("date", "0000-02-29", True),  # year 0 is a leap year in Go's calendar
    ("date", "2020-04-31", False),
    ("date", "2020-13-01", False),
    ("date", "2020-00-10", False),
    ("date", "2020-01-00", False),
    ("date", "2020-1-01", False),
    ("date", "+020-01-01", False),
    ("date", "２０２０-01-01", False),
    ("date", "2020-01-01T00:00:00Z", False),
    ("datetime", "2021-01-01T00:00:00Z", True),
    ("datetime", "2020-01-01T00:00:00Z", True),
    ("datetime", "2020-01-32T00:00:00Z", False),
    ("datetime", "2020-01-01t00:00:00z", True),
    ("datetime", "2020-01-01T23:59:59.999+01:00", True),
    ("datetime", "2020-01-01T00:00:00,5Z", True),  # strfmt's `.` is any character
    ("datetime", "2020-01-01T00:00:00.Z", False),
    ("datetime", "2020-01-01T24:00:00Z", False),
    ("datetime", "2020-01-01T00:60:00Z", False),
    ("datetime", "2020-01-01T00:00:60Z", False),
    ("datetime", "2020-01-01 00:00:00Z", False),
    ("datetime", "2020-01-01T00:00:00", False),
    ("datetime", "2020-01-01T00:00:00ZtIGNORED", True),  # strfmt reads only the part before a second 't'
    ("datetime", "2020-01-01T00:00:00\u01305Z", True),  # Go lower-cases İ to i, which `.` then matches
    ("datetime", "20t", False),
]


@pytest.mark.parametrize(("name", "text", "valid"), STRFMT_ROWS)
def test_strfmt_formats(name: str, text: str, valid: bool) -> None:
    message = {"uuid": "does not match the UUID format", "byte": "invalid base64", "date": "invalid date",
               "datetime": "invalid datetime"}[name]  # fmt: skip
    assert validate(name, text) == ([] if valid else [message])


# -- the functions -----------------------------------------------------------------------------


def test_named_and_constants() -> None:
    for key, named in FORMATS.items():
        assert evaluate(f"format.named('{key}')") == Optional(named)
        assert evaluate(f"format.{key}()") is named
        assert evaluate(f"format.named('{key}').value() == format.{key}()") is True
    assert evaluate("format.named('unknown')") is NONE
    assert evaluate("format.named('dns1123label')") is NONE  # names are case sensitive
    assert evaluate("format.named(x)", x="uuid") == Optional(FORMATS["uuid"])
    with pytest.raises(EvalError, match="no such overload"):
        evaluate("format.named(x)", x=1)


def test_equality_is_by_name() -> None:
    names = {named.name for named in FORMATS.values()}
    assert len(names) == len(FORMATS)
    assert evaluate("format.dns1123Label() == format.dns1035Label()") is False
    assert evaluate("format.uri() != format.uuid()") is True
    assert NamedFormat("uuid", lambda s: ["x"], 1) == FORMATS["uuid"]


def test_type() -> None:
    assert type_of(FORMATS["uri"]) == TypeValue("kubernetes.NamedFormat")
    assert evaluate("type(format.uri()) == kubernetes.NamedFormat") is True
    assert env().compile("format.uri()").output_type == FORMAT_TYPE
    assert str(env().compile("format.named('uri')").output_type) == "optional_type(kubernetes.NamedFormat)"
    assert str(env().compile("format.uri().validate('x')").output_type) == "optional_type(list(string))"
    with pytest.raises(CompileError):
        env().compile("format.uri().validate(1)")
    with pytest.raises(CompileError):
        env().compile("'uri'.validate('x')")


def test_overload_ids() -> None:
    assert set(OVERLOADS) == {"format-named", "format-validate"} | {f"format.{key}" for key in FORMATS}


# -- costs -------------------------------------------------------------------------------------

# (format, ceil(MaxRegexSize * 0.25))
REGEX_FACTOR_ROWS = [
    ("dns1123Label", 8), ("dns1123Subdomain", 15), ("dns1035Label", 8), ("qualifiedName", 15),
    ("dns1123LabelPrefix", 8), ("dns1123SubdomainPrefix", 15), ("dns1035LabelPrefix", 8), ("labelValue", 10),
    ("uri", 276), ("uuid", 18), ("byte", 21), ("date", 18), ("datetime", 18),
]  # fmt: skip


@pytest.mark.parametrize(("name", "factor"), REGEX_FACTOR_ROWS)
def test_validate_runtime_cost(name: str, factor: int) -> None:
    # format.<name>() costs 1; validate ceil((1 + size) * 0.1) * factor
    assert env().compile(f"format.{name}().validate('my-name')").evaluate_with_cost({})[1] == 1 + 1 * factor
    assert env().compile(f"format.{name}().validate('{'x' * 25}')").evaluate_with_cost({})[1] == 1 + 3 * factor


# (string size, estimate: ceil(ceil(size * 0.1) * 32))
VALIDATE_ESTIMATE_ROWS = [
    (SizeEstimate(7, 7), CostEstimate(32, 32)),
    (SizeEstimate(0, 12), CostEstimate(0, 64)),
    (SizeEstimate(0, UINT64_MAX), CostEstimate(0, UINT64_MAX)),
]


@pytest.mark.parametrize(("size", "expected"), VALIDATE_ESTIMATE_ROWS)
def test_validate_estimate(size: SizeEstimate, expected: CostEstimate) -> None:
    estimate = OVERLOADS["format-validate"].estimate
    assert estimate is not None
    assert estimate(SizedCall([SizeEstimate(1, 1), size])) == CallEstimate(expected)


# -- Kubernetes' own tables (../shared/k8s-cases) ----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
if not CASES_DIR.is_dir():
    pytest.skip(f"k8s-cases not found at {CASES_DIR} (../shared is absent)", allow_module_level=True)


def _cases(file: str, keep: Any = lambda case: True) -> list[Any]:
    document = json.loads((CASES_DIR / file).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["id"]) for case in document["cases"] if keep(case)]


def _decode(value: Any) -> Any:
    """The README's value encoding, for the kinds format_test.go uses."""
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict) and "optional_none" in value:
        return NONE
    if isinstance(value, dict) and "optional_of" in value:
        return Optional(_decode(value["optional_of"]))
    return value


@pytest.mark.parametrize("case", _cases("apiserver-library-format_test.json"))
def test_k8s_format_cases(case: dict[str, Any]) -> None:
    assert case["kind"] == "eval" and set(case["expect"]) == {"value"}
    got = env().compile(case["expression"]).evaluate({})
    want = _decode(case["expect"]["value"])
    assert got == want and type(got) is type(want)


def _is_format_cost_case(case: dict[str, Any]) -> bool:
    return "/TestNameFormatCost/" in case["id"]


@pytest.mark.parametrize("case", _cases("apiserver-library-cost_test.json", _is_format_cost_case))
def test_k8s_format_cost_cases(case: dict[str, Any]) -> None:
    program = env().compile(case["expression"])
    assert program.evaluate_with_cost({})[1] == case["expect"]["runtime_cost"]
    estimate = env().estimate_cost(program, StringSizes(12))
    assert case["expect"]["estimated_cost"] == {"min": estimate.min, "max": estimate.max}


@pytest.mark.parametrize(("version", "expected"), [("1.34", "name part must be no more than 63 characters"),
                                                   ("1.35", "name part must be no more than 63 bytes")])  # fmt: skip
def test_label_texts_follow_the_api_server(version: str, expected: str) -> None:
    env = kcel.Env(variables={"s": "string"}, k8s_version=version)
    found = env.compile("format.qualifiedName().validate(s)").evaluate({"s": "x" * 64})
    assert found.value == [expected]
