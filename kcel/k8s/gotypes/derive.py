"""Go API packages to the CRD manifests `controller-gen crd` writes (pkg/crd/gen.go, spec.go, markers/crd.go):
a kind is a type that embeds metav1.TypeMeta and metav1.ObjectMeta in a package with `+groupName`; the versions of
a group's kind are its packages (`+versionName`, else the package name), sorted; resource, subresource,
printcolumn, storage and version markers shape the spec. Each manifest comes with where its rules were written.

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcel.k8s.gotypes.flatten import Flattener, merge_all_of
from kcel.k8s.gotypes.markers import Markers
from kcel.k8s.gotypes.naming import plural_of
from kcel.k8s.gotypes.options import GenerationOptions, options_for, truncate_descriptions
from kcel.k8s.gotypes.packages import Package, PackageError, load_package, module_of
from kcel.k8s.gotypes.schemamarkers import ORIGIN
from kcel.k8s.gotypes.schemas import METAV1, GoProblem, Schemas, TypeRef
from kcel.k8s.gotypes.syntax import GoSyntaxError

CONTROLLER_GEN_VERSION = "v0.21.0"  # the annotation controller-gen writes; the version kcel follows
SKIPPED = ("vendor", "testdata")


@dataclass(frozen=True)
class RuleOrigin:
    """Where a rule (or its messageExpression) of a derived CRD is written: the marker's file, line and column,
    and the file offset of each character of the expression (and one past its end)."""

    file: str
    line: int
    column: int
    positions: tuple[int, ...]


@dataclass(frozen=True)
class DerivedCRD:
    """A CRD as controller-gen would write it (its YAML decoded), the Go type it is made from, and the origin of
    each rule, keyed by the manifest path of the rule's field (`spec`, `versions`, `0`, ..., `rule`)."""

    manifest: dict[str, Any]
    file: str
    line: int
    origins: Mapping[tuple[str, ...], RuleOrigin]


@dataclass(frozen=True)
class Derivation:
    """The CRDs of some Go packages, and the errors and warnings met making them."""

    crds: tuple[DerivedCRD, ...]
    problems: tuple[GoProblem, ...]


def go_package_folders(paths: Iterable[str | Path]) -> list[Path]:
    """The folders of the Go packages named: a `.go` file's folder, a folder and every package under it (`./...`
    and `dir/...` as Go spells it); vendor/, testdata/ and hidden folders are not searched."""
    found: list[Path] = []
    for given in map(str, paths):
        recursive = given.endswith("/...") or given == "..."
        base = Path(given[: -len("...")] or ".") if recursive else Path(given)
        if base.is_file():
            found.append(base.parent)
            continue
        if not base.is_dir():
            continue
        for folder in [base, *sorted(p for p in base.rglob("*") if p.is_dir())]:
            parts = folder.relative_to(base).parts
            if any(p in SKIPPED or p.startswith((".", "_")) for p in parts):
                continue
            if any(f.suffix == ".go" and not f.name.endswith("_test.go") for f in folder.iterdir()):
                found.append(folder)
    return list(dict.fromkeys(p.resolve() for p in found))


def derive_crds(paths: Iterable[str | Path], sources: Mapping[Path, str] | None = None,
                options: GenerationOptions | None = None) -> Derivation:  # fmt: skip
    """The CRDs controller-gen would generate from the Go packages named (files, folders, `./...`); `sources`: the
    texts of files an editor holds unsaved (by resolved path), read instead of the files; `options`: the `crd`
    generator's, else those the module's Makefile gives controller-gen.

    Raises:
        GoSyntaxError: tree-sitter-go is not installed.
    """
    folders = go_package_folders(paths)
    if options is None and folders:
        options = options_for(folders[0], next((m.root for m in map(module_of, folders) if m is not None), None))
    schemas = Schemas(sources, options)
    roots: list[Package] = []
    for folder in folders:
        try:
            package = load_package(folder, main=module_of(folder), sources=sources)
        except PackageError as err:
            schemas.problems.append(GoProblem("error", str(err), str(folder), 0, 0))
            continue
        if package is not None:
            roots.append(package)
            schemas.add(package)
    return _Generator(schemas, roots).run()


class _Generator:
    def __init__(self, schemas: Schemas, roots: list[Package]) -> None:
        self.schemas, self.roots = schemas, roots
        self.flattener = Flattener(self._lookup)
        self.versions: dict[str, tuple[str, str]] = {}  # package path: (group, version)

    def run(self) -> Derivation:
        for package in self.roots:
            markers = self.schemas.package_markers(package)
            if markers.has("kubebuilder:skip"):
                continue
            group = markers.get("groupName")
            version = markers.get("versionName")
            if group is not None:
                self.versions[package.path] = (str(group.value or ""), str(version.value) if version else package.name)
        if not any(METAV1 in dict(go.imports).values() for p in self.roots for go in p.files):
            return Derivation((), tuple(self.schemas.problems))
        kinds = sorted({(self.versions.get(p.path, ("", ""))[0], name) for p in self.roots
                        for name in self._kinds(p)}, key=lambda gk: f"{gk[1]}.{gk[0]}")  # fmt: skip
        crds = [crd for group, kind in kinds if (crd := self._crd(group, kind)) is not None]
        return Derivation(tuple(crds), tuple(self.schemas.problems))

    def _kinds(self, package: Package) -> list[str]:
        """FindKubeKinds: the types embedding metav1.TypeMeta and metav1.ObjectMeta."""
        found = []
        for name, declared in package.types.items():
            imports = package.imports_of(declared.file)
            embedded = {f.type.name for f in declared.spec.type.fields if not f.names
                        and f.type.kind == "qualified" and imports.get(f.type.package) == METAV1}  # fmt: skip
            if {"TypeMeta", "ObjectMeta"} <= embedded:
                found.append(name)
        return found

    def _lookup(self, ref: str, package: str) -> tuple[TypeRef, dict[str, Any] | None]:
        name = ref.removeprefix("#/definitions/").replace("~1", "/").replace("~0", "~")
        path, _, type_name = name.rpartition("~")
        typ = TypeRef(path or package, type_name)
        return typ, self.schemas.schema_of(typ)

    def _crd(self, group: str, kind: str) -> DerivedCRD | None:
        packages = [p for p in self.roots if p.path in self.versions and self.versions[p.path][0] == group]
        plural = plural_of(kind).lower()
        names: dict[str, Any] = {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower()}
        spec: dict[str, Any] = {"group": group, "names": names, "scope": "Namespaced", "versions": []}
        crd: dict[str, Any] = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                               "metadata": {"name": f"{plural}.{group}"}, "spec": spec}  # fmt: skip
        declared_at: tuple[str, int] | None = None
        with_type = [p for p in packages if kind in p.types]
        for package in with_type:
            declared = package.types[kind]
            declared_at = declared_at or (declared.file.path, declared.spec.line)
            schema = self._flattened(TypeRef(package.path, kind))
            if self.schemas.options.max_description_length is not None:
                truncate_descriptions(schema, self.schemas.options.max_description_length)
            spec["versions"].append({"name": self.versions[package.path][1], "served": True, "storage": False,
                                     "schema": {"openAPIV3Schema": schema}})  # fmt: skip
        for package in with_type:
            declared = package.types[kind]
            markers = self.schemas.type_markers(declared)
            for problem in _apply_crd_markers(markers, crd, self.versions[package.path][1]):
                self.schemas.error(problem, declared.file, declared.spec.name_start)
        crd["metadata"]["name"] = f"{names['plural']}.{group}"
        if not spec["versions"] or declared_at is None:
            return None
        spec["versions"].sort(key=lambda v: v["name"])
        if len(spec["versions"]) == 1:
            spec["versions"][0]["storage"] = True
        first = with_type[0].types[kind]
        if not any(v["storage"] for v in spec["versions"]):
            self.schemas.error(f"CRD for {kind}.{group} has no storage version", first.file, first.spec.name_start)
        if not any(v["served"] for v in spec["versions"]):
            self.schemas.error(f"CRD for {kind}.{group} does not serve any version", first.file,
                               first.spec.name_start)  # fmt: skip
        for version in spec["versions"]:
            properties = version["schema"]["openAPIV3Schema"].get("properties", {})
            if "metadata" in properties:
                properties["metadata"] = {"type": "object"}  # FixTopLevelMetadata
        crd["metadata"] = {"annotations": {"controller-gen.kubebuilder.io/version": CONTROLLER_GEN_VERSION,
                                           **crd["metadata"].get("annotations", {})},
                           **{k: v for k, v in crd["metadata"].items() if k != "annotations"}}  # fmt: skip
        origins = _origins(crd)
        return DerivedCRD(_sorted_maps(crd), declared_at[0], declared_at[1], origins)

    def _flattened(self, ref: TypeRef) -> dict[str, Any]:
        """NeedFlattenedSchemaFor: the kind's schema with its references inlined and allOf merged."""
        base = self.schemas.schema_of(ref) or {}
        if ref in self.flattener.flattened:
            flat = copy.deepcopy(self.flattener.flattened[ref])
        else:
            flat = self.flattener.flatten(copy.deepcopy(base), ref.package)
            self.flattener.flattened[ref] = flat
        problems: list[str] = []
        merged = merge_all_of(copy.deepcopy(flat), problems)
        declared = self.schemas.packages[ref.package]
        if problems and declared is not None:
            found = declared.types[ref.name]
            for problem in dict.fromkeys(problems):
                self.schemas.error(problem, found.file, found.spec.name_start)
        return merged


def _apply_crd_markers(markers: Markers, crd: dict[str, Any], version: str) -> list[str]:
    """The spec markers of a kind's type at one version (SubresourceStatus, Resource, PrintColumn, ...)."""
    from kcel.k8s.gotypes.crdmarkers import apply_crd_marker

    problems = []
    for found in markers.values.values():
        for marker in found:
            problem = apply_crd_marker(marker, crd, version)
            if problem:
                problems.append(problem)
    return problems


def _origins(crd: dict[str, Any]) -> dict[tuple[str, ...], RuleOrigin]:
    """Each rule's origin, taken out of the manifest (where it travelled under ORIGIN) and keyed by its path."""
    found: dict[tuple[str, ...], RuleOrigin] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            origin = node.pop(ORIGIN, None)
            if origin is not None:
                place, marker = origin
                raw = marker.raw
                for key in ("rule", "messageExpression"):
                    if key in marker.positions:
                        positions = marker.positions[key]
                        found[path + (key,)] = RuleOrigin(place, raw.line, raw.column, (*positions, _end(positions)))
                found[path] = RuleOrigin(place, raw.line, raw.column, ())
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, (*path, str(index)))

    walk(crd, ())
    return found


_MAPS = ("properties", "patternProperties", "definitions", "annotations", "labels")


def _sorted_maps(node: Any) -> Any:
    """Go maps in key order, as encoding/json writes them (so properties are checked in controller-gen's order)."""
    if isinstance(node, dict):
        return {k: ({n: _sorted_maps(node[k][n]) for n in sorted(node[k])} if k in _MAPS and isinstance(node[k], dict)
                    else _sorted_maps(v)) for k, v in node.items()}  # fmt: skip
    if isinstance(node, list):
        return [_sorted_maps(item) for item in node]
    return node


def _end(positions: tuple[int, ...]) -> int:
    return positions[-1] + 1 if positions else 0


__all__ = ["Derivation", "DerivedCRD", "GoSyntaxError", "RuleOrigin", "derive_crds", "go_package_folders"]
