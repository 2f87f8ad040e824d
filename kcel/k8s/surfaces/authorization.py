"""Structured authorization configuration (AuthorizationConfiguration, apiserver.config.k8s.io): webhook authorizers'
`matchConditions`, as kube-apiserver loads (`--authorization-config`) and evaluates them.

Environment: apiserver pkg/authorization/cel compile.go, the stored-expressions base environment plus `request`, a
SubjectAccessReviewSpec (its `resourceAttributes` gain `fieldSelector`/`labelSelector` with AuthorizeWithSelectors,
on by default from 1.32), always compiled as stored expressions. Loading: pkg/apis/apiserver/load (strict
decoding, TTL defaults), pkg/apis/apiserver/validation ValidateAuthorizationConfiguration (its paths put a webhook's
fields directly under `authorizers[i]`) and kube-apiserver's name check for non-webhook types. Evaluation:
cel/matcher.go CELMatcher.Eval in plugin/pkg/authorizer/webhook Authorize, chained by pkg/authorization/union after
the system:masters authorizer. 1.30's programs had no library cost estimator (calls cost 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcel.checker.types import STRING, CelType, list_of, map_of
from kcel.env import Env
from kcel.errors import EvalError
from kcel.eval.program import Program
from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import ANY_RESULT, ObjectType, compile_expression
from kcel.k8s.admission.evaluation import GO_SPACE, PER_CALL_LIMIT
from kcel.k8s.environment import server_version
from kcel.k8s.surfaces import Checked
from kcel.k8s.surfaces.webhooks import (
    ConfigurationError,
    Malformed,
    _get,
    _items,
    _str,
    _strings,
    base_env,
    count_conditions,
)
from kcel.libs.k8s_format import FORMATS
from kcel.libs.k8s_selectors import aggregate_errors
from kcel.temporal import Duration

GROUP, KIND = "apiserver.config.k8s.io", "AuthorizationConfiguration"
KINDS: tuple[tuple[str, str], ...] = ((GROUP, KIND),)
TYPES = ("ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook")  # modes.AuthorizationModeChoices, sorted
MAX_MATCH_CONDITIONS = 64
LOAD_ERROR = "failed to load AuthorizationConfiguration from file: "
SCHEME = "k8s.io/apiserver/pkg/apis/apiserver/load/load.go:32"  # the load package's runtime.NewScheme() call site
SECOND, MINUTE = 10**9, 60 * 10**9


def versions(k8s_version: str) -> tuple[str, ...]:
    """The apiVersions kube-apiserver reads: v1alpha1 and v1beta1, v1 from 1.32."""
    return ("v1alpha1", "v1beta1", "v1") if server_version(k8s_version) >= (1, 32) else ("v1alpha1", "v1beta1")


def selectors(k8s_version: str) -> bool:
    """AuthorizeWithSelectors: alpha (off) in 1.31, on by default from 1.32."""
    return server_version(k8s_version) >= (1, 32)


def request_type(with_selectors: bool) -> CelType:
    """buildRequestType: SubjectAccessReviewSpec and its attributes as object types (every field optional)."""
    strings = list_of(STRING)
    resource: dict[str, CelType] = dict.fromkeys(
        ("namespace", "verb", "group", "version", "resource", "subresource", "name"), STRING
    )
    if with_selectors:
        requirement = ObjectType(
            "kubernetes.SelectorRequirement", {"key": STRING, "operator": STRING, "values": strings}
        )
        for field, type_name in (
            ("fieldSelector", "FieldSelectorAttributes"),
            ("labelSelector", "LabelSelectorAttributes"),
        ):
            fields = {"rawSelector": STRING, "requirements": list_of(requirement.cel)}
            resource[field] = ObjectType(f"kubernetes.{type_name}", fields).cel
    return ObjectType("kubernetes.SubjectAccessReviewSpec", {
        "resourceAttributes": ObjectType("kubernetes.ResourceAttributes", resource).cel,
        "nonResourceAttributes": ObjectType("kubernetes.NonResourceAttributes", {"path": STRING, "verb": STRING}).cel,
        "user": STRING, "groups": strings, "extra": map_of(STRING, strings), "uid": STRING,
    }).cel  # fmt: skip


def authz_environment(k8s_version: str) -> Env:
    """The `authz-match` environment; runtime library costs are strict from 1.31 (MustBaseEnvSet(..., true))."""
    strict = server_version(k8s_version) >= (1, 31)
    return base_env(k8s_version, "stored", strict).extend({"request": request_type(selectors(k8s_version))})


ENVIRONMENTS = {"authz-match": authz_environment}


# -- loading -----------------------------------------------------------------------------------------------------

_WEBHOOK_FIELDS: tuple[str, ...] = (
    "authorizedTTL", "unauthorizedTTL", "timeout", "subjectAccessReviewVersion",
    "matchConditionSubjectAccessReviewVersion", "failurePolicy", "connectionInfo", "matchConditions",
)  # fmt: skip


def _unknown(document: Mapping[str, Any], k8s_version: str) -> list[str]:
    """Strict decoding: every field the version's types do not have (cacheAuthorizedRequests and
    cacheUnauthorizedRequests arrived in 1.34), as sigs.k8s.io/json names them."""
    webhook = _WEBHOOK_FIELDS
    if server_version(k8s_version) >= (1, 34):
        webhook += ("cacheAuthorizedRequests", "cacheUnauthorizedRequests")
    found = [k for k in document if k not in ("apiVersion", "kind", "authorizers")]
    authorizers = document.get("authorizers") if isinstance(document.get("authorizers"), list) else []
    assert isinstance(authorizers, list)
    for i, authorizer in enumerate(authorizers):
        if not isinstance(authorizer, Mapping):
            continue
        here = f"authorizers[{i}]"
        found += [f"{here}.{k}" for k in authorizer if k not in ("type", "name", "webhook")]
        hook = authorizer.get("webhook")
        if isinstance(hook, Mapping):
            found += [f"{here}.webhook.{k}" for k in hook if k not in webhook]
            info = hook.get("connectionInfo")
            keys = info if isinstance(info, Mapping) else ()
            found += [f"{here}.webhook.connectionInfo.{k}" for k in keys if k not in ("type", "kubeConfigFile")]
            conditions = hook.get("matchConditions") if isinstance(hook.get("matchConditions"), list) else []
            for j, condition in enumerate(conditions or []):
                extra = [k for k in condition if k != "expression"] if isinstance(condition, Mapping) else []
                found += [f"{here}.webhook.matchConditions[{j}].{k}" for k in extra]
    return [f"unknown field {fe.quote(k)}" for k in found]


def _duration(obj: Mapping[str, Any], key: str, path: fe.Path) -> int:
    """metav1.Duration: a string time.ParseDuration reads; 0 when absent."""
    text = _get(obj, key, path, str, "a string")
    if text is None:
        return 0
    try:
        return Duration.parse(text).nanos
    except EvalError:
        raise Malformed(f"time: invalid duration {fe.quote(text)}") from None


def go_duration(nanos: int) -> str:
    """time.Duration.String(): `1m30s`, `1h0m0s`, `1.5s`, `500ms`, `0s`."""
    sign, u = ("-" if nanos < 0 else ""), abs(nanos)
    if u < SECOND:
        unit, scale = ("ns", 1) if u < 1000 else ("µs", 1000) if u < 10**6 else ("ms", 10**6)
        return "0s" if u == 0 else sign + _fraction(u, scale) + unit
    text, minutes = _fraction(u % MINUTE, SECOND) + "s", u // MINUTE
    if minutes:
        text = (f"{minutes // 60}h" if minutes >= 60 else "") + f"{minutes % 60}m" + text
    return sign + text


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    digits = str(rest).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


# -- validation (ValidateAuthorizationConfiguration) -------------------------------------------------------------


def _compile(env: Env, expression: str, path: fe.Path) -> tuple[Program | None, fe.FieldError | None]:
    """compile.go CompileCELExpression: the output type must be exactly bool ("but got" in every version)."""
    compiled = compile_expression(env, expression, ANY_RESULT)
    if compiled.program is None and compiled.error.startswith("program instantiation failed"):
        return None, fe.internal_error(path, compiled.error)
    if compiled.program is None:
        return None, fe.invalid(path, expression, compiled.error)
    if str(compiled.program.output_type) != "bool":
        return None, fe.invalid(path, expression, f"must evaluate to bool but got {compiled.program.output_type}")
    return compiled.program, None


def _conditions(hook: Mapping[str, Any], path: fe.Path, env: Env) -> list[fe.FieldError]:
    """compileMatchConditions: at most 64 (then nothing else is checked); each non-blank, unique and compiling."""
    conditions = _items(hook, "matchConditions", path)
    if len(conditions) > MAX_MATCH_CONDITIONS:
        return [fe.too_many(path.child("matchConditions"), len(conditions), MAX_MATCH_CONDITIONS)]
    errors: list[fe.FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        here = path.child("matchConditions").index(i).child("expression")
        expression = _str(condition, "expression", path.child("matchConditions").index(i)) or ""
        if not expression.strip(GO_SPACE):
            errors.append(fe.required(here, ""))
        elif expression in seen:
            errors.append(fe.duplicate(here, expression))
        else:
            seen.add(expression)
            error = _compile(env, expression, here)[1]
            errors += [error] if error else []
    return errors


def _webhook(hook: Mapping[str, Any], path: fe.Path, env: Env) -> list[fe.FieldError]:
    """ValidateWebhookConfiguration, with the load's defaults (authorizedTTL 5m, unauthorizedTTL 30s)."""
    errors: list[fe.FieldError] = []
    timeout = _duration(hook, "timeout", path)
    if timeout == 0:
        errors.append(fe.required(path.child("timeout"), ""))
    elif not 0 <= timeout <= 30 * SECOND:
        errors.append(fe.invalid(path.child("timeout"), go_duration(timeout), "must be > 0s and <= 30s"))
    for key in ("authorizedTTL", "unauthorizedTTL"):
        if _duration(hook, key, path) < 0:  # 0 is defaulted
            errors.append(fe.invalid(path.child(key), go_duration(_duration(hook, key, path)), "must be > 0s"))
    sar = _str(hook, "subjectAccessReviewVersion", path) or ""
    if not sar:
        errors.append(fe.required(path.child("subjectAccessReviewVersion"), ""))
    elif sar not in ("v1", "v1beta1"):
        errors.append(fe.not_supported(path.child("subjectAccessReviewVersion"), sar, ("v1", "v1beta1")))
    condition_sar = _str(hook, "matchConditionSubjectAccessReviewVersion", path) or ""
    if not condition_sar and hook.get("matchConditions"):
        detail = "required if match conditions are specified"
        errors.append(fe.required(path.child("matchConditionSubjectAccessReviewVersion"), detail))
    elif condition_sar and condition_sar != "v1":
        errors.append(fe.not_supported(path.child("matchConditionSubjectAccessReviewVersion"), condition_sar, ("v1",)))
    policy = _str(hook, "failurePolicy", path) or ""
    if not policy:
        errors.append(fe.required(path.child("failurePolicy"), ""))
    elif policy not in ("NoOpinion", "Deny"):
        errors.append(fe.not_supported(path.child("failurePolicy"), policy, ("NoOpinion", "Deny")))
    return errors + _connection(hook, path) + _conditions(hook, path, env)


def _connection(hook: Mapping[str, Any], path: fe.Path) -> list[fe.FieldError]:
    info = _get(hook, "connectionInfo", path, Mapping, "an object") or {}
    here = path.child("connectionInfo")
    kind, file = _str(info, "type", here) or "", _str(info, "kubeConfigFile", here)
    if not kind:
        return [fe.required(here.child("type"), "")]
    if kind == "InClusterConfig":
        return (
            [fe.invalid(here.child("kubeConfigFile"), file, "can only be set when type=KubeConfigFile")]
            if file is not None
            else []
        )
    if kind == "KubeConfigFile":
        if not file:
            return [fe.required(here.child("kubeConfigFile"), "")]
        return (
            [] if file.startswith("/") else [fe.invalid(here.child("kubeConfigFile"), file, "must be an absolute path")]
        )
    value = fe.GoStruct((("Type", kind), ("KubeConfigFile", file)), "apiserver.WebhookConnectionInfo",
                        (("KubeConfigFile", "string"),))  # fmt: skip
    return [fe.not_supported(here.child("type"), value, ("InClusterConfig", "KubeConfigFile"))]


def _validate(document: Mapping[str, Any], env: Env) -> list[fe.FieldError]:
    authorizers = _items(document, "authorizers", fe.Path())
    errors = (
        []
        if authorizers
        else [fe.required(fe.Path.new("authorizers"), "at least one authorization mode must be defined")]
    )
    types: set[str] = set()
    names: set[str] = set()
    for i, authorizer in enumerate(authorizers):
        path = fe.Path.new("authorizers").index(i)
        kind, name = _str(authorizer, "type", path) or "", _str(authorizer, "name", path) or ""
        if not kind:
            errors.append(fe.required(path.child("type"), ""))
            continue
        if kind not in TYPES or (kind in types and kind != "Webhook"):  # only webhooks may repeat
            bad = fe.not_supported(path.child("type"), kind, TYPES) if kind not in TYPES else None
            errors.append(bad or fe.duplicate(path.child("type"), kind))
            continue
        types.add(kind)
        problems = FORMATS["dns1123Subdomain"].validator(name)
        if not name:
            errors.append(fe.required(path.child("name"), ""))
        elif name in names:
            errors.append(fe.duplicate(path.child("name"), name))
        elif problems:
            errors.append(fe.invalid(path.child("name"), name, f"authorizer name is invalid: {', '.join(problems)}"))
        names.add(name)
        hook = _get(authorizer, "webhook", path, Mapping, "an object")
        if kind == "Webhook":
            errors += (
                [fe.required(path.child("webhook"), "required when type=Webhook")]
                if hook is None
                else _webhook(hook, path, env)
            )
        elif hook is not None:
            errors.append(fe.invalid(path.child("webhook"), "non-null", "may only be specified when type=Webhook"))
    return errors


def check(document: Mapping[str, Any], where: str, k8s_version: str) -> Checked:
    """What kube-apiserver says when it loads the file (authorizer/config.go LoadAndValidateData): a load error, the
    validation errors, else the names its non-webhook authorizers must have."""
    api_version = str(document.get("apiVersion", ""))
    authorizers = document.get("authorizers") if isinstance(document.get("authorizers"), list) else []
    hooks = [a.get("webhook") for a in authorizers or () if isinstance(a, Mapping)]
    count = count_conditions(hooks)
    if api_version not in tuple(f"{GROUP}/{v}" for v in versions(k8s_version)):
        problem = f'no kind "{KIND}" is registered for version "{api_version}" in scheme "{SCHEME}"'
        return Checked(KIND, "", count, (LOAD_ERROR + problem,))
    unknown = _unknown(document, k8s_version)
    if unknown:
        return Checked(KIND, "", count, (LOAD_ERROR + "strict decoding error: " + ", ".join(unknown),))
    with fe.answering_as(server_version(k8s_version)):
        try:
            errors = [str(e) for e in _validate(document, authz_environment(k8s_version))]
        except Malformed as err:
            return Checked(KIND, "", count, (LOAD_ERROR + str(err),))
    if not errors:
        for authorizer in document.get("authorizers") or []:
            kind, name = str(authorizer.get("type")), str(authorizer.get("name"))
            if kind != "Webhook" and name != kind.lower():
                errors.append(f"expected name {kind.lower()} for authorizer {kind} instead of {name}")
    return Checked(KIND, "", count, tuple(dict.fromkeys(errors)))


# -- evaluation --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Authorizer:
    """One configured authorizer; `conditions` are a webhook's match conditions, compiled (expression, program)."""

    type: str
    name: str
    failure_policy: str = ""
    conditions: tuple[tuple[str, Program], ...] = ()


@dataclass(frozen=True)
class AuthorizationConfiguration:
    """An AuthorizationConfiguration ready to evaluate: its authorizers, in the order they are asked."""

    authorizers: tuple[Authorizer, ...]
    selectors: bool  # whether `request.resourceAttributes` carries fieldSelector and labelSelector


def load(document: Mapping[str, Any], k8s_version: str) -> AuthorizationConfiguration:
    """The configuration ready to evaluate; raises ConfigurationError for a file kube-apiserver would refuse."""
    checked = check(document, "", k8s_version)
    if not checked.valid:
        raise ConfigurationError(checked)
    env, authorizers = authz_environment(k8s_version), []
    for authorizer in document["authorizers"]:
        hook = authorizer.get("webhook") or {}
        texts = [str(c["expression"]) for c in hook.get("matchConditions") or []]
        conditions = tuple((text, program) for text in texts if (program := _compile(env, text, fe.Path())[0]))
        policy = str(hook.get("failurePolicy", ""))
        authorizers.append(Authorizer(authorizer["type"], authorizer["name"], policy, conditions))
    return AuthorizationConfiguration(tuple(authorizers), selectors(k8s_version))


@dataclass(frozen=True)
class Step:
    """One authorizer of the chain: `allow` or `deny` decide (the chain stops), `no-opinion` passes on (AlwaysDeny),
    `skip` is a webhook not called (a condition false, `detail` the expression; or errors under failurePolicy
    NoOpinion, `detail` the error), `ask` an authorizer whose answer kcel cannot know (RBAC, Node, ABAC, a webhook
    whose conditions hold): the ones after it are asked only if it has no opinion."""

    authorizer: str
    type: str
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Authorization:
    """The chain for one SubjectAccessReview: `decision` is allow, deny, no-opinion (forbidden) or undecided (an
    authorizer marked `ask` decides); `error` as the union authorizer returns it."""

    steps: tuple[Step, ...]
    decision: str
    reason: str = ""
    error: str = ""


def review_request(review: Mapping[str, Any], with_selectors: bool) -> dict[str, Any]:
    """convertObjectToUnstructured: the `request` value for a SubjectAccessReview (or its spec); v1beta1's `group`
    is v1's `groups`. Raises ValueError (Malformed) naming a field of the wrong JSON type."""
    root = fe.Path.new("spec")
    spec = (
        _get(review, "spec", fe.Path(), Mapping, "an object") or {} if "spec" in review or "kind" in review else review
    )
    beta = str(review.get("apiVersion", "")).endswith("v1beta1") and "groups" not in spec
    groups = _strings(spec, "group" if beta else "groups", root)
    extra = _get(spec, "extra", root, Mapping, "an object") or {}
    value: dict[str, Any] = {
        "user": _str(spec, "user", root) or "", "groups": list(groups), "uid": _str(spec, "uid", root) or "",
        "extra": {str(k): list(_strings(extra, k, root.child("extra"))) for k in extra},
    }  # fmt: skip
    resource = _get(spec, "resourceAttributes", root, Mapping, "an object")
    if resource is not None:
        here = root.child("resourceAttributes")
        keys = ("namespace", "verb", "group", "version", "resource", "subresource", "name")
        attributes: dict[str, Any] = {k: _str(resource, k, here) or "" for k in keys}
        for key in ("fieldSelector", "labelSelector") if with_selectors else ():
            selector = _get(resource, key, here, Mapping, "an object") or {}
            listed = _items(selector, "requirements", here.child(key))
            requirements = [_requirement(r, here.child(key, "requirements").index(i)) for i, r in enumerate(listed)]
            if requirements:  # a rawSelector, when given too, replaces them
                attributes[key] = {"requirements": requirements}
            if _str(selector, "rawSelector", here.child(key)):
                attributes[key] = {"rawSelector": selector["rawSelector"]}
        value["resourceAttributes"] = attributes
    non_resource = _get(spec, "nonResourceAttributes", root, Mapping, "an object")
    if non_resource is not None:
        here = root.child("nonResourceAttributes")
        value["nonResourceAttributes"] = {
            "verb": _str(non_resource, "verb", here) or "",
            "path": _str(non_resource, "path", here) or "",
        }
    return value


def _requirement(requirement: Mapping[str, Any], path: fe.Path) -> dict[str, Any]:
    key, operator = _str(requirement, "key", path) or "", _str(requirement, "operator", path) or ""
    return {"key": key, "operator": operator, "values": list(_strings(requirement, "values", path))}


def matches(conditions: Sequence[tuple[str, Program]], request: Mapping[str, Any]) -> tuple[bool, str, list[str]]:
    """CELMatcher.Eval: (matches, the false expression, the errors); one false skips the webhook, errors or not."""
    errors: list[str] = []
    for expression, program in conditions:
        try:
            value, _ = program.evaluate_with_cost({"request": request}, PER_CALL_LIMIT)
        except EvalError as err:
            errors.append(f"cel evaluation error: expression '{expression}' resulted in error: {err}")
            continue
        if value is False:
            return False, expression, []
    return not errors, "", errors


def authorize(configuration: AuthorizationConfiguration | Mapping[str, Any], review: Mapping[str, Any], *,
              k8s_version: str = "1.37") -> Authorization:  # fmt: skip
    """Which authorizers kube-apiserver asks for a SubjectAccessReview, in order: members of system:masters are
    allowed first; a webhook whose conditions are false is skipped; errors follow its failurePolicy (Deny denies
    the request, NoOpinion skips the webhook and keeps the error)."""
    config = (
        configuration if isinstance(configuration, AuthorizationConfiguration) else load(configuration, k8s_version)
    )
    request = review_request(review, config.selectors)
    if "system:masters" in request["groups"]:
        return Authorization((Step("system:masters", "PrivilegedGroups", "allow"),), "allow")
    steps: list[Step] = []
    errors: list[str] = []
    reasons: list[str] = []
    for authorizer in config.authorizers:
        if authorizer.type == "AlwaysAllow":
            steps.append(Step(authorizer.name, authorizer.type, "allow"))
            return Authorization(tuple(steps), "allow")  # union returns the deciding authorizer's own error
        if authorizer.type == "AlwaysDeny":
            steps.append(Step(authorizer.name, authorizer.type, "no-opinion", "Everything is forbidden."))
            reasons.append("Everything is forbidden.")
            continue
        if authorizer.type != "Webhook" or not authorizer.conditions:
            steps.append(Step(authorizer.name, authorizer.type, "ask"))
            continue
        matched, failed, found = matches(authorizer.conditions, request)
        error = aggregate_errors(found) if found else ""
        if error and authorizer.failure_policy == "Deny":
            steps.append(Step(authorizer.name, authorizer.type, "deny", error))
            return Authorization(tuple(steps), "deny", error=error)
        errors += found  # the union's aggregate flattens the webhooks' own
        steps.append(Step(authorizer.name, authorizer.type, "ask" if matched else "skip", error or failed))
    decision = "undecided" if any(s.outcome == "ask" for s in steps) else "no-opinion"
    return Authorization(tuple(steps), decision, "\n".join(reasons), aggregate_errors(errors) if errors else "")
