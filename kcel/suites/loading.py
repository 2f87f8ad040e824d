"""Finding suite files and reading them into `Suite`s, with one precise line for each document that cannot be read.

Suites live in files named `*.kcel-test.yaml` (or `.yml`, or just `kcel-test.yaml`); a directory is searched
recursively, hidden folders left out. A file is decoded as the API server decodes manifests (go-yaml v2), so
inline objects mean what they would mean in a request. Every document is read completely before anything
runs: an unknown field, a file that is missing or a case without an object stops that document with a
message naming the file, the document and the field path.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.environment import server_version
from kcel.k8s.manifests.decoding import decode_documents
from kcel.k8s.manifests.files import manifest_files
from kcel.suites import admission_cases, crd_cases
from kcel.suites.fields import Fields, SuiteError, Where, kind_of
from kcel.suites.model import ADMISSION, CRD, Case, ObjectInput, Suite

SUITE_SUFFIXES = (".kcel-test.yaml", ".kcel-test.yml")
SUITE_NAMES = ("kcel-test.yaml", "kcel-test.yml")
COMMON_KEYS = ("k8sVersion", "base", "cases")
SUITE_KEYS = {CRD: ("crds", *COMMON_KEYS), ADMISSION: ("policies", "params", "namespaces", "rbac", *COMMON_KEYS)}
CASE_KEYS = ("name", "object", "patch", "old", "update", "expect", "skip", "k8sVersion", "namespace", "subresource")
KIND_CASE_KEYS = {CRD: ("fieldValidation",), ADMISSION: ("operation", "user", "groups")}
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


def is_suite_file(path: Path) -> bool:
    return path.name in SUITE_NAMES or path.name.endswith(SUITE_SUFFIXES)


def suite_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The files named, and the suite files under the directories named (recursively, sorted).

    Raises:
        FileNotFoundError: a path that does not exist.
    """
    return manifest_files(paths, is_suite_file)


def load_suites(files: Iterable[Path]) -> tuple[list[Suite], list[str]]:
    """Every suite of every file, and one line for each document (or file) that cannot be read."""
    suites: list[Suite] = []
    problems: list[str] = []
    for path in files:
        found, trouble = load_file(path)
        suites += found
        problems += trouble
    return suites, problems


def load_file(path: Path) -> tuple[list[Suite], list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return [], [f"{path}: cannot read: {err}"]
    documents = decode_documents(text, str(path))
    if not documents:
        return [], [f"{path}: no suite in this file (it is empty)"]
    suites, problems = [], []
    for document in documents:
        where = Where(path, document.index)
        if document.error:
            problems.append(_located(document.error, where))
        elif document.strict_errors:
            problems.append(f"{where}: {_duplicate_text(document.strict_errors[0])}")
        else:
            try:
                suites.append(read_suite(document.value, where))
            except SuiteError as err:
                problems.append(err.located(text))
    return suites, problems


def _located(error: str, where: Where) -> str:
    """`file:4:1: invalid YAML: ...` -> `file:4:1: document 1: invalid YAML: ...`."""
    match = re.match(r"(.*?:\d+:\d+): (.*)", error, re.S)
    return f"{match[1]}: document {where.document}: {match[2]}" if match else f"{where}: {error}"


def _duplicate_text(strict_error: str) -> str:
    """go-yaml's `yaml: unmarshal errors:\\n  line 3: key "a" already set in map`, on one line."""
    return "; ".join(line.strip() for line in strict_error.splitlines()[1:]) or strict_error


# -- a suite ------------------------------------------------------------------------------------------------------


def read_suite(value: Any, where: Where) -> Suite:
    doc = Fields.of(value, where)
    kind = _kind(doc)
    doc.known(SUITE_KEYS[kind])
    folder = where.file.parent
    if kind == CRD:
        inputs: dict[str, Any] = {"crds": _paths(doc, "crds", folder, required=True)}
    else:
        objects, params = _objects_or_paths(doc, "params", folder)
        rbac_objects, rbac = _objects_or_paths(doc, "rbac", folder)
        inputs = dict(policies=_paths(doc, "policies", folder, required=True), params=params, rbac=rbac,
                      objects=(*objects, *_namespaces(doc)), rbac_objects=rbac_objects)  # fmt: skip
    versions = read_versions(doc, "k8sVersion")
    base = _object(doc, "base", folder) if doc.has("base") else None
    cases = tuple(_case(Fields.of(item, where, path), i, kind, base, folder) for i, (path, item) in
                  enumerate(doc.items("cases", required=True)))  # fmt: skip
    _unique_names(cases, where)
    return Suite(where, kind, cases, versions, **inputs)


def _kind(doc: Fields) -> str:
    if doc.has("crds") and doc.has("policies"):
        raise doc.error("policies", "a suite tests either CRDs (crds) or admission policies (policies), not both")
    if doc.has("crds"):
        return CRD
    if doc.has("policies"):
        return ADMISSION
    raise SuiteError(doc.where, fe.Path(), "a suite needs crds (files of CRDs) or policies (admission policies)")


def read_versions(doc: Fields, key: str) -> tuple[str, ...]:
    """`k8sVersion: "1.33"` or a list; numbers are refused (YAML reads 1.30 as 1.3)."""
    value = doc.value(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise doc.error(
            key, f'must be a string, not the number {value} (quote it: YAML reads 1.30 as 1.3, "1.30" as 1.30)'
        )
    versions = doc.strings(key) or ()
    for i, version in enumerate(versions):
        try:
            server_version(version)
        except ValueError as err:
            path = doc.at(key).index(i) if isinstance(value, list) else doc.at(key)
            raise SuiteError(doc.where, path, str(err)) from None
    return tuple(dict.fromkeys(versions))


def _paths(doc: Fields, key: str, folder: Path, required: bool = False) -> tuple[Path, ...]:
    given = doc.strings(key)
    if not given:
        if required:
            raise doc.error(key, "required: a file or folder (or a list of them)")
        return ()
    listed = isinstance(doc.value(key), list)
    return tuple(_existing(doc, doc.at(key).index(i) if listed else doc.at(key), text, folder)
                 for i, text in enumerate(given))  # fmt: skip


def _existing(doc: Fields, path: fe.Path, text: str, folder: Path) -> Path:
    found = folder / text
    if not found.exists():
        raise SuiteError(doc.where, path, f"{found}: no such file or directory")
    return found


def _objects_or_paths(doc: Fields, key: str, folder: Path) -> tuple[tuple[Mapping[str, Any], ...], tuple[Path, ...]]:
    """A list whose items are files/folders (strings) or objects written inline; a lone string is one file."""
    value = doc.value(key)
    if value is None or isinstance(value, str):
        return (), _paths(doc, key, folder)
    objects: list[Mapping[str, Any]] = []
    paths: list[Path] = []
    for path, item in doc.items(key):
        if isinstance(item, str):
            paths.append(_existing(doc, path, item, folder))
        elif isinstance(item, Mapping):
            objects.append(_kubernetes_object(item, doc, path))
        else:
            raise SuiteError(doc.where, path, f"must be a file, a folder or an object, not {kind_of(item)}")
    return tuple(objects), tuple(paths)


def _namespaces(doc: Fields) -> list[dict[str, Any]]:
    """`namespaces: {team-a: {environment: test}}`: Namespace objects with those labels (and the automatic one)."""
    fields = doc.mapping("namespaces")
    if fields is None:
        return []
    found = []
    for name, labels in fields.data.items():
        label_fields = Fields.of(labels if labels is not None else {}, doc.where, fields.path.key(str(name)))
        for key, label in label_fields.data.items():
            if not isinstance(label, str):
                raise SuiteError(doc.where, label_fields.path.key(str(key)), f"must be a string, not {kind_of(label)}")
        metadata = {"name": name, "labels": {NAMESPACE_LABEL: name, **label_fields.data}}
        found.append({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
    return found


def _unique_names(cases: tuple[Case, ...], where: Where) -> None:
    seen: dict[str, int] = {}
    for case in cases:
        if case.name in seen:
            problem = f"{case.name!r} is also the name of cases[{seen[case.name]}]"
            raise SuiteError(where, case.path.child("name"), problem)
        seen[case.name] = case.index


# -- a case -------------------------------------------------------------------------------------------------------


def _case(fields: Fields, index: int, kind: str, base: ObjectInput | None, folder: Path) -> Case:
    fields.known((*CASE_KEYS, *KIND_CASE_KEYS[kind]))
    name = fields.string("name") or f"cases[{index}]"
    sent, old = _request_objects(fields, base, folder)
    reader = crd_cases.read_expect if kind == CRD else admission_cases.read_expect
    expect = reader(fields.value("expect"), fields.where, fields.at("expect")) if fields.has("expect") else None
    common: dict[str, Any] = dict(
        name=name, index=index, object=sent, old=old, expect=expect, skip=_skip(fields),
        versions=read_versions(fields, "k8sVersion"), namespace=fields.string("namespace"),
    )  # fmt: skip
    if kind == CRD:
        subresource = fields.string("subresource", choices=("status",))
        if subresource and old is None:
            raise fields.error("subresource", "a status update needs the object before it (old or update)")
        validation = fields.string("fieldValidation", choices=("Strict", "Warn", "Ignore")) or "Strict"
        return Case(**common, subresource=subresource, field_validation=validation)
    operation = fields.string("operation", choices=("CREATE", "UPDATE", "DELETE", "CONNECT"))
    groups = fields.strings("groups") or ()
    return Case(**common, subresource=fields.string("subresource"), operation=operation,
                user=fields.string("user") or "", groups=groups)  # fmt: skip


def _skip(fields: Fields) -> str | None:
    skip = fields.string("skip")
    if skip is not None and not skip.strip():
        raise fields.error("skip", "give the reason the case is skipped")
    return skip


def _request_objects(fields: Fields, base: ObjectInput | None, folder: Path) -> tuple[ObjectInput, ObjectInput | None]:
    """The object sent and the one before it: `object` or the suite's `base` with `patch` applied; then `old`,
    or `update` (a merge patch that turns the object into the new one, the object being the old one)."""
    for first, second in (("object", "patch"), ("old", "update")):
        if fields.has(first) and fields.has(second):
            raise fields.error(second, f"give either {first} or {second}, not both")
    if fields.has("object"):
        sent = _object(fields, "object", folder)
    elif fields.has("patch"):
        if base is None:
            raise fields.error("patch", "the suite has no base object to patch")
        sent = _patched(base, fields, "patch")
    elif base is not None:
        sent = base
    else:
        raise SuiteError(fields.where, fields.path, "no object: give object (or patch, with the suite's base)")
    if fields.has("old"):
        return sent, _object(fields, "old", folder)
    if fields.has("update"):
        return _patched(sent, fields, "update"), sent
    return sent, None


def _object(fields: Fields, key: str, folder: Path) -> ObjectInput:
    """An object written inline, or a file (relative to the suite) holding one document."""
    value, path = fields.value(key), fields.at(key)
    if isinstance(value, str):
        return _object_file(fields, key, folder / value)
    if not isinstance(value, Mapping):
        raise SuiteError(fields.where, path, f"must be an object or a file holding one, not {kind_of(value)}")
    return ObjectInput(_kubernetes_object(value, fields, path), (), path)


def _object_file(fields: Fields, key: str, file: Path) -> ObjectInput:
    if not file.is_file():
        raise fields.error(key, f"{file}: no such file")
    try:
        documents = decode_documents(file.read_text(encoding="utf-8"), str(file))
    except (OSError, UnicodeDecodeError) as err:
        raise fields.error(key, f"{file}: cannot read: {err}") from None
    if len(documents) != 1:
        raise fields.error(key, f"{file} holds {len(documents)} documents; an object file holds exactly one")
    (document,) = documents
    if document.error:
        raise fields.error(key, document.error)
    value = _kubernetes_object(document.value, fields, fields.at(key), f"{file}: ")
    return ObjectInput(value, document.strict_errors, fields.at(key))


def _kubernetes_object(value: Any, fields: Fields, path: fe.Path, origin: str = "") -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise SuiteError(fields.where, path, f"{origin}must be a Kubernetes object, not {kind_of(value)}")
    for key in ("apiVersion", "kind"):
        if not isinstance(value.get(key), str) or not value.get(key):
            raise SuiteError(fields.where, path, f"{origin}a Kubernetes object needs {key} (a string)")
    return copy.deepcopy(dict(value))


def _patched(target: ObjectInput, fields: Fields, key: str) -> ObjectInput:
    patch = fields.mapping(key)
    assert patch is not None
    merged = merge_patch(target.value, patch.data)
    return ObjectInput(_kubernetes_object(merged, fields, fields.at(key)), target.strict_errors, fields.at(key))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: mappings merge key by key, `null` removes a key, anything else replaces.

    >>> merge_patch({"spec": {"a": 1, "b": [1]}}, {"spec": {"a": None, "b": [2], "c": 3}})
    {'spec': {'b': [2], 'c': 3}}
    """
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    merged = {k: copy.deepcopy(v) for k, v in target.items()} if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged
