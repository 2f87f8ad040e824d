"""Structured authentication configuration: upstream's compile_test.go, validation_test.go and oidc_test.go cases
(k8s.io/apiserver, Kubernetes 1.37 unless a case says otherwise) with their exact texts, and the version
differences between 1.30 and 1.37."""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

import pytest

from kcel.k8s.surfaces import Checked
from kcel.k8s.surfaces.authentication import (
    ENVIRONMENTS,
    KINDS,
    ConfigurationError,
    UserInfo,
    authenticate,
    check,
    load,
    validate,
)
from kcel.k8s.surfaces.authentication_claims import compile_authn

V1BETA1 = "apiserver.config.k8s.io/v1beta1"
ISSUER = "https://auth.example.com"
SUB_PREFIXED = {"username": {"claim": "sub", "prefix": "prefix"}}
EMAIL_UNVERIFIED = (
    "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression"
    " or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"
)


def config(*authenticators: dict[str, Any], api_version: str = V1BETA1, **more: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AuthenticationConfiguration", "jwt": list(authenticators), **more}


def jwt(
    url: str = "https://issuer-url",
    audiences: tuple[str, ...] = ("audience",),
    mappings: dict[str, Any] | None = None,
    rules: list[dict[str, Any]] | None = None,
    user_rules: list[dict[str, Any]] | None = None,
    **issuer: Any,
) -> dict[str, Any]:
    authenticator: dict[str, Any] = {
        "issuer": {"url": url, "audiences": list(audiences), **issuer},
        "claimMappings": SUB_PREFIXED if mappings is None else mappings,
    }
    if rules is not None:
        authenticator["claimValidationRules"] = rules
    if user_rules is not None:
        authenticator["userValidationRules"] = user_rules
    return authenticator


def aggregate(document: dict[str, Any], version: str = "1.37", disallowed: tuple[str, ...] = ()) -> str:
    """errString(ValidateAuthenticationConfiguration(...).ToAggregate())."""
    errors, _ = validate(document, version, disallowed)
    return "" if not errors else errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


# -- compile_test.go -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "user", "boolean"),
    [("claims.foo", False, False), ("claims.foo == 'bar'", False, True), ("user.username == 'bar'", True, False)],
)
def test_compile(text: str, user: bool, boolean: bool) -> None:
    compiled = compile_authn(text, "1.37", user, boolean)
    assert compiled.program is not None and not compiled.error


@pytest.mark.parametrize(
    ("text", "user", "boolean", "want"),
    [
        ("claims.foo", False, True, "must evaluate to bool"),
        ("user.username == 'foo'", False, True, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'user' (in container '')"),
        ("claims + 1", False, False, "compilation failed: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(map(string, any), int)'"),
        ("user.username", True, True, "must evaluate to bool"),
        ("claims.foo", True, False, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'claims' (in container '')"),
        ("claims.foo == 'bar'", True, True, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'claims' (in container '')"),
        ("user.unknown == 'foo'", True, True, "compilation failed: ERROR: <input>:1:5: undefined field 'unknown'"),
    ],
)  # fmt: skip
def test_compile_errors(text: str, user: bool, boolean: bool, want: str) -> None:
    compiled = compile_authn(text, "1.37", user, boolean)
    assert compiled.program is None and want in compiled.error


def test_environments_and_kinds() -> None:
    assert KINDS == (("apiserver.config.k8s.io", "AuthenticationConfiguration"),)
    claims = ENVIRONMENTS["authn-claims"]("1.30").compile("claims.groups.all(g, g.startsWith('dev-'))")
    assert claims.evaluate({"claims": {"groups": ["dev-a", "dev-b"]}}) is True
    user = ENVIRONMENTS["authn-user"]("1.37").compile("'admins' in user.groups && user.extra['a'][0] == 'b'")
    assert str(user.output_type) == "bool"
    assert user.evaluate({"user": {"username": "", "uid": "", "groups": ["admins"], "extra": {"a": ["b"]}}}) is True


def test_stored_environment() -> None:
    """compile.go compiles in the StoredExpressions environment: every library the API server knows, so 1.34
    accepts the lists extension that a new expression could only use from 1.35 (compatibility version 1.33)."""
    assert compile_authn("[claims.a].distinct().size() == 1", "1.34", False, True).program is not None
    assert (
        "undeclared reference to 'distinct'" in compile_authn("[claims.a].distinct() == []", "1.33", False, True).error
    )


# -- validation_test.go: TestValidateAuthenticationConfiguration -----------------------------------------------

_REQUIRED_FOO = [{"claim": "foo", "requiredValue": "bar"}]


@pytest.mark.parametrize(
    ("document", "disallowed", "want"),
    [
        (config(), (), ""),
        (config(jwt(rules=_REQUIRED_FOO), jwt(rules=_REQUIRED_FOO)), (), 'jwt[1].issuer.url: Duplicate value: "https://issuer-url"'),
        (
            config(
                jwt(rules=_REQUIRED_FOO, discoveryURL="https://discovery-url/.well-known/openid-configuration"),
                jwt("https://different-issuer-url", rules=_REQUIRED_FOO, discoveryURL="https://discovery-url/.well-known/openid-configuration"),
            ),
            (),
            'jwt[1].issuer.discoveryURL: Duplicate value: "https://discovery-url/.well-known/openid-configuration"',
        ),
        (config(jwt("invalid-url")), (), 'jwt[0].issuer.url: Invalid value: "invalid-url": URL scheme must be https'),
        (
            config(jwt(rules=[{"claim": "foo", "requiredValue": "bar"}, {"claim": "foo", "requiredValue": "baz"}])),
            (),
            'jwt[0].claimValidationRules[1].claim: Duplicate value: "foo"',
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"prefix": "prefix"}})),
            (),
            "jwt[0].claimMappings.username: Required value: claim or expression is required",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, user_rules=[{"expression": "user.username == 'foo'"}] * 2)),
            (),
            "jwt[0].userValidationRules[1].expression: Duplicate value: \"user.username == 'foo'\"",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO)),
            ("a", "b", "https://issuer-url", "c"),
            'jwt[0].issuer.url: Invalid value: "https://issuer-url": URL must not overlap with disallowed issuers: [a b c https://issuer-url]',
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, egressSelectorType="panda")),
            ("a", "b", "c"),
            'jwt[0].issuer.egressSelectorType: Invalid value: "panda": egress selector must be either controlplane or cluster',
        ),
        (config(jwt(rules=_REQUIRED_FOO, egressSelectorType="cluster")), ("a", "b", "c"), ""),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "claims.email"}})),
            (),
            f'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": {EMAIL_UNVERIFIED}',
        ),
        (config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "claims.email_"}})), (), ""),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "['yay', string(claims.email), 'panda'].join(' ')"}})),
            (),
            f"""jwt[0].claimMappings.username.expression: Invalid value: "['yay', string(claims.email), 'panda'].join(' ')": {EMAIL_UNVERIFIED}""",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "claims.?email"}})),
            (),
            f'jwt[0].claimMappings.username.expression: Invalid value: "claims.?email": {EMAIL_UNVERIFIED}',
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": '{claims.?email: "panda"}'}})),
            (),
            f'jwt[0].claimMappings.username.expression: Invalid value: "{{claims.?email: \\"panda\\"}}": {EMAIL_UNVERIFIED}',
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": '{"fancy": claims.?email}'}})),
            (),
            f'jwt[0].claimMappings.username.expression: Invalid value: "{{\\"fancy\\": claims.?email}}": {EMAIL_UNVERIFIED}',
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": '["a"].map(i, i + claims.email)'}})),
            (),
            f'jwt[0].claimMappings.username.expression: Invalid value: "[\\"a\\"].map(i, i + claims.email)": {EMAIL_UNVERIFIED}',
        ),
        (
            config(jwt(
                rules=[{"expression": 'string(claims.email_verified) == "panda"'}],
                mappings={"username": {"expression": "['yay', string(claims.email), 'panda'].join(' ')"}},
            )),
            (),
            "",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={
                "username": {"expression": "['yay', string(claims.email), 'panda'].join(' ')"},
                "extra": [{"key": "panda.io/foo", "valueExpression": "claims.email_verified.upperAscii()"}],
            })),
            (),
            "",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={
                "username": {"expression": "['yay', string(claims.email), 'panda'].join(' ')"},
                "extra": [{"key": "panda.io/foo", "valueExpression": "claims.?email_verified"}],
            })),
            (),
            "",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "claims.?email_verified.orValue(true) ? claims.email : claims.sub"}})),
            (),
            "",
        ),
        (
            config(jwt(rules=_REQUIRED_FOO, mappings={"username": {"expression": "claims.?email_verified.orValue(false) ? claims.email : claims.sub"}})),
            (),
            "",
        ),
        (
            config(jwt(
                rules=[{"expression": "claims.?email_verified.orValue(true) == true"}],
                mappings={"username": {"expression": '{claims.?email: "panda"}'}},
            )),
            (),
            "",
        ),
        (
            config(jwt(
                rules=[{"expression": "claims.?email_verified.orValue(true)"}],
                mappings={"username": {"expression": '{claims.?email: "panda"}'}},
            )),
            (),
            '[jwt[0].claimValidationRules[0].expression: Invalid value: "claims.?email_verified.orValue(true)": must evaluate to bool, '
            f'jwt[0].claimMappings.username.expression: Invalid value: "{{claims.?email: \\"panda\\"}}": {EMAIL_UNVERIFIED}]',
        ),
        (config(jwt(rules=_REQUIRED_FOO)), (), ""),
    ],
)  # fmt: skip
def test_validate_authentication_configuration(
    document: dict[str, Any], disallowed: tuple[str, ...], want: str
) -> None:
    assert aggregate(document, disallowed=disallowed) == want


# -- TestValidateIssuerURL, TestValidateIssuerDiscoveryURL, TestValidateAudiences, TestValidateCertificateAuthority


@pytest.mark.parametrize(
    ("url", "disallowed", "want"),
    [
        ("", (), "jwt[0].issuer.url: Required value"),
        ("https://issuer-url:invalid-port", (), 'jwt[0].issuer.url: Invalid value: "https://issuer-url:invalid-port": parse "https://issuer-url:invalid-port": invalid port ":invalid-port" after host'),
        ("http://issuer-url", (), 'jwt[0].issuer.url: Invalid value: "http://issuer-url": URL scheme must be https'),
        ("https://user:pass@issuer-url", (), 'jwt[0].issuer.url: Invalid value: "https://user:pass@issuer-url": URL must not contain a username or password'),
        ("https://issuer-url?query", (), 'jwt[0].issuer.url: Invalid value: "https://issuer-url?query": URL must not contain a query'),
        ("https://issuer-url#fragment", (), 'jwt[0].issuer.url: Invalid value: "https://issuer-url#fragment": URL must not contain a fragment'),
        ("https://issuer-url", ("https://issuer-url",), 'jwt[0].issuer.url: Invalid value: "https://issuer-url": URL must not overlap with disallowed issuers: [https://issuer-url]'),
        ("https://issuer-url", (), ""),
        # net/url.Parse's other complaints
        ("https://issuer url", (), 'jwt[0].issuer.url: Invalid value: "https://issuer url": parse "https://issuer url": invalid character " " in host name'),
        ("https://issuer-url/%zz", (), 'jwt[0].issuer.url: Invalid value: "https://issuer-url/%zz": parse "https://issuer-url/%zz": invalid URL escape "%zz"'),
        ("://issuer-url", (), 'jwt[0].issuer.url: Invalid value: "://issuer-url": parse "://issuer-url": missing protocol scheme'),
        ("https://issuer-url/\x7f", (), 'jwt[0].issuer.url: Invalid value: "https://issuer-url/\\x7f": parse "https://issuer-url/\\x7f": net/url: invalid control character in URL'),
        ("HTTPS://issuer-url/path", (), ""),
        ("https://issuer-url#", (), ""),
    ],
)  # fmt: skip
def test_validate_issuer_url(url: str, disallowed: tuple[str, ...], want: str) -> None:
    assert aggregate(config(jwt(url)), disallowed=disallowed) == want


@pytest.mark.parametrize(
    ("discovery", "url", "want"),
    [
        ("", "https://issuer-url", ""),
        ("https://oidc.oidc-namespace.svc:invalid-port", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://oidc.oidc-namespace.svc:invalid-port": parse "https://oidc.oidc-namespace.svc:invalid-port": invalid port ":invalid-port" after host'),
        ("http://oidc.oidc-namespace.svc", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "http://oidc.oidc-namespace.svc": URL scheme must be https'),
        ("https://user:pass@oidc.oidc-namespace.svc", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://user:pass@oidc.oidc-namespace.svc": URL must not contain a username or password'),
        ("https://oidc.oidc-namespace.svc?query", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://oidc.oidc-namespace.svc?query": URL must not contain a query'),
        ("https://oidc.oidc-namespace.svc#fragment", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://oidc.oidc-namespace.svc#fragment": URL must not contain a fragment'),
        ("https://oidc.oidc-namespace.svc", "https://issuer-url", ""),
        ("https://oidc.oidc-namespace.svc/path", "https://issuer-url", ""),
        ("https://issuer-url", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer-url": discoveryURL must be different from URL'),
        ("https://issuer-url/", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer-url/": discoveryURL must be different from URL'),
        ("https://issuer-url///", "https://issuer-url", 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer-url///": discoveryURL must be different from URL'),
        ("https://issuer-url", "https://issuer-url/", 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer-url": discoveryURL must be different from URL'),
    ],
)  # fmt: skip
def test_validate_issuer_discovery_url(discovery: str, url: str, want: str) -> None:
    assert aggregate(config(jwt(url, discoveryURL=discovery))) == want


@pytest.mark.parametrize(
    ("audiences", "policy", "want"),
    [
        ((), "", "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required"),
        (("",), "", "jwt[0].issuer.audiences[0]: Required value"),
        (("audience",), "MatchExact", 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchExact": audienceMatchPolicy must be empty or MatchAny for single audience'),
        (("audience",), "", ""),
        (("audience",), "MatchAny", ""),
        (("audience", "audience"), "MatchAny", 'jwt[0].issuer.audiences[1]: Duplicate value: "audience"'),
        (("audience1", "audience2"), "", 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences'),
        (("audience1", "audience2"), "MatchAny", ""),
    ],
)  # fmt: skip
def test_validate_audiences(audiences: tuple[str, ...], policy: str, want: str) -> None:
    assert aggregate(config(jwt(audiences=audiences, audienceMatchPolicy=policy))) == want


def test_validate_certificate_authority() -> None:
    trustme = pytest.importorskip("trustme")
    pem = trustme.CA().cert_pem.bytes().decode()
    assert aggregate(config(jwt(certificateAuthority=pem))) == ""
    assert aggregate(config(jwt(certificateAuthority=""))) == ""
    assert aggregate(config(jwt(certificateAuthority="invalid"))) == (
        'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA '
        "certificates"
    )


# -- TestValidateClaimValidationRules, TestValidateClaimMappings, TestValidateUserValidationRules -------------

_FOO_BAR_ERROR = """Invalid value: "foo.bar": compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')
 | foo.bar
 | ^"""


@pytest.mark.parametrize(
    ("rules", "want"),
    [
        ([{}], "jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
        ([{"claim": "claim", "expression": "expression"}], 'jwt[0].claimValidationRules[0]: Invalid value: "claim": claim and expression can\'t both be set'),
        ([{"claim": "claim", "message": "message"}], 'jwt[0].claimValidationRules[0].message: Invalid value: "message": may not be specified when claim is set'),
        ([{"expression": "claims.foo == 'bar'", "requiredValue": "value"}], 'jwt[0].claimValidationRules[0].requiredValue: Invalid value: "value": may not be specified when expression is set'),
        ([{"claim": "claim"}, {"claim": "claim"}], 'jwt[0].claimValidationRules[1].claim: Duplicate value: "claim"'),
        ([{"expression": "claims.foo == 'bar'"}] * 2, "jwt[0].claimValidationRules[1].expression: Duplicate value: \"claims.foo == 'bar'\""),
        ([{"expression": "foo.bar"}], f"jwt[0].claimValidationRules[0].expression: {_FOO_BAR_ERROR}"),
        ([{"expression": "claims.foo"}], 'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.foo": must evaluate to bool'),
        ([{"expression": "claims.foo == 'bar'"}], ""),
    ],
)  # fmt: skip
def test_validate_claim_validation_rules(rules: list[dict[str, Any]], want: str) -> None:
    assert aggregate(config(jwt(rules=rules))) == want


@pytest.mark.parametrize(
    ("rules", "uses_email_verified"),
    [
        ([{"claim": "claim1", "requiredValue": "value1"}, {"claim": "claim2", "requiredValue": "value2"}, {"expression": "has(claims.email_verified)"}], True),
        ([{"claim": "claim1", "requiredValue": "value1"}, {"expression": "has(claims.email_verified_)"}], False),
        ([{"claim": "claim1", "requiredValue": "value1"}, {"claim": "claim2", "requiredValue": "claims.email_verified"}], False),
    ],
)  # fmt: skip
def test_claim_validation_rules_verify_email(rules: list[dict[str, Any]], uses_email_verified: bool) -> None:
    """state.usesEmailVerifiedClaim, seen through its effect: claims.email is then allowed as the username."""
    document = config(jwt(rules=rules, mappings={"username": {"expression": "claims.email"}}))
    assert (aggregate(document) == "") is uses_email_verified


_USERNAME_CLAIM = {"claim": "claim", "prefix": "prefix"}
_EXPRESSIONS = {"username": {"expression": "claims.username"}, "groups": {"expression": "claims.groups"}}


@pytest.mark.parametrize(
    ("mappings", "want"),
    [
        ({"username": {"claim": "claim", "expression": "claims.username"}}, 'jwt[0].claimMappings.username: Invalid value: "": claim and expression can\'t both be set'),
        ({"username": {}}, "jwt[0].claimMappings.username: Required value: claim or expression is required"),
        ({"username": {"expression": "claims.username", "prefix": "prefix"}}, 'jwt[0].claimMappings.username.prefix: Invalid value: "prefix": may not be specified when expression is set'),
        ({"username": {"claim": "claim"}}, "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"),
        ({"username": {"expression": "foo.bar"}}, f"jwt[0].claimMappings.username.expression: {_FOO_BAR_ERROR}"),
        ({"username": _USERNAME_CLAIM, "groups": {"claim": "claim", "expression": "claims.groups"}}, 'jwt[0].claimMappings.groups: Invalid value: "": claim and expression can\'t both be set'),
        ({"username": _USERNAME_CLAIM, "groups": {"expression": "claims.groups", "prefix": "prefix"}}, 'jwt[0].claimMappings.groups.prefix: Invalid value: "prefix": may not be specified when expression is set'),
        ({"username": _USERNAME_CLAIM, "groups": {"claim": "claim"}}, "jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"),
        ({"username": _USERNAME_CLAIM, "groups": {"expression": "foo.bar"}}, f"jwt[0].claimMappings.groups.expression: {_FOO_BAR_ERROR}"),
        ({"username": _USERNAME_CLAIM, "uid": {"claim": "claim", "expression": "claims.uid"}}, 'jwt[0].claimMappings.uid: Invalid value: "": claim and expression can\'t both be set'),
        ({"username": _USERNAME_CLAIM, "uid": {"expression": "foo.bar"}}, f"jwt[0].claimMappings.uid.expression: {_FOO_BAR_ERROR}"),
        ({"username": _USERNAME_CLAIM, "extra": [{"key": "", "valueExpression": "claims.extra"}]}, "jwt[0].claimMappings.extra[0].key: Required value"),
        ({"username": _USERNAME_CLAIM, "extra": [{"key": "example.org/foo", "valueExpression": ""}]}, "jwt[0].claimMappings.extra[0].valueExpression: Required value"),
        ({"username": _USERNAME_CLAIM, "extra": [{"key": "example.org/foo", "valueExpression": "foo.bar"}]}, f"jwt[0].claimMappings.extra[0].valueExpression: {_FOO_BAR_ERROR}"),
        ({**_EXPRESSIONS, "extra": [{"key": "example.org/foo", "valueExpression": "claims.extra"}, {"key": "example.org/foo", "valueExpression": "claims.extras"}]}, 'jwt[0].claimMappings.extra[1].key: Duplicate value: "example.org/foo"'),
        ({**_EXPRESSIONS, "extra": [{"key": "foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")'),
        ({**_EXPRESSIONS, "extra": [{"key": "example.org/Foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.org/Foo": must be lowercase'),
        ({**_EXPRESSIONS, "extra": [{"key": "k8s.io/foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "k8s.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'),
        ({**_EXPRESSIONS, "extra": [{"key": "example.k8s.io/foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.k8s.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'),
        ({**_EXPRESSIONS, "extra": [{"key": "kubernetes.io/foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "kubernetes.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'),
        ({**_EXPRESSIONS, "extra": [{"key": "example.kubernetes.io/foo", "valueExpression": "claims.extra"}]}, 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.kubernetes.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'),
        ({**_EXPRESSIONS, "extra": [{"key": k, "valueExpression": "claims.extra"} for k in ("ak8s.io/foo", "example.ak8s.io/foo", "bkubernetes.io/foo", "example.bkubernetes.io/foo")]}, ""),
        ({"username": {"expression": "claims.email"}, "groups": {"expression": "claims.groups"}, "uid": {"expression": "claims.uid"}, "extra": [{"key": "example.org/foo", "valueExpression": "claims.extra"}]}, f'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": {EMAIL_UNVERIFIED}'),
        ({"username": {"expression": "has(claims.email) ? claims.email : claims.sub"}}, f'jwt[0].claimMappings.username.expression: Invalid value: "has(claims.email) ? claims.email : claims.sub": {EMAIL_UNVERIFIED}'),
        ({"username": {"expression": "claims.email.trim()"}}, f'jwt[0].claimMappings.username.expression: Invalid value: "claims.email.trim()": {EMAIL_UNVERIFIED}'),
        ({"username": {"expression": "claims.email"}, "extra": [{"key": "example.org/foo", "valueExpression": "claims.email_verified"}]}, ""),
        ({"username": {"expression": "claims.email"}, "extra": [{"key": "example.org/foo", "valueExpression": 'has(claims.email_verified) ? string(claims.email_verified) : "false"'}]}, ""),
        ({"username": {"expression": "claims.email"}, "extra": [{"key": "example.org/foo", "valueExpression": 'has(claims.email_verified_) ? string(claims.email_verified_) : "false"'}]}, f'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": {EMAIL_UNVERIFIED}'),
        ({"username": {"expression": "claims.email_"}, "groups": {"expression": "claims.groups"}}, ""),
        ({"username": {"expression": "claims.other.claims.email"}, "groups": {"expression": "claims.groups"}}, ""),
        ({**_EXPRESSIONS, "uid": {"expression": "claims.uid"}, "extra": [{"key": "example.org/foo", "valueExpression": "claims.extra"}]}, ""),
    ],
)  # fmt: skip
def test_validate_claim_mappings(mappings: dict[str, Any], want: str) -> None:
    assert aggregate(config(jwt(mappings=mappings))) == want


@pytest.mark.parametrize(
    ("rules", "want"),
    [
        ([{}], "jwt[0].userValidationRules[0].expression: Required value"),
        ([{"expression": "user.username == 'foo'"}] * 2, "jwt[0].userValidationRules[1].expression: Duplicate value: \"user.username == 'foo'\""),
        ([{"expression": "foo.bar"}], f"jwt[0].userValidationRules[0].expression: {_FOO_BAR_ERROR}"),
        ([{"expression": "user.username"}], 'jwt[0].userValidationRules[0].expression: Invalid value: "user.username": must evaluate to bool'),
        ([{"expression": "user.username == 'foo'"}, {"expression": "!user.username.startsWith('system:')", "message": "username cannot used reserved system: prefix"}], ""),
    ],
)  # fmt: skip
def test_validate_user_validation_rules(rules: list[dict[str, Any]], want: str) -> None:
    assert aggregate(config(jwt(user_rules=rules))) == want


# -- texts and fields by Kubernetes version ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authenticator", "before_1_34", "since_1_34"),
    [
        (jwt(""), "jwt[0].issuer.url: Required value: URL is required", "jwt[0].issuer.url: Required value"),
        (jwt(audiences=("",)), "jwt[0].issuer.audiences[0]: Required value: audience can't be empty", "jwt[0].issuer.audiences[0]: Required value"),
        (jwt(rules=[{"claim": "c", "message": "m"}]), 'jwt[0].claimValidationRules[0].message: Invalid value: "m": message can\'t be set when claim is set', 'jwt[0].claimValidationRules[0].message: Invalid value: "m": may not be specified when claim is set'),
        (jwt(rules=[{"expression": "true", "requiredValue": "v"}]), 'jwt[0].claimValidationRules[0].requiredValue: Invalid value: "v": requiredValue can\'t be set when expression is set', 'jwt[0].claimValidationRules[0].requiredValue: Invalid value: "v": may not be specified when expression is set'),
        (jwt(mappings={"username": {"expression": "'u'", "prefix": ""}}), 'jwt[0].claimMappings.username.prefix: Invalid value: "": prefix can\'t be set when expression is set', 'jwt[0].claimMappings.username.prefix: Invalid value: "": may not be specified when expression is set'),
        (jwt(mappings={**SUB_PREFIXED, "extra": [{"key": "example.org/A", "valueExpression": "'a'"}]}), 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.org/A": key must be lowercase', 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.org/A": must be lowercase'),
        (jwt(mappings={**SUB_PREFIXED, "extra": [{"key": "example.org/a"}]}), "jwt[0].claimMappings.extra[0].valueExpression: Required value: valueExpression is required", "jwt[0].claimMappings.extra[0].valueExpression: Required value"),
        (jwt(user_rules=[{"message": "m"}]), "jwt[0].userValidationRules[0].expression: Required value: expression is required", "jwt[0].userValidationRules[0].expression: Required value"),
    ],
)  # fmt: skip
def test_texts_shortened_in_1_34(authenticator: dict[str, Any], before_1_34: str, since_1_34: str) -> None:
    assert aggregate(config(authenticator), "1.33") == before_1_34
    assert aggregate(config(authenticator), "1.34") == since_1_34


def test_reserved_extra_keys_from_1_32() -> None:
    document = config(jwt(mappings={**SUB_PREFIXED, "extra": [{"key": "k8s.io/a", "valueExpression": "'a'"}]}))
    assert aggregate(document, "1.31") == ""
    assert aggregate(document, "1.32").endswith(
        "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"
    )


def test_served_versions_and_fields() -> None:
    v1 = config(jwt(), api_version="apiserver.config.k8s.io/v1")
    assert aggregate(v1, "1.34") == ""
    assert aggregate(v1, "1.33").startswith(
        'no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io/v1"'
    )
    egress = config(jwt(egressSelectorType="cluster"))
    assert aggregate(egress, "1.33") == 'strict decoding error: unknown field "jwt[0].issuer.egressSelectorType"'
    anonymous = config(anonymous={"enabled": True})
    assert aggregate(anonymous, "1.30") == 'strict decoding error: unknown field "anonymous"'
    assert aggregate(anonymous, "1.32") == ""


def test_anonymous() -> None:
    document = config(anonymous={"enabled": False, "conditions": [{"path": "/livez"}]})
    assert validate(document, "1.31")[0] == [
        "anonymous: Forbidden: anonymous is not supported when AnonymousAuthConfigurableEnpoints feature gate is disabled",
        'anonymous.conditions: Invalid value: []apiserver.AnonymousAuthCondition{apiserver.AnonymousAuthCondition{Path:"/livez"}}: '
        "enabled should be set to true when conditions are defined",
    ]  # fmt: skip
    assert validate(document, "1.34")[0] == [
        'anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be set to true when conditions are defined'
    ]


def test_at_most_64_authenticators() -> None:
    document = config(*[jwt(f"https://issuer-{i}") for i in range(65)])
    assert aggregate(document) == "jwt: Too many: 65: must have at most 64 items"
    assert aggregate(config(*[jwt(f"https://issuer-{i}") for i in range(64)])) == ""


@pytest.mark.parametrize(
    ("document", "want"),
    [
        ({**config(jwt()), "jwt": "x"}, "json: cannot unmarshal string into Go struct field AuthenticationConfiguration.jwt of type []v1beta1.JWTAuthenticator"),
        ({**config(jwt()), "jwt": [1]}, "json: cannot unmarshal number into Go struct field AuthenticationConfiguration.jwt of type v1beta1.JWTAuthenticator"),
        (config({"issuer": {"url": "https://a", "audiences": "x"}}), "json: cannot unmarshal string into Go struct field Issuer.jwt.issuer.audiences of type []string"),
        (config(jwt(audiences=(1,))), "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.audiences of type string"),  # type: ignore[arg-type]
        (config(jwt(mappings={"username": {"claim": "sub", "prefix": True}})), "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string"),
        (config(anonymous={"enabled": "yes"}), "json: cannot unmarshal string into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool"),
        ({**config(jwt(mappings={"username": {"claim": "sub", "prefix": "", "x": 1}}, zz=1)), "metadata": {}}, 'strict decoding error: unknown field "jwt[0].claimMappings.username.x", unknown field "jwt[0].issuer.zz", unknown field "metadata"'),
        ({"kind": "AuthenticationConfiguration"}, 'no kind "AuthenticationConfiguration" is registered for version "None": Kubernetes 1.37 reads AuthenticationConfiguration of apiserver.config.k8s.io/v1alpha1, apiserver.config.k8s.io/v1beta1, apiserver.config.k8s.io/v1'),
    ],
)  # fmt: skip
def test_strict_decoding(document: dict[str, Any], want: str) -> None:
    assert aggregate(document) == want


def test_null_fields_are_unset() -> None:
    """A YAML `prefix:` is null: the prefix is unset (nil), which a claim mapping requires to be set."""
    document = config(
        {**jwt(mappings={"username": {"claim": "sub", "prefix": None}}, discoveryURL=None), "userValidationRules": None}
    )
    assert aggregate(document).startswith("jwt[0].claimMappings.username.prefix: Required value")


def test_check() -> None:
    document = config(jwt(
        rules=[{"expression": "claims.hd == 'example.com'"}, {"claim": "sub", "requiredValue": "x"}],
        mappings={"username": {"expression": "claims.username"}, "extra": [{"key": "example.org/a", "valueExpression": "1"}]},
        user_rules=[{"expression": "user.uid != ''"}],
    ))  # fmt: skip
    assert check(document, "auth.yaml: document 0", "1.37") == Checked("AuthenticationConfiguration", "", 4, ())
    bad = config(jwt(rules=[{"expression": "claims.hd"}]))
    result = check(bad, "auth.yaml: document 0", "1.30")
    assert not result.valid and result.errors == (
        'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.hd": must evaluate to bool',
    )


def test_load_refuses_an_invalid_configuration() -> None:
    with pytest.raises(ConfigurationError) as caught:
        load(config(jwt("http://a"), jwt("http://a")))
    assert caught.value.errors == (
        'jwt[0].issuer.url: Invalid value: "http://a": URL scheme must be https',
        'jwt[1].issuer.url: Invalid value: "http://a": URL scheme must be https',
        'jwt[1].issuer.url: Duplicate value: "http://a"',
    )
    assert str(caught.value).startswith('[jwt[0].issuer.url: Invalid value: "http://a"')


# -- oidc_test.go: TestToken, where it concerns what kcel can run offline ---------------------------------------


def authenticator(
    mappings: dict[str, Any],
    rules: list[dict[str, Any]] | None = None,
    user_rules: list[dict[str, Any]] | None = None,
    audiences: tuple[str, ...] = ("my-client",),
    url: str = ISSUER,
) -> dict[str, Any]:
    policy = {"audienceMatchPolicy": "MatchAny"} if len(audiences) > 1 else {}
    return jwt(url, audiences, mappings, rules, user_rules, **policy)


def token(claims: dict[str, Any]) -> str:
    """A compact JWT with these claims; its signature is not one (kcel never checks it)."""
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"eyJhbGciOiJSUzI1NiJ9.{payload}.c2lnbmF0dXJl"


VALID = 1_700_000_000
CLAIMS = {"iss": ISSUER, "aud": "my-client", "exp": VALID}
USERNAME = {"username": {"claim": "username", "prefix": ""}}
USERNAME_EXPRESSION = {"username": {"expression": "claims.username"}}
TURTLE = {
    "turtle": {"foo": {
        "1": "a", "2": "b", "other1": {"bit1": True, "bit2": False, "bit3": 1},
        "bar": {
            "3": "c", "4": "d", "other1": {"bit1": True, "bit2": False, "bit3": 1},
            "baz": {
                "5": "e", "6": "f", "panda": ["snorlax", "007", "santa", "claus"],
                "other1": {"bit1": True, "bit2": False, "bit3": 1},
            },
        },
    }},
}  # fmt: skip
TURTLE_MAPPINGS = {
    "username": {"expression": "claims.turtle.foo.bar.baz.panda[0]"},
    "uid": {"expression": "claims.turtle.foo.bar.baz.panda[1]"},
    "extra": [
        {"key": "bio.snorlax.org/1", "valueExpression": "string(claims.turtle.foo.bar.other1.bit2)"},
        {"key": "bio.snorlax.org/2", "valueExpression": "string(claims.turtle.foo.bar.baz.other1.bit3)"},
        {"key": "bio.snorlax.org/3", "valueExpression": "[string(claims.turtle.foo.bar.baz.other1.bit1)] + ['a', 'b', 'c']"},
    ],
}  # fmt: skip
TURTLE_RULES = [{"expression": "claims.turtle.foo.other1.bit1 && !claims.turtle.foo.bar.other1.bit2"}]
TURTLE_USER_RULES = [
    {"expression": 'user.username != "bad"'}, {"expression": 'user.uid == "007"'}, {"expression": '"claus" in user.groups'},
    {"expression": "user.extra.bio__dot__snorlax__dot__org__slash__3.size() == 4"},
]  # fmt: skip
TURTLE_EXTRA = {
    "bio.snorlax.org/1": ("false",),
    "bio.snorlax.org/2": ("1",),
    "bio.snorlax.org/3": ("true", "a", "b", "c"),
}
SERVICE_ACCOUNT = {
    "aud": ["https://kubernetes.default.svc"], "exp": VALID, "iat": 1700077413, "iss": "https://kubernetes.default.svc",
    "jti": "ea28ed49-2e11-4280-9ec5-bc3d1d84661a",
    "kubernetes.io": {
        "namespace": "kube-system",
        "node": {"name": "127.0.0.1", "uid": "58456cb0-dd00-45ed-b797-5578fdceaced"},
        "pod": {"name": "coredns-69cbfb9798-jv9gn", "uid": "778a530c-b3f4-47c0-9cd5-ab018fb64f33"},
        "serviceaccount": {"name": "coredns", "uid": "a087d5a0-e1dd-43ec-93ac-f13d89cd13af"},
        "warnafter": 1700081020,
    },
    "nbf": VALID - 3600, "sub": "system:serviceaccount:kube-system:coredns",
}  # fmt: skip
SERVICE_ACCOUNT_AUTHENTICATOR = authenticator(
    {
        "username": {"expression": '"system:serviceaccount:" + claims.kubernetes__dot__io.namespace + ":" + claims.kubernetes__dot__io.serviceaccount.name'},
        "uid": {"expression": "claims.kubernetes__dot__io.serviceaccount.uid"},
        "groups": {"expression": '[ "system:serviceaccounts", "system:serviceaccounts:" + claims.kubernetes__dot__io.namespace ]'},
        "extra": [
            {"key": "authentication.x-kubernetes.io/pod-name", "valueExpression": "claims.kubernetes__dot__io.pod.name"},
            {"key": "authentication.x-kubernetes.io/pod-uid", "valueExpression": "claims.kubernetes__dot__io.pod.uid"},
            {"key": "authentication.x-kubernetes.io/node-name", "valueExpression": "claims.kubernetes__dot__io.node.name"},
            {"key": "authentication.x-kubernetes.io/node-uid", "valueExpression": "claims.kubernetes__dot__io.node.uid"},
            {"key": "authentication.x-kubernetes.io/credential-id", "valueExpression": '"JTI=" + claims.jti'},
            {"key": "test.x-kubernetes.io/warnafter", "valueExpression": "string(int(claims.kubernetes__dot__io.warnafter))"},
            {"key": "test.x-kubernetes.io/namespace", "valueExpression": "claims.kubernetes__dot__io.namespace"},
        ],
    },
    rules=[
        {"expression": 'claims.sub == ("system:serviceaccount:" + claims.kubernetes__dot__io.namespace + ":" + claims.kubernetes__dot__io.serviceaccount.name)'},
        {"expression": "has(claims.kubernetes__dot__io.pod.uid)"},
        {"expression": 'claims["kubernetes.io"]["node"]["uid"] != ""'},
        {"expression": 'claims[?"kubernetes.io"]["node"]["ip"].orValue(true)'},
    ],
    user_rules=[
        {"expression": 'user.username.startsWith("system:serviceaccount:" + user.extra["test.x-kubernetes.io/namespace"][0] + ":")'},
        {"expression": 'user.uid != ""'},
        {"expression": '"system:serviceaccounts" in user.groups && user.groups.size() == 2'},
        {"expression": 'user.extra.authentication__dot__x__dash__kubernetes__dot__io__slash__node__dash__name[0] == "127.0.0.1"'},
        {"expression": "user.extra.authentication__dot__x__dash__kubernetes__dot__io__slash__credential__dash__id[0] == user.extra.authentication__dot__kubernetes__dot__io__slash__credential__dash__id[0]"},
        {"expression": 'user.extra["test.x-kubernetes.io/warnafter"][0] == "1700081020"'},
        {"expression": "has(user.extra.authentication__dot__x__dash__kubernetes__dot__io__slash__pod__dash__name)"},
        {"expression": 'user.extra[?"test.x-kubernetes.io/missing"].orValue([]) == []'},
    ],
    audiences=("https://kubernetes.default.svc",),
    url="https://kubernetes.default.svc",
)  # fmt: skip
SERVICE_ACCOUNT_USER = UserInfo(
    "system:serviceaccount:kube-system:coredns", "a087d5a0-e1dd-43ec-93ac-f13d89cd13af",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system"),
    {
        "authentication.x-kubernetes.io/pod-name": ("coredns-69cbfb9798-jv9gn",),
        "authentication.x-kubernetes.io/pod-uid": ("778a530c-b3f4-47c0-9cd5-ab018fb64f33",),
        "authentication.x-kubernetes.io/node-name": ("127.0.0.1",),
        "authentication.x-kubernetes.io/node-uid": ("58456cb0-dd00-45ed-b797-5578fdceaced",),
        "authentication.kubernetes.io/credential-id": ("JTI=ea28ed49-2e11-4280-9ec5-bc3d1d84661a",),
        "authentication.x-kubernetes.io/credential-id": ("JTI=ea28ed49-2e11-4280-9ec5-bc3d1d84661a",),
        "test.x-kubernetes.io/warnafter": ("1700081020",),
        "test.x-kubernetes.io/namespace": ("kube-system",),
    },
)  # fmt: skip
DEEP_DOTS = {
    **CLAIMS,
    "data": [{"groups.io": "gen1"}],
    "turtle": {"foo": {"bar": {
        "bee": {"username.io": {"company.io": "fun-corp"}},
        "baz": {"username.io": "snorlax.io", "link": [{"uid.io": "143"}]},
    }}},
}  # fmt: skip
EXTRA_FOO_BAR = [
    {"key": "example.org/foo", "valueExpression": "claims.foo"},
    {"key": "example.org/bar", "valueExpression": "claims.bar"},
]


@pytest.mark.parametrize(
    ("name", "authn", "claims", "want"),
    [
        ("token", authenticator(USERNAME), {**CLAIMS, "username": "jane"}, UserInfo("jane")),
        ("no-username", authenticator({"username": {"claim": "username", "prefix": "prefix:"}}), CLAIMS, 'oidc: parse username claims "username": claim not present'),
        ("email", authenticator({"username": {"claim": "email", "prefix": ""}}), {**CLAIMS, "email": "jane@example.com", "email_verified": True}, UserInfo("jane@example.com")),
        ("email-not-verified", authenticator({"username": {"claim": "email", "prefix": ""}}), {**CLAIMS, "email": "jane@example.com", "email_verified": False}, "oidc: email not verified"),
        ("no-email-verified-claim", authenticator({"username": {"claim": "email", "prefix": ""}}), {**CLAIMS, "email": "jane@example.com"}, UserInfo("jane@example.com")),
        ("invalid-email-verified-claim", authenticator({"username": {"claim": "email", "prefix": ""}}), {**CLAIMS, "email": "jane@example.com", "email_verified": "false"}, "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool"),
        ("groups", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"]}, UserInfo("jane", groups=("team1", "team2"))),
        ("group-string-claim", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}), {**CLAIMS, "username": "jane", "groups": "team1"}, UserInfo("jane", groups=("team1",))),
        ("no-groups-claim", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}), {**CLAIMS, "username": "jane"}, UserInfo("jane")),
        ("invalid-groups-claim", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}), {**CLAIMS, "username": "jane", "groups": 42}, 'oidc: parse groups claim "groups": json: cannot unmarshal number into Go value of type string'),
        ("groups-distributed-malformed-claim-names", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}), {**CLAIMS, "username": "jane", "_claim_names": {"groups": "src1"}, "_claim_sources": {"src2": {"endpoint": "https://x/groups"}}}, "oidc: verify token: oidc: source does not exist"),
        ("required-claim", authenticator({**USERNAME, "groups": {"claim": "groups", "prefix": ""}}, [{"claim": "hd", "requiredValue": "example.com"}, {"claim": "sub", "requiredValue": "test"}]), {**CLAIMS, "username": "jane", "hd": "example.com", "sub": "test"}, UserInfo("jane")),
        ("no-required-claim", authenticator(USERNAME, [{"claim": "hd", "requiredValue": "example.com"}]), {**CLAIMS, "username": "jane"}, "oidc: required claim hd not present in ID token"),
        ("invalid-required-claim", authenticator(USERNAME, [{"claim": "hd", "requiredValue": "example.com"}]), {**CLAIMS, "username": "jane", "hd": "example.org"}, "oidc: required claim hd value does not match. Got = example.org, want = example.com"),
        ("invalid-aud", authenticator({"username": {"claim": "username", "prefix": "prefix:"}}), {**CLAIMS, "aud": "not-my-client", "username": "jane"}, 'oidc: verify token: oidc: expected audience "my-client" got ["not-my-client"]'),
        ("multiple-audiences", authenticator(USERNAME), {**CLAIMS, "aud": ["not-my-client", "my-client"], "azp": "not-my-client", "username": "jane"}, UserInfo("jane")),
        ("multiple-audiences in authentication config", authenticator(USERNAME, audiences=("random-client", "my-client")), {**CLAIMS, "aud": ["not-my-client", "my-client"], "username": "jane"}, UserInfo("jane")),
        ("multiple-audiences in authentication config, multiple matches", authenticator(USERNAME, audiences=("random-client", "my-client", "other-client")), {**CLAIMS, "aud": ["not-my-client", "my-client", "other-client"], "username": "jane"}, UserInfo("jane")),
        ("multiple-audiences in authentication config, no match", authenticator(USERNAME, audiences=("random-client", "my-client")), {**CLAIMS, "aud": ["not-my-client"], "username": "jane"}, 'oidc: verify token: oidc: expected audience in ["my-client" "random-client"] got ["not-my-client"]'),
        ("nuanced audience validation using claim validation rules", authenticator(USERNAME, [{"expression": 'sets.equivalent(claims.aud, ["bar", "foo", "baz"])', "message": "audience must exactly contain [bar, foo, baz]"}], audiences=("bar", "foo", "baz")), {**CLAIMS, "aud": ["foo", "bar", "baz"], "username": "jane"}, UserInfo("jane")),
        ("audience validation using claim validation rules fails", authenticator(USERNAME, [{"expression": 'sets.equivalent(claims.aud, ["bar", "foo", "baz"])', "message": "audience must exactly contain [bar, foo, baz]"}], audiences=("bar", "foo", "baz")), {**CLAIMS, "aud": ["foo", "baz"], "username": "jane"}, """oidc: error evaluating claim validation expression: validation expression 'sets.equivalent(claims.aud, ["bar", "foo", "baz"])' failed: audience must exactly contain [bar, foo, baz]"""),
        ("username-prefix", authenticator({"username": {"claim": "username", "prefix": "oidc:"}}), {**CLAIMS, "username": "jane"}, UserInfo("oidc:jane")),
        ("groups-prefix", authenticator({"username": {"claim": "username", "prefix": "oidc:"}, "groups": {"claim": "groups", "prefix": "groups:"}}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"]}, UserInfo("oidc:jane", groups=("groups:team1", "groups:team2"))),
        ("accounts.google.com issuer", authenticator({"username": {"claim": "email", "prefix": ""}}, url="https://accounts.google.com"), {**CLAIMS, "iss": "accounts.google.com", "email": "thomas.jefferson@gmail.com"}, UserInfo("thomas.jefferson@gmail.com")),
        ("user validation rule fails for user.username", authenticator({"username": {"claim": "username", "prefix": "system:"}}, user_rules=[{"expression": "!user.username.startsWith('system:')", "message": "username cannot used reserved system: prefix"}]), {**CLAIMS, "username": "jane"}, "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('system:')' failed: username cannot used reserved system: prefix"),
        ("user validation rule fails for user.groups", authenticator({**USERNAME_EXPRESSION, "groups": {"claim": "groups", "prefix": "system:"}}, user_rules=[{"expression": "user.groups.all(group, !group.startsWith('system:'))", "message": "groups cannot used reserved system: prefix"}]), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"]}, "oidc: error evaluating user info validation rule: validation expression 'user.groups.all(group, !group.startsWith('system:'))' failed: groups cannot used reserved system: prefix"),
        ("claim validation rule with expression fails", authenticator(USERNAME, [{"expression": 'claims.hd == "example.com"', "message": "hd claim must be example.com"}]), {**CLAIMS, "username": "jane"}, """oidc: error evaluating claim validation expression: expression 'claims.hd == "example.com"' resulted in error: no such key: hd"""),
        ("claim validation rule with expression", authenticator(USERNAME, [{"expression": 'claims.hd == "example.com"', "message": "hd claim must be example.com"}]), {**CLAIMS, "username": "jane", "hd": "example.com"}, UserInfo("jane")),
        ("claim validation rule with expression and nested claims", authenticator(USERNAME, [{"expression": 'claims.foo.bar == "baz"', "message": "foo.bar claim must be baz"}]), {**CLAIMS, "username": "jane", "hd": "example.com", "foo": {"bar": "baz"}}, UserInfo("jane")),
        ("claim validation rule with mix of expression and claim", authenticator(USERNAME, [{"expression": 'claims.foo.bar == "baz"', "message": "foo.bar claim must be baz"}, {"claim": "hd", "requiredValue": "example.com"}]), {**CLAIMS, "username": "jane", "hd": "example.com", "foo": {"bar": "baz"}}, UserInfo("jane")),
        ("username claim mapping with expression", authenticator(USERNAME_EXPRESSION), {**CLAIMS, "username": "jane"}, UserInfo("jane")),
        ("username claim mapping with expression and nested claim", authenticator({"username": {"expression": "claims.foo.username"}}), {**CLAIMS, "username": "jane", "foo": {"username": "jane"}}, UserInfo("jane")),
        ("claim mappings with expressions and deeply nested claim - success", authenticator({**TURTLE_MAPPINGS, "groups": {"expression": "claims.turtle.foo.bar.baz.panda"}}, TURTLE_RULES, TURTLE_USER_RULES), {**CLAIMS, **TURTLE}, UserInfo("snorlax", "007", ("snorlax", "007", "santa", "claus"), TURTLE_EXTRA)),
        ("claim mappings with expressions and deeply nested claim - success via optional", authenticator({**TURTLE_MAPPINGS, "groups": {"expression": "claims.turtle.foo.bar.baz.?a.b.c.d.orValue([ 'claus' ])"}}, TURTLE_RULES, TURTLE_USER_RULES), {**CLAIMS, **TURTLE}, UserInfo("snorlax", "007", ("claus",), TURTLE_EXTRA)),
        ("claim mappings with expressions and deeply nested claim - failure without optional", authenticator({**TURTLE_MAPPINGS, "groups": {"expression": "claims.turtle.foo.bar.baz.a.b.c.d"}}, TURTLE_RULES, TURTLE_USER_RULES), {**CLAIMS, **TURTLE}, "oidc: error evaluating group claim expression: expression 'claims.turtle.foo.bar.baz.a.b.c.d' resulted in error: no such key: a"),
        ("claim mappings with expressions and deeply nested claim - success - service account payload", SERVICE_ACCOUNT_AUTHENTICATOR, SERVICE_ACCOUNT, SERVICE_ACCOUNT_USER),
        ("claim mappings with expressions and deeply nested claim - success - claims payload with deep use of __dot__", authenticator({"username": {"expression": "claims.turtle.foo.bar.baz.username__dot__io"}, "uid": {"expression": "claims.turtle.foo.bar.baz.link[0].uid__dot__io"}, "groups": {"expression": "claims.data[0].groups__dot__io"}}, [{"expression": "has(claims.turtle.foo.bar.baz.username__dot__io)"}, {"expression": "has(claims.turtle.foo.bar.baz.link[0].uid__dot__io)"}, {"expression": "has(claims.data[0].groups__dot__io)"}, {"expression": 'claims.turtle.foo.bar.bee.username__dot__io.company__dot__io == "fun-corp"'}]), DEEP_DOTS, UserInfo("snorlax.io", "143", ("gen1",))),
        ("groups claim mapping with expression", authenticator(_EXPRESSIONS), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"]}, UserInfo("jane", groups=("team1", "team2"))),
        ("groups claim with expression", authenticator({"username": {"claim": "username", "prefix": "oidc:"}, "groups": {"expression": '(claims.roles.split(",") + claims.other_roles.split(",")).map(role, "groups:" + role)'}}), {**CLAIMS, "username": "jane", "roles": "foo,bar", "other_roles": "baz,qux"}, UserInfo("oidc:jane", groups=("groups:foo", "groups:bar", "groups:baz", "groups:qux"))),
        ("uid claim mapping with expression", authenticator({**_EXPRESSIONS, "uid": {"expression": "claims.uid"}}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"], "uid": "1234"}, UserInfo("jane", "1234", ("team1", "team2"))),
        ("uid claim mapping with claim", authenticator({**_EXPRESSIONS, "uid": {"claim": "uid"}}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"], "uid": "1234"}, UserInfo("jane", "1234", ("team1", "team2"))),
        ("extra claim mapping with expression", authenticator({**_EXPRESSIONS, "uid": {"expression": "claims.uid"}, "extra": EXTRA_FOO_BAR}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"], "uid": "1234", "foo": "bar", "bar": ["baz", "qux"]}, UserInfo("jane", "1234", ("team1", "team2"), {"example.org/foo": ("bar",), "example.org/bar": ("baz", "qux")})),
        ("extra claim mapping, value derived from claim value", authenticator({**USERNAME_EXPRESSION, "extra": [{"key": "example.org/admin", "valueExpression": '(has(claims.is_admin) && claims.is_admin) ? "true":""'}, {"key": "example.org/admin_1", "valueExpression": 'claims.?is_admin.orValue(false) == true ? "true":""'}, {"key": "example.org/non_existent", "valueExpression": 'claims.?non_existent.orValue("default") == "default" ? "true":""'}]}), {**CLAIMS, "username": "jane", "is_admin": True}, UserInfo("jane", extra={"example.org/admin": ("true",), "example.org/admin_1": ("true",), "example.org/non_existent": ("true",)})),
        ("hardcoded extra claim mapping", authenticator({**USERNAME_EXPRESSION, "extra": [{"key": "example.org/admin", "valueExpression": '"true"'}]}), {**CLAIMS, "username": "jane", "is_admin": True}, UserInfo("jane", extra={"example.org/admin": ("true",)})),
        ("extra claim mapping, empty string value for key", authenticator({**_EXPRESSIONS, "uid": {"expression": "claims.uid"}, "extra": EXTRA_FOO_BAR}), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"], "uid": "1234", "foo": "", "bar": ["baz", "qux"]}, UserInfo("jane", "1234", ("team1", "team2"), {"example.org/bar": ("baz", "qux")})),
        ("extra claim mapping with user validation rule succeeds", authenticator({**_EXPRESSIONS, "uid": {"expression": "claims.uid"}, "extra": [{"key": "example.org/foo", "valueExpression": "'bar'"}, {"key": "example.org/baz", "valueExpression": "claims.baz"}]}, user_rules=[{"expression": "'bar' in user.extra['example.org/foo'] && 'qux' in user.extra['example.org/baz']", "message": "example.org/foo must be bar and example.org/baz must be qux"}]), {**CLAIMS, "username": "jane", "groups": ["team1", "team2"], "uid": "1234", "baz": "qux"}, UserInfo("jane", "1234", ("team1", "team2"), {"example.org/foo": ("bar",), "example.org/baz": ("qux",)})),
        ("groups expression returns null", authenticator(_EXPRESSIONS), {**CLAIMS, "username": "jane", "groups": None, "uid": "1234", "baz": "qux"}, UserInfo("jane")),
        ("test user validation rule doesn't fail when user info is empty except username", authenticator(_EXPRESSIONS, user_rules=[{"expression": 'user.username == " "', "message": "username must be single space"}, {"expression": 'user.uid == ""', "message": "uid must be empty string"}, {"expression": "!('bar' in user.groups)", "message": "groups must not contain bar"}, {"expression": "!('bar' in user.extra)", "message": "extra must not contain bar"}]), {**CLAIMS, "username": " ", "groups": None, "baz": "qux"}, UserInfo(" ")),
        ("empty username is allowed via claim", authenticator({**USERNAME, "groups": {"expression": "claims.groups"}}, user_rules=[{"expression": 'user.username == ""', "message": "username must be empty string"}, {"expression": 'user.uid == ""', "message": "uid must be empty string"}]), {**CLAIMS, "username": "", "groups": None}, UserInfo("")),
        ("minimum valid jwt payload", authenticator({"username": {"expression": "claims.user"}}), {**CLAIMS, "user": "jane"}, UserInfo("jane")),
        ("credential id set in extra even when no extra claim mappings are defined", authenticator(USERNAME_EXPRESSION), {**CLAIMS, "username": "jane", "jti": "1234"}, UserInfo("jane", extra={"authentication.kubernetes.io/credential-id": ("JTI=1234",)})),
        ("credential id set in extra when extra claim mappings are defined", authenticator({**USERNAME_EXPRESSION, "extra": EXTRA_FOO_BAR}), {**CLAIMS, "username": "jane", "jti": "1234", "foo": "bar", "bar": ["baz", "qux"]}, UserInfo("jane", extra={"authentication.kubernetes.io/credential-id": ("JTI=1234",), "example.org/foo": ("bar",), "example.org/bar": ("baz", "qux")})),
        ("non-string jti claim does not set credential id in extra or error", authenticator(USERNAME_EXPRESSION), {**CLAIMS, "username": "jane", "jti": 1234}, UserInfo("jane")),
        ("using credential id and user validation rule to simulate revocation", authenticator(USERNAME_EXPRESSION, user_rules=[{"expression": """!(user.extra[?'authentication.kubernetes.io/credential-id'][0].orValue('') in ["JTI=ea28ed49-2e11-4280-9ec5-bc3d1d84661a"])""", "message": "credential is revoked"}]), {**CLAIMS, "username": "jane", "jti": "ea28ed49-2e11-4280-9ec5-bc3d1d84661a"}, """oidc: error evaluating user info validation rule: validation expression '!(user.extra[?'authentication.kubernetes.io/credential-id'][0].orValue('') in ["JTI=ea28ed49-2e11-4280-9ec5-bc3d1d84661a"])' failed: credential is revoked"""),
    ],
)  # fmt: skip
def test_token(name: str, authn: dict[str, Any], claims: dict[str, Any], want: UserInfo | str) -> None:
    result = authenticate(config(authn), token(claims), "1.37")
    assert result.issuer == authn["issuer"]["url"]
    if isinstance(want, str):
        assert (result.user, result.error) == (None, want)
    else:
        assert (result.user, result.error) == (want, "")


def test_invalid_issuer_is_not_handled() -> None:
    """oidc_test.go "invalid-issuer": the authenticator skips the token (wantSkip)."""
    result = authenticate(config(authenticator(USERNAME)), {**CLAIMS, "iss": "https://example.com", "username": "j"})
    assert result.issuer is None and not result.authenticated
    assert result.error.startswith(
        'no JWT authenticator has issuer "https://example.com" (configured: "https://auth.example.com")'
    )


# -- what oidc.go does with the results ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mappings", "claims", "want"),
    [
        ({"username": {"expression": "claims.n"}}, {"n": 1}, "oidc: error evaluating username claim expression: username claim expression must return a string"),
        ({"username": {"expression": "claims.name"}}, {"name": ""}, "oidc: empty username via CEL expression is not allowed"),
        ({"username": {"expression": "claims.missing"}}, {}, "oidc: error evaluating username claim expression: expression 'claims.missing' resulted in error: no such key: missing"),
        ({**USERNAME_EXPRESSION, "uid": {"expression": "claims.uid"}}, {"username": "j", "uid": 7}, "oidc: error evaluating uid claim expression: uid claim expression must return a string"),
        ({**USERNAME_EXPRESSION, "uid": {"claim": "uid"}}, {"username": "j"}, 'oidc: parse uid claim "uid": claim not present'),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "claims.groups"}}, {"username": "j", "groups": ["a", 1]}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "claims.groups"}}, {"username": "j", "groups": {"a": "b"}}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"),
        # a []string-backed list (split, findAll) is no []interface{} nor []ref.Val to convertCELValueToStringList
        ({**USERNAME_EXPRESSION, "groups": {"expression": "claims.roles.split(',')"}}, {"username": "j", "roles": "a,b"}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"),
        ({**USERNAME_EXPRESSION, "extra": [{"key": "example.org/a", "valueExpression": "claims.flag"}]}, {"username": "j", "flag": True}, "oidc: error evaluating extra claim expression: claims.flag: expression must return a string or a list of strings"),
        # the extra mappings' evaluation error has no "oidc:" prefix
        ({**USERNAME_EXPRESSION, "extra": [{"key": "example.org/a", "valueExpression": "claims.nope"}]}, {"username": "j"}, "expression 'claims.nope' resulted in error: no such key: nope"),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "claims.roles.findAll('[a-z]')"}}, {"username": "j", "roles": "a,b"}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "url(claims.link).getQuery()['g']"}}, {"username": "j", "link": "https://x/?g=a"}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "[claims.roles.split(',')[1], '']"}}, {"username": "j", "roles": "a,b"}, UserInfo("j", groups=("b",))),
        ({**USERNAME_EXPRESSION, "groups": {"expression": "claims.groups"}}, {"username": "j", "groups": "admins"}, UserInfo("j", groups=("admins",))),
        ({**USERNAME_EXPRESSION, "groups": {"claim": "groups", "prefix": "p:"}}, {"username": "j", "groups": ["a", 1]}, 'oidc: parse groups claim "groups": json: cannot unmarshal array into Go value of type string'),
        ({"username": {"claim": "username", "prefix": ""}}, {"username": 5}, 'oidc: parse username claims "username": json: cannot unmarshal number into Go value of type string'),
        ({"username": {"claim": "email", "prefix": ""}}, {"email": "e@x", "email_verified": None}, "oidc: email not verified"),
    ],
)  # fmt: skip
def test_mapping_results(mappings: dict[str, Any], claims: dict[str, Any], want: UserInfo | str) -> None:
    result = authenticate(config(authenticator(mappings)), {**CLAIMS, **claims})
    assert (result.user, result.error) == ((want, "") if isinstance(want, UserInfo) else (None, want))


def test_order_mappings_before_rules() -> None:
    """AuthenticateToken maps the claims first, then checks required claims, claim rules and user rules."""
    authn = authenticator(
        {"username": {"expression": "claims.missing"}},
        [{"claim": "hd", "requiredValue": "x"}, {"expression": "false", "message": "never"}],
    )
    assert authenticate(config(authn), CLAIMS).error.startswith("oidc: error evaluating username claim expression")
    authn = authenticator(USERNAME, [{"expression": "false", "message": "never"}, {"expression": "claims.x == 1"}])
    assert authenticate(config(authn), {**CLAIMS, "username": "j"}).error == (
        "oidc: error evaluating claim validation expression: expression 'claims.x == 1' resulted in error: no such key: x"
    )


def test_cost_limit() -> None:
    """Every program runs under the per-call limit (1,000,000)."""
    nested = "['x']"
    for variable in "abcdef":
        nested = f"[1,2,3,4,5,6,7,8,9,10].map({variable}, {nested})"
    authn = authenticator({**USERNAME, "groups": {"expression": f"{nested}.size() > 0 ? 'g' : ''"}})
    result = authenticate(config(authn), {**CLAIMS, "username": "j"})
    assert result.error.endswith("resulted in error: operation cancelled: actual cost limit exceeded")
    assert result.error.startswith("oidc: error evaluating group claim expression: expression '[1,2,3")


@pytest.mark.parametrize(
    ("expression", "before_1_34", "since_1_34"),
    [
        # numbers: unstructured JSON (int64 when whole) before 1.34, encoding/json (float64) from 1.34
        ("type(claims.n) == int ? 'int' : 'double'", "int", "double"),
        ("type(claims.nested.n) == int ? 'int' : 'double'", "int", "double"),
        ("string(claims.n)", "1", "1"),
        # escaped names: only from 1.34 (the lazy map and unescapeMapper)
        ("claims.kubernetes__dot__io.ns", "expression 'claims.kubernetes__dot__io.ns' resulted in error: no such key: kubernetes__dot__io", "kube"),
        ("claims['kubernetes.io']['ns']", "kube", "kube"),
        ("claims.nested.a__dash__b", "expression 'claims.nested.a__dash__b' resulted in error: no such key: a__dash__b", "c"),
        # lazy.MapValue's iterator yields the values: a comprehension over `claims` ranges over them from 1.34
        ("claims.exists(c, c == 'n') ? 'names' : 'values'", "names", "values"),
        ("claims.exists(c, c == 'kube-system') ? 'x' : 'y'", "y", "y"),
        ("'n' in claims ? 'in' : 'out'", "in", "in"),
    ],
)  # fmt: skip
def test_claims_value_by_version(expression: str, before_1_34: str, since_1_34: str) -> None:
    authn = authenticator({**USERNAME_EXPRESSION, "extra": [{"key": "example.org/r", "valueExpression": expression}]})
    claims = {**CLAIMS, "username": "j", "n": 1, "kubernetes.io": {"ns": "kube"}, "nested": {"n": 2, "a-b": "c"}}
    for version, want in (("1.33", before_1_34), ("1.34", since_1_34)):
        result = authenticate(config(authn), claims, version)
        assert (result.user.extra["example.org/r"][0] if result.user else result.error) == want, version


def test_user_extra_unescaped_from_1_34() -> None:
    authn = authenticator(
        {**USERNAME_EXPRESSION, "extra": [{"key": "example.org/a-b", "valueExpression": "'v'"}]},
        user_rules=[{"expression": "has(user.extra.example__dot__org__slash__a__dash__b)", "message": "m"}],
    )
    assert authenticate(config(authn), {**CLAIMS, "username": "j"}, "1.34").authenticated
    assert authenticate(config(authn), {**CLAIMS, "username": "j"}, "1.33").error == (
        "oidc: error evaluating user info validation rule: validation expression "
        "'has(user.extra.example__dot__org__slash__a__dash__b)' failed: m"
    )


def test_credential_id_from_1_32() -> None:
    authn = config(authenticator(USERNAME_EXPRESSION))
    assert authenticate(authn, {**CLAIMS, "username": "j", "jti": "7"}, "1.31").user == UserInfo("j")
    assert authenticate(authn, {**CLAIMS, "username": "j", "jti": "7"}, "1.32").user == UserInfo(
        "j", extra={"authentication.kubernetes.io/credential-id": ("JTI=7",)}
    )


def test_expiry_and_not_before() -> None:
    """go-oidc checks exp and nbf (a minute's leeway) at `now`; without `now` kcel does not."""
    authn = load(config(authenticator(USERNAME)))
    claims = {**CLAIMS, "username": "j", "nbf": VALID - 100}
    assert authn.authenticate(claims, now=VALID - 10).authenticated
    assert authn.authenticate(claims, now=VALID + 1).error == (
        "oidc: verify token: oidc: token is expired (Token Expiry: 2023-11-14 22:13:20 +0000 UTC)"
    )
    assert authn.authenticate(claims, now=datetime(2023, 11, 14, 22, 13, 21)).error.endswith("22:13:20 +0000 UTC)")
    assert authn.authenticate(claims, now=VALID - 161).error == (
        "oidc: verify token: oidc: current time 2023-11-14 22:10:39 +0000 UTC before the nbf (not before) time: "
        "2023-11-14 22:11:40 +0000 UTC"
    )
    no_exp = {"iss": ISSUER, "aud": "my-client", "username": "j"}
    assert authn.authenticate(no_exp).authenticated
    assert authn.authenticate(no_exp, now=datetime(2000, 1, 1, tzinfo=timezone.utc)).error == (
        "oidc: verify token: oidc: token is expired (Token Expiry: 0001-01-01 00:00:00 +0000 UTC)"
    )


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        ({"aud": 5}, "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go value of type []string"),
        ({"aud": ["my-client", 5]}, "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go value of type string"),
        ({"sub": 5}, "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go struct field idToken.sub of type string"),
        ({"exp": True}, "oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal bool into Go value of type json.Number"),
        ({"exp": "soon"}, 'oidc: verify token: oidc: failed to unmarshal claims: json: invalid number literal, trying to unmarshal "\\"soon\\"" into Number'),
        ({"aud": None}, 'oidc: verify token: oidc: expected audience "my-client" got [""]'),
    ],
)  # fmt: skip
def test_token_claim_types(claims: dict[str, Any], want: str) -> None:
    assert authenticate(config(authenticator(USERNAME)), {**CLAIMS, "username": "j", **claims}).error == want


@pytest.mark.parametrize(
    ("bad", "want"),
    [
        ("a.b", "malformed token: a JWT has 3 dot-separated parts (header.payload.signature), not 2"),
        ("a.b$c.d", "malformed token: its payload is not unpadded base64url"),
        ("a.YQ==.d", "malformed token: its payload is not unpadded base64url"),
        ("a.WzFd.d", "malformed token: its payload is not a JSON object"),
        ("a.e30x.d", "malformed token: its payload is not valid JSON: Extra data: line 1 column 3 (char 2)"),
        ('{"iss": 5}', "the token's iss claim is not a string: number"),
        ("{nope", "the claims are not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (17, "a token is a JWT or a JSON object of claims, not int"),
        ({"iss": ISSUER, "roles": {"a"}}, "the claims are not JSON: Object of type set is not JSON serializable"),
        ({"iss": ISSUER, "n": float("nan")}, "the claims are not valid JSON: invalid JSON value NaN"),
    ],
)  # fmt: skip
def test_malformed_tokens(bad: Any, want: str) -> None:
    result = load(config(authenticator(USERNAME))).authenticate(bad)
    assert (result.user, result.error, result.issuer) == (None, want, None)


def test_claims_as_json_text() -> None:
    result = authenticate(config(authenticator(USERNAME)), json.dumps({**CLAIMS, "username": "jane"}))
    assert result.user == UserInfo("jane") and result.authenticated


@pytest.mark.parametrize(
    "document",
    [
        {}, [], {"apiVersion": 5, "kind": []}, {**config(), "jwt": [{"issuer": []}]}, {**config(), "jwt": [{"claimMappings": 3}]},
        config(jwt(mappings={"username": {"expression": "claims.email"}, "extra": [{"key": 1}]})),
        config(jwt("https://[::1")), config(jwt("https://h:x")), config(jwt("https://%zz")), config(jwt("a:b/c")),
    ],
)  # fmt: skip
def test_malformed_configurations_give_errors(document: dict[str, Any]) -> None:
    errors, _ = validate(document)
    assert errors and all(isinstance(error, str) and error for error in errors)
