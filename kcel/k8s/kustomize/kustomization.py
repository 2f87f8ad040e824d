"""A `kustomization.yaml` read as kustomize reads it (sigs.k8s.io/kustomize/api/types/kustomization.go): the
fields that say what the build emits and how it patches it. Generators, transformers of names and labels, vars and
replacements change no CEL and are not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcel.k8s.manifests.decoding import decode_documents

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
"""The names kustomize looks for in a folder, in its order (konfig.RecognizedKustomizationFileNames)."""

MAX_BYTES = 1 << 20  # a kustomization is a short file; past this it is not read (kustomize has no such file)

_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|(?:github|gitlab|bitbucket)\.(?:com|org)/)|[?&]ref=", re.I)


class KustomizationError(ValueError):
    """A kustomization kcel cannot read (kustomize's build would fail on it too), at its file and field."""


@dataclass(frozen=True)
class Target:
    """A patch's `target`: which objects it applies to (each field a regular expression, anchored, as
    kustomize's resid selectors; the selectors label selectors)."""

    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    label_selector: str | None = None
    annotation_selector: str | None = None


@dataclass(frozen=True)
class PatchEntry:
    """One patch of a kustomization: from a file (`path`) or written inline (`text`, at `field` of the
    kustomization file), strategic merge or JSON 6902 (`kind`: "strategic", "json6902" or "any" for `patches`,
    which kustomize tells by the patch's content)."""

    kustomization: Path
    field: str  # `patches[0]`, for messages
    kind: str
    path: Path | None = None
    text: str | None = None
    target: Target | None = None
    field_path: tuple[str | int, ...] = ()  # where an inline patch's text is in the kustomization file


@dataclass(frozen=True)
class Kustomization:
    """The parts of a kustomization that say what its build emits: its resources (files and folders), components
    and the patches it applies; `crds` are schemas for the build, not emitted."""

    file: Path
    kind: str  # Kustomization or Component
    resources: tuple[tuple[str, Path | None], ...]  # (as written, the path; None for a remote one)
    components: tuple[tuple[str, Path | None], ...]
    crds: tuple[Path, ...]
    patches: tuple[PatchEntry, ...]

    @property
    def folder(self) -> Path:
        return self.file.parent


def kustomization_file(folder: Path) -> Path | None:
    """The kustomization file of a folder, if it has one."""
    for name in FILE_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def is_kustomization(path: Path) -> bool:
    return path.name in FILE_NAMES


def is_remote(entry: str) -> bool:
    """A resource kustomize would fetch (a URL, a git repository): kcel reads no network."""
    return bool(_REMOTE.search(entry))


def read(file: Path) -> Kustomization:
    """A kustomization file's resources, components and patches.

    Raises:
        KustomizationError: it cannot be read, or a field has the wrong shape.
    """
    try:
        if file.stat().st_size > MAX_BYTES:
            raise KustomizationError(f"{file}: larger than {MAX_BYTES:,} bytes: not read as a kustomization")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise KustomizationError(f"{file}: cannot read: {err}") from None
    documents = decode_documents(text, str(file))
    if documents and documents[0].error:
        raise KustomizationError(documents[0].error)
    data = documents[0].value if documents else None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise KustomizationError(f"{file}: a kustomization must be a mapping")
    fields = _Fields(file, data)
    patches = [
        *fields.strategic_merge_patches(),
        *fields.patches(),
        *fields.json6902_patches(),
    ]  # kustomize's order: patchesStrategicMerge, patches, then (after the name and label transformers) 6902
    return Kustomization(
        file=file,
        kind=str(data.get("kind") or "Kustomization"),
        resources=tuple(fields.paths("resources") + fields.paths("bases")),
        components=tuple(fields.paths("components")),
        crds=tuple(path for _, path in fields.paths("crds") if path is not None),
        patches=tuple(patches),
    )


@dataclass(frozen=True)
class _Fields:
    file: Path
    data: Mapping[str, Any]

    def error(self, field: str, problem: str) -> KustomizationError:
        return KustomizationError(f"{self.file}: {field}: {problem}")

    def path(self, entry: str) -> Path:
        return Path(os.path.normpath(self.file.parent / entry))

    def strings(self, name: str) -> list[str]:
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(name, "must be a list of strings")
        return list(value)

    def paths(self, name: str) -> list[tuple[str, Path | None]]:
        return [(entry, None if is_remote(entry) else self.path(entry)) for entry in self.strings(name)]

    def entries(self, name: str) -> list[Mapping[str, Any]]:
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
            raise self.error(name, "must be a list of mappings")
        return list(value)

    def strategic_merge_patches(self) -> list[PatchEntry]:
        """`patchesStrategicMerge`: each a file, or an inline patch when no file has that name (as kustomize)."""
        found = []
        for i, entry in enumerate(self.strings("patchesStrategicMerge")):
            field = f"patchesStrategicMerge[{i}]"
            if "\n" not in entry and (self.file.parent / entry).is_file():
                found.append(PatchEntry(self.file, field, "strategic", path=self.path(entry)))
            elif "\n" in entry or ":" in entry:
                found.append(PatchEntry(self.file, field, "strategic", text=entry,
                                        field_path=("patchesStrategicMerge", i)))  # fmt: skip
            else:
                raise self.error(field, f"{entry}: no such file")
        return found

    def patches(self) -> list[PatchEntry]:
        return [self.patch(entry, "patches", i, "any") for i, entry in enumerate(self.entries("patches"))]

    def json6902_patches(self) -> list[PatchEntry]:
        found = []
        for i, entry in enumerate(self.entries("patchesJson6902")):
            if not isinstance(entry.get("target"), Mapping):
                raise self.error(f"patchesJson6902[{i}].target", "required: a JSON 6902 patch needs a target")
            found.append(self.patch(entry, "patchesJson6902", i, "json6902"))
        return found

    def patch(self, entry: Mapping[str, Any], name: str, i: int, kind: str) -> PatchEntry:
        field = f"{name}[{i}]"
        path, text = entry.get("path"), entry.get("patch")
        if (path is None) == (text is None):
            raise self.error(field, "needs a path or a patch (one of them)")
        if path is not None and not isinstance(path, str) or text is not None and not isinstance(text, str):
            raise self.error(field, "path and patch must be strings")
        target = self.target(entry.get("target"), f"{field}.target")
        if path is not None:
            if not (self.file.parent / path).is_file():
                raise self.error(f"{field}.path", f"{path}: no such file")
            return PatchEntry(self.file, field, kind, path=self.path(path), target=target)
        return PatchEntry(self.file, field, kind, text=text, target=target, field_path=(name, i, "patch"))

    def target(self, value: Any, field: str) -> Target | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(field, "must be a mapping")
        names = {"group": "group", "version": "version", "kind": "kind", "name": "name", "namespace": "namespace",
                 "labelSelector": "label_selector", "annotationSelector": "annotation_selector"}  # fmt: skip
        given = {}
        for key, attribute in names.items():
            part = value.get(key)
            if part is not None and not isinstance(part, str):
                raise self.error(f"{field}.{key}", "must be a string")
            given[attribute] = part
        return Target(**given)
