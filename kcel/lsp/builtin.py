"""The fields of `object` in an admission policy's expressions: the built-in kind its matchConstraints name, typed by
the kind's OpenAPI schema (the `kcel[schemas]` extra), for completion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def object_fields(policy: Mapping[str, Any], chain: Sequence[str], k8s_version: str | None) -> Mapping[str, Any]:
    """The properties at `object.<chain>` for the first resource the policy's rules name that has a built-in
    schema; empty when none does (a custom resource, `*`, or no schemas installed)."""
    definition = _matched_definition(policy, k8s_version)
    if definition is None:
        return {}
    definitions, node = definition
    for name in chain:
        node = _properties(definitions, node).get(name)
        while isinstance(node, Mapping) and _resolved(definitions, node).get("type") == "array":
            node = _resolved(definitions, node).get("items")
    return _properties(definitions, node)


def _matched_definition(policy: Mapping[str, Any], k8s_version: str | None) -> tuple[Any, Any] | None:
    from kcel.k8s.admission.request import guess_plural
    from kcel.k8s.environment import NEWEST, server_version
    from kcel.k8s.patch.schemas import builtin_definitions

    index = builtin_definitions(server_version(k8s_version or NEWEST))
    if index is None:
        return None
    definitions = index.definitions
    spec = policy.get("spec")
    constraints = spec.get("matchConstraints") if isinstance(spec, Mapping) else None
    rules = constraints.get("resourceRules") if isinstance(constraints, Mapping) else None
    for rule in rules if isinstance(rules, list) else []:
        wanted = {(g, v, r) for g in rule.get("apiGroups") or () for v in rule.get("apiVersions") or ()
                  for r in rule.get("resources") or ()}  # fmt: skip
        for definition in definitions.values():
            for gvk in definition.get("x-kubernetes-group-version-kind") or ():
                key = (gvk.get("group", ""), gvk.get("version", ""), guess_plural(gvk.get("kind", "")))
                if key in wanted:
                    return definitions, definition
    return None


def _resolved(definitions: Mapping[str, Any], node: Any) -> Mapping[str, Any]:
    """A schema with its `$ref` (or a single `allOf`) followed."""
    for _ in range(20):
        if not isinstance(node, Mapping):
            return {}
        if isinstance(node.get("$ref"), str):
            node = definitions.get(node["$ref"].rpartition("/")[2])
        elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            node = node["allOf"][0]
        else:
            return node
    return {}


def _properties(definitions: Mapping[str, Any], node: Any) -> Mapping[str, Any]:
    found = _resolved(definitions, node).get("properties")
    return found if isinstance(found, Mapping) else {}
