"""Validating files and directories of manifests against a set of CRDs, one report per object (`kcel validate`).

CRDs are looked up by the group of each object's apiVersion and its kind, and the version by the rest of the
apiVersion; every document of every file is checked (a `List` item by item), and a document that cannot be read,
has no CRD, or belongs to a CRD whose schema is not structural gets an error report of one line while the
others are still validated. Files of a directory are taken in sorted order, so reports come out the same way
every run.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from kcel.k8s.crds.crd import CRD, CRDLoadError, internal_schemas, load_crds, load_manifests
from kcel.k8s.crds.hints import decoding_problems, field_hint
from kcel.k8s.crds.objects import ObjectResult, validate_object
from kcel.k8s.field import invalid_status_message
from kcel.k8s.manifests.decoding import Document
from kcel.k8s.manifests.files import OldObjects, manifest_files
from kcel.k8s.schemas.schema import Schema
from kcel.k8s.schemas.structural import structural_errors


@dataclass(frozen=True)
class Report:
    """The outcome for one object: `valid`, `invalid` (the API server's message), `error` (bad input) or `skipped`
    (none of kcel's business: why)."""

    file: str
    document: int
    status: str
    message: str = ""
    item: int | None = None  # position in a `List`
    line: int = 0
    kind: str = ""  # `Widget.example.com`
    name: str = ""
    reason: str = ""  # "Invalid" (422) or "BadRequest" (400) for invalid objects
    errors: tuple[dict[str, str], ...] = ()  # the status causes: reason, message, field
    warnings: tuple[str, ...] = ()
    # Under strict field validation, an object with unknown or duplicate fields: each (field, message and kcel's
    # hint), and what the API server would answer once they are fixed (its message and causes; "" if it accepts).
    decoding: tuple[dict[str, str], ...] = ()
    after_decoding: str = ""
    after_decoding_errors: tuple[dict[str, str], ...] = ()

    @property
    def where(self) -> str:
        """`file: document 2` (`file: document 2: items[0]` inside a List)."""
        text = f"{self.file}: document {self.document}"
        return text if self.item is None else f"{text}: items[{self.item}]"

    def as_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"file": self.file, "document": self.document}
        if self.item is not None:
            record["item"] = self.item
        record.update(line=self.line, status=self.status, valid=self.status == "valid")
        if self.kind:
            record.update(kind=self.kind, name=self.name)
        if self.status == "error":
            return {**record, "error": self.message}
        record.update(reason=self.reason, message=self.message, errors=list(self.errors), warnings=list(self.warnings))
        if self.decoding:  # unknown and duplicate fields: errors (strict, then what comes after), or warnings
            record["decodingErrors"] = list(self.decoding)
        if self.decoding and self.reason == "BadRequest":
            record["afterDecoding"] = {"message": self.after_decoding, "errors": list(self.after_decoding_errors)}
        return record


@dataclass
class Catalog:
    """CRDs by (group, kind), and the problems met while loading them (one line each)."""

    crds: dict[tuple[str, str], CRD] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unusable: dict[tuple[str, str], str] = field(default_factory=dict)  # (crd name, version) -> why

    @classmethod
    def load(cls, paths: Iterable[str | os.PathLike[str]]) -> Catalog:
        """Every CRD in the files and directories given; a file named directly must hold at least one.

        Raises:
            FileNotFoundError: a path that does not exist.
        """
        catalog = cls()
        for given in map(Path, paths):
            explicit = not given.is_dir()
            for path in manifest_files([given]):
                catalog.add_file(path, explicit)
        return catalog

    def add_file(self, path: Path, explicit: bool) -> None:
        try:
            crds = load_crds(path)
        except CRDLoadError as err:
            self.problems.append(str(err))
            return
        if not crds and explicit:
            self.problems.append(f"{path}: no CustomResourceDefinition in this file")
        for crd in crds:
            self.add(crd)

    def add(self, crd: CRD) -> None:
        key = (crd.group, crd.kind)
        if key in self.crds:
            self.problems.append(f"{crd.source}: {crd.name} defines {crd.kind_group} again; the first one is used")
            return
        self.crds[key] = crd
        for path, schema in internal_schemas(crd):
            errors = structural_errors(schema, path)
            if errors:
                message = invalid_status_message("CustomResourceDefinition.apiextensions.k8s.io", crd.name, errors)
                self.problems.append(f"{crd.source}: {message}")
                for version in _versions_at(crd, str(path)):
                    self.unusable[(crd.name, version)] = f"the schema of {crd.name} {version} is not structural"

    def find(self, api_version: str, kind: str) -> CRD | None:
        return self.crds.get((api_version.rpartition("/")[0], kind))


def _versions_at(crd: CRD, path: str) -> list[str]:
    """The versions a schema path of the internal CRD covers (`spec.validation` covers all)."""
    if path.startswith("spec.versions["):
        return [crd.versions[int(path[len("spec.versions[") :].split("]")[0])].name]
    return [version.name for version in crd.versions]


@dataclass(frozen=True)
class Options:
    """How each object is sent: kubectl's `--validate` (field validation), namespace, subresource; and to which
    API server (`k8s_version`, default the newest)."""

    field_validation: str = "Strict"
    namespace: str = "default"
    subresource: str | None = None
    k8s_version: str | None = None
    strict: bool = False  # a document no CRD given types is an error, not skipped
    skip_kinds: frozenset[str] = frozenset()  # kinds not validated even when a CRD types them


def validate_files(
    files: Iterable[Path], catalog: Catalog, options: Options = Options(), old: OldObjects | None = None
) -> Iterator[Report]:
    """A report for every object in `files`, in file and document order."""
    for path in files:
        yield from validate_file(path, catalog, options, old or OldObjects())


PARALLEL_FROM = 16
"""Fewer files than this are validated in this process: starting workers would cost more than it saves."""


def validate_files_in_parallel(
    files: Sequence[Path], catalog: Catalog, options: Options, old: OldObjects, jobs: int
) -> Iterator[list[Report]]:
    """Each file's reports, in file order, validated by up to `jobs` worker processes. The workers are forked,
    so they start with the CRDs already loaded; where processes cannot be forked (Windows), or with few files or
    one job, this process validates them."""
    if jobs <= 1 or len(files) < PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        for path in files:
            yield list(validate_file(path, catalog, options, old))
        return
    context = multiprocessing.get_context("fork")
    chunk = max(1, min(64, len(files) // (jobs * 8)))
    with ProcessPoolExecutor(jobs, context, initializer=_share, initargs=(catalog, options, old)) as pool:
        yield from pool.map(_validate_in_worker, files, chunksize=chunk)


_SHARED: tuple[Catalog, Options, OldObjects] | None = None


def _share(catalog: Catalog, options: Options, old: OldObjects) -> None:
    global _SHARED
    _SHARED = (catalog, options, old)


def _validate_in_worker(path: Path) -> list[Report]:
    assert _SHARED is not None
    return list(validate_file(path, *_SHARED))


def validate_file(path: Path, catalog: Catalog, options: Options, old: OldObjects) -> Iterator[Report]:
    try:
        documents = load_manifests(path)
    except CRDLoadError as err:
        yield Report(str(path), 0, "error", str(err))
        return
    for document in documents:
        if document.error:
            yield Report(str(path), document.index, "error", document.error, line=document.line)
            continue
        value = document.value
        if isinstance(value, dict) and value.get("kind") == "List" and isinstance(value.get("items"), list):
            for i, item in enumerate(value["items"]):
                yield _validate(path, document, item, i, catalog, options, old)
        else:
            yield _validate(path, document, value, None, catalog, options, old)


@dataclass(frozen=True)
class _Place:
    """Where an object is (file, document, List item, line), for each Report made about it."""

    file: str
    document: int
    item: int | None
    line: int

    def report(self, status: str, message: str = "", **more: Any) -> Report:
        return Report(self.file, self.document, status, message, item=self.item, line=self.line, **more)


def _validate(
    path: Path, document: Document, obj: Any, item: int | None, catalog: Catalog, options: Options, old: OldObjects
) -> Report:
    place = _Place(str(path), document.index, item, document.line)
    skipped = _skipped(obj, catalog, options)
    if skipped:
        return place.report("skipped", skipped)
    problem, crd = _lookup(obj, catalog)
    if crd is None:
        return place.report("error", problem)
    previous = old.get(obj)
    if options.subresource and previous is None:
        return place.report("error", "a status update needs the object before it (--old)")

    def validated(field_validation: str) -> ObjectResult:
        return validate_object(crd, obj, previous, subresource=options.subresource, field_validation=field_validation,
                               namespace=options.namespace, strict_errors=document.strict_errors,
                               k8s_version=options.k8s_version)  # fmt: skip

    try:
        result = validated(options.field_validation)
        problems = decoding_problems(result.message) if result.reason == "BadRequest" else []
        after = validated("Warn") if problems else None  # what the API server reports once they are fixed
        problems += [found for warning in result.warnings for found in decoding_problems(warning)]
    except ValueError as err:
        return place.report("error", str(err))
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else ""
    schema = _schema_of(crd, str(obj.get("apiVersion"))) if problems else None
    decoding = tuple({"field": field, "message": problem, "hint": field_hint(schema, field) if
                      problem.startswith("unknown") else ""} for field, problem in problems)  # fmt: skip
    return place.report(
        "invalid" if result.message else "valid", result.message, kind=crd.kind_group,
        name=name if isinstance(name, str) else "", reason=result.reason,
        errors=tuple(e.cause() for e in result.errors), warnings=tuple(result.warnings), decoding=decoding,
        after_decoding=after.message if after is not None else "",
        after_decoding_errors=tuple(e.cause() for e in after.errors) if after is not None else (),
    )  # fmt: skip


def _schema_of(crd: CRD, api_version: str) -> Schema | None:
    """The schema of the CRD's version an apiVersion names."""
    version = next((v for v in crd.versions if v.name == api_version.rpartition("/")[2]), None)
    return crd.schema_of(version) if version is not None else None


def _skipped(obj: Any, catalog: Catalog, options: Options) -> str:
    """Why a document is none of kcel's business (kubeconform's `-ignore-missing-schemas`): not an object of the
    API (a kustomization file), a kind skipped, one of a group no CRD given serves (RBAC, a Deployment), or a kind
    no CRD defines in a group CRDs serve (a component config: jobset's `Configuration` of jobset.x-k8s.io, read by
    the controller, never sent to the API server). A kind close to one the group's CRDs serve stays an error (a
    typo: `Widgit`), as everything does with `strict`."""
    if not isinstance(obj, dict):
        return ""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if isinstance(kind, str) and kind in options.skip_kinds:
        return f"kind {kind} skipped (--skip-kind)"
    if options.strict:
        return ""
    if api_version is None and kind is None:
        return "not a Kubernetes object (no apiVersion, no kind): a kustomization file, a values file"
    if isinstance(api_version, str) and isinstance(kind, str) and api_version and kind:
        group = api_version.rpartition("/")[0]
        if catalog.find(api_version, kind) is not None:
            return ""
        served = sorted({k for g, k in catalog.crds if g == group})
        if not served:
            return f"no CRD given for {kind} ({api_version}), and none of its group"
        if not get_close_matches(kind.lower(), [k.lower() for k in served], n=1, cutoff=TYPO_LIKENESS):
            return (f"no schema: no CRD defines {kind} ({api_version}); its group's CRDs define {', '.join(served)} "
                    "(a component config or another kind the API server is not sent)")  # fmt: skip
    return ""


TYPO_LIKENESS = 0.75
"""How alike (difflib's ratio) a kind must be to one its group's CRDs serve to be taken for its typo."""


def _lookup(obj: Any, catalog: Catalog) -> tuple[str, CRD | None]:
    """The CRD an object belongs to, or why there is none."""
    if not isinstance(obj, dict):
        return "not an object (a custom resource is a mapping with apiVersion, kind, metadata)", None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return "apiVersion and kind must be set (as strings)", None
    crd = catalog.find(api_version, kind)
    if crd is None:
        return f"no CRD given for apiVersion {api_version}, kind {kind}", None
    version = api_version.rpartition("/")[2]
    unusable = catalog.unusable.get((crd.name, version))
    return (unusable, None) if unusable else ("", crd)
