"""Reading policies, bindings and the objects they look up (params, Namespaces) from YAML/JSON manifests.

Every document is read on its own: one that cannot be used (it does not decode, a field has the wrong
shape, or the API server's create-time validation would reject it) becomes a one-line problem naming the
file, the document and the field path, and the other documents still load.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.admission.model import (
    APPLY_CONFIGURATION,
    AUDIT,
    DENY,
    FAIL,
    IF_NEEDED,
    IGNORE,
    JSON_PATCH,
    NEVER,
    WARN,
    AuditAnnotation,
    Binding,
    MatchResources,
    MutatingBinding,
    MutatingPolicy,
    Mutation,
    NamedExpression,
    ParamKind,
    ParamRef,
    Policy,
    Rule,
    Selector,
    Validation,
)
from kcel.k8s.authorization.rbac import label_selector
from kcel.k8s.manifests.decoding import decode_documents
from kcel.k8s.manifests.files import manifest_files

GROUP = "admissionregistration.k8s.io"
POLICY_KIND, BINDING_KIND = "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"
MUTATING_KIND, MUTATING_BINDING_KIND = "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"
MUTATING_OPERATIONS = ("*", "CONNECT", "CREATE", "UPDATE")  # supportedMutatingOperations: never DELETE
REASONS = ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")
OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
SCOPES = ("*", "Cluster", "Namespaced")
_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_CEL_RESERVED = frozenset(
    "true false null in as break const continue else for function if import let loop package namespace return var "
    "void while".split()
)


class PolicyLoadError(Exception):
    """A file, document or field that cannot be used; `str()` names the file, the document and the field path."""


@dataclass
class Loaded:
    """What a set of files holds; `problems` has one line per document (or file) that could not be used."""

    policies: list[Policy] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    mutating_policies: list[MutatingPolicy] = field(default_factory=list)
    mutating_bindings: list[MutatingBinding] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)  # anything else: params, Namespaces, CRDs
    problems: list[str] = field(default_factory=list)


def load(paths: Iterable[str | os.PathLike[str]], loaded: Loaded | None = None) -> Loaded:
    """Read every file (directories: their YAML/JSON files) into `loaded`; problems are collected, not raised."""
    loaded = loaded if loaded is not None else Loaded()
    for given in paths:
        try:
            files = manifest_files([given])
        except FileNotFoundError as err:
            loaded.problems.append(str(err))
            continue
        for path in files:
            _load_file(path, loaded)
    return loaded


def load_documents(documents: str | Iterable[Mapping[str, Any]], loaded: Loaded | None = None,
                   source: str = "<manifests>") -> Loaded:  # fmt: skip
    """Manifests already in memory into `loaded`: YAML or JSON text (several documents), or decoded objects."""
    loaded = loaded if loaded is not None else Loaded()
    if isinstance(documents, str):
        for document in decode_documents(documents, source):
            if document.error:
                loaded.problems.append(document.error)
            elif document.value is not None:
                _add(document.value, f"{source}: document {document.index}", fe.Path(), loaded)
        return loaded
    for index, value in enumerate(documents):
        _add(value, f"{source}: document {index}", fe.Path(), loaded)
    return loaded


def load_schema_files(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """OpenAPI v3 documents (`kubectl get --raw /openapi/v3/apis/apps/v1` saved to a file), and the problems."""
    documents: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            problems.append(f"{path}: cannot read: {err}")
            continue
        for document in decode_documents(text, str(path)):
            if document.error:
                problems.append(document.error)
            elif isinstance(document.value, Mapping) and isinstance(document.value.get("components"), Mapping):
                documents.append(dict(document.value))
            elif document.value is not None:
                problems.append(f"{path}: document {document.index}: not an OpenAPI v3 document (no components)")
    return documents, problems


def _load_file(path: Path, loaded: Loaded) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        loaded.problems.append(f"{path}: cannot read: {err}")
        return
    for document in decode_documents(text, str(path)):
        if document.error:
            loaded.problems.append(document.error)
        elif document.value is not None:
            _add(document.value, f"{path}: document {document.index}", fe.Path(), loaded)


def _add(value: Any, where: str, path: fe.Path, loaded: Loaded) -> None:
    if not isinstance(value, Mapping):
        loaded.problems.append(f"{where}: {_text(path)}: must be an object")
        return
    kind = value.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(value.get("items"), list):
        for i, item in enumerate(value["items"]):
            _add(item, where, path.child("items").index(i), loaded)
        return
    group = str(value.get("apiVersion", "")).partition("/")[0]
    try:
        if group == GROUP and kind == POLICY_KIND:
            loaded.policies.append(read_policy(_Reader(value, path), where))
        elif group == GROUP and kind == BINDING_KIND:
            loaded.bindings.append(read_binding(_Reader(value, path), where))
        elif group == GROUP and kind == MUTATING_KIND:
            loaded.mutating_policies.append(read_mutating_policy(_Reader(value, path), where))
        elif group == GROUP and kind == MUTATING_BINDING_KIND:
            loaded.mutating_bindings.append(read_mutating_binding(_Reader(value, path), where))
        else:
            loaded.objects.append(dict(value))
    except PolicyLoadError as err:
        loaded.problems.append(f"{where}: {err}")


def _text(path: fe.Path) -> str:
    return str(path) if path.elements else "<root>"


# -- reading fields ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reader:
    """A JSON object being read and where it is, so that every problem can name its field path."""

    data: Mapping[str, Any]
    path: fe.Path

    def fail(self, key: str, problem: str) -> PolicyLoadError:
        return PolicyLoadError(f"{self.path.child(key) if self.path.elements else key}: {problem}")

    def reject(self, error: fe.FieldError) -> PolicyLoadError:
        return PolicyLoadError(str(error))

    def at(self, key: str) -> fe.Path:
        return self.path.child(key)

    def string(self, key: str, required: bool = False) -> str:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.reject(fe.required(self.at(key), ""))
            return ""
        if not isinstance(value, str):
            raise self.fail(key, "must be a string")
        return value

    def choice(self, key: str, supported: tuple[str, ...], default: str) -> str:
        value = self.string(key) or default
        if value not in supported:
            raise self.reject(fe.not_supported(self.at(key), value, supported))
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be an array of strings")
        return tuple(value)

    def mapping(self, key: str, required: bool = False) -> _Reader | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.reject(fe.required(self.at(key), ""))
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, "must be an object")
        return _Reader(value, self.at(key))

    def mappings(self, key: str) -> Iterator[_Reader]:
        value = self.data.get(key)
        if value is None:
            return
        if not isinstance(value, list):
            raise self.fail(key, "must be an array")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise PolicyLoadError(f"{self.at(key).index(i)}: must be an object")
            yield _Reader(item, self.at(key).index(i))

    def selector(self, key: str) -> Selector | None:
        reader = self.mapping(key)
        if reader is None:
            return None
        try:
            return label_selector(reader.data)
        except ValueError as err:
            raise self.reject(fe.invalid(self.at(key), fe.OMIT, str(err))) from None

    def name(self) -> str:
        metadata = self.mapping("metadata", required=True)
        assert metadata is not None
        return metadata.string("name", required=True)


# -- policies --------------------------------------------------------------------------------------------------


def _policy_head(doc: _Reader) -> tuple[str, _Reader, _Reader, MatchResources]:
    """A policy's name, spec and matchConstraints, which must name resources (they give the types)."""
    name = doc.name()
    spec = doc.mapping("spec", required=True)
    assert spec is not None
    constraints = spec.mapping("matchConstraints", required=True)
    assert constraints is not None
    match = _match_resources(constraints)
    if not match.resource_rules:
        raise doc.reject(fe.required(constraints.at("resourceRules"), ""))
    return name, spec, constraints, match


def read_policy(doc: _Reader, where: str) -> Policy:
    """A ValidatingAdmissionPolicy; raises PolicyLoadError for what the API server would not accept."""
    name, spec, _, match = _policy_head(doc)
    validations = tuple(_validation(v) for v in spec.mappings("validations"))
    annotations = tuple(_audit_annotation(a) for a in spec.mappings("auditAnnotations"))
    if not validations and not annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        raise doc.reject(fe.required(spec.at("validations"), detail))
    _unique([a.key for a in annotations], spec.at("auditAnnotations"), "key")
    conditions = tuple(_named(c, "expression") for c in spec.mappings("matchConditions"))
    _unique([c.name for c in conditions], spec.at("matchConditions"), "name")
    return Policy(
        name=name,
        match_constraints=match,
        validations=validations,
        audit_annotations=annotations,
        match_conditions=conditions,
        variables=tuple(_variable(v) for v in spec.mappings("variables")),
        param_kind=_param_kind(spec.mapping("paramKind")),
        failure_policy=spec.choice("failurePolicy", (FAIL, IGNORE), FAIL),
        source=where,
        api_version=str(doc.data.get("apiVersion")),
    )


def _unique(names: list[str], path: fe.Path, key: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise PolicyLoadError(str(fe.duplicate(path.index(i).child(key), name)))
        seen.add(name)


def _match_resources(doc: _Reader) -> MatchResources:
    return MatchResources(
        namespace_selector=doc.selector("namespaceSelector") or (),
        object_selector=doc.selector("objectSelector") or (),
        resource_rules=tuple(_rule(r) for r in doc.mappings("resourceRules")),
        exclude_resource_rules=tuple(_rule(r) for r in doc.mappings("excludeResourceRules")),
        match_policy=doc.choice("matchPolicy", ("Equivalent", "Exact"), "Equivalent"),
    )


def _rule(doc: _Reader) -> Rule:
    operations = doc.strings("operations")
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            raise doc.reject(fe.not_supported(doc.at("operations").index(i), operation, OPERATIONS))
    return Rule(
        operations=operations,
        api_groups=doc.strings("apiGroups"),
        api_versions=doc.strings("apiVersions"),
        resources=doc.strings("resources"),
        scope=doc.choice("scope", SCOPES, "*"),
        resource_names=doc.strings("resourceNames"),
    )


def _validation(doc: _Reader) -> Validation:
    expression = doc.string("expression")
    if not expression.strip():
        raise doc.reject(fe.required(doc.at("expression"), "expression is not specified"))
    message = doc.string("message")
    if "\n" in message.strip() or "\r" in message.strip():
        raise doc.reject(fe.invalid(doc.at("message"), message, "message must not contain line breaks"))
    reason = doc.string("reason") or None
    if reason is not None and reason not in REASONS:
        raise doc.reject(fe.not_supported(doc.at("reason"), reason, sorted(REASONS)))
    return Validation(expression, message, doc.string("messageExpression"), reason)


def _audit_annotation(doc: _Reader) -> AuditAnnotation:
    key = doc.string("key", required=True)
    value = doc.string("valueExpression")
    if not value.strip():
        raise doc.reject(fe.required(doc.at("valueExpression"), "valueExpression is not specified"))
    return AuditAnnotation(key, value)


def _named(doc: _Reader, expression_key: str) -> NamedExpression:
    name = doc.string("name", required=True)
    expression = doc.string(expression_key)
    if not expression.strip():
        raise doc.reject(fe.required(doc.at(expression_key), ""))
    return NamedExpression(name, expression)


def _variable(doc: _Reader) -> NamedExpression:
    variable = _named(doc, "expression")
    if _CEL_IDENTIFIER.fullmatch(variable.name) is None or variable.name in _CEL_RESERVED:
        raise doc.reject(fe.invalid(doc.at("name"), variable.name, "name is not a valid CEL identifier"))
    return variable


def _param_kind(doc: _Reader | None) -> ParamKind | None:
    if doc is None:
        return None
    return ParamKind(doc.string("apiVersion", required=True), doc.string("kind", required=True))


# -- bindings --------------------------------------------------------------------------------------------------


def read_binding(doc: _Reader, where: str) -> Binding:
    """A ValidatingAdmissionPolicyBinding; raises PolicyLoadError for what the API server would not accept."""
    name = doc.name()
    spec = doc.mapping("spec", required=True)
    assert spec is not None
    match = spec.mapping("matchResources")
    return Binding(
        name=name,
        policy_name=spec.string("policyName", required=True),
        validation_actions=_validation_actions(spec),
        param_ref=_param_ref(spec.mapping("paramRef")),
        match_resources=_match_resources(match) if match is not None else None,
        source=where,
        api_version=str(doc.data.get("apiVersion")),
    )


def _validation_actions(spec: _Reader) -> tuple[str, ...]:
    actions = spec.strings("validationActions")
    path = spec.at("validationActions")
    supported = (AUDIT, DENY, WARN)
    for i, action in enumerate(actions):
        if action not in supported:
            raise PolicyLoadError(str(fe.not_supported(path.index(i), action, supported)))
        if action in actions[:i]:
            raise PolicyLoadError(str(fe.duplicate(path.index(i), action)))
    if DENY in actions and WARN in actions:
        detail = (
            "must not contain both Deny and Warn (repeating the same validation failure information in the API "
            "response and headers serves no purpose)"
        )
        raise PolicyLoadError(str(fe.invalid(path, list(actions), detail)))
    if not actions:
        raise PolicyLoadError(str(fe.required(path, "at least one validation action is required")))
    return actions


def _param_ref(doc: _Reader | None) -> ParamRef | None:
    if doc is None:
        return None
    name, selector = doc.string("name"), doc.selector("selector")
    if name and selector is not None:
        raise doc.reject(fe.forbidden(doc.at("name"), "name and selector are mutually exclusive"))
    if not name and selector is None:
        raise doc.reject(fe.required(doc.path, "one of name or selector must be specified"))
    action = doc.string("parameterNotFoundAction")
    if not action:
        raise doc.reject(fe.required(doc.at("parameterNotFoundAction"), ""))
    if action not in (DENY, "Allow"):
        raise doc.reject(fe.not_supported(doc.at("parameterNotFoundAction"), action, (DENY, "Allow")))
    return ParamRef(name, doc.string("namespace"), selector, action)


# -- MutatingAdmissionPolicy (validateMutatingAdmissionPolicySpec) -----------------------------------------------


def read_mutating_policy(doc: _Reader, where: str) -> MutatingPolicy:
    """A MutatingAdmissionPolicy; raises PolicyLoadError for what the API server would not accept."""
    name, spec, constraints, match = _policy_head(doc)
    _mutable_operations(match, constraints.at("resourceRules"))
    conditions = tuple(_named(c, "expression") for c in spec.mappings("matchConditions"))
    _unique([c.name for c in conditions], spec.at("matchConditions"), "name")
    mutations = tuple(_mutation(m) for m in spec.mappings("mutations"))
    if not mutations:
        raise doc.reject(fe.required(spec.at("mutations"), "mutations must contain at least one item"))
    if not spec.string("reinvocationPolicy"):
        raise doc.reject(fe.required(spec.at("reinvocationPolicy"), ""))
    return MutatingPolicy(
        name=name,
        match_constraints=match,
        mutations=mutations,
        reinvocation_policy=spec.choice("reinvocationPolicy", (IF_NEEDED, NEVER), NEVER),
        match_conditions=conditions,
        variables=tuple(_variable(v) for v in spec.mappings("variables")),
        param_kind=_param_kind(spec.mapping("paramKind")),
        failure_policy=spec.choice("failurePolicy", (FAIL, IGNORE), FAIL),
        api_version=str(doc.data.get("apiVersion")),
        source=where,
    )


def _mutable_operations(match: MatchResources, rules: fe.Path) -> None:
    """Only CREATE, UPDATE and CONNECT requests can be mutated."""
    for rule in match.resource_rules:
        for operation in rule.operations:
            if operation not in MUTATING_OPERATIONS:
                raise PolicyLoadError(str(fe.not_supported(rules.child("operations"), operation, MUTATING_OPERATIONS)))


def _mutation(doc: _Reader) -> Mutation:
    patch_type = doc.string("patchType")
    if not patch_type:
        raise doc.reject(fe.required(doc.at("patchType"), ""))
    keys = {APPLY_CONFIGURATION: "applyConfiguration", JSON_PATCH: "jsonPatch"}
    if patch_type not in keys:
        raise doc.reject(fe.not_supported(doc.at("patchType"), patch_type, sorted(keys)))
    wanted, other = keys[patch_type], keys[JSON_PATCH if patch_type == APPLY_CONFIGURATION else APPLY_CONFIGURATION]
    body = doc.mapping(wanted)
    if body is None:
        raise doc.reject(fe.required(doc.at(wanted), f"must be specified when patchType is {patch_type}"))
    if doc.data.get(other) is not None:
        detail = f"must not be specified when patchType is {patch_type}"
        raise doc.reject(fe.invalid(doc.at(other), f"{{{other}}}", detail))
    expression = body.string("expression")
    if not expression.strip():
        raise doc.reject(fe.required(body.at("expression"), ""))
    return Mutation(patch_type, expression)


def read_mutating_binding(doc: _Reader, where: str) -> MutatingBinding:
    """A MutatingAdmissionPolicyBinding; raises PolicyLoadError for what the API server would not accept."""
    name = doc.name()
    spec = doc.mapping("spec", required=True)
    assert spec is not None
    match = spec.mapping("matchResources")
    resources = _match_resources(match) if match is not None else None
    if resources is not None:
        _mutable_operations(resources, spec.at("matchResources").child("resourceRules"))
    return MutatingBinding(
        name=name,
        policy_name=spec.string("policyName", required=True),
        param_ref=_param_ref(spec.mapping("paramRef")),
        match_resources=resources,
        api_version=str(doc.data.get("apiVersion")),
        source=where,
    )
