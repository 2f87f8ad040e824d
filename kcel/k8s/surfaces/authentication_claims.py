"""Structured authentication at run time: how a JWT authenticator turns a token's claims into a user, offline.

The CEL side follows k8s.io/apiserver pkg/authentication/cel (compile.go, mapper.go): `claims` is a
`map(string, any)` (google.protobuf.Any: checked like dyn, printed `any`), `user` a `kubernetes.UserInfo` object,
both compiled in the API server's *stored* environment and run under the per-call cost limit. The flow follows
plugin/pkg/authenticator/token/oidc (oidc.go) with go-oidc v2's token checks: username, groups, uid and extra
mappings, then the `claim`/`requiredValue` rules, then `claimValidationRules`, then `userValidationRules`, each
with upstream's error text. Signatures are never checked: a JWT's payload is only base64url-decoded.

How the claims reach CEL changed in 1.34 (apiserver dbbb6a075, f2b320dc5): before, as unstructured JSON (whole
numbers are ints); from 1.34, decoded by encoding/json (every number a double) into a lazy map whose nested
objects, and `user.extra`, unescape field names (`claims.kubernetes__dot__io`), and whose comprehensions range
over the claims' *values* (lazy.MapValue's iterator), not their names.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any

from kcel.checker.types import ANY, STRING, list_of, map_of
from kcel.env import Env
from kcel.errors import CelError, EvalError
from kcel.eval.program import Program
from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import ANY_RESULT, Compiled, ObjectType, compile_expression
from kcel.k8s.environment import Version
from kcel.k8s.manifests.decoding import json_float, json_int
from kcel.k8s.schemas.escaping import unescape
from kcel.parser.ast import Call, Const, Expr, Ident, Select, walk

PER_CALL_LIMIT = 1_000_000
"""celconfig.PerCallLimit: the runtime cost limit of every authentication expression."""

CLAIMS_TYPE = map_of(STRING, ANY)
_STRINGS = list_of(STRING)
USER_TYPE = ObjectType(
    "kubernetes.UserInfo", {"username": STRING, "uid": STRING, "groups": _STRINGS, "extra": map_of(STRING, _STRINGS)}
).cel
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
LAZY_CLAIMS: Version = (1, 34)


@cache
def claims_environment(k8s_version: str) -> Env:
    """compile.go's `claims` environment: the base environment for stored expressions plus `claims`."""
    return Env({"claims": CLAIMS_TYPE}, k8s_version=k8s_version, environment="stored")


@cache
def user_environment(k8s_version: str) -> Env:
    """compile.go's `user` environment: the base environment for stored expressions plus `user`."""
    return Env({"user": USER_TYPE}, k8s_version=k8s_version, environment="stored")


ENVIRONMENTS = {"authn-claims": claims_environment, "authn-user": user_environment}


def compile_authn(text: str, k8s_version: str, user: bool, boolean: bool) -> Compiled:
    """compiler.compile: `compilation failed: ...`, or `must evaluate to bool` (no "but got", unlike admission)."""
    env = user_environment(k8s_version) if user else claims_environment(k8s_version)
    compiled = compile_expression(env, text, ANY_RESULT)
    if compiled.program is not None and boolean and str(compiled.program.output_type) != "bool":
        return Compiled(text, None, "must evaluate to bool")
    return compiled


def uses_claim(program: Program, name: str) -> bool:
    """validation.go hasSelectExp: does the expression read `claims.<name>` (or `claims.?<name>`) anywhere?"""
    for node in walk(program.parsed.expr):
        if isinstance(node, Select) and _is_claims(node.operand) and node.field == name:
            return True
        if isinstance(node, Call) and node.target is None and node.function == "_?._" and len(node.args) == 2:
            if _is_claims(node.args[0]) and _const(node.args[1]) == name:
                return True
    return False


def _is_claims(node: Expr) -> bool:
    return isinstance(node, Ident) and node.name == "claims"


def _const(node: Expr) -> Any:
    return node.value if isinstance(node, Const) else None


def _string_backed(node: Expr) -> bool:
    """A result that cel-go holds as a Go []string (`split`, `findAll`, a value of `getQuery()`), which oidc.go's
    convertCELValueToStringList does not accept as a list of strings."""
    while isinstance(node, Call) and node.function == "dyn" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, Call) and node.function in ("_[_]", "_[?_]") or isinstance(node, Select):
        operand = node.args[0] if isinstance(node, Call) else node.operand
        return isinstance(operand, Call) and operand.function == "getQuery"
    return isinstance(node, Call) and node.target is not None and node.function in ("split", "findAll")


@dataclass(frozen=True)
class Expression:
    """A compiled expression of an authenticator, with the rule's `message` or the extra mapping's `key`."""

    text: str
    program: Program
    message: str = ""
    key: str = ""

    @property
    def string_backed(self) -> bool:
        return _string_backed(self.program.parsed.expr)


@dataclass(frozen=True)
class Authenticator:
    """One JWT authenticator as oidc.New builds it from a valid configuration: its claim-based mappings and
    required claims, and its compiled expressions."""

    issuer: str
    audiences: tuple[str, ...]
    version: Version
    username_claim: str = ""
    username_prefix: str | None = None
    groups_claim: str = ""
    groups_prefix: str | None = None
    uid_claim: str = ""
    required_claims: tuple[tuple[str, str], ...] = ()
    username: Expression | None = None
    groups: Expression | None = None
    uid: Expression | None = None
    extra: tuple[Expression, ...] = ()
    claim_rules: tuple[Expression, ...] = ()
    user_rules: tuple[Expression, ...] = ()


@dataclass(frozen=True)
class UserInfo:
    """What the authenticator returns (the API server then adds the group `system:authenticated`)."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Authentication:
    """The outcome for one token: the user, or upstream's error text. `issuer` names the authenticator that
    handled the token; None when none did (upstream then tries the next authenticator and finally answers 401)."""

    user: UserInfo | None = None
    error: str = ""
    issuer: str | None = None

    @property
    def authenticated(self) -> bool:
        return self.user is not None


class Rejected(Exception):
    """The token is refused; the text is what the authenticator returns as its error."""


# -- reading a token ---------------------------------------------------------------------------------------------

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def read_token(token: str | Mapping[str, Any]) -> dict[str, Any]:
    """The claims of a token: a compact JWT's payload, base64url-decoded WITHOUT checking the signature (kcel
    has no keys), a JSON object's text, or a mapping. Raises Rejected naming what is malformed."""
    if isinstance(token, Mapping):  # as JSON, as a token would carry them (tuples become lists)
        try:
            return _json_object(json.dumps({str(k): v for k, v in token.items()}), "the claims are")
        except (TypeError, ValueError) as err:
            raise Rejected(f"the claims are not JSON: {err}") from None
    if not isinstance(token, str):
        raise Rejected(f"a token is a JWT or a JSON object of claims, not {type(token).__name__}")
    text = token.strip()
    if text.startswith("{"):
        return _json_object(text, "the claims are")
    parts = text.split(".")
    if len(parts) != 3:
        raise Rejected(f"malformed token: a JWT has 3 dot-separated parts (header.payload.signature), not {len(parts)}")
    payload = parts[1]
    if not _BASE64URL.fullmatch(payload) or len(payload) % 4 == 1:
        raise Rejected("malformed token: its payload is not unpadded base64url")
    try:
        data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError) as err:
        raise Rejected(f"malformed token: its payload is not base64url: {err}") from None
    return _json_object(data.decode("utf-8", "replace"), "malformed token: its payload is")


def _json_object(text: str, what: str) -> dict[str, Any]:
    def no_constant(name: str) -> Any:
        raise ValueError(f"invalid JSON value {name}")

    try:
        value = json.loads(text, parse_int=json_int, parse_float=json_float, parse_constant=no_constant)
    except ValueError as err:
        raise Rejected(f"{what} not valid JSON: {err}") from None
    if not isinstance(value, dict):
        raise Rejected(f"{what} not a JSON object")
    return value


def issuer_of(claims: Mapping[str, Any]) -> str:
    """oidc.go untrustedIssuer: the `iss` claim, with Google's legacy `accounts.google.com` coalesced."""
    issuer = claims.get("iss")
    if issuer is not None and not isinstance(issuer, str):
        raise Rejected(f"the token's iss claim is not a string: {fe.json_kind(issuer)}")
    return "https://accounts.google.com" if issuer == "accounts.google.com" else issuer or ""


# -- the CEL values of the claims and of the user ----------------------------------------------------------------


class EscapedMap(Mapping[str, Any]):
    """A JSON object as oidc.go's unescapeMapper presents it from 1.34: a field name that unescapes
    (`kubernetes__dot__io`) reads the unescaped key; any other name reads as written."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: Any) -> Any:
        name = unescape(key) if type(key) is str else None
        return self._items[key if name is None else name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class LazyClaims(EscapedMap):
    """`claims` from 1.34, a lazy.MapValue: names are unescaped (an unknown escape finds nothing), a key that is
    not a string is `no such overload`, and a comprehension ranges over the values (its iterator yields them)."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if type(key) is not str:
            raise EvalError("no such overload")
        name = unescape(key)
        if name is None:
            raise KeyError(key)
        return self._items[name]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items.values())

    def keys(self) -> KeysView[str]:
        return self._items.keys()

    def items(self) -> ItemsView[str, Any]:
        return self._items.items()

    def values(self) -> ValuesView[Any]:
        return self._items.values()


def claims_value(claims: Mapping[str, Any], version: Version) -> Mapping[str, Any]:
    """`claims` as the API server of `version` hands it to CEL."""
    items = {name: _value(value, version) for name, value in claims.items()}
    return LazyClaims(items) if version >= LAZY_CLAIMS else items


def _value(value: Any, version: Version) -> Any:
    if isinstance(value, Mapping):
        items = {str(k): _value(v, version) for k, v in value.items()}
        return EscapedMap(items) if version >= LAZY_CLAIMS else items
    if isinstance(value, (list, tuple)):
        return [_value(v, version) for v in value]
    if type(value) is int and (version >= LAZY_CLAIMS or not -(2**63) <= value < 2**63):
        return float(value)  # encoding/json decodes every number into a float64
    return value


def user_value(user: UserInfo, version: Version) -> dict[str, Any]:
    """`user` for userValidationRules: every field present (empty when unset); `extra` unescapes from 1.34."""
    extra = {key: list(values) for key, values in user.extra.items()}
    return {
        "username": user.username, "uid": user.uid, "groups": list(user.groups),
        "extra": EscapedMap(extra) if version >= LAZY_CLAIMS else extra,
    }  # fmt: skip


def _evaluate(expressions: tuple[Expression, ...], name: str, value: Any) -> list[Any]:
    """mapper.eval: every expression in order; the first error stops them all."""
    results = []
    for expression in expressions:
        try:
            results.append(expression.program.evaluate_with_cost({name: value}, cost_limit=PER_CALL_LIMIT)[0])
        except CelError as err:
            raise Rejected(f"expression '{expression.text}' resulted in error: {err}") from None
    return results


def _string_list(value: Any, expression: Expression) -> list[str]:
    """convertCELValueToStringList: a string or a list of strings, empty strings dropped; null is nothing."""
    if type(value) is str:
        return [value] if value else []
    if value is None:
        return []
    if isinstance(value, (list, tuple)) and not expression.string_backed:
        if not all(type(item) is str for item in value):
            raise ValueError("expression must return a string or a list of strings")
        return [item for item in value if item]
    raise ValueError("expression must return a string or a list of strings")


# -- Go's JSON decoding of single claims ---------------------------------------------------------------------


def _go_string(value: Any) -> str:
    """json.Unmarshal into a Go string: null leaves it empty."""
    if value is None or isinstance(value, str):
        return value or ""
    raise ValueError(f"json: cannot unmarshal {fe.json_kind(value)} into Go value of type string")


def _claim_string(claims: Mapping[str, Any], name: str) -> str:
    """oidc.go claims.unmarshalClaim into a string."""
    if name not in claims:
        raise ValueError("claim not present")
    return _go_string(claims[name])


def _go_strings(value: Any) -> list[str] | None:
    """stringOrArray: a list of strings (null elements empty), or one string; null is no list."""
    if value is None:
        return None
    if isinstance(value, list) and all(item is None or isinstance(item, str) for item in value):
        return [item or "" for item in value]
    return [_go_string(value)]


def _quote_list(items: Any) -> str:
    """Go's %q of a []string."""
    return "[" + " ".join(fe.quote(item) for item in items) + "]"


# -- go-oidc's token checks ----------------------------------------------------------------------------------


_TOKEN_FIELDS = {
    "iss": str, "sub": str, "nonce": str, "at_hash": str, "_claim_names": Mapping, "_claim_sources": Mapping,
}  # fmt: skip
_GO_TYPES = {"_claim_names": "map[string]string", "_claim_sources": "map[string]oidc.claimSource"}


def _token_field_error(name: str, value: Any) -> str:
    """The UnmarshalTypeError go-oidc's idToken struct gives a claim of the wrong JSON type ('' if none)."""
    wanted = _TOKEN_FIELDS.get(name)
    if wanted is None:
        return ""
    if not isinstance(value, wanted):
        go_type = _GO_TYPES.get(name, "string")
        return f"json: cannot unmarshal {fe.json_kind(value)} into Go struct field idToken.{name} of type {go_type}"
    if name == "_claim_names" and not all(isinstance(v, str) for v in value.values() if v is not None):
        kind = next(fe.json_kind(v) for v in value.values() if v is not None and not isinstance(v, str))
        return f"json: cannot unmarshal {kind} into Go struct field idToken._claim_names of type string"
    return ""


def _audience(value: Any) -> list[str]:
    """go-oidc's audience: a string, or a list of strings."""
    if value is None or isinstance(value, str):
        return [value or ""]
    if isinstance(value, list):
        return [_go_string(item) for item in value]
    raise ValueError(f"json: cannot unmarshal {fe.json_kind(value)} into Go value of type []string")


_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_INT64 = 2**63


def _unix(value: Any) -> int:
    """go-oidc's jsonTime: a number (or a string holding one) of seconds since the epoch, truncated."""
    if isinstance(value, str):
        if not _JSON_NUMBER.fullmatch(value):
            literal = fe.quote(json.dumps(value, ensure_ascii=False))
            raise ValueError(f"json: invalid number literal, trying to unmarshal {literal} into Number")
        value = float(value) if any(c in value for c in ".eE") else int(value)
    if value is None:
        raise ValueError('strconv.ParseFloat: parsing "": invalid syntax')
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"json: cannot unmarshal {fe.json_kind(value)} into Go value of type json.Number")
    if value != value or abs(value) == float("inf"):
        raise ValueError(f"strconv.ParseFloat: parsing {fe.quote(repr(value))}: value out of range")
    return max(-_INT64, min(_INT64 - 1, int(value)))


def _go_time(moment: datetime | None) -> str:
    """time.Time's String() in UTC; the zero time for None."""
    if moment is None:
        return "0001-01-01 00:00:00 +0000 UTC"
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{fraction}" if fraction else "") + " +0000 UTC"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _moment(seconds: int) -> datetime:
    """time.Unix(seconds, 0), held within the years Python counts."""
    try:
        return _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return datetime.max.replace(tzinfo=timezone.utc) if seconds > 0 else datetime.min.replace(tzinfo=timezone.utc)


def _verify(authn: Authenticator, claims: Mapping[str, Any], now: datetime | None) -> None:
    """go-oidc IDTokenVerifier.Verify (but the signature), then oidc.go's check of several audiences."""
    saved = ""
    audience: list[str] = []
    times: dict[str, int] = {}
    try:
        for name, value in claims.items():
            if name == "aud":
                audience = _audience(value)
            elif name in ("exp", "iat", "nbf"):
                times[name] = _unix(value)
            elif not saved and value is not None:
                saved = _token_field_error(name, value)
    except ValueError as err:
        saved = str(err)
    if saved:
        raise Rejected(f"oidc: verify token: oidc: failed to unmarshal claims: {saved}")
    names, sources = claims.get("_claim_names"), claims.get("_claim_sources")
    for source in names.values() if isinstance(names, Mapping) else ():
        if source == "":
            raise Rejected("oidc: verify token: oidc: failed to obtain source from claim name")
        if not isinstance(sources, Mapping) or source not in sources:
            raise Rejected("oidc: verify token: oidc: source does not exist")
    if len(authn.audiences) == 1 and authn.audiences[0] not in audience:
        got = _quote_list(audience)
        raise Rejected(f"oidc: verify token: oidc: expected audience {fe.quote(authn.audiences[0])} got {got}")
    if now is not None:
        expiry = _moment(times["exp"]) if "exp" in times else None
        if expiry is None or expiry < now:  # no exp: the zero time, long past
            raise Rejected(f"oidc: verify token: oidc: token is expired (Token Expiry: {_go_time(expiry)})")
        not_before = _moment(times["nbf"]) if "nbf" in times else None
        if not_before is not None and now + timedelta(minutes=1) < not_before:
            message = f"current time {_go_time(now)} before the nbf (not before) time: {_go_time(not_before)}"
            raise Rejected(f"oidc: verify token: oidc: {message}")
    if not set(authn.audiences) & set(audience):
        wanted, got = _quote_list(sorted(authn.audiences)), _quote_list(audience)
        raise Rejected(f"oidc: verify token: oidc: expected audience in {wanted} got {got}")


def _expand_distributed(authn: Authenticator, claims: Mapping[str, Any]) -> None:
    """claimResolver.expand: a groups claim held at another endpoint would be fetched; kcel cannot."""
    claim = authn.groups_claim
    names = claims.get("_claim_names")
    if not claim or claim in claims or not isinstance(names, Mapping) or claim not in names:
        return
    sources = claims.get("_claim_sources")
    if not isinstance(sources, Mapping):  # (one of another JSON type failed go-oidc's decoding already)
        raise Rejected("oidc: could not expand distributed claims: oidc: no claim sources")
    source = names[claim]
    if source not in sources:
        message = f"id token _claim_names contained a source {source} missing in _claims_sources"
        raise Rejected(f"oidc: could not expand distributed claims: {message}")
    endpoint = sources[source].get("endpoint") if isinstance(sources[source], Mapping) else None
    if endpoint:
        raise Rejected(f"distributed claim {fe.quote(claim)} is held at {endpoint}, which kcel does not fetch")


# -- the authenticator ---------------------------------------------------------------------------------------


def authenticate_claims(authn: Authenticator, claims: Mapping[str, Any], now: datetime | None = None) -> Authentication:
    """jwtAuthenticator.AuthenticateToken once the token's issuer chose this authenticator."""
    try:
        return Authentication(_user(authn, claims, now), issuer=authn.issuer)
    except Rejected as err:
        return Authentication(error=str(err), issuer=authn.issuer)


def _user(authn: Authenticator, claims: Mapping[str, Any], now: datetime | None) -> UserInfo:
    _verify(authn, claims, now)
    _expand_distributed(authn, claims)
    value = claims_value(claims, authn.version)
    username = _username(authn, claims, value)
    groups = _groups(authn, claims, value)
    uid = _uid(authn, claims, value)
    extra = _extra(authn, claims, value)
    for name, wanted in authn.required_claims:
        if name not in claims:
            raise Rejected(f"oidc: required claim {name} not present in ID token")
        try:
            got = _go_string(claims[name])
        except ValueError as err:
            raise Rejected(f"oidc: parse claim {name}: {err}") from None
        if got != wanted:
            raise Rejected(f"oidc: required claim {name} value does not match. Got = {got}, want = {wanted}")
    _check_rules(authn.claim_rules, "claims", value, "oidc: error evaluating claim validation expression")
    user = UserInfo(username, uid, tuple(groups), extra)
    _check_rules(authn.user_rules, "user", user_value(user, authn.version), _USER_RULE)
    return user


_USER_RULE = "oidc: error evaluating user info validation rule"


def _username(authn: Authenticator, claims: Mapping[str, Any], value: Any) -> str:
    if authn.username is not None:
        where = "oidc: error evaluating username claim expression"
        (username,) = _mapped((authn.username,), value, where)
        if type(username) is not str:
            raise Rejected(f"{where}: username claim expression must return a string")
        if not username:
            raise Rejected("oidc: empty username via CEL expression is not allowed")
        return username
    claim = authn.username_claim
    try:
        username = _claim_string(claims, claim)
    except ValueError as err:
        raise Rejected(f"oidc: parse username claims {fe.quote(claim)}: {err}") from None
    if claim == "email" and "email_verified" in claims:
        verified = claims["email_verified"]
        if verified is not None and not isinstance(verified, bool):
            kind = fe.json_kind(verified)
            raise Rejected(
                f"oidc: parse 'email_verified' claim: json: cannot unmarshal {kind} into Go value of type bool"
            )
        if not verified:
            raise Rejected("oidc: email not verified")
    return (authn.username_prefix or "") + username


def _groups(authn: Authenticator, claims: Mapping[str, Any], value: Any) -> list[str]:
    claim = authn.groups_claim
    if claim and claim in claims:
        try:
            groups = _go_strings(claims[claim]) or []
        except ValueError as err:
            raise Rejected(f"oidc: parse groups claim {fe.quote(claim)}: {err}") from None
        return [(authn.groups_prefix or "") + group for group in groups]
    if authn.groups is None:
        return []
    where = "oidc: error evaluating group claim expression"
    (result,) = _mapped((authn.groups,), value, where)
    try:
        return _string_list(result, authn.groups)
    except ValueError as err:
        raise Rejected(f"{where}: {err}") from None


def _uid(authn: Authenticator, claims: Mapping[str, Any], value: Any) -> str:
    if authn.uid_claim:
        try:
            return _claim_string(claims, authn.uid_claim)
        except ValueError as err:
            raise Rejected(f"oidc: parse uid claim {fe.quote(authn.uid_claim)}: {err}") from None
    if authn.uid is None:
        return ""
    where = "oidc: error evaluating uid claim expression"
    (uid,) = _mapped((authn.uid,), value, where)
    if type(uid) is not str:
        raise Rejected(f"{where}: uid claim expression must return a string")
    return uid


def _extra(authn: Authenticator, claims: Mapping[str, Any], value: Any) -> dict[str, tuple[str, ...]]:
    extra: dict[str, tuple[str, ...]] = {}
    jti = claims.get("jti")
    if authn.version >= (1, 32) and isinstance(jti, str) and jti:
        extra[CREDENTIAL_ID_KEY] = (f"JTI={jti}",)
    for expression, result in zip(authn.extra, _mapped(authn.extra, value, ""), strict=True):
        try:
            values = _string_list(result, expression)
        except ValueError as err:
            raise Rejected(f"oidc: error evaluating extra claim expression: {expression.text}: {err}") from None
        if values:
            extra[expression.key] = tuple(values)
    return extra


def _mapped(expressions: tuple[Expression, ...], value: Any, where: str) -> list[Any]:
    """Evaluate claim mappings; an error reads `where: expression '...' resulted in error: ...` (extra mappings'
    errors have no `where`)."""
    try:
        return _evaluate(expressions, "claims", value)
    except Rejected as err:
        raise Rejected(f"{where}: {err}" if where else str(err)) from None


def _check_rules(rules: tuple[Expression, ...], name: str, value: Any, where: str) -> None:
    """EvalClaimMappings/EvalUser, then checkValidationRulesEvaluation: the first rule that is false fails."""
    try:
        results = _evaluate(rules, name, value)
    except Rejected as err:
        raise Rejected(f"{where}: {err}") from None
    for rule, result in zip(rules, results, strict=True):
        if type(result) is not bool:
            raise Rejected(f"{where}: validation expression must return a boolean")
        if not result:
            raise Rejected(f"{where}: validation expression '{rule.text}' failed: {rule.message}")
