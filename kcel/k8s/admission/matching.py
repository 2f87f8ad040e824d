"""Which requests a policy or a binding applies to (apiserver pkg/admission/plugin/policy/matching and predicates).

Namespace and object selectors, excluded rules, then the resource rules; with `matchPolicy: Equivalent` a
request also matches a rule through an equivalent resource. Offline there is no discovery, so the
equivalents are the same resource in the other versions a rule names, and the few built-in resources served
by two groups (see EQUIVALENT_GROUPS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcel.k8s.admission.model import MatchResources, Rule, Selector
from kcel.values import is_mapping

NAMESPACES = ("", "v1", "namespaces")

# Resources the API server serves under two groups, which discovery reports as equivalent.
EQUIVALENT_GROUPS: Mapping[tuple[str, str], tuple[tuple[str, str, str], ...]] = {
    ("", "events"): (("events.k8s.io", "v1", "Event"),),
    ("events.k8s.io", "events"): (("", "v1", "Event"),),
}


@dataclass(frozen=True, slots=True)
class GVK:
    """A group, version and kind (schema.GroupVersionKind); `as_json`: its AdmissionReview form."""

    group: str
    version: str
    kind: str

    def as_json(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class GVR:
    """A group, version and resource (schema.GroupVersionResource); `as_json`: its AdmissionReview form."""

    group: str
    version: str
    resource: str

    def as_json(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "resource": self.resource}

    @property
    def group_resource(self) -> str:
        """schema.GroupResource.String(): `deployments.apps`, `pods`."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


@dataclass(frozen=True, slots=True)
class Attributes:
    """What matching reads of a request (admission.Attributes)."""

    kind: GVK
    resource: GVR
    subresource: str
    name: str
    namespace: str
    operation: str
    object: Any
    old_object: Any


@dataclass(frozen=True, slots=True)
class Match:
    """A match: the resource and kind the policy sees (an equivalent one under matchPolicy Equivalent)."""

    resource: GVR
    kind: GVK


def selects(selector: Selector, labels: Mapping[str, str]) -> bool:
    return all(requirement.matches(labels) for requirement in selector)


def labels_of(obj: Any) -> Mapping[str, str]:
    """An object's labels ({} when it has none or they are malformed)."""
    metadata = obj.get("metadata") if is_mapping(obj) else None
    labels = metadata.get("labels") if is_mapping(metadata) else None
    return labels if is_mapping(labels) else {}


def object_selected(selector: Selector, attributes: Attributes) -> bool:
    """predicates/object: the new or the old object carries matching labels (an empty selector: always)."""
    if not selector:
        return True
    return any(
        obj is not None and selects(selector, labels_of(obj)) for obj in (attributes.object, attributes.old_object)
    )


def namespace_selected(selector: Selector, attributes: Attributes, namespace_labels: Mapping[str, str]) -> bool:
    """predicates/namespace: cluster-scoped requests (other than for namespaces) always match."""
    if not attributes.namespace and attributes.resource.resource != "namespaces":
        return True
    return not selector or selects(selector, namespace_labels)


def rule_matches(rule: Rule, attributes: Attributes, resource: GVR) -> bool:
    """predicates/rules Matcher.Matches for the request seen as `resource`."""
    return (
        _scope(rule.scope, attributes, resource)
        and ("*" in rule.operations or attributes.operation in rule.operations)
        and _either(rule.api_groups, resource.group)
        and _either(rule.api_versions, resource.version)
        and _resource(rule.resources, resource.resource, attributes.subresource)
        and (not rule.resource_names or attributes.name in rule.resource_names)
    )


def _either(items: Sequence[str], requested: str) -> bool:
    return "*" in items or requested in items


def _scope(scope: str, attributes: Attributes, resource: GVR) -> bool:
    is_namespace = (resource.group, resource.version, resource.resource) == NAMESPACES
    if scope == "Namespaced":
        return not is_namespace and attributes.namespace != ""
    if scope == "Cluster":
        return is_namespace or attributes.namespace == ""
    return True


def _resource(resources: Sequence[str], resource: str, subresource: str) -> bool:
    for entry in resources:
        name, _, sub = entry.partition("/")
        if (name == "*" or name == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def matches_rules(rules: Sequence[Rule], match_policy: str, attributes: Attributes) -> Match | None:
    """matching.go matchesResourceRules: the request itself first, then (Equivalent) its equivalents."""
    for rule in rules:
        if rule_matches(rule, attributes, attributes.resource):
            return Match(attributes.resource, attributes.kind)
    if match_policy != "Equivalent":
        return None
    for rule in rules:
        for resource, kind in equivalents(rule, attributes):
            if rule_matches(rule, attributes, resource):
                return Match(resource, kind)
    return None


def equivalents(rule: Rule, attributes: Attributes) -> list[tuple[GVR, GVK]]:
    """The request's resource in the other versions the rule names, and in its other serving groups."""
    found: list[tuple[GVR, GVK]] = []
    request = attributes.resource
    for version in rule.api_versions:
        if version not in ("*", request.version):
            found.append(
                (GVR(request.group, version, request.resource), GVK(request.group, version, attributes.kind.kind))
            )
    for group, version, kind in EQUIVALENT_GROUPS.get((request.group, request.resource), ()):
        found.append((GVR(group, version, request.resource), GVK(group, version, kind)))
    return found


def mismatch(match: MatchResources, attributes: Attributes, namespace_labels: Mapping[str, str]) -> str:
    """Which test of `matches` a request it does not match fails (`namespaceSelector`, `objectSelector`,
    `excludeResourceRules`, else `resourceRules`), for `kcel admit -v`: the tests in `matches`' order."""
    if not namespace_selected(match.namespace_selector, attributes, namespace_labels):
        return "namespaceSelector"
    if not object_selected(match.object_selector, attributes):
        return "objectSelector"
    if matches_rules(match.exclude_resource_rules, match.match_policy, attributes) is not None:
        return "excludeResourceRules"
    return "resourceRules"


def matches(match: MatchResources, attributes: Attributes, namespace_labels: Mapping[str, str]) -> Match | None:
    """matching.Matcher.Matches: selectors, excluded rules, then the rules (none: everything)."""
    if not namespace_selected(match.namespace_selector, attributes, namespace_labels):
        return None
    if not object_selected(match.object_selector, attributes):
        return None
    if matches_rules(match.exclude_resource_rules, match.match_policy, attributes) is not None:
        return None
    if not match.resource_rules:
        return Match(attributes.resource, attributes.kind)
    return matches_rules(match.resource_rules, match.match_policy, attributes)
