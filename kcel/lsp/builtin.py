"""The fields of `object` and `params` in an admission policy's expressions, for completion: the built-in kind its
matchConstraints name, typed by the kind's OpenAPI schema (the `kcel[schemas]` extra), and the CRD of its paramKind
found beside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
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


def params_fields(policy: Mapping[str, Any], chain: Sequence[str], folder: Path | None) -> Mapping[str, Any]:
    """The properties at `params.<chain>`: the schema of the CRD that serves the policy's paramKind, found among
    the YAML files of the policy's folder (and the folders under it)."""
    spec = policy.get("spec")
    kind = spec.get("paramKind") if isinstance(spec, Mapping) else None
    if not isinstance(kind, Mapping) or folder is None:
        return {}
    group, _, version = str(kind.get("apiVersion", "")).rpartition("/")
    for crd in _crds_under(folder):
        names, crd_spec = crd.get("spec", {}).get("names", {}), crd.get("spec", {})
        if crd_spec.get("group") != group or names.get("kind") != kind.get("kind"):
            continue
        served = [v for v in crd_spec.get("versions") or () if isinstance(v, Mapping) and v.get("name") == version]
        node: Any = served[0].get("schema", {}).get("openAPIV3Schema") if served else None
        for name in chain:
            node = _properties({}, node).get(name)
            while isinstance(node, Mapping) and node.get("type") == "array":
                node = node.get("items")
        return _properties({}, node)
    return {}


def _crds_under(folder: Path) -> list[Mapping[str, Any]]:
    """The documents of the folder's files that may hold CRDs, decoded as the API server decodes them (so an alias
    bomb or a document nested too deeply is left out, not expanded or recursed into)."""
    from kcel.k8s.manifests.decoding import decode_documents

    found = []
    for path in sorted(folder.rglob("*.yaml"))[:500]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "kind: CustomResourceDefinition" in text:
            found += [d.value for d in decode_documents(text, str(path)) if isinstance(d.value, Mapping)]
    return found
