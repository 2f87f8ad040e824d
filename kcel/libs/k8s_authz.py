"""Kubernetes' Authz and AuthzSelectors libraries (apiserver pkg/cel/library/authz.go): authorization checks from CEL.

`authorizer.group('apps').resource('deployments').namespace('ns').check('create').allowed()`
builds a question step by step and asks the `Authorizer` the application bound to the
`authorizer` variable (see `authorizer_value`). Every intermediate value is immutable, so a
partly built check can be reused.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from kcel.checker.types import BOOL, STRING, CelType
from kcel.errors import EvalError
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.eval.sizes import actual_size
from kcel.libs import CallEstimate, CallSite, CostEstimate, Estimate, Library, Overload, RuntimeCost
from kcel.libs.k8s_format import FORMATS
from kcel.libs.k8s_selectors import (
    FieldRequirement,
    LabelRequirement,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)

__all__ = [
    "AUTHORIZER_TYPE", "AlwaysAllow", "AlwaysDeny", "Attributes", "Authorizer", "AuthorizerValue", "DECISION_TYPE",
    "Decision", "DecisionValue", "GROUP_CHECK_TYPE", "GroupCheck", "LIBRARY", "PATH_CHECK_TYPE", "PathCheck",
    "RESOURCE_CHECK_TYPE", "ResourceCheck", "UserInfo", "Verdict", "authorizer_value", "library",
    "service_account_user",
]  # fmt: skip

# cel.ObjectType in Go: struct-like types with no fields, which are not registered with the type
# provider, so their names are not usable as type identifiers in expressions.
AUTHORIZER_TYPE = CelType("kubernetes.authorization.Authorizer", kind="message")
PATH_CHECK_TYPE = CelType("kubernetes.authorization.PathCheck", kind="message")
GROUP_CHECK_TYPE = CelType("kubernetes.authorization.GroupCheck", kind="message")
RESOURCE_CHECK_TYPE = CelType("kubernetes.authorization.ResourceCheck", kind="message")
DECISION_TYPE = CelType("kubernetes.authorization.Decision", kind="message")


# -- what an authorizer is asked and answers (k8s.io/apiserver authorizer.Attributes and Decision) ------
# The contract between the CEL `authorizer` variable and the object the embedding application supplies.


@dataclass(frozen=True)
class UserInfo:
    """The requesting user (Go's `user.Info`): groups are what RBAC Group subjects match against."""

    name: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def service_account_user(namespace: str, name: str) -> UserInfo:
    """The user a service account token authenticates as (serviceaccount.ServiceAccountInfo.UserInfo).

    Like Go, the groups do not include `system:authenticated`; the authenticator adds that one.

    >>> service_account_user("default", "builder").name
    'system:serviceaccount:default:builder'
    """
    groups = (ALL_SERVICE_ACCOUNTS_GROUP, f"{ALL_SERVICE_ACCOUNTS_GROUP}:{namespace}")
    return UserInfo(name=f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", groups=groups)


@dataclass(frozen=True, slots=True)
class Attributes:
    """One authorization question (authorizer.AttributesRecord).

    A resource check sets `resource_request` and the API fields (CEL checks always use API
    version "*"); a path check sets `path`. A selector that was not given is None; one that failed
    to parse is None with its parse error in `*_selector_error`, which the authorizer may act on.
    """

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: tuple[FieldRequirement, ...] | None = None
    field_selector_error: str | None = None
    label_selector: tuple[LabelRequirement, ...] | None = None
    label_selector_error: str | None = None


# -- the answer ----------------------------------------------------------------------------------


class Verdict(enum.Enum):
    """authorizer.Decision: only ALLOW makes a CEL decision `allowed()`."""

    DENY = "deny"
    ALLOW = "allow"
    NO_OPINION = "no_opinion"


@dataclass(frozen=True, slots=True)
class Decision:
    """What `Authorize` returns: a verdict, a reason for humans, and an error (None if none)."""

    verdict: Verdict
    reason: str = ""
    error: str | None = None


class Authorizer(Protocol):
    """Anything that can answer an authorization question; the CEL library only calls this."""

    def authorize(self, attributes: Attributes) -> Decision: ...


class AlwaysAllow:
    """authorizerfactory's always-allow authorizer: allow, no reason."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(Verdict.ALLOW)


class AlwaysDeny:
    """authorizerfactory's always-deny authorizer, which in Go answers "no opinion" with a reason."""

    def authorize(self, attributes: Attributes) -> Decision:
        return Decision(Verdict.NO_OPINION, "Everything is forbidden.")


# -- values ----------------------------------------------------------------------------------------


class _ReceiverOnly:
    """Go's receiverOnlyObjectVal: values with methods but no fields, and no equality.

    Its `Equal` only accepts the bare embedded struct, which no CEL value ever is, so `==` and `!=`
    between authz values (or with anything but null) are `no such overload` errors in Kubernetes.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        raise EvalError("no such overload")

    def __ne__(self, other: object) -> bool:
        raise EvalError("no such overload")

    def cel_equals(self, other: object) -> bool:
        raise EvalError("no such overload")

    __hash__ = object.__hash__


@dataclass(frozen=True, eq=False, slots=True)
class AuthorizerValue(_ReceiverOnly):
    """The `authorizer` variable: who asks (`user`) and who answers (`authorizer`)."""

    authorizer: Authorizer
    user: UserInfo
    cel_type_name: ClassVar[str] = AUTHORIZER_TYPE.name


@dataclass(frozen=True, eq=False, slots=True)
class PathCheck(_ReceiverOnly):
    """A non-resource request path to check (`/healthz`)."""

    authorizer: AuthorizerValue
    path: str
    cel_type_name: ClassVar[str] = PATH_CHECK_TYPE.name


@dataclass(frozen=True, eq=False, slots=True)
class GroupCheck(_ReceiverOnly):
    """An API group ("" for the core group) whose resources will be checked."""

    authorizer: AuthorizerValue
    group: str
    cel_type_name: ClassVar[str] = GROUP_CHECK_TYPE.name


@dataclass(frozen=True, eq=False, slots=True)
class ResourceCheck(_ReceiverOnly):
    """A resource request being described; selectors stay text until `check()` parses them."""

    group_check: GroupCheck
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""
    label_selector: str = ""
    cel_type_name: ClassVar[str] = RESOURCE_CHECK_TYPE.name


@dataclass(frozen=True, eq=False, slots=True)
class DecisionValue(_ReceiverOnly):
    """The authorizer's answer, read with allowed()/reason()/errored()/error()."""

    decision: Decision
    cel_type_name: ClassVar[str] = DECISION_TYPE.name


def authorizer_value(authorizer: Authorizer, user: UserInfo | None = None) -> AuthorizerValue:
    """The value to bind to the `authorizer` variable (Go's `NewAuthorizerVal`).

    >>> authorizer_value(AlwaysAllow(), UserInfo("alice")).user.name
    'alice'
    """
    return AuthorizerValue(authorizer, user if user is not None else UserInfo())


# -- builders --------------------------------------------------------------------------------------

# unicode.IsSpace: Go's strings.TrimSpace removes exactly these (not \x1c-\x1f, unlike str.strip).
_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                      "\u2028\u2029\u202f\u205f\u3000")  # fmt: skip


def _blank(text: str) -> bool:
    """len(strings.TrimSpace(text)) == 0."""
    return all(ch in _GO_SPACE for ch in text)


def authorizer_path(authorizer: AuthorizerValue, path: str) -> PathCheck:
    if _blank(path):
        raise EvalError("path must not be empty")
    return PathCheck(authorizer, path)


def authorizer_group(authorizer: AuthorizerValue, group: str) -> GroupCheck:
    return GroupCheck(authorizer, group)


def authorizer_serviceaccount(authorizer: AuthorizerValue, namespace: str, name: str) -> AuthorizerValue:
    """Ask as a service account instead; the name is validated before the namespace, as in Go."""
    if FORMATS["dns1123Subdomain"].validator(name):
        raise EvalError("Invalid service account name")
    if FORMATS["dns1123Label"].validator(namespace):
        raise EvalError("Invalid service account namespace")
    return AuthorizerValue(authorizer.authorizer, service_account_user(namespace, name))


def groupcheck_resource(group_check: GroupCheck, resource: str) -> ResourceCheck:
    if _blank(resource):
        raise EvalError("resource must not be empty")
    return ResourceCheck(group_check, resource)


def resourcecheck_subresource(check: ResourceCheck, subresource: str) -> ResourceCheck:
    return dataclasses.replace(check, subresource=subresource)


def resourcecheck_namespace(check: ResourceCheck, namespace: str) -> ResourceCheck:
    return dataclasses.replace(check, namespace=namespace)


def resourcecheck_name(check: ResourceCheck, name: str) -> ResourceCheck:
    return dataclasses.replace(check, name=name)


def authorizer_fieldselector(check: ResourceCheck, selector: str) -> ResourceCheck:
    return dataclasses.replace(check, field_selector=selector)


def authorizer_labelselector(check: ResourceCheck, selector: str) -> ResourceCheck:
    return dataclasses.replace(check, label_selector=selector)


# -- checks and decisions --------------------------------------------------------------------------


def _ask(authorizer: AuthorizerValue, attributes: Attributes) -> DecisionValue:
    """Call the application's authorizer. An exception is its way of saying Go's `err`: the
    decision becomes an errored "no opinion" that CEL reads through errored()/error()."""
    try:
        decision = authorizer.authorizer.authorize(attributes)
    except Exception as err:  # any authorizer failure is reported to CEL, not raised
        decision = Decision(Verdict.NO_OPINION, "", str(err) or type(err).__name__)
    return DecisionValue(decision)


def pathcheck_check(check: PathCheck, verb: str) -> DecisionValue:
    """Authorize the HTTP verb on the path (a non-resource request)."""
    user = check.authorizer.user
    return _ask(check.authorizer, Attributes(user=user, verb=verb, resource_request=False, path=check.path))


def resourcecheck_check(check: ResourceCheck, verb: str) -> DecisionValue:
    """Authorize the API verb on the described resource, in any API version."""
    authorizer = check.group_check.authorizer
    attributes = Attributes(
        user=authorizer.user, verb=verb, resource_request=True, api_group=check.group_check.group, api_version="*",
        resource=check.resource, subresource=check.subresource, namespace=check.namespace, name=check.name,
    )  # fmt: skip
    if check.field_selector:
        attributes = _with_field_selector(attributes, check.field_selector)
    if check.label_selector:
        attributes = _with_label_selector(attributes, check.label_selector)
    return _ask(authorizer, attributes)


def _with_field_selector(attributes: Attributes, selector: str) -> Attributes:
    """Parsed requirements, or none plus the parse error: the authorizer decides what an error means."""
    try:
        return dataclasses.replace(attributes, field_selector=parse_field_selector(selector))
    except SelectorError as err:
        return dataclasses.replace(attributes, field_selector_error=str(err))


def _with_label_selector(attributes: Attributes, selector: str) -> Attributes:
    try:
        return dataclasses.replace(attributes, label_selector=parse_label_selector(selector))
    except SelectorError as err:
        return dataclasses.replace(attributes, label_selector_error=str(err))


def decision_allowed(decision: DecisionValue) -> bool:
    """Only an explicit allow; "no opinion" is not allowed."""
    return decision.decision.verdict is Verdict.ALLOW


def decision_reason(decision: DecisionValue) -> str:
    return decision.decision.reason


def decision_errored(decision: DecisionValue) -> bool:
    return decision.decision.error is not None


def decision_error(decision: DecisionValue) -> str:
    return decision.decision.error or ""


# -- costs (apiserver pkg/cel/library/cost.go) -----------------------------------------------------

CHECK_COST = 350_000
"""An authorization check may call a webhook; the fixed cost allows about two checks per expression."""

_LIST_CREATE_BASE_COST = 10
_STRUCT_CREATE_BASE_COST = 40
_STRING_TRAVERSAL_COST_FACTOR = 0.1
_SELECTOR_LENGTH_TO_REQUIREMENT_COUNT = 0.5
_COST_PER_REQUIREMENT = float(_LIST_CREATE_BASE_COST + _STRUCT_CREATE_BASE_COST)
_UINT64_MAX = (1 << 64) - 1


def _factor(x: int, factor: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(x * factor), saturating at 2^64 - 1."""
    if x > 0 and float(x) >= _UINT64_MAX / factor:
        return _UINT64_MAX
    result = math.ceil(float(x) * factor)
    return _UINT64_MAX if result >= 2.0**64 else result


def _selector_cost(length: int) -> int:
    """selectorCostEstimate for one bound: a list, the parse, and a struct plus slice per requirement."""
    requirements = _factor(length, _SELECTOR_LENGTH_TO_REQUIREMENT_COUNT)
    total = _LIST_CREATE_BASE_COST + _factor(length, _STRING_TRAVERSAL_COST_FACTOR)
    return min(_UINT64_MAX, total + _factor(requirements, _COST_PER_REQUIREMENT))


def _fixed(cost: int) -> RuntimeCost:
    return lambda args, result: cost


def _fixed_estimate(cost: int) -> Estimate:
    return lambda call: CallEstimate(CostEstimate(cost, cost))


def _selector_runtime_cost(args: Sequence[Any], result: Any) -> int:
    return _selector_cost(actual_size(args[1]))


def _selector_estimate(call: CallSite) -> CallEstimate:
    size = call.size(1)
    return CallEstimate(CostEstimate(_selector_cost(size.min), _selector_cost(size.max)))


# -- registration ----------------------------------------------------------------------------------


def _register_types() -> None:
    """Runtime dispatch (for `dyn` receivers) and type() must know the value classes."""
    for cls in (AuthorizerValue, PathCheck, GroupCheck, ResourceCheck, DecisionValue):
        register_class(cls.cel_type_name, cls)
        register_type_name(cls, cls.cel_type_name)


_register_types()


def _member(
    overload_id: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any, cost: int, doc: str
) -> Overload:
    """A member overload with a fixed runtime and estimated cost."""
    return Overload(overload_id, function, args, result, impl, member=True, cost=_fixed(cost),
                    estimate=_fixed_estimate(cost), doc=doc)  # fmt: skip


def _selector(overload_id: str, function: str, impl: Any, doc: str) -> Overload:
    return Overload(overload_id, function, (RESOURCE_CHECK_TYPE, STRING), RESOURCE_CHECK_TYPE, impl, member=True,
                    cost=_selector_runtime_cost, estimate=_selector_estimate, doc=doc)  # fmt: skip


A, P, G, R, D, S = AUTHORIZER_TYPE, PATH_CHECK_TYPE, GROUP_CHECK_TYPE, RESOURCE_CHECK_TYPE, DECISION_TYPE, STRING

AUTHZ_OVERLOADS = (
    _member("authorizer_path", "path", (A, S), P, authorizer_path, 1, "authorizer.path('/healthz')"),
    _member("authorizer_group", "group", (A, S), G, authorizer_group, 1, "authorizer.group('apps')"),
    _member("authorizer_serviceaccount", "serviceAccount", (A, S, S), A, authorizer_serviceaccount, 1,
            "authorizer.serviceAccount('default', 'builder')"),
    _member("groupcheck_resource", "resource", (G, S), R, groupcheck_resource, 1,
            "authorizer.group('apps').resource('deployments')"),
    _member("resourcecheck_subresource", "subresource", (R, S), R, resourcecheck_subresource, 1,
            "authorizer.group('').resource('pods').subresource('status')"),
    _member("resourcecheck_namespace", "namespace", (R, S), R, resourcecheck_namespace, 1,
            "authorizer.group('').resource('pods').namespace('default')"),
    _member("resourcecheck_name", "name", (R, S), R, resourcecheck_name, 1,
            "authorizer.group('apps').resource('deployments').name('backend')"),
    _member("pathcheck_check", "check", (P, S), D, pathcheck_check, CHECK_COST,
            "authorizer.path('/healthz').check('get')"),
    _member("resourcecheck_check", "check", (R, S), D, resourcecheck_check, CHECK_COST,
            "authorizer.group('').resource('pods').namespace('default').check('create')"),
    _member("decision_errored", "errored", (D,), BOOL, decision_errored, 1, "decision.errored()"),
    _member("decision_error", "error", (D,), S, decision_error, 1, "decision.error()"),
    _member("decision_allowed", "allowed", (D,), BOOL, decision_allowed, 1, "decision.allowed()"),
    _member("decision_reason", "reason", (D,), S, decision_reason, 1, "decision.reason()"),
)  # fmt: skip

SELECTORS_OVERLOADS = (
    _selector("authorizer_fieldselector", "fieldSelector", authorizer_fieldselector,
              "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=mynode')"),
    _selector("authorizer_labelselector", "labelSelector", authorizer_labelselector,
              "authorizer.group('').resource('pods').labelSelector('app=example')"),
)  # fmt: skip


def library(version: int = 1) -> Library:
    """Authz alone (version 0, Kubernetes 1.27) or with AuthzSelectors (version 1, Kubernetes 1.31).

    >>> [o.id for o in library(1).overloads if o.function.endswith("Selector")]
    ['authorizer_fieldselector', 'authorizer_labelselector']
    """
    overloads = AUTHZ_OVERLOADS + (SELECTORS_OVERLOADS if version >= 1 else ())
    return Library("k8s_authz", overloads=overloads)


LIBRARY = Library("k8s_authz", overloads=AUTHZ_OVERLOADS + SELECTORS_OVERLOADS)
