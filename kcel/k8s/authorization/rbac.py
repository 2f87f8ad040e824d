"""Kubernetes RBAC as the kube-apiserver evaluates it (plugin/pkg/auth/authorizer/rbac), from Role/Binding YAML.

`RBACAuthorizer.from_yaml(text)` loads Roles, ClusterRoles, RoleBindings and ClusterRoleBindings
(multi-document YAML or `kind: List`), resolves aggregated ClusterRoles as the
clusterrole-aggregation controller would, and answers `authorize(attributes)` like Go's
`RBACAuthorizer.Authorize`: allow with the binding that granted it, otherwise "no opinion"
(RBAC never denies) with any role-resolution errors as the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcel.k8s.manifests.decoding import decode_documents
from kcel.libs.k8s_authz import SERVICE_ACCOUNT_PREFIX, Attributes, Decision, UserInfo, Verdict
from kcel.libs.k8s_selectors import LabelRequirement, SelectorError, aggregate_errors, new_label_requirement
from kcel.temporal import go_quote

__all__ = [
    "ClusterRole", "ClusterRoleBinding", "PolicyRule", "RBACAuthorizer", "Role", "RoleBinding", "RoleRef", "Subject",
    "rule_allows",
]  # fmt: skip

RBAC_GROUP = "rbac.authorization.k8s.io"


# -- objects ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """One rule of a role; "*" is a wildcard in verbs, apiGroups, resources and nonResourceURLs."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Subject:
    """Who a binding grants to: kind User, Group or ServiceAccount (others never match)."""

    kind: str
    name: str
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class RoleRef:
    """A binding's roleRef: the Role or ClusterRole it grants, by kind and name."""

    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Role:
    """A Role: rules that only RoleBindings in its own namespace grant."""

    name: str
    namespace: str
    rules: tuple[PolicyRule, ...] = ()


LabelSelector = tuple[LabelRequirement, ...]
"""A metav1.LabelSelector as the requirements that must all hold (empty: everything)."""


@dataclass(frozen=True, slots=True)
class ClusterRole:
    """A cluster-wide role; with `aggregation` set its rules are those of the roles it selects."""

    name: str
    rules: tuple[PolicyRule, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    aggregation: tuple[LabelSelector, ...] | None = None


@dataclass(frozen=True, slots=True)
class RoleBinding:
    """A RoleBinding: grants its subjects the referenced role's rules within its namespace."""

    name: str
    namespace: str
    role_ref: RoleRef
    subjects: tuple[Subject, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterRoleBinding:
    """A ClusterRoleBinding: grants its subjects the referenced ClusterRole's rules in every namespace."""

    name: str
    role_ref: RoleRef
    subjects: tuple[Subject, ...] = ()


# -- matching (pkg/apis/rbac/v1/evaluation_helpers.go) ------------------------------------------------


def rule_allows(attributes: Attributes, rule: PolicyRule) -> bool:
    """RuleAllows: the verb plus either group/resource/name (resource requests) or the URL."""
    if not _matches_any(rule.verbs, attributes.verb):
        return False
    if not attributes.resource_request:
        return any(_url_matches(pattern, attributes.path) for pattern in rule.non_resource_urls)
    return (
        _matches_any(rule.api_groups, attributes.api_group)
        and _resource_matches(rule, attributes.resource, attributes.subresource)
        and (not rule.resource_names or attributes.name in rule.resource_names)
    )


def _matches_any(allowed: Sequence[str], requested: str) -> bool:
    return "*" in allowed or requested in allowed


def _resource_matches(rule: PolicyRule, resource: str, subresource: str) -> bool:
    """`*`, the exact `resource` or `resource/subresource`, or `*/subresource` for any resource."""
    combined = f"{resource}/{subresource}" if subresource else resource
    for allowed in rule.resources:
        if allowed in ("*", combined):
            return True
        if subresource and allowed == f"*/{subresource}":
            return True
    return False


def _url_matches(pattern: str, path: str) -> bool:
    """`*`, the exact path, or a prefix when the rule ends in `*` (`/healthz/*`)."""
    if pattern in ("*", path):
        return True
    return pattern.endswith("*") and path.startswith(pattern.rstrip("*"))


def _applies_to(user: UserInfo, subject: Subject, namespace: str) -> bool:
    """appliesToUser: a ServiceAccount subject without namespace means the binding's namespace."""
    if subject.kind == "User":
        return user.name == subject.name
    if subject.kind == "Group":
        return subject.name in user.groups
    if subject.kind == "ServiceAccount":
        sa_namespace = subject.namespace or namespace
        return bool(sa_namespace) and user.name == f"{SERVICE_ACCOUNT_PREFIX}{sa_namespace}:{subject.name}"
    return False


def _first_subject(user: UserInfo, subjects: Sequence[Subject], namespace: str) -> Subject | None:
    return next((s for s in subjects if _applies_to(user, s, namespace)), None)


def _describe_subject(subject: Subject, binding_namespace: str) -> str:
    if subject.kind == "ServiceAccount":
        return f"{subject.kind} {go_quote(subject.name + '/' + (subject.namespace or binding_namespace))}"
    return f"{subject.kind} {go_quote(subject.name)}"


def _describe(binding: RoleBinding | ClusterRoleBinding, subject: Subject) -> str:
    """The `source` in "RBAC: allowed by <source>" (clusterRoleBindingDescriber / roleBindingDescriber)."""
    ref = f"{binding.role_ref.kind} {go_quote(binding.role_ref.name)}"
    if isinstance(binding, ClusterRoleBinding):
        return f"ClusterRoleBinding {go_quote(binding.name)} of {ref} to {_describe_subject(subject, '')}"
    name = go_quote(f"{binding.name}/{binding.namespace}")
    return f"RoleBinding {name} of {ref} to {_describe_subject(subject, binding.namespace)}"


# -- aggregation (pkg/controller/clusterroleaggregation) --------------------------------------------


def _selected(selector: LabelSelector, role: ClusterRole) -> bool:
    return all(requirement.matches(role.labels) for requirement in selector)


def _aggregated_rules(role: ClusterRole, roles: Mapping[str, ClusterRole]) -> tuple[PolicyRule, ...]:
    """The controller's sync: rules of every other selected role, by role name, without duplicates."""
    rules: list[PolicyRule] = []
    for selector in role.aggregation or ():
        for name in sorted(roles):
            if name == role.name or not _selected(selector, roles[name]):
                continue
            for rule in roles[name].rules:
                if rule not in rules:
                    rules.append(rule)
    return tuple(rules)


def aggregate(roles: Mapping[str, ClusterRole]) -> dict[str, ClusterRole]:
    """Run the aggregation controller until nothing changes (aggregated roles may select each other)."""
    result = dict(roles)
    for _ in range(len(result) + 1):
        changed = False
        for name in sorted(result):
            role = result[name]
            if role.aggregation is not None and (rules := _aggregated_rules(role, result)) != role.rules:
                result[name] = dataclasses.replace(role, rules=rules)
                changed = True
        if not changed:
            break
    return result


# -- the authorizer --------------------------------------------------------------------------------

Visit = tuple[str, PolicyRule] | str
"""What rule resolution yields: (source description, rule), or an error message."""


class RBACAuthorizer:
    """Go's RBACAuthorizer over a fixed set of RBAC objects.

    Bindings are consulted in the order given (the apiserver's informer order is arbitrary, so
    only the reason text of an allow can differ when several bindings grant the same request).
    """

    def __init__(
        self,
        roles: Iterable[Role] = (),
        cluster_roles: Iterable[ClusterRole] = (),
        role_bindings: Iterable[RoleBinding] = (),
        cluster_role_bindings: Iterable[ClusterRoleBinding] = (),
    ) -> None:
        self.roles = {(r.namespace, r.name): r for r in roles}
        self.cluster_roles = aggregate({r.name: r for r in cluster_roles})
        self.role_bindings = tuple(role_bindings)
        self.cluster_role_bindings = tuple(cluster_role_bindings)

    @classmethod
    def from_yaml(cls, *documents: str) -> RBACAuthorizer:
        """Load RBAC objects from YAML texts (several documents each, or `kind: List`); other kinds are skipped.

        A namespaced object without `metadata.namespace` goes to "default", as kubectl does.
        """
        loaded: dict[str, list[Any]] = {kind: [] for kind in _PARSERS}
        for text in documents:
            for obj in _objects(_decoded(text)):
                kind = obj.get("kind")
                if kind in _PARSERS and str(obj.get("apiVersion", "")).startswith(RBAC_GROUP + "/"):
                    loaded[kind].append(_PARSERS[kind](obj))
        return cls(loaded["Role"], loaded["ClusterRole"], loaded["RoleBinding"], loaded["ClusterRoleBinding"])

    def authorize(self, attributes: Attributes) -> Decision:
        """Allow on the first rule that matches; otherwise no opinion, with resolution errors as the reason."""
        errors = []
        for visit in self.visit_rules(attributes.user, attributes.namespace):
            if isinstance(visit, str):
                errors.append(visit)
            elif rule_allows(attributes, visit[1]):
                return Decision(Verdict.ALLOW, f"RBAC: allowed by {visit[0]}")
        return Decision(Verdict.NO_OPINION, f"RBAC: {aggregate_errors(errors)}" if errors else "")

    def rules_for(self, user: UserInfo, namespace: str = "") -> list[PolicyRule]:
        """Every rule that applies to the user in the namespace ("" for cluster-wide only)."""
        return [visit[1] for visit in self.visit_rules(user, namespace) if not isinstance(visit, str)]

    def visit_rules(self, user: UserInfo, namespace: str) -> Iterator[Visit]:
        """DefaultRuleResolver.VisitRulesFor: cluster role bindings, then the namespace's role bindings."""
        bindings: list[RoleBinding | ClusterRoleBinding] = list(self.cluster_role_bindings)
        if namespace:
            bindings += (b for b in self.role_bindings if b.namespace == namespace)
        for binding in bindings:
            binding_namespace = binding.namespace if isinstance(binding, RoleBinding) else ""
            subject = _first_subject(user, binding.subjects, binding_namespace)
            if subject is None:
                continue
            rules = self.role_rules(binding.role_ref, binding_namespace)
            if isinstance(rules, str):
                yield rules
                continue
            source = _describe(binding, subject)
            yield from ((source, rule) for rule in rules)

    def role_rules(self, ref: RoleRef, namespace: str) -> tuple[PolicyRule, ...] | str:
        """GetRoleReferenceRules: the referenced role's rules, or the lister's not-found error."""
        if ref.kind == "Role":
            role = self.roles.get((namespace, ref.name))
            return role.rules if role else f"role.{RBAC_GROUP} {go_quote(ref.name)} not found"
        if ref.kind == "ClusterRole":
            cluster_role = self.cluster_roles.get(ref.name)
            return cluster_role.rules if cluster_role else f"clusterrole.{RBAC_GROUP} {go_quote(ref.name)} not found"
        return f"unsupported role reference kind: {go_quote(ref.kind)}"


# -- YAML ------------------------------------------------------------------------------------------


def _decoded(text: str) -> Iterator[Any]:
    """The documents of a text as the API server decodes them (with its limits); ValueError for one that fails."""
    for document in decode_documents(text, "RBAC objects"):
        if document.error:
            raise ValueError(document.error)
        yield document.value


def _objects(documents: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The objects of each document, with `kind: List` (and `RoleList` etc.) flattened."""
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ValueError(f"expected a Kubernetes object, got {type(document).__name__}")
        if str(document.get("kind", "")).endswith("List") and "items" in document:
            yield from _objects(document["items"] or [])
        else:
            yield document


def _strings(obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list of strings; Go's decoder rejects anything else (YAML 1.1 `on` is a bool, not "on")."""
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings, got {value!r}")
    return tuple(value)


def _string(obj: Mapping[str, Any], key: str, required: bool = False) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"{key} must be a non-empty string, got {value!r}")
    return value


def _metadata(obj: Mapping[str, Any], namespaced: bool) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    name = _string(meta, "name", required=True)
    namespace = (_string(meta, "namespace") or "default") if namespaced else ""
    return name, namespace


def _rules(obj: Mapping[str, Any]) -> tuple[PolicyRule, ...]:
    return tuple(
        PolicyRule(_strings(r, "verbs"), _strings(r, "apiGroups"), _strings(r, "resources"),
                   _strings(r, "resourceNames"), _strings(r, "nonResourceURLs"))
        for r in obj.get("rules") or []
    )  # fmt: skip


def _subjects(obj: Mapping[str, Any]) -> tuple[Subject, ...]:
    return tuple(
        Subject(_string(s, "kind", True), _string(s, "name", True), _string(s, "namespace"))
        for s in obj.get("subjects") or []
    )


def _role_ref(obj: Mapping[str, Any]) -> RoleRef:
    ref = obj.get("roleRef") or {}
    return RoleRef(_string(ref, "kind", True), _string(ref, "name", True))


_SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector(selector: Mapping[str, Any]) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: matchLabels as equalities plus matchExpressions."""
    requirements = []
    try:
        for key, value in (selector.get("matchLabels") or {}).items():
            requirements.append(new_label_requirement(str(key), "=", [str(value)]))
        for expression in selector.get("matchExpressions") or []:
            operator = expression.get("operator")
            if operator not in _SELECTOR_OPERATORS:
                raise ValueError(f"{go_quote(str(operator))} is not a valid label selector operator")
            key, values = _string(expression, "key"), _strings(expression, "values")
            requirements.append(new_label_requirement(key, _SELECTOR_OPERATORS[operator], values))
    except SelectorError as err:
        raise ValueError(str(err)) from None
    return tuple(requirements)


def _cluster_role(obj: Mapping[str, Any]) -> ClusterRole:
    name, _ = _metadata(obj, namespaced=False)
    labels = {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}
    rule = obj.get("aggregationRule")
    if rule is None:
        return ClusterRole(name, _rules(obj), labels)
    selectors = tuple(label_selector(s or {}) for s in rule.get("clusterRoleSelectors") or [])
    return ClusterRole(name, _rules(obj), labels, selectors)


def _role(obj: Mapping[str, Any]) -> Role:
    return Role(*_metadata(obj, namespaced=True), _rules(obj))


def _role_binding(obj: Mapping[str, Any]) -> RoleBinding:
    return RoleBinding(*_metadata(obj, namespaced=True), _role_ref(obj), _subjects(obj))


def _cluster_role_binding(obj: Mapping[str, Any]) -> ClusterRoleBinding:
    return ClusterRoleBinding(_metadata(obj, namespaced=False)[0], _role_ref(obj), _subjects(obj))


_PARSERS = {
    "Role": _role, "ClusterRole": _cluster_role, "RoleBinding": _role_binding,
    "ClusterRoleBinding": _cluster_role_binding,
}  # fmt: skip
