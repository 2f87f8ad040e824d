"""Structured authentication configuration (AuthenticationConfiguration, apiserver.config.k8s.io) as the
Kubernetes API server loads it, and its JWT authenticators run offline on a token's claims.

`check` is what kube-apiserver reports when it reads its `--authentication-config` file: strict decoding of the
versions it serves (v1alpha1 and v1beta1; v1 from 1.34), then ValidateAuthenticationConfiguration
(k8s.io/apiserver pkg/apis/apiserver/validation/validation.go) with the texts of the version asked for, under
the default feature gates. Every expression compiles as compile.go compiles it (see
`kcel.k8s.surfaces.authentication_claims`, which also runs the authenticators: `load(...).authenticate(token)`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.environment import Version, server_version
from kcel.k8s.field import FieldError, Path
from kcel.k8s.surfaces import Checked
from kcel.k8s.surfaces.authentication_claims import (
    ENVIRONMENTS,
    Authentication,
    Authenticator,
    Expression,
    Rejected,
    UserInfo,
    authenticate_claims,
    compile_authn,
    issuer_of,
    read_token,
    uses_claim,
)

__all__ = [
    "ENVIRONMENTS", "KINDS", "Authentication", "Authenticator", "Authenticators", "ConfigurationError", "UserInfo",
    "authenticate", "check", "load", "validate",
]  # fmt: skip

GROUP = "apiserver.config.k8s.io"
KIND = "AuthenticationConfiguration"
KINDS: tuple[tuple[str, str], ...] = ((GROUP, KIND),)
MAX_AUTHENTICATORS = 64

# -- strict decoding ---------------------------------------------------------------------------------------------

_S, _B, _ALWAYS = "string", "bool", (1, 0)
# Go struct -> JSON field -> (Go type, the first Kubernetes version with the field); `*T` may be null (nil).
_STRUCTS: dict[str, dict[str, tuple[str, Version]]] = {
    KIND: {
        "apiVersion": (_S, _ALWAYS), "kind": (_S, _ALWAYS), "jwt": ("[]JWTAuthenticator", _ALWAYS),
        "anonymous": ("*AnonymousAuthConfig", (1, 31)),
    },
    "JWTAuthenticator": {
        "issuer": ("Issuer", _ALWAYS), "claimValidationRules": ("[]ClaimValidationRule", _ALWAYS),
        "claimMappings": ("ClaimMappings", _ALWAYS), "userValidationRules": ("[]UserValidationRule", _ALWAYS),
    },
    "Issuer": {
        "url": (_S, _ALWAYS), "discoveryURL": ("*string", _ALWAYS), "certificateAuthority": (_S, _ALWAYS),
        "audiences": ("[]string", _ALWAYS), "audienceMatchPolicy": ("AudienceMatchPolicyType", _ALWAYS),
        "egressSelectorType": ("EgressSelectorType", (1, 34)),
    },
    "ClaimValidationRule": {name: (_S, _ALWAYS) for name in ("claim", "requiredValue", "expression", "message")},
    "ClaimMappings": {
        "username": ("PrefixedClaimOrExpression", _ALWAYS), "groups": ("PrefixedClaimOrExpression", _ALWAYS),
        "uid": ("ClaimOrExpression", _ALWAYS), "extra": ("[]ExtraMapping", _ALWAYS),
    },
    "PrefixedClaimOrExpression": {"claim": (_S, _ALWAYS), "prefix": ("*string", _ALWAYS), "expression": (_S, _ALWAYS)},
    "ClaimOrExpression": {"claim": (_S, _ALWAYS), "expression": (_S, _ALWAYS)},
    "ExtraMapping": {"key": (_S, _ALWAYS), "valueExpression": (_S, _ALWAYS)},
    "UserValidationRule": {"expression": (_S, _ALWAYS), "message": (_S, _ALWAYS)},
    "AnonymousAuthConfig": {"enabled": (_B, _ALWAYS), "conditions": ("[]AnonymousAuthCondition", _ALWAYS)},
    "AnonymousAuthCondition": {"path": (_S, _ALWAYS)},
}  # fmt: skip
_NAMED_STRINGS = frozenset({"AudienceMatchPolicyType", "EgressSelectorType"})


class _Decoder:
    """sigs.k8s.io/json strict decoding into one version's types: the first type error, else every unknown
    field (keys in sorted order, as YAML reaches the decoder as JSON with sorted keys)."""

    def __init__(self, package: str, version: Version) -> None:
        self.package, self.version = package, version
        self.type_error = ""
        self.unknown: list[str] = []

    def go_name(self, go_type: str) -> str:
        go_type = go_type.lstrip("*")
        if go_type.startswith("[]"):
            return "[]" + self.go_name(go_type[2:])
        return f"{self.package}.{go_type}" if go_type in _STRUCTS or go_type in _NAMED_STRINGS else go_type

    def zero(self, go_type: str) -> Any:
        if go_type.startswith("*"):
            return None
        if go_type.startswith("[]"):
            return []
        if go_type in _STRUCTS:
            return self.struct(go_type, None, "", "")
        return False if go_type == _B else ""

    def struct(self, name: str, value: Mapping[str, Any] | None, where: str, path: str) -> dict[str, Any]:
        fields = {key: spec for key, spec in _STRUCTS[name].items() if spec[1] <= self.version}
        result = {key: self.zero(go_type) for key, (go_type, _) in fields.items()}
        given = value or {}
        for key in sorted(given):
            location = f"{where}.{key}" if where else key
            if key not in fields:
                self.unknown.append(f"unknown field {fe.quote(location)}")
                continue
            result[key] = self.value(fields[key][0], given[key], location, f"{path}.{key}" if path else key, name)
        return result

    def value(self, go_type: str, value: Any, where: str, path: str, struct: str) -> Any:
        if value is None:
            return self.zero(go_type)
        element = go_type.lstrip("*")
        if element.startswith("[]"):
            if isinstance(value, list):
                return [self.value(element[2:], item, f"{where}[{i}]", path, struct) for i, item in enumerate(value)]
        elif element in _STRUCTS:
            if isinstance(value, Mapping):
                return self.struct(element, value, where, path)
        elif isinstance(value, bool) == (element == _B) and isinstance(value, (bool, str)):
            return value
        if not self.type_error:
            self.type_error = (
                f"json: cannot unmarshal {fe.json_kind(value)} into Go struct field {struct}.{path} "
                f"of type {self.go_name(element)}"
            )
        return self.zero(go_type)


def _decode(document: Mapping[str, Any], version: Version) -> dict[str, Any]:
    """runtime.Decode of the file as kube-apiserver reads it (strict); raises ConfigurationError."""
    if not isinstance(document, Mapping):
        raise ConfigurationError([f"the configuration is not an object: {fe.json_kind(document)}"])
    api_version, kind = document.get("apiVersion"), document.get("kind")
    served = ("v1alpha1", "v1beta1", "v1") if version >= (1, 34) else ("v1alpha1", "v1beta1")
    group, _, package = str(api_version or "").rpartition("/")
    if kind != KIND or group != GROUP or package not in served:
        versions = ", ".join(f"{GROUP}/{v}" for v in served)
        raise ConfigurationError(
            [f'no kind {fe.quote(str(kind))} is registered for version {fe.quote(str(api_version))}: Kubernetes '
             f"{version[0]}.{version[1]} reads {KIND} of {versions}"]
        )  # fmt: skip
    decoder = _Decoder(package, version)
    config = decoder.struct(KIND, document, "", "")
    if decoder.type_error:
        raise ConfigurationError([decoder.type_error])
    if decoder.unknown:
        raise ConfigurationError(["strict decoding error: " + ", ".join(decoder.unknown)])
    return config


# -- net/url.Parse, for the checks validateURL makes -------------------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_PORT = re.compile(r"(:[0-9]*)?")
_HEX = frozenset("0123456789abcdefABCDEF")
_HOST_PUNCTUATION = frozenset("-_.~!$&'()*+,;=:[]<>\"")
_USERINFO_PUNCTUATION = frozenset("-._:~!$&'()*+,;=%@")


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _unescape_error(text: str, host: bool = False) -> str:
    """net/url unescape's complaint about a %-escape (or, in a host, a character), or ''."""
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            code = text[i : i + 3]
            if (
                len(code) < 3
                or code[1] not in _HEX
                or code[2] not in _HEX
                or (host and code[1] in "01234567" and code != "%25")
            ):
                return f"invalid URL escape {fe.quote(code)}"
            i += 3
            continue
        if host and char.isascii() and not (_ascii_alnum(char) or char in _HOST_PUNCTUATION):
            return f"invalid character {fe.quote(char)} in host name"
        i += 1
    return ""


def _host_error(host: str) -> str:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            return "missing ']' in host"
        port = host[close + 1 :]
    else:
        colon = host.rfind(":")
        port = host[colon:] if colon >= 0 else ""
    if not _PORT.fullmatch(port):
        return f"invalid port {fe.quote(port)} after host"
    return _unescape_error(host, host=True)


def _parse_url(raw: str) -> tuple[str, bool, str, str] | str:
    """What validateURL reads of net/url.Parse(raw): (scheme, has userinfo, raw query, fragment), or Go's error."""
    rest, hashed, fragment = raw.partition("#")

    def fail(why: str, url: str = rest) -> str:
        return f"parse {fe.quote(url)}: {why}"

    if any(c < " " or c == "\x7f" for c in rest):
        return fail("net/url: invalid control character in URL")
    if rest.startswith(":"):
        return fail("missing protocol scheme")
    scheme = ""
    if match := _SCHEME.match(rest):
        scheme, rest = match.group()[:-1].lower(), rest[match.end() :]
    query = ""
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, query = rest.partition("?")
    user = False
    if not rest.startswith("/"):
        if not scheme and ":" in rest.partition("/")[0]:
            return fail("first path segment in URL cannot contain colon")
    elif rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        at = authority.rfind("@")
        if error := _host_error(authority[at + 1 :]):
            return fail(error)
        if at >= 0:
            user = True
            if not all(_ascii_alnum(c) or c in _USERINFO_PUNCTUATION for c in authority[:at]):
                return fail("net/url: invalid userinfo")
            if error := _unescape_error(authority[:at]):
                return fail(error)
    if scheme and not rest.startswith("/") and rest:  # an opaque URL (https:host) is not unescaped
        return scheme, user, query, fragment
    if error := _unescape_error(rest):
        return fail(error)
    if hashed and fragment and (error := _unescape_error(fragment)):
        return fail(error, raw)
    return scheme, user, query, fragment


# -- ValidateAuthenticationConfiguration -------------------------------------------------------------------------

_DNS1123_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    f"and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN}')"
)
_HTTP_PATH = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_EMAIL_UNVERIFIED = (
    "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression"
    " or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression"
)
_PEM_BLOCK = re.compile(r"-----BEGIN ([^\n]*?)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


class _Validation:
    """One run of ValidateAuthenticationConfiguration: the errors found and the authenticators compiled."""

    def __init__(self, version: Version, disallowed: Collection[str]) -> None:
        self.version, self.k8s_version = version, f"{version[0]}.{version[1]}"
        self.disallowed = frozenset(disallowed)
        self.errors: list[FieldError] = []
        self.expressions = 0
        self.uses_email = self.uses_email_verified = False  # validationState, per authenticator

    def text(self, since_1_34: str, before: str) -> str:
        """The detail text: 1.34 dropped field names and redundant words from several (apiserver 528a50d7b,
        af5056a3d)."""
        return since_1_34 if self.version >= (1, 34) else before

    def configuration(self, config: Mapping[str, Any]) -> list[Authenticator]:
        root = Path.new("jwt")
        jwt = config["jwt"]
        if len(jwt) > MAX_AUTHENTICATORS:
            self.errors.append(fe.too_many(root, len(jwt), MAX_AUTHENTICATORS))
            return []
        authenticators, issuers, discovery = [], set(), set()
        for i, authenticator in enumerate(jwt):
            path = root.index(i)
            authenticators.append(self.jwt(authenticator, path))
            url, discovery_url = authenticator["issuer"]["url"], authenticator["issuer"]["discoveryURL"] or ""
            if url in issuers:
                self.errors.append(fe.duplicate(path.child("issuer", "url"), url))
            issuers.add(url)
            if discovery_url:
                if discovery_url in discovery:
                    self.errors.append(fe.duplicate(path.child("issuer", "discoveryURL"), discovery_url))
                discovery.add(discovery_url)
        anonymous = config.get("anonymous")
        if anonymous is not None:
            if self.version == (1, 31):  # AnonymousAuthConfigurableEndpoints: alpha, off by default, in 1.31 only
                detail = "anonymous is not supported when AnonymousAuthConfigurableEnpoints feature gate is disabled"
                self.errors.append(fe.forbidden(Path.new("anonymous"), detail))
            if not anonymous["enabled"] and anonymous["conditions"]:
                go_type = "apiserver.AnonymousAuthCondition"
                conditions = fe.GoSlice(go_type, tuple(
                    fe.GoStruct((("Path", c["path"]),), go_type, json=(("path", c["path"]),))
                    for c in anonymous["conditions"]
                ))  # fmt: skip
                detail = "enabled should be set to true when conditions are defined"
                self.errors.append(fe.invalid(Path.new("anonymous", "conditions"), conditions, detail))
        return authenticators

    def jwt(self, authenticator: Mapping[str, Any], path: Path) -> Authenticator:
        """validateJWTAuthenticator: issuer, claim validation rules, claim mappings, user validation rules."""
        issuer = authenticator["issuer"]
        self.issuer(issuer, path.child("issuer"))
        self.uses_email = self.uses_email_verified = False
        required, claim_rules = self.claim_rules(
            authenticator["claimValidationRules"], path.child("claimValidationRules")
        )
        mappings = authenticator["claimMappings"]
        compiled = self.claim_mappings(mappings, path.child("claimMappings"))
        user_rules = self.user_rules(authenticator["userValidationRules"], path.child("userValidationRules"))
        username, groups, uid = mappings["username"], mappings["groups"], mappings["uid"]
        return Authenticator(
            issuer["url"], tuple(issuer["audiences"]), self.version, username["claim"], username["prefix"],
            groups["claim"], groups["prefix"], uid["claim"], tuple(required.items()), compiled[0], compiled[1],
            compiled[2], compiled[3], claim_rules, user_rules,
        )  # fmt: skip

    def issuer(self, issuer: Mapping[str, Any], path: Path) -> None:
        url, discovery_url = issuer["url"], issuer["discoveryURL"] or ""
        if not url:
            self.errors.append(fe.required(path.child("url"), self.text("", "URL is required")))
        else:
            self.url(url, path.child("url"), self.disallowed)
        if discovery_url:
            if url and url.rstrip("/") == discovery_url.rstrip("/"):
                detail = "discoveryURL must be different from URL"
                self.errors.append(fe.invalid(path.child("discoveryURL"), discovery_url, detail))
            self.url(discovery_url, path.child("discoveryURL"), ())
        self.audiences(issuer["audiences"], issuer["audienceMatchPolicy"], path)
        if issuer["certificateAuthority"] and (problem := _certificate_problem(issuer["certificateAuthority"])):
            self.errors.append(fe.invalid(path.child("certificateAuthority"), "<omitted>", problem))
        egress = issuer.get("egressSelectorType", "")
        if egress and egress not in ("controlplane", "cluster"):
            detail = "egress selector must be either controlplane or cluster"
            self.errors.append(fe.invalid(path.child("egressSelectorType"), egress, detail))

    def url(self, url: str, path: Path, disallowed: Collection[str]) -> None:
        """validateURL: not a disallowed issuer (the service account issuers); https, no user, query or fragment."""
        if url in disallowed:
            listed = " ".join(sorted(disallowed))
            self.errors.append(fe.invalid(path, url, f"URL must not overlap with disallowed issuers: [{listed}]"))
        parsed = _parse_url(url)
        if isinstance(parsed, str):
            self.errors.append(fe.invalid(path, url, parsed))
            return
        scheme, user, query, fragment = parsed
        for wrong, detail in (
            (scheme != "https", "URL scheme must be https"), (user, "URL must not contain a username or password"),
            (bool(query), "URL must not contain a query"), (bool(fragment), "URL must not contain a fragment"),
        ):  # fmt: skip
            if wrong:
                self.errors.append(fe.invalid(path, url, detail))

    def audiences(self, audiences: Sequence[str], policy: str, path: Path) -> None:
        where = path.child("audiences")
        if not audiences:
            self.errors.append(fe.required(where, f"at least one {where} is required"))
            return
        seen: set[str] = set()
        for i, audience in enumerate(audiences):
            if not audience:
                self.errors.append(fe.required(where.index(i), self.text("", "audience can't be empty")))
            if audience in seen:
                self.errors.append(fe.duplicate(where.index(i), audience))
            seen.add(audience)
        policy_path = path.child("audienceMatchPolicy")
        if len(audiences) > 1 and policy != "MatchAny":
            detail = "audienceMatchPolicy must be MatchAny for multiple audiences"
            self.errors.append(fe.invalid(policy_path, policy, detail))
        if len(audiences) == 1 and policy and policy != "MatchAny":
            detail = "audienceMatchPolicy must be empty or MatchAny for single audience"
            self.errors.append(fe.invalid(policy_path, policy, detail))

    def compile(
        self, text: str, path: Path, errors: list[FieldError], user: bool = False, boolean: bool = False, **about: str
    ) -> Expression | None:
        """compileClaimsCELExpression/compileUserCELExpression: an invalid expression, or an internal error."""
        self.expressions += 1
        compiled = compile_authn(text, self.k8s_version, user, boolean)
        if compiled.program is not None:
            return Expression(text, compiled.program, **about)
        if compiled.error.startswith("program instantiation failed"):
            errors.append(fe.internal_error(path, compiled.error))
        else:
            errors.append(fe.invalid(path, text, compiled.error))
        return None

    def claim_rules(
        self, rules: Sequence[Mapping[str, Any]], path: Path
    ) -> tuple[dict[str, str], tuple[Expression, ...]]:
        required: dict[str, str] = {}
        compiled: list[Expression] = []
        claims: set[str] = set()
        expressions: set[str] = set()
        for i, rule in enumerate(rules):
            where = path.index(i)
            claim, expression = rule["claim"], rule["expression"]
            if claim and expression:
                self.errors.append(fe.invalid(where, claim, "claim and expression can't both be set"))
            elif not claim and not expression:
                self.errors.append(fe.required(where, "claim or expression is required"))
            elif claim:
                if rule["message"]:
                    detail = self.text(
                        "may not be specified when claim is set", "message can't be set when claim is set"
                    )
                    self.errors.append(fe.invalid(where.child("message"), rule["message"], detail))
                if claim in claims:
                    self.errors.append(fe.duplicate(where.child("claim"), claim))
                claims.add(claim)
                required[claim] = rule["requiredValue"]
            else:
                if rule["requiredValue"]:
                    detail = self.text(
                        "may not be specified when expression is set",
                        "requiredValue can't be set when expression is set",
                    )
                    self.errors.append(fe.invalid(where.child("requiredValue"), rule["requiredValue"], detail))
                if expression in expressions:
                    self.errors.append(fe.duplicate(where.child("expression"), expression))
                    continue
                expressions.add(expression)
                result = self.compile(
                    expression, where.child("expression"), self.errors, boolean=True, message=rule["message"]
                )
                if result is not None:
                    compiled.append(result)
        self.uses_email_verified = any(uses_claim(e.program, "email_verified") for e in compiled)
        return required, tuple(compiled)

    def prefixed(self, mapping: Mapping[str, Any], path: Path, claim_or_expression_required: bool) -> Expression | None:
        """validatePrefixClaimOrExpression: the compiled expression, or None (also when anything is wrong)."""
        errors: list[FieldError] = []
        compiled = None
        claim, expression, prefix = mapping["claim"], mapping["expression"], mapping.get("prefix")
        if claim and expression:
            errors.append(fe.invalid(path, "", "claim and expression can't both be set"))
        elif not claim and not expression and claim_or_expression_required:
            errors.append(fe.required(path, "claim or expression is required"))
        elif expression:
            if prefix is not None:
                detail = self.text(
                    "may not be specified when expression is set", "prefix can't be set when expression is set"
                )
                errors.append(fe.invalid(path.child("prefix"), prefix, detail))
            compiled = self.compile(expression, path.child("expression"), errors)
        elif claim and prefix is None:
            detail = "prefix is required when claim is set. It can be set to an empty string to disable prefixing"
            errors.append(fe.required(path.child("prefix"), detail))
        self.errors += errors
        return None if errors else compiled

    def claim_mappings(self, mappings: Mapping[str, Any], path: Path) -> tuple[Any, ...]:
        """validateClaimMappings: (username, groups, uid, extra) compiled; claims.email needs email_verified."""
        username = self.prefixed(mappings["username"], path.child("username"), True)
        if username is not None:
            self.uses_email = uses_claim(username.program, "email")
            self.uses_email_verified |= uses_claim(username.program, "email_verified")
        groups = self.prefixed(mappings["groups"], path.child("groups"), False)
        uid_mapping, uid = mappings["uid"], None
        if uid_mapping["claim"] and uid_mapping["expression"]:
            self.errors.append(fe.invalid(path.child("uid"), "", "claim and expression can't both be set"))
        elif uid_mapping["expression"]:
            uid = self.compile(uid_mapping["expression"], path.child("uid", "expression"), self.errors)
        extra: list[Expression] = []
        keys: set[str] = set()
        for i, mapping in enumerate(mappings["extra"]):
            where, key = path.child("extra").index(i), mapping["key"]
            self.errors += _domain_prefixed_path(where.child("key"), key)
            if key != key.lower():
                self.errors.append(
                    fe.invalid(where.child("key"), key, self.text("must be lowercase", "key must be lowercase"))
                )
            if self.version >= (1, 32) and _kubernetes_domain(key):  # apiserver fed75d52d
                detail = "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"
                self.errors.append(fe.invalid(where.child("key"), key, detail))
            if key in keys:
                self.errors.append(fe.duplicate(where.child("key"), key))
                continue
            keys.add(key)
            if not mapping["valueExpression"]:
                detail = self.text("", "valueExpression is required")
                self.errors.append(fe.required(where.child("valueExpression"), detail))
                continue
            result = self.compile(mapping["valueExpression"], where.child("valueExpression"), self.errors, key=key)
            if result is not None:
                extra.append(result)
        self.uses_email_verified |= any(uses_claim(e.program, "email_verified") for e in extra)
        if self.uses_email and not self.uses_email_verified:
            username_expression = mappings["username"]["expression"]
            self.errors.append(fe.invalid(path.child("username", "expression"), username_expression, _EMAIL_UNVERIFIED))
        return username, groups, uid, tuple(extra)

    def user_rules(self, rules: Sequence[Mapping[str, Any]], path: Path) -> tuple[Expression, ...]:
        compiled: list[Expression] = []
        seen: set[str] = set()
        for i, rule in enumerate(rules):
            where = path.index(i).child("expression")
            expression = rule["expression"]
            if not expression:
                self.errors.append(fe.required(where, self.text("", "expression is required")))
                continue
            if expression in seen:
                self.errors.append(fe.duplicate(where, expression))
                continue
            seen.add(expression)
            result = self.compile(expression, where, self.errors, user=True, boolean=True, message=rule["message"])
            if result is not None:
                compiled.append(result)
        return tuple(compiled)


def _domain_prefixed_path(path: Path, key: str) -> list[FieldError]:
    """apimachinery IsDomainPrefixedPath: `acme.io/foo`, a DNS subdomain, '/', an HTTP path."""
    if not key:
        return [fe.required(path, "")]
    host, slash, rest = key.partition("/")
    if not slash or not host or not rest:
        return [fe.invalid(path, key, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errors = []
    if len(host.encode()) > 253:
        errors.append(fe.invalid(path, host, "must be no more than 253 characters"))
    if not re.fullmatch(_DNS1123_SUBDOMAIN, host):
        errors.append(fe.invalid(path, host, _SUBDOMAIN_MESSAGE))
    if not re.fullmatch(_HTTP_PATH, rest):
        errors.append(fe.invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH}')"))
    return errors


def _kubernetes_domain(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))


def _certificate_problem(pem: str) -> str:
    """client-go cert.NewPoolFromBytes: the first CERTIFICATE block without headers must hold a certificate.
    kcel checks that its DER is a SEQUENCE, not the certificate inside."""
    for match in _PEM_BLOCK.finditer(pem):
        body = match.group(2)
        if match.group(1) != "CERTIFICATE" or ":" in body.split("\n", 1)[0]:
            continue
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        return "" if der[:1] == b"\x30" else "x509: malformed certificate"
    return "data does not contain any valid RSA or ECDSA certificates"


# -- the entry points --------------------------------------------------------------------------------------------


class ConfigurationError(ValueError):
    """The configuration would not load; `errors` holds the API server's texts (str(): as ToAggregate joins them)."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = tuple(errors)
        super().__init__(self.errors[0] if len(self.errors) == 1 else f"[{', '.join(self.errors)}]")


@dataclass(frozen=True)
class Authenticators:
    """The JWT authenticators of a valid configuration, compiled as one API server version compiles them."""

    authenticators: tuple[Authenticator, ...]
    version: Version
    expressions: int = field(default=0, compare=False)

    def authenticate(self, token: str | Mapping[str, Any], now: float | datetime | None = None) -> Authentication:
        """What the authenticator whose issuer URL is the token's `iss` makes of it. `token`: a JWT, whose payload
        is base64url-decoded WITHOUT verifying its signature; the JSON text of the claims; or the claims as a
        mapping. `now` (Unix seconds or a datetime, naive meaning UTC): also check `exp` and `nbf` as at that
        moment; None skips them."""
        try:
            claims = read_token(token)
            issuer = issuer_of(claims)
        except Rejected as err:
            return Authentication(error=str(err))
        for authenticator in self.authenticators:
            if authenticator.issuer == issuer:
                return authenticate_claims(authenticator, claims, _utc(now))
        configured = ", ".join(fe.quote(a.issuer) for a in self.authenticators) or "none"
        return Authentication(
            error=f"no JWT authenticator has issuer {fe.quote(issuer)} (configured: {configured}); the API server "
            "would try its other authenticators, then answer 401 Unauthorized"
        )


def _utc(now: float | datetime | None) -> datetime | None:
    if now is None or isinstance(now, datetime):
        return now if now is None or now.tzinfo else now.replace(tzinfo=timezone.utc)
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise TypeError(f"now is Unix seconds or a datetime, not {type(now).__name__}")
    return datetime.fromtimestamp(now, timezone.utc)


def validate(
    document: Mapping[str, Any], k8s_version: str | None = None, disallowed_issuers: Collection[str] = ()
) -> tuple[list[str], Authenticators]:
    """The errors kube-apiserver reports loading the configuration (decoding, then validation; empty: it loads),
    and its authenticators. `disallowed_issuers`: the API server's `--service-account-issuer` values."""
    version = server_version(k8s_version)
    with fe.answering_as(version):
        try:
            config = _decode(document, version)
        except ConfigurationError as err:
            return list(err.errors), Authenticators((), version)
        validation = _Validation(version, disallowed_issuers)
        authenticators = validation.configuration(config)
        errors = [str(error) for error in validation.errors]
    return errors, Authenticators(tuple(authenticators), version, validation.expressions)


def load(
    document: Mapping[str, Any], k8s_version: str | None = None, disallowed_issuers: Collection[str] = ()
) -> Authenticators:
    """The configuration's authenticators, ready to authenticate; ConfigurationError if it would not load."""
    errors, authenticators = validate(document, k8s_version, disallowed_issuers)
    if errors:
        raise ConfigurationError(errors)
    return authenticators


def authenticate(
    document: Mapping[str, Any],
    token: str | Mapping[str, Any],
    k8s_version: str | None = None,
    now: float | datetime | None = None,
) -> Authentication:
    """`load(document, k8s_version).authenticate(token, now)`: a configuration that would not load raises
    ConfigurationError."""
    return load(document, k8s_version).authenticate(token, now)


def check(document: Mapping[str, Any], where: str, k8s_version: str) -> Checked:
    """What kube-apiserver reports when it loads the configuration file (`where` names it for the caller): the
    field errors it wraps as `invalid authentication configuration: [...]`, or the decoding error it wraps as
    `failed to load authentication configuration from file "...": ...`."""
    errors, authenticators = validate(document, k8s_version)
    return Checked(KIND, "", authenticators.expressions, tuple(errors))
