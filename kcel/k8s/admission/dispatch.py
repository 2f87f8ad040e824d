"""Deciding one request over a policy set (k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go).

For each policy that matches, each binding that matches and each of the binding's params: validate; then the
binding's validationActions turn failures into a denial (the first one is the answer), warnings (as
`warning.AddWarning` words them) or the `validation_failure` audit annotation; audit annotations are
published as `<policy>/<key>`. Params and Namespaces come from the loaded objects instead of informers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import CompiledPolicy
from kcel.k8s.admission.decision import CODES, Decision, Evaluation
from kcel.k8s.admission.evaluation import Inputs, Meter, PolicyDecision, ValidateResult, validate
from kcel.k8s.admission.matching import GVK, GVR, labels_of, matches, mismatch, selects
from kcel.k8s.admission.model import AUDIT, DENY, FAIL, WARN, Binding, MutatingBinding, MutatingPolicy, Policy
from kcel.k8s.admission.request import attributes_of, cel_request, object_name, resource_for, split_api_version
from kcel.k8s.authorization.rbac import RBACAuthorizer
from kcel.libs.k8s_authz import Authorizer, GroupCheck, ResourceCheck, UserInfo, authorizer_value
from kcel.values import is_mapping

VALIDATION_FAILURE_KEY = "validation.policy.admission.k8s.io/validation_failure"
MAX_VALIDATION_FAILURES = 50
MAX_AUDIT_VALUE_LENGTH = 10 * 1024
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


# -- what the API server would look up ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CRDInfo:
    """A CustomResourceDefinition among the objects, as admission sees it: group, kind, plural and scope."""

    group: str
    kind: str
    plural: str
    scope: str


def _meta(obj: Any) -> Mapping[str, Any]:
    metadata = obj.get("metadata") if is_mapping(obj) else None
    return metadata if is_mapping(metadata) else {}


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return split_api_version(str(obj.get("apiVersion", "")))[0], str(obj.get("kind", ""))


@dataclass(frozen=True)
class Resources:
    """The objects informers would hold: params (by group and kind), Namespaces and CRDs."""

    objects: tuple[Mapping[str, Any], ...] = ()
    crds: tuple[CRDInfo, ...] = field(init=False)
    # The objects by (group, kind), in their order: every admission looks up its namespace and its params here.
    _by_kind: dict[tuple[str, str], list[Mapping[str, Any]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_kind: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for obj in self.objects:
            by_kind.setdefault(_group_kind(obj), []).append(obj)
        object.__setattr__(self, "_by_kind", by_kind)
        found = []
        for obj in by_kind.get(("apiextensions.k8s.io", "CustomResourceDefinition"), ()):
            spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
            assert isinstance(spec, Mapping)
            names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
            assert isinstance(names, Mapping)
            info = CRDInfo(
                str(spec.get("group")), str(names.get("kind")), str(names.get("plural")), str(spec.get("scope"))
            )
            found.append(info)
        object.__setattr__(self, "crds", tuple(found))

    def namespace(self, name: str) -> Mapping[str, Any]:
        """The Namespace object; one that was not given is assumed to exist with only its automatic label."""
        found = self.given_namespace(name)
        if found is not None:
            return found
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {NAMESPACE_NAME_LABEL: name}},
        }

    def given_namespace(self, name: str) -> Mapping[str, Any] | None:
        """The Namespace object given for `name`, or None (then `namespace` assumes one)."""
        for obj in self._by_kind.get(("", "Namespace"), ()):
            if _meta(obj).get("name") == name:
                return obj
        return None

    def of_kind(self, api_version: str, kind: str) -> list[Mapping[str, Any]]:
        return list(self._by_kind.get((split_api_version(api_version)[0], kind), ()))

    def namespaced(self, api_version: str, kind: str) -> bool:
        """The param kind's scope: a CRD's, a built-in kind's, else what the objects found suggest."""
        _, namespaced = resource_for(api_version, kind, self.crds)
        if any(c.kind == kind for c in self.crds) or namespaced is False:
            return namespaced
        found = self.of_kind(api_version, kind)
        return not found or any(_meta(obj).get("namespace") for obj in found)


class ConfigError(Exception):
    """A binding that cannot be evaluated (no params, a misplaced paramRef): upstream's addConfigError."""


def collect_params(
    policy: Policy | MutatingPolicy, binding: Binding | MutatingBinding, namespace: str, resources: Resources
) -> list[Any]:
    """generic.CollectParams: [None] without paramKind or paramRef, else the params found; raises ConfigError."""
    kind, ref = policy.param_kind, binding.param_ref
    if kind is None or ref is None:
        return [None]
    namespaced = resources.namespaced(kind.api_version, kind.kind)
    if namespaced and not (ref.namespace or namespace):
        raise ConfigError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
    if not namespaced and ref.namespace:
        raise ConfigError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    candidates = resources.of_kind(kind.api_version, kind.kind)
    if namespaced:
        wanted = ref.namespace or namespace
        candidates = [o for o in candidates if (_meta(o).get("namespace") or "default") == wanted]
    if ref.name:
        params = [o for o in candidates if _meta(o).get("name") == ref.name][:1]
    else:
        params = [o for o in candidates if selects(ref.selector or (), labels_of(o))]
    if not params and ref.not_found_action == DENY:
        raise ConfigError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return params


def namespace_object(namespace: Mapping[str, Any] | None) -> Any:
    """condition.go CreateNamespaceObject: the metadata fields CEL may read, spec and status."""
    if namespace is None:
        return None
    meta = _meta(namespace)
    kept = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
            "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")  # fmt: skip
    value: dict[str, Any] = {"metadata": {k: meta[k] for k in kept if meta.get(k) is not None}}
    for part in ("spec", "status"):
        value[part] = namespace.get(part) if is_mapping(namespace.get(part)) else {}
    return value


# -- one admission ------------------------------------------------------------------------------------------------


def go_json(value: Any) -> str:
    """encoding/json.Marshal: compact, HTML-sensitive characters and line separators escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(char, escaped)
    return text


@dataclass
class _Denial:
    """A cause to deny: a validation failed under Deny, an audit annotation's error, a binding's config error."""

    policy: str
    binding: str | None
    message: str
    reason: str = ""


@dataclass
class Admission:
    """The state of one `admit` call (never shared between threads)."""

    policies: Sequence[CompiledPolicy]
    bindings: Mapping[str, tuple[Binding, ...]]  # by policy name, in the order they apply
    resources: Resources  # what params and namespaces are looked up in
    request: Mapping[str, Any]
    authorizer: Authorizer | None
    meter: Meter
    denials: list[_Denial] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    evaluations: list[Evaluation] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.attributes = attributes_of(self.request)
        self.namespace_labels, self.namespace = self._namespace()
        self.authorizer_value, self.resource_check = self._authorizer()

    def _namespace(self) -> tuple[Mapping[str, str], Any]:
        attributes = self.attributes
        is_namespace = attributes.resource.resource == "namespaces" and not attributes.subresource
        if is_namespace and attributes.operation in ("CREATE", "UPDATE"):
            labels: Mapping[str, str] = labels_of(attributes.object)
        else:
            labels = labels_of(self.resources.namespace(attributes.namespace)) if attributes.namespace else {}
        kind = attributes.kind
        name = "" if (kind.group, kind.version, kind.kind) == ("", "v1", "Namespace") else attributes.namespace
        return labels, namespace_object(self.resources.namespace(name)) if name else None

    def _authorizer(self) -> tuple[Any, Any]:
        user = self.request.get("userInfo") if is_mapping(self.request.get("userInfo")) else {}
        assert is_mapping(user)
        extra = {k: tuple(v) for k, v in (user.get("extra") or {}).items()}
        info = UserInfo(str(user.get("username", "")), str(user.get("uid", "")), tuple(user.get("groups") or ()), extra)
        value = authorizer_value(self.authorizer if self.authorizer is not None else RBACAuthorizer(), info)
        a = self.attributes
        check = ResourceCheck(
            GroupCheck(value, a.resource.group), a.resource.resource, a.subresource, a.namespace, a.name
        )
        return value, check

    def run(self) -> Decision:
        for compiled in self.policies:
            self.policy(compiled)
        if self.failures:
            # Before 1.37 each failure was published alone and the first one kept the key (apiserver e5e88b808).
            kept = MAX_VALIDATION_FAILURES if fe.api_server() >= (1, 37) else 1
            self.annotations[VALIDATION_FAILURE_KEY] = go_json(self.failures[:kept])
        return self.decision()

    def policy(self, compiled: CompiledPolicy) -> None:
        policy = compiled.policy
        match = matches(policy.match_constraints, self.attributes, self.namespace_labels)
        if match is None:
            why = mismatch(policy.match_constraints, self.attributes, self.namespace_labels)
            detail = f"matchConstraints: {why}"
            self.evaluations.append(Evaluation(policy.name, "", "", "policy-not-matched", detail=detail))
            return
        collected: dict[str, list[str]] = {}
        if not self.bindings.get(policy.name):
            self.evaluations.append(Evaluation(policy.name, "", "", "unbound", detail="no binding names this policy"))
        for binding in self.bindings.get(policy.name, ()):
            if (
                binding.match_resources is not None
                and matches(binding.match_resources, self.attributes, self.namespace_labels) is None
            ):
                why = mismatch(binding.match_resources, self.attributes, self.namespace_labels)
                detail = f"matchResources: {why}"
                self.evaluations.append(Evaluation(policy.name, binding.name, "", "binding-not-matched", detail=detail))
                continue
            try:
                params = collect_params(policy, binding, self.attributes.namespace, self.resources)
            except ConfigError as err:
                self.config_error(policy, binding, str(err))
                continue
            inputs = [self.inputs(match.resource, match.kind, param) for param in params]
            for param, given in zip(params, inputs, strict=True):
                try:
                    result = validate(compiled, given, self.meter)
                except Exception as err:  # kcel's own bug, not the request's: the policy's failure policy decides
                    self.internal_error(policy, binding, err)
                    continue
                self.record(policy, binding, param, result)
                self.apply(policy, binding, result, collected)
        for key, values in collected.items():
            self.annotations[f"{policy.name}/{key}"] = ", ".join(values)

    def config_error(self, policy: Policy, binding: Binding, message: str) -> None:
        self.evaluations.append(Evaluation(policy.name, binding.name, "", "config-error", detail=message))
        if policy.failure_policy == FAIL:
            self.denials.append(_Denial(policy.name, binding.name, f"failed to configure binding: {message}"))

    def internal_error(self, policy: Policy, binding: Binding, err: Exception) -> None:
        """As the API server treats an evaluation that fails: a denial under `failurePolicy: Fail`, else nothing (a
        server-wide failure policy must never let a request past a policy that says Fail)."""
        message = f"internal error: {type(err).__name__}: {err}"
        self.evaluations.append(Evaluation(policy.name, binding.name, "", "error", detail=message))
        if policy.failure_policy == FAIL:
            self.denials.append(_Denial(policy.name, binding.name, message))

    def inputs(self, resource: GVR, kind: GVK, param: Any) -> Inputs:
        return Inputs(
            object=self.attributes.object,
            old_object=self.attributes.old_object,
            request=cel_request(self.request, self.attributes, kind, resource),
            condition_request=cel_request(self.request, self.attributes, kind, self.attributes.resource),
            namespace=self.namespace,
            params=param,
            authorizer=self.authorizer_value,
            request_resource_check=self.resource_check,
        )

    def record(self, policy: Policy, binding: Binding, param: Any, result: ValidateResult) -> None:
        param_name = str(_meta(param).get("name", "")) if param is not None else ""
        if not result.matched:
            detail = f"match condition {result.failed_condition!r} is false" if result.failed_condition else ""
            self.evaluations.append(Evaluation(policy.name, binding.name, param_name, "not-matched", detail=detail))
            return
        evaluations = {d.evaluation for d in result.decisions}
        outcome = "error" if "error" in evaluations else "deny" if "deny" in evaluations else "admit"
        self.evaluations.append(Evaluation(policy.name, binding.name, param_name, outcome, result.decisions))

    def apply(self, policy: Policy, binding: Binding, result: ValidateResult, collected: dict[str, list[str]]) -> None:
        """The binding's actions for each denying decision, then the audit annotations."""
        for index, decision in enumerate(result.decisions):
            if decision.action == DENY.lower():
                self.act(policy, binding, index, decision)
        for annotation in result.audit_annotations:
            if annotation.action == "publish":
                values = collected.setdefault(annotation.key, [])
                value = annotation.value[:MAX_AUDIT_VALUE_LENGTH]
                if value not in values:
                    values.append(value)
            elif annotation.action == "error":
                self.denials.append(_Denial(policy.name, binding.name, annotation.error))

    def act(self, policy: Policy, binding: Binding, index: int, decision: PolicyDecision) -> None:
        for action in binding.validation_actions:
            if action == DENY:
                self.denials.append(_Denial(policy.name, binding.name, decision.message, decision.reason))
            elif action == AUDIT:
                self.failures.append({
                    "message": decision.message, "policy": binding.policy_name, "binding": binding.name,
                    "expressionIndex": index, "validationActions": list(binding.validation_actions),
                })  # fmt: skip
            elif action == WARN:
                self.warnings.append(
                    f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding '{binding.name}': "
                    f"{decision.message}"
                )

    def decision(self) -> Decision:
        warnings = tuple(dict.fromkeys(self.warnings))  # the warning recorder keeps each text once
        common = {"warnings": warnings, "audit_annotations": dict(self.annotations), "cost": self.meter.spent,
                  "evaluations": tuple(self.evaluations)}  # fmt: skip
        if not self.denials:
            return Decision(True, 200, "", "", **common)  # type: ignore[arg-type]
        first = self.denials[0]
        if first.binding is not None:
            message = (
                f"ValidatingAdmissionPolicy '{first.policy}' with binding '{first.binding}' denied request: "
                f"{first.message}"
            )
        else:
            message = f"ValidatingAdmissionPolicy '{first.policy}' denied request: {first.message}"
        reason = first.reason or "Invalid"
        return Decision(
            False, CODES.get(reason, 422), reason, message, status_message=self.forbidden(message),
            status_details=self.details(), **common,  # type: ignore[arg-type]
        )  # fmt: skip

    def details(self) -> dict[str, str]:
        resource = self.attributes.resource
        return {"name": object_name(self.attributes), "group": resource.group, "kind": resource.resource}

    def forbidden(self, message: str) -> str:
        """apierrors.NewForbidden's message for the request's resource and name."""
        group_resource, name = self.attributes.resource.group_resource, object_name(self.attributes)
        if not self.attributes.resource.resource:
            return f"forbidden: {message}"
        return f'{group_resource} "{name}" is forbidden: {message}'
