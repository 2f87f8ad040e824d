"""The markers of a kind's type that shape its CRD's spec rather than its schema (controller-tools
pkg/crd/markers/crd.go): resource names and scope, subresources, printer columns, storage, served, deprecated
and skipped versions, selectable fields, CRD metadata.

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
"""

from __future__ import annotations

from typing import Any

from kcel.k8s.gotypes.markers import Marker


def _version(crd: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((v for v in crd["spec"]["versions"] if v["name"] == name), None)


def apply_crd_marker(marker: Marker, crd: dict[str, Any], version: str) -> str:  # noqa: C901
    """One spec marker applied to the CRD at a version; its error, or ""."""
    name, value, spec = marker.name, marker.value, crd["spec"]
    entry = _version(crd, version)
    if name == "kubebuilder:subresource:status":
        if entry is None:
            return f'status subresource applied to version "{version}" not in CRD'
        entry.setdefault("subresources", {})["status"] = {}
    elif name == "kubebuilder:subresource:scale":
        if entry is None:
            return f'scale subresource applied to version "{version}" not in CRD'
        scale = {"specReplicasPath": value["specpath"], "statusReplicasPath": value["statuspath"]}
        if "selectorpath" in value:
            scale["labelSelectorPath"] = value["selectorpath"]
        entry.setdefault("subresources", {})["scale"] = scale
    elif name == "kubebuilder:printcolumn":
        if entry is None:
            return f'printer columns applied to version "{version}" not in CRD'
        entry.setdefault("subresources", {})
        column = {"name": value["name"], "type": value["type"], "jsonPath": value["JSONPath"]}
        for key in ("description", "format", "priority"):
            if value.get(key):
                column[key] = value[key]
        entry.setdefault("additionalPrinterColumns", []).append(column)
    elif name == "kubebuilder:resource":
        names = spec["names"]
        if value.get("path"):
            names["plural"] = value["path"]
        if value.get("singular"):
            names["singular"] = value["singular"]
        for key, argument in (("shortNames", "shortName"), ("categories", "categories")):
            if value.get(argument):
                names[key] = list(value[argument])
            else:
                names.pop(key, None)
        spec["scope"] = value.get("scope") or "Namespaced"
    elif name == "kubebuilder:storageversion":
        if entry is not None:
            entry["storage"] = True
    elif name == "kubebuilder:skipversion":
        spec["versions"] = [v for v in spec["versions"] if v["name"] != version]
    elif name == "kubebuilder:unservedversion":
        if entry is not None:
            entry["served"] = False
    elif name == "kubebuilder:deprecatedversion":
        if entry is not None:
            entry["deprecated"] = True
            if value.get("warning") is not None:
                entry["deprecationWarning"] = value["warning"]
    elif name == "kubebuilder:metadata":
        return _metadata(value, crd)
    elif name == "kubebuilder:selectablefield":
        if entry is None:
            return f'selectable field applied to version "{version}" not in CRD'
        entry.setdefault("selectableFields", []).append({"jsonPath": value["JSONPath"]})
    return ""


def _metadata(value: dict[str, Any], crd: dict[str, Any]) -> str:
    for text in value.get("annotations") or []:
        key, equals, item = text.partition("=")
        if not equals:
            return f"annotation {text} is not in 'xxx=xxx' format"
        crd["metadata"].setdefault("annotations", {})[key] = item
    for text in value.get("labels") or []:
        key, _, item = text.partition("=")
        crd["metadata"].setdefault("labels", {})[key] = item
    return ""
