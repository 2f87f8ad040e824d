"""ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1) as frozen values, defaults applied.

The fields are those the API server's admission plugin reads, after the API's defaulting
(`failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors, rule `scope: "*"`), so the
matching and evaluation stages never have to ask what an absent field means.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcel.libs.k8s_selectors import LabelRequirement

Selector = tuple[LabelRequirement, ...]
"""A parsed metav1.LabelSelector: every requirement must hold; empty selects everything."""

FAIL, IGNORE = "Fail", "Ignore"
DENY, WARN, AUDIT = "Deny", "Warn", "Audit"


@dataclass(frozen=True, slots=True)
class Rule:
    """A NamedRuleWithOperations: which operations on which resources (`*` and `pods/*` wildcards)."""

    operations: tuple[str, ...]
    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str = "*"
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchResources:
    """What a policy (matchConstraints) or a binding (matchResources) applies to."""

    namespace_selector: Selector = ()
    object_selector: Selector = ()
    resource_rules: tuple[Rule, ...] = ()
    exclude_resource_rules: tuple[Rule, ...] = ()
    match_policy: str = "Equivalent"


@dataclass(frozen=True, slots=True)
class Validation:
    """A ValidatingAdmissionPolicy's validation: the expression, its message and the reason a denial gives."""

    expression: str
    message: str = ""
    message_expression: str = ""
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class AuditAnnotation:
    """A ValidatingAdmissionPolicy's audit annotation: its key and the expression that computes its value."""

    key: str
    value_expression: str


@dataclass(frozen=True, slots=True)
class NamedExpression:
    """A variable or a match condition: a name and a CEL expression."""

    name: str
    expression: str


@dataclass(frozen=True, slots=True)
class ParamKind:
    """A policy's paramKind: the apiVersion and kind of the objects its bindings' paramRefs select."""

    api_version: str
    kind: str


@dataclass(frozen=True, slots=True)
class ParamRef:
    """A binding's paramRef: params by name or selector, and the parameterNotFoundAction (Deny or Allow)."""

    name: str = ""
    namespace: str = ""
    selector: Selector | None = None
    not_found_action: str = "Deny"


@dataclass(frozen=True, slots=True)
class Policy:
    """A ValidatingAdmissionPolicy: what it matches, its expressions, paramKind and failurePolicy."""

    name: str
    match_constraints: MatchResources
    validations: tuple[Validation, ...] = ()
    audit_annotations: tuple[AuditAnnotation, ...] = ()
    match_conditions: tuple[NamedExpression, ...] = ()
    variables: tuple[NamedExpression, ...] = ()
    param_kind: ParamKind | None = None
    failure_policy: str = FAIL
    source: str = ""  # `file: document N`, for messages
    api_version: str = "admissionregistration.k8s.io/v1"


@dataclass(frozen=True, slots=True)
class Binding:
    """A ValidatingAdmissionPolicyBinding: its policy, validationActions, paramRef and matchResources."""

    name: str
    policy_name: str
    validation_actions: tuple[str, ...]
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    source: str = ""
    api_version: str = "admissionregistration.k8s.io/v1"


# -- MutatingAdmissionPolicy ---------------------------------------------------------------------------------------

APPLY_CONFIGURATION, JSON_PATCH = "ApplyConfiguration", "JSONPatch"
NEVER, IF_NEEDED = "Never", "IfNeeded"


@dataclass(frozen=True, slots=True)
class Mutation:
    """One entry of spec.mutations: its patch type and the CEL expression that builds the patch."""

    patch_type: str
    expression: str


@dataclass(frozen=True, slots=True)
class MutatingPolicy:
    """A MutatingAdmissionPolicy: what it matches, its mutations, paramKind, failurePolicy, reinvocationPolicy."""

    name: str
    match_constraints: MatchResources
    mutations: tuple[Mutation, ...]
    reinvocation_policy: str = NEVER
    match_conditions: tuple[NamedExpression, ...] = ()
    variables: tuple[NamedExpression, ...] = ()
    param_kind: ParamKind | None = None
    failure_policy: str = FAIL
    api_version: str = "admissionregistration.k8s.io/v1"
    source: str = ""


@dataclass(frozen=True, slots=True)
class MutatingBinding:
    """A MutatingAdmissionPolicyBinding: its policy, paramRef and matchResources."""

    name: str
    policy_name: str
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    api_version: str = "admissionregistration.k8s.io/v1"
    source: str = ""
