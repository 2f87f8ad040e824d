"""The kustomizations of the files `kcel check` (or `validate`) is given, built as kustomize builds them: which
files are kustomizations and patches (never objects of their own), and each object a patch changed, patched.

A build starts at each kustomization no other one of the tree names (`config/default`; a lone `config/crd`), as
`kustomize build` on that folder would: resources and bases (files, and folders holding a kustomization) first,
then components (`kind: Component` folders: their resources, then their patches over all), then the
kustomization's own patches, in kustomize's order (kusttarget.go: patchesStrategicMerge, patches, and after the
name and label transformers patchesJson6902). A patch applies to the objects its target selects, or, without
a target, to the object of its own kind and name, among the objects of its kustomization's build; one that
selects nothing there is counted, not applied, and its file is never read as an object. Names are matched as
written: kcel does not apply namePrefix, namespace or labels (no CEL depends on them), so a patch written for the
prefixed name of an object is counted as not applied.

Besides the kustomizations among the files, those of each file's folder and the folders above it (four at most,
not above a repository's top) are read, so that a hook given one changed patch file still knows it for a patch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcel.k8s.crds.crd import CRDLoadError, load_manifests
from kcel.k8s.kustomize import kustomization as kz
from kcel.k8s.kustomize.patching import PatchError, json_patch, strategic_merge
from kcel.k8s.kustomize.traces import Origins, Place, Trace
from kcel.k8s.manifests.decoding import Document, decode_documents

MAX_KUSTOMIZATIONS = 1000  # kustomization files read for one run; a tree past this is not a project's config/
MAX_NESTING = 50  # bases of bases; kustomize stops a cycle, kcel a cycle and a chain this deep
ANCESTORS = 4  # folders above a given file searched for the kustomization that names it


@dataclass
class Resource:
    """An object of a build: the file and document it came from, its value, and its trace once patched."""

    file: Path
    document: Document
    value: Any
    trace: Trace | None = None
    patched_by: tuple[str, ...] = ()


@dataclass
class Tree:
    """What the kustomizations say about the files: `roles` (a file's real path -> "kustomization" or "patch"),
    the objects patches changed (a file's real path -> its patched documents), and what was counted."""

    roles: dict[str, str] = field(default_factory=dict)
    patched: dict[str, list[tuple[Document, Origins]]] = field(default_factory=dict)
    applied: int = 0  # patch documents applied to at least one object
    not_applied: list[str] = field(default_factory=list)  # why, for each patch document that applied to none
    remote: list[str] = field(default_factory=list)  # resources kustomize would fetch: not checked
    problems: list[str] = field(default_factory=list)  # kustomizations or patches kustomize would fail on

    def role(self, path: Path) -> str:
        return self.roles.get(_key(path), "")

    def documents(self, path: Path) -> list[tuple[Document, Origins | None]] | None:
        """A resource file's documents as the builds emit them (each distinct patched variant), when a patch
        changed one of them; None when none did (the file is read as it is)."""
        patched = self.patched.get(_key(path))
        if patched is None:
            return None
        try:
            documents = load_manifests(path)
        except CRDLoadError:
            return None
        changed = {document.index for document, _ in patched}
        unchanged: list[tuple[Document, Origins | None]] = [(d, None) for d in documents if d.index not in changed]
        return sorted([*unchanged, *patched], key=lambda pair: pair[0].index)


def _key(path: Path) -> str:
    return os.path.realpath(path)


def read_tree(files: Sequence[Path], wanted: Callable[[Mapping[str, Any]], bool] = lambda obj: True) -> Tree:
    """The kustomizations among and above `files`, built. `wanted`: the objects whose patching matters (a patch
    that fails on an object nobody checks is not a problem of this run)."""
    builder = _Builder(wanted)
    for file in _kustomization_files(files):
        builder.load(file)
    referenced = {_key(file) for k in builder.read.values() for file in builder.named(k)}
    for key, kustomization in sorted(builder.read.items()):
        if key in referenced:
            continue
        if kustomization.kind == "Component":
            builder.unused_component(kustomization)
        else:
            builder.root(kustomization)
    for key, kustomization in sorted(builder.read.items()):
        if key not in builder.built and kustomization.kind != "Component" and key in referenced:
            builder.tree.problems.append(f"{kustomization.file}: in a cycle of kustomizations (through resources or "
                                         "bases): kustomize cannot build it")  # fmt: skip
    builder.patches_by_content(files)
    return builder.tree


def _kustomization_files(files: Iterable[Path]) -> list[Path]:
    found: dict[str, Path] = {}
    for file in files:
        if kz.is_kustomization(file):
            found.setdefault(_key(file), file)
        folder = file.parent
        for _ in range(ANCESTORS + 1):
            named = kz.kustomization_file(folder)
            if named is not None:
                found.setdefault(_key(named), named)
            if (folder / ".git").exists() or folder.parent == folder:
                break
            folder = folder.parent
    return list(found.values())


class _Builder:
    def __init__(self, wanted: Callable[[Mapping[str, Any]], bool]) -> None:
        self.wanted = wanted
        self.tree = Tree()
        self.read: dict[str, kz.Kustomization] = {}
        self.failed: set[str] = set()
        self.decoded: dict[str, list[Document]] = {}
        self.resource_files: set[str] = set()
        self.built: set[str] = set()  # the kustomizations a build reached

    def load(self, file: Path) -> kz.Kustomization | None:
        """A kustomization file read once, and every one it names through its folders."""
        key = _key(file)
        if key in self.read or key in self.failed:
            return self.read.get(key)
        if len(self.read) >= MAX_KUSTOMIZATIONS:
            self.failed.add(key)
            self.tree.problems.append(f"{file}: more than {MAX_KUSTOMIZATIONS} kustomizations: not read")
            return None
        self.tree.roles[key] = "kustomization"
        try:
            kustomization = kz.read(file)
        except kz.KustomizationError as err:
            self.failed.add(key)
            self.tree.problems.append(str(err))
            return None
        self.read[key] = kustomization
        for patch in kustomization.patches:
            if patch.path is not None:
                self.tree.roles[_key(patch.path)] = "patch"
        for entry, path in (*kustomization.resources, *kustomization.components):
            if path is None:
                self.tree.remote.append(f"{kustomization.file}: {entry}: remote, not read")
                continue
            if path.is_dir():
                named = kz.kustomization_file(path)
                if named is not None:
                    self.load(named)
            elif not path.is_file():
                self.tree.problems.append(f"{kustomization.file}: {entry}: no such file or folder")
        return kustomization

    def patches_by_content(self, files: Sequence[Path]) -> None:
        """The files of a kustomize tree that no kustomization names and that can only be patches: JSON 6902
        operation lists, and CRDs without a group or names (a kubebuilder scaffold's patch whose line in the
        kustomization is commented out). They are counted as patches not applied, not read as objects."""
        folders = {_key(k.folder) for k in self.read.values()}
        for file in files:
            key = _key(file)
            if key in self.tree.roles or key in self.resource_files:
                continue
            if not any(str(parent) in folders for parent in Path(key).parents):
                continue
            documents = self.documents(file)
            if documents and all(_patch_like(document.value) for document in documents):
                self.tree.roles[key] = "patch"
                for document in documents:
                    what = f"{file}: document {document.index}: a patch{_of(document.value)}"
                    self.tree.not_applied.append(f"{what}, not applied: no kustomization of the tree names it")

    def named(self, kustomization: kz.Kustomization) -> list[Path]:
        """The kustomization files of the folders it names as resources, bases or components."""
        found = []
        for _, path in (*kustomization.resources, *kustomization.components):
            named = kz.kustomization_file(path) if path is not None and path.is_dir() else None
            if named is not None:
                found.append(named)
        return found

    def root(self, kustomization: kz.Kustomization) -> None:
        for resource in self.build(kustomization, ()):
            if resource.trace is None:
                continue
            variants = self.tree.patched.setdefault(_key(resource.file), [])
            if any(d.index == resource.document.index and d.value == resource.value for d, _ in variants):
                continue
            document = Document(resource.document.index, resource.document.line, resource.value,
                                resource.document.strict_errors)  # fmt: skip
            variants.append((document, Origins(resource.trace, resource.patched_by)))

    def unused_component(self, component: kz.Kustomization) -> None:
        for patch in component.patches:
            for place, value in self.patch_documents(patch):
                what = f"{_where(place)}: a patch{_of(value, patch.target)}"
                self.tree.not_applied.append(f"{what}, not applied: its Component {component.folder} is in no "
                                             "kustomization of the tree")  # fmt: skip

    def build(self, kustomization: kz.Kustomization, stack: tuple[str, ...]) -> list[Resource]:
        """The objects a kustomization emits, patched as kustomize patches them."""
        key = _key(kustomization.file)
        if key in stack or len(stack) >= MAX_NESTING:
            self.tree.problems.append(f"{kustomization.file}: a cycle or a chain of more than {MAX_NESTING} "
                                      "kustomizations through its resources")  # fmt: skip
            return []
        self.built.add(key)
        resources: list[Resource] = []
        for entry, path in kustomization.resources:
            resources += self.resources(kustomization, entry, path, (*stack, key))
        for entry, path in kustomization.components:
            component = self.folder_kustomization(kustomization, entry, path)
            if component is None:
                continue
            if component.kind != "Component":
                self.tree.problems.append(f"{kustomization.file}: components: {entry}: not a kind: Component")
                continue
            for part, part_path in component.resources:
                resources += self.resources(component, part, part_path, (*stack, key))
            self.apply_all(component, resources)
        self.apply_all(kustomization, resources)
        return resources

    def folder_kustomization(self, parent: kz.Kustomization, entry: str, path: Path | None) -> kz.Kustomization | None:
        if path is None:
            return None  # counted when its kustomization was read
        named = kz.kustomization_file(path) if path.is_dir() else None
        if named is None:
            if path.is_dir():
                self.tree.problems.append(f"{parent.file}: {entry}: a folder without a kustomization file")
            return None
        return self.load(named)

    def resources(
        self, parent: kz.Kustomization, entry: str, path: Path | None, stack: tuple[str, ...]
    ) -> list[Resource]:
        if path is None or path.is_dir():
            nested = self.folder_kustomization(parent, entry, path)
            if nested is None:
                return []
            if nested.kind == "Component":
                self.tree.problems.append(f"{parent.file}: resources: {entry}: a Component belongs in components")
                return []
            return self.build(nested, stack)
        if not path.is_file():
            return []  # said when the kustomization was read
        self.resource_files.add(_key(path))
        return [Resource(path, document, document.value) for document in self.documents(path)]

    def documents(self, path: Path) -> list[Document]:
        key = _key(path)
        if key not in self.decoded:
            try:
                self.decoded[key] = [d for d in load_manifests(path) if not d.error and d.value is not None]
            except CRDLoadError:
                self.decoded[key] = []  # the check reads the file itself and says why it cannot
        return self.decoded[key]

    def patch_documents(self, patch: kz.PatchEntry) -> list[tuple[Place, Any]]:
        """Each document of a patch and where it is written."""
        if patch.path is not None:
            return [(Place(str(patch.path), d.index), d.value) for d in self.documents(patch.path)]
        documents = decode_documents(patch.text or "", f"{patch.kustomization}: {patch.field}")
        place = Place(str(patch.kustomization), 0, patch.field_path, exact=False)
        for document in documents:
            if document.error:
                self.tree.problems.append(document.error)
        return [(place, d.value) for d in documents if not d.error and d.value is not None]

    def apply_all(self, kustomization: kz.Kustomization, resources: list[Resource]) -> None:
        for patch in kustomization.patches:
            for place, value in self.patch_documents(patch):
                json6902 = patch.kind == "json6902" or (patch.kind == "any" and isinstance(value, list))
                if json6902 and patch.target is None:
                    self.tree.problems.append(f"{_where(place)}: a JSON 6902 patch needs a target ({patch.field})")
                    continue
                if not json6902 and not isinstance(value, Mapping):
                    self.tree.problems.append(f"{_where(place)}: a strategic merge patch must be an object")
                    continue
                targets = [r for r in resources if _selects(patch.target, value, r.value)]
                for resource in targets:
                    self.apply(resource, value, place, json6902, patch.target is not None)
                if targets:
                    self.tree.applied += 1
                else:
                    what = f"{_where(place)}: a patch{_of(value, patch.target)}"
                    self.tree.not_applied.append(f"{what}, not applied: no such object among the resources of "
                                                 f"{kustomization.file}")  # fmt: skip

    def apply(self, resource: Resource, patch: Any, place: Place, json6902: bool, targeted: bool) -> None:
        trace = resource.trace or Trace(Place(str(resource.file), resource.document.index))
        try:
            if json6902:
                value, trace = json_patch(resource.value, trace, patch, place)
            else:
                value, trace = strategic_merge(resource.value, trace, _without_identity(patch) if targeted else patch,
                                               place)  # fmt: skip
        except PatchError as err:
            if self.wanted(resource.value):
                self.tree.problems.append(f"{_where(place)}: cannot be applied to{_of(resource.value)[3:]} "
                                          f"({resource.file}: document {resource.document.index}): {err}")  # fmt: skip
            return
        resource.value, resource.trace = value, trace
        resource.patched_by = (*resource.patched_by, place.file)


def _where(place: Place) -> str:
    return f"{place.file}: document {place.document}" if place.exact else place.file


def _of(value: Any, target: kz.Target | None = None) -> str:
    if target is not None:
        return f" of {target.kind or 'any kind'} {target.name or ''}".rstrip()
    if isinstance(value, list):
        return " (JSON 6902 operations)"
    if not isinstance(value, Mapping):
        return ""
    meta: Mapping[str, Any] = value["metadata"] if isinstance(value.get("metadata"), Mapping) else {}
    return f" of {value.get('kind', 'an object')} {meta.get('name', '')}".rstrip()


def _patch_like(value: Any) -> bool:
    """A JSON 6902 operation list, or a CRD without the group and names every CRD has (a strategic merge patch)."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(op, Mapping) and "op" in op and "path" in op for op in value)
    if not isinstance(value, Mapping) or value.get("kind") != "CustomResourceDefinition":
        return False
    spec = value.get("spec")
    return not isinstance(spec, Mapping) or ("group" not in spec and "names" not in spec)


def _without_identity(patch: Mapping[str, Any]) -> dict[str, Any]:
    """A targeted strategic merge patch takes its target's kind and name (kustomize sets them on a copy)."""
    rest = {k: v for k, v in patch.items() if k not in ("apiVersion", "kind")}
    meta = rest.get("metadata")
    if isinstance(meta, Mapping):
        rest["metadata"] = {k: v for k, v in meta.items() if k not in ("name", "namespace")}
    return rest


# -- selecting the objects a patch applies to ------------------------------------------------------------------


def _identity(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        return {}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    meta: Mapping[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), Mapping) else {}
    return {"group": group, "version": version, "kind": str(obj.get("kind", "")), "name": str(meta.get("name", "")),
            "namespace": str(meta.get("namespace") or ""), "labels": _strings(meta.get("labels")),
            "annotations": _strings(meta.get("annotations"))}  # fmt: skip


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _selects(target: kz.Target | None, patch: Any, obj: Any) -> bool:
    """Whether a patch applies to an object: by its target (kustomize's resid selector: anchored regular
    expressions, label and annotation selectors), else by the patch's own group, version, kind, name and
    namespace (an empty namespace and `default` are one)."""
    have = _identity(obj)
    if not have:
        return False
    if target is None:
        want = _identity(patch)
        same = all(want[k] == have[k] for k in ("group", "version", "kind", "name"))
        return same and (want["namespace"] or "default") == (have["namespace"] or "default")
    for name in ("group", "version", "kind", "name", "namespace"):
        pattern = getattr(target, name)
        if pattern is not None and pattern != "" and not _full_match(pattern, have[name]):
            return False
    if target.label_selector and not selector_matches(target.label_selector, have["labels"]):
        return False
    return not target.annotation_selector or selector_matches(target.annotation_selector, have["annotations"])


def _full_match(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return pattern == text


_REQUIREMENT = re.compile(r"\s*(!?)\s*([^\s!=,()]+)\s*(?:(==|=|!=)\s*([^\s,()]*)|\s(notin|in)\s*\(([^)]*)\))?\s*")


def selector_matches(selector: str, labels: Mapping[str, str]) -> bool:
    """A label selector (`app=web,tier!=db,env in (a,b),!legacy`) against labels, as apimachinery's labels.Parse
    reads it; one kcel cannot read selects nothing."""
    for requirement in _split(selector):
        match = _REQUIREMENT.fullmatch(requirement)
        if match is None:
            return False
        negated, key, operator, value, set_operator, values = match.groups()
        if operator in ("=", "=="):
            ok = labels.get(key) == value
        elif operator == "!=":
            ok = labels.get(key) != value
        elif set_operator:
            members = {v.strip() for v in values.split(",")}
            ok = labels.get(key) in members if set_operator == "in" else labels.get(key) not in members
        else:
            ok = key in labels
        if ok == bool(negated):
            return False
    return True


def _split(selector: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part for part in [*parts, current] if part.strip()]
