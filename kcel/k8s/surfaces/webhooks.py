"""Admission webhook `matchConditions` (Validating/MutatingWebhookConfiguration, admissionregistration.k8s.io/v1).

Environment: apiserver plugin/cel compile.go createEnvForOpts, HasParams false, HasAuthorizer true (accessors.go):
`object`, `oldObject`, `request`, `authorizer`, `authorizer.requestResource`, and `namespaceObject` (always declared,
null for webhooks); no `params` or `variables`. New expressions on create (kubernetes admissionregistration
validation.go), stored ones at admission, where generic/webhook.go ShouldCallHook calls a webhook when its selectors
and rules match and every condition holds (matchconditions/matcher.go). Before StrictCostEnforcementForWebhooks
(1.32) library calls cost 1 at runtime, as `base_env` models.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from kcel.checker.types import DYN
from kcel.env import Env
from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import BOOL_RESULT, NAMESPACE_TYPE, REQUEST_TYPE, Compiled, compile_expression
from kcel.k8s.admission.dispatch import Resources
from kcel.k8s.admission.evaluation import GO_SPACE, Inputs, Meter, match_conditions
from kcel.k8s.admission.matching import GVR, labels_of, matches_rules, namespace_selected, object_selected
from kcel.k8s.admission.model import FAIL, IGNORE, Rule, Selector
from kcel.k8s.admission.request import attributes_of, cel_request
from kcel.k8s.authorization.rbac import RBACAuthorizer, label_selector
from kcel.k8s.customresources.objectmeta import MetadataError, decode_object_meta, validate_object_meta
from kcel.k8s.environment import server_version
from kcel.k8s.surfaces import Checked
from kcel.libs import k8s_authz as authz
from kcel.libs.k8s_format import FORMATS, label_key_errors, label_value_errors

GROUP = "admissionregistration.k8s.io"
VALIDATING, MUTATING = "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"
KINDS: tuple[tuple[str, str], ...] = ((GROUP, VALIDATING), (GROUP, MUTATING))
MAX_MATCH_CONDITIONS = 64
REVIEW_VERSIONS = ("v1", "v1beta1")  # AcceptedAdmissionReviewVersions
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")  # supportedOperations.List(), sorted
SCOPES = ("*", "Cluster", "Namespaced")
STRICT_COST = (1, 32)  # StrictCostEnforcementForWebhooks: absent in 1.30, off by default in 1.31, locked on in 1.32

# library.CostEstimator.CallCost's functions (apiserver v0.31.0 pkg/cel/library/cost.go): without the estimator in
# the program (non-strict cost), cel-go charges each call of these 1.
NON_STRICT_FUNCTIONS = frozenset(
    "check serviceAccount path group resource subresource namespace name allowed reason error errored fieldSelector "
    "labelSelector isSorted sum max min indexOf lastIndexOf url lowerAscii upperAscii substring trim replace split "
    "join find findAll cidr isIP isCIDR ip ip.isCanonical masked prefixLength family isUnspecified isLoopback "
    "isLinkLocalMulticast isLinkLocalUnicast isGlobalUnicast containsIP containsCIDR quantity isQuantity validate "
    "format.named sign asInteger isInteger asApproximateFloat isGreaterThan isLessThan compareTo add sub getScheme "
    "getHostname getHost getPort getEscapedPath getQuery".split()
)


@lru_cache(maxsize=32)
def base_env(k8s_version: str, environment: str, strict: bool) -> Env:
    """The Kubernetes base environment; `strict=False`: MustBaseEnvSet without StrictCostOpt (library calls cost 1)."""
    base = Env(k8s_version=k8s_version, environment=environment)
    if strict:
        return base
    libraries = [dataclasses.replace(library, overloads=tuple(
        dataclasses.replace(o, cost=None) if o.function in NON_STRICT_FUNCTIONS else o for o in library.overloads
    )) for library in base.libraries]  # fmt: skip
    return Env(k8s_version=k8s_version, environment=environment, libraries=libraries, macros=base.macros)


def webhook_environment(k8s_version: str, environment: str = "new") -> Env:
    """The `webhook-match` environment: new expressions on create, `environment="stored"` at admission."""
    declared = {"object": DYN, "oldObject": DYN, "namespaceObject": NAMESPACE_TYPE, "request": REQUEST_TYPE,
                "authorizer": authz.AUTHORIZER_TYPE,
                "authorizer.requestResource": authz.RESOURCE_CHECK_TYPE}  # fmt: skip
    return base_env(k8s_version, environment, server_version(k8s_version) >= STRICT_COST).extend(declared)


ENVIRONMENTS = {"webhook-match": webhook_environment}


class Malformed(ValueError):
    """A field of the wrong JSON type (the API server cannot decode the object at all); the message names it."""


def _get(obj: Mapping[str, Any], key: str, path: fe.Path, kinds: type | tuple[type, ...], what: str) -> Any:
    value = obj.get(key)
    if value is not None and (not isinstance(value, kinds) or (isinstance(value, bool) and kinds is int)):
        raise Malformed(f"{path.child(key)}: must be {what}")
    if isinstance(value, (Mapping, list)) and not _string_keys(value):  # YAML may have them; JSON cannot
        raise Malformed(f"{path.child(key)}: object keys must be strings")
    return value


def _string_keys(value: Any) -> bool:
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _string_keys(v) for k, v in value.items())
    return all(_string_keys(v) for v in value) if isinstance(value, list) else True


def _str(obj: Mapping[str, Any], key: str, path: fe.Path) -> str | None:
    return cast("str | None", _get(obj, key, path, str, "a string"))


def _items(obj: Mapping[str, Any], key: str, path: fe.Path) -> list[Mapping[str, Any]]:
    values = _get(obj, key, path, list, "an array") or []
    for i, value in enumerate(values):
        if not isinstance(value, Mapping):
            raise Malformed(f"{path.child(key).index(i)}: must be an object")
    return list(values)


def _strings(obj: Mapping[str, Any], key: str, path: fe.Path) -> tuple[str, ...]:
    values = _get(obj, key, path, list, "an array") or []
    if not all(isinstance(v, str) for v in values):
        raise Malformed(f"{path.child(key)}: must be an array of strings")
    return tuple(values)


# -- create-time validation (validation.go validateValidatingWebhook / validateMutatingWebhook) -------------------


def _rule(rule: Mapping[str, Any], path: fe.Path) -> list[fe.FieldError]:
    """validateRuleWithOperations and validateRule (subresources allowed)."""
    errors: list[fe.FieldError] = []
    operations = _strings(rule, "operations", path)
    if not operations:
        errors.append(fe.required(path.child("operations"), ""))
    if len(operations) > 1 and "*" in operations:
        detail = "if '*' is present, must not specify other operations"
        listed = fe.GoSlice("admissionregistration.OperationType", operations)
        errors.append(fe.invalid(path.child("operations"), listed, detail))
    errors += [fe.not_supported(path.child("operations").index(i), op, OPERATIONS)
               for i, op in enumerate(operations) if op not in OPERATIONS]  # fmt: skip
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = _strings(rule, key, path)
        if not values:
            errors.append(fe.required(path.child(key), ""))
        if len(values) > 1 and "*" in values:
            detail = f"if '*' is present, must not specify other {what}"
            errors.append(fe.invalid(path.child(key), fe.GoSlice("string", values), detail))
    errors += [fe.required(path.child("apiVersions").index(i), "")
               for i, v in enumerate(_strings(rule, "apiVersions", path)) if not v]  # fmt: skip
    errors += _resources(_strings(rule, "resources", path), path.child("resources"))
    scope = _str(rule, "scope", path)
    if scope is not None and scope not in SCOPES:
        errors.append(fe.not_supported(path.child("scope"), scope, SCOPES))
    return errors


def _resources(resources: tuple[str, ...], path: fe.Path) -> list[fe.FieldError]:
    """validateResources: `*`, `*/*`, `x/*` and `*/x` may not be mixed with what they already cover."""
    errors = [fe.required(path, "")] if not resources else []
    with_wildcard_sub: set[str] = set()
    with_wildcard_resource: set[str] = set()
    single = without_sub = False
    for i, entry in enumerate(resources):
        if not entry:
            errors.append(fe.required(path.index(i), ""))
            continue
        single = single or entry == "*"
        name, slash, sub = entry.partition("/")
        if not slash:
            without_sub = entry != "*"  # upstream keeps only the last one's answer
            continue
        if name in with_wildcard_sub:
            errors.append(fe.invalid(path.index(i), entry, f"if '{name}/*' is present, must not specify {entry}"))
        if sub in with_wildcard_resource:
            errors.append(fe.invalid(path.index(i), entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_wildcard_sub.add(name)
        if name == "*":
            with_wildcard_resource.add(sub)
    if len(resources) > 1 and "*/*" in resources:
        detail = "if '*/*' is present, must not specify other resources"
        errors.append(fe.invalid(path, fe.GoSlice("string", resources), detail))
    if single and without_sub:
        detail = "if '*' is present, must not specify other resources without subresources"
        errors.append(fe.invalid(path, fe.GoSlice("string", resources), detail))
    return errors


def _label_errors(path: fe.Path, text: str, value: bool = False) -> list[fe.FieldError]:
    """IsQualifiedName / IsValidLabelValue as field errors; content.IsLabelKey's texts from 1.35 (da7b67ed)."""
    check = label_value_errors if value else label_key_errors
    return [fe.invalid(path, text, message) for message in check(text, fe.api_server() < (1, 35))]


def _selector(selector: Mapping[str, Any], path: fe.Path) -> list[fe.FieldError]:
    """metav1validation.ValidateLabelSelector (strict label values)."""
    errors: list[fe.FieldError] = []
    labels = _get(selector, "matchLabels", path, Mapping, "an object") or {}
    for key in labels:
        here = path.child("matchLabels")
        errors += _label_errors(here, key) + _label_errors(here, _str(labels, key, here) or "", True)
    for i, expression in enumerate(_items(selector, "matchExpressions", path)):
        here = path.child("matchExpressions").index(i)
        operator, values = _str(expression, "operator", here) or "", _strings(expression, "values", here)
        if operator in ("In", "NotIn") and not values:
            errors.append(fe.required(here.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist") and values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errors.append(fe.forbidden(here.child("values"), detail))
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            errors.append(fe.invalid(here.child("operator"), operator, "not a valid selector operator"))
        errors += _label_errors(here.child("key"), _str(expression, "key", here) or "")
        for j, value in enumerate(values):
            errors += _label_errors(here.child("values").index(j), value, True)
    return errors


def _fully_qualified_name(name: str, path: fe.Path) -> list[fe.FieldError]:
    """utilvalidation.IsFullyQualifiedName."""
    if not name:
        return [fe.required(path, "")]
    problems = FORMATS["dns1123Subdomain"].validator(name)
    if problems:
        return [fe.invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [fe.invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _condition_errors(conditions: list[Mapping[str, Any]], path: fe.Path, env: Env) -> list[fe.FieldError]:
    """validateMatchConditions: at most 64; each an expression that compiles to bool and a unique qualified name."""
    too_many = len(conditions) > MAX_MATCH_CONDITIONS
    errors = [fe.too_many(path, len(conditions), MAX_MATCH_CONDITIONS)] if too_many else []
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        here = path.index(i)
        name = _str(condition, "name", here) or ""
        expression = (_str(condition, "expression", here) or "").strip(GO_SPACE)  # validated trimmed
        if not expression:
            errors.append(fe.required(here.child("expression"), ""))
        else:
            compiled = compile_expression(env, expression, BOOL_RESULT)
            if compiled.program is None and compiled.error.startswith("program instantiation failed"):
                errors.append(fe.internal_error(here.child("expression"), compiled.error))  # ErrorTypeInternal
            elif compiled.program is None:
                errors.append(fe.invalid(here.child("expression"), expression, compiled.error))
        if not name:
            errors.append(fe.required(here.child("name"), ""))
        else:
            errors += _label_errors(here.child("name"), name)
        if name and name in names:
            errors.append(fe.duplicate(here.child("name"), name))
        names.add(name)
    return errors


def _choice(hook: Mapping[str, Any], key: str, path: fe.Path, supported: tuple[str, ...]) -> list[fe.FieldError]:
    value = _str(hook, key, path)
    return [fe.not_supported(path.child(key), value, supported)] if value is not None and value not in supported else []


def _webhook(hook: Mapping[str, Any], path: fe.Path, mutating: bool, env: Env) -> list[fe.FieldError]:
    errors = _fully_qualified_name(_str(hook, "name", path) or "", path.child("name"))
    for i, rule in enumerate(_items(hook, "rules", path)):
        errors += _rule(rule, path.child("rules").index(i))
    errors += _choice(hook, "failurePolicy", path, (FAIL, IGNORE))
    errors += _choice(hook, "matchPolicy", path, ("Equivalent", "Exact"))
    side_effects = _str(hook, "sideEffects", path)
    if side_effects is None:
        errors.append(fe.required(path.child("sideEffects"), f"must specify one of {', '.join(NO_SIDE_EFFECTS)}"))
    errors += _choice(hook, "sideEffects", path, NO_SIDE_EFFECTS)
    timeout = _get(hook, "timeoutSeconds", path, int, "an integer")
    if timeout is not None and not 1 <= timeout <= 30:
        detail = "the timeout value must be between 1 and 30 seconds"
        errors.append(fe.invalid(path.child("timeoutSeconds"), timeout, detail))
    for key in ("namespaceSelector", "objectSelector"):
        selector = _get(hook, key, path, Mapping, "an object")
        errors += _selector(selector, path.child(key)) if selector is not None else []
    if mutating:
        errors += _choice(hook, "reinvocationPolicy", path, ("IfNeeded", "Never"))
    client = _get(hook, "clientConfig", path, Mapping, "an object") or {}
    if (client.get("url") is None) == (client.get("service") is None):
        errors.append(fe.required(path.child("clientConfig"), "exactly one of url or service is required"))
    return errors + _condition_errors(_items(hook, "matchConditions", path), path.child("matchConditions"), env)


def _review_versions(versions: tuple[str, ...], path: fe.Path) -> list[fe.FieldError]:
    """validateAdmissionReviewVersions on create: some, no repeats, DNS-1035 labels, one the API server knows."""
    if not versions:
        return [fe.required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    errors: list[fe.FieldError] = []
    for i, version in enumerate(versions):
        if version in versions[:i]:
            errors.append(fe.invalid(path.index(i), version, "duplicate version"))
            continue
        errors += [fe.invalid(path.index(i), version, m) for m in FORMATS["dns1035Label"].validator(version)]
    if not any(v in REVIEW_VERSIONS for v in versions):
        detail = f"must include at least one of {', '.join(REVIEW_VERSIONS)}"
        errors.append(fe.invalid(path, fe.GoSlice("string", versions), detail))
    return errors


def _metadata(document: Mapping[str, Any]) -> list[fe.FieldError]:
    """ObjectMeta on create: a cluster-scoped object's namespace is cleared, a generateName yields a name."""
    try:
        meta, _ = decode_object_meta(dict(_get(document, "metadata", fe.Path(), Mapping, "an object") or {}))
    except MetadataError as err:
        raise Malformed(str(err)) from None
    meta.pop("namespace", None)
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "x7k2q"  # BeforeCreate generates the name before validation
    return validate_object_meta(meta, False, fe.Path.new("metadata"))


def count_conditions(holders: Any) -> int:
    """How many match conditions the objects of a list hold (malformed parts count none)."""
    found = [h.get("matchConditions") for h in holders if isinstance(h, Mapping)] if isinstance(holders, list) else []
    return sum(len(conditions) for conditions in found if isinstance(conditions, list))


def check(document: Mapping[str, Any], where: str, k8s_version: str) -> Checked:
    """validation.go Validate{Validating,Mutating}WebhookConfiguration on create, as that API server runs it."""
    kind, api_version = str(document.get("kind", "")), str(document.get("apiVersion", ""))
    metadata = document.get("metadata")
    name = str(metadata.get("name") or "") if isinstance(metadata, Mapping) else ""
    expressions = count_conditions(document.get("webhooks"))
    if api_version != f"{GROUP}/v1":
        return Checked(kind, name, expressions, (f'no matches for kind "{kind}" in version "{api_version}"',))
    with fe.answering_as(server_version(k8s_version)):
        try:
            errors = _validate(document, kind == MUTATING, webhook_environment(k8s_version))
        except Malformed as err:
            return Checked(kind, name, expressions, (str(err),))
    return Checked(kind, name, expressions, tuple(dict.fromkeys(str(e) for e in errors)))


def _validate(document: Mapping[str, Any], mutating: bool, env: Env) -> list[fe.FieldError]:
    errors, seen, path = _metadata(document), set[str](), fe.Path.new("webhooks")
    for i, hook in enumerate(_items(document, "webhooks", fe.Path())):
        here, hook_name = path.index(i), _str(hook, "name", path.index(i)) or ""
        errors += _webhook(hook, here, mutating, env)
        versions = _strings(hook, "admissionReviewVersions", here)
        errors += _review_versions(versions, here.child("admissionReviewVersions"))
        errors += [fe.duplicate(here.child("name"), hook_name)] if hook_name and hook_name in seen else []
        seen.add(hook_name)
    return errors


# -- admission --------------------------------------------------------------------------------------------------


class ConfigurationError(ValueError):
    """A configuration the API server would not have accepted; `checked` holds its errors."""

    def __init__(self, checked: Checked) -> None:
        super().__init__("; ".join(checked.errors))
        self.checked = checked


@dataclass(frozen=True)
class Webhook:
    """A webhook with defaults applied and conditions compiled (stored environment); no `variables`, ever."""

    name: str
    rules: tuple[Rule, ...]
    failure_policy: str
    match_policy: str
    namespace_selector: Selector
    object_selector: Selector
    match_conditions: tuple[tuple[str, Compiled], ...]
    variables: tuple[tuple[str, Compiled], ...] = ()


@dataclass(frozen=True)
class WebhookConfiguration:
    """A Validating or MutatingWebhookConfiguration ready to dispatch: its kind, its name and its webhooks."""

    kind: str
    name: str
    webhooks: tuple[Webhook, ...]


def load(document: Mapping[str, Any], k8s_version: str) -> WebhookConfiguration:
    """A configuration ready to dispatch; raises ConfigurationError where the API server would reject it."""
    checked = check(document, "", k8s_version)
    if not checked.valid:
        raise ConfigurationError(checked)
    env = webhook_environment(k8s_version, "stored")  # as the admission plugin compiles them
    with fe.answering_as(server_version(k8s_version)):
        hooks = tuple(_compiled(hook, env) for hook in document.get("webhooks") or ())
    return WebhookConfiguration(checked.kind, checked.name, hooks)


def _compiled(hook: Mapping[str, Any], env: Env) -> Webhook:
    path = fe.Path()
    rules = tuple(
        Rule(_strings(r, "operations", path), _strings(r, "apiGroups", path), _strings(r, "apiVersions", path),
             _strings(r, "resources", path), _str(r, "scope", path) or "*")
        for r in _items(hook, "rules", path)
    )  # fmt: skip
    conditions = tuple((str(c.get("name")), compile_expression(env, str(c.get("expression")), BOOL_RESULT))
                       for c in _items(hook, "matchConditions", path))  # fmt: skip
    return Webhook(
        name=str(hook.get("name")), rules=rules, failure_policy=str(hook.get("failurePolicy") or FAIL),
        match_policy=str(hook.get("matchPolicy") or "Equivalent"),
        namespace_selector=label_selector(hook.get("namespaceSelector") or {}),
        object_selector=label_selector(hook.get("objectSelector") or {}), match_conditions=conditions,
    )  # fmt: skip


@dataclass(frozen=True)
class HookOutcome:
    """What ShouldCallHook decided for one webhook; `reason` why it is not called: `exempt` (an admission configuration
    request), `namespaceSelector`, `objectSelector`, `rules`, `matchCondition` (`detail`: the false one's name),
    `matchConditionError` (failurePolicy Ignore; `detail`: the error) or `rejected` (failurePolicy Fail)."""

    configuration: str
    webhook: str
    matched: bool
    reason: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Dispatch:
    """Which webhooks a request is sent to. A condition error under failurePolicy Fail rejects it (403, `message` as
    NewForbidden words it): then no validating webhook is called, the mutating ones before it have been."""

    kind: str
    hooks: tuple[HookOutcome, ...]
    allowed: bool = True
    code: int = 200
    message: str = ""

    @property
    def called(self) -> tuple[str, ...]:
        return () if not self.allowed and self.kind == VALIDATING else tuple(h.webhook for h in self.hooks if h.matched)


def exempt_kinds(k8s_version: str) -> tuple[str, ...]:
    """rules.IsExemptAdmissionConfigurationResource: never sent to webhooks (the mutating policies from 1.32)."""
    policies = ("Validating", "Mutating") if server_version(k8s_version) >= (1, 32) else ("Validating",)
    return (VALIDATING, MUTATING, *(f"{p}AdmissionPolicy{b}" for p in policies for b in ("", "Binding")))


def dispatch(
    configurations: Iterable[WebhookConfiguration | Mapping[str, Any]], request: Mapping[str, Any], *,
    k8s_version: str = "1.37", namespaces: Iterable[Mapping[str, Any]] = (), authorizer: authz.Authorizer | None = None,
) -> Dispatch:  # fmt: skip
    """The webhooks (of one kind) an AdmissionReview v1 `request` is sent to, in the API server's order
    (configurations by name, then as listed). `namespaces`: Namespace objects for namespace selectors (one not
    given has only its `kubernetes.io/metadata.name` label); `authorizer` answers `authorizer` checks (default:
    RBAC with no bindings). Raises ConfigurationError, or RequestError for a request lacking what admission needs."""
    loaded = [c if isinstance(c, WebhookConfiguration) else load(c, k8s_version) for c in configurations]
    kinds = {c.kind for c in loaded}
    if len(kinds) > 1:
        raise ValueError("validating and mutating webhooks are dispatched separately: give one kind")
    kind, a = (kinds.pop() if kinds else VALIDATING), attributes_of(request)
    hooks = [(c.name, h) for c in sorted(loaded, key=lambda c: c.name) for h in c.webhooks]
    if a.kind.group == GROUP and a.kind.kind in exempt_kinds(k8s_version):
        return Dispatch(kind, tuple(HookOutcome(c, h.name, False, "exempt") for c, h in hooks))
    if a.resource.resource == "namespaces" and not a.subresource and a.operation in ("CREATE", "UPDATE"):
        labels = labels_of(a.object)  # GetNamespaceLabels: the namespace being written
    else:
        name = a.namespace or (a.name if a.resource.resource == "namespaces" else "")  # RequestInfo: the name
        labels = labels_of(Resources(tuple(namespaces)).namespace(name))
    value = authz.authorizer_value(authorizer if authorizer is not None else RBACAuthorizer(), _user(request))
    group = authz.GroupCheck(value, a.resource.group)
    check_value = authz.ResourceCheck(group, a.resource.resource, a.subresource, a.namespace, a.name)
    meter, outcomes = Meter(), []
    with fe.answering_as(server_version(k8s_version)):
        for configuration, hook in hooks:
            reason, detail = "", ""
            match = matches_rules(hook.rules, hook.match_policy, a)
            if not namespace_selected(hook.namespace_selector, a, labels):
                reason = "namespaceSelector"
            elif not object_selected(hook.object_selector, a):
                reason = "objectSelector"
            elif match is None:
                reason = "rules"
            elif hook.match_conditions:
                request_value = cel_request(request, a, match.kind, a.resource)  # VersionedKind, the request's resource
                inputs = Inputs(a.object, a.old_object, {}, request_value, None, None, value, check_value)
                matched, detail, error = match_conditions(hook, FAIL, inputs, meter)
                reason = "matchConditionError" if error else "" if matched else "matchCondition"
                if error and hook.failure_policy == FAIL:
                    outcomes.append(HookOutcome(configuration, hook.name, False, "rejected", error))
                    return Dispatch(kind, tuple(outcomes), False, 403, forbidden(a.resource, a.name, error))
                detail = error or detail
            outcomes.append(HookOutcome(configuration, hook.name, not reason, reason, detail))
    return Dispatch(kind, tuple(outcomes))


def _user(request: Mapping[str, Any]) -> authz.UserInfo:
    info = request.get("userInfo") if isinstance(request.get("userInfo"), Mapping) else {}
    assert isinstance(info, Mapping)
    extra = {str(k): tuple(v) for k, v in (info.get("extra") or {}).items()}
    name, uid = str(info.get("username", "")), str(info.get("uid", ""))
    return authz.UserInfo(name, uid, tuple(info.get("groups") or ()), extra)


def forbidden(resource: GVR, name: str, error: str) -> str:
    """apierrors.NewForbidden(attr.GetResource().GroupResource(), attr.GetName(), err).Error()."""
    if not resource.group and not resource.resource:
        return f"forbidden: {error}"
    if not name:
        return f"{resource.group_resource} is forbidden: {error}"
    return f"{resource.group_resource} {fe.quote(name)} is forbidden: {error}"
