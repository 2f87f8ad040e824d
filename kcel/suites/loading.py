"""Finding suite files and reading them into `Suite`s, with one precise line for each document that cannot be read.

Suites live in files named `*.kcel-test.yaml` (or `.yml`, or just `kcel-test.yaml`); a directory is searched
recursively, hidden folders left out. A file is decoded as the API server decodes manifests (go-yaml v2), so
inline objects mean what they would mean in a request. Every document is read completely before anything
runs: an unknown field, a file that is missing or a case without an object makes that document a problem, with a
message naming the file, the line, the document and the field path. Reading goes on past a problem, so that every
problem of every document is shown at once.

What a suite tests is named by one key (`SUBJECTS`): crds, policies, webhooks, devices, authentication or
authorization. Cases of CRD, admission and webhook suites send an object (`object`, or the suite's `base` with a
`patch`); the others' cases give a `SurfaceInput`: a device case's `claim` (or the suite's `base` claim with a
`patch`) and `featureGates`, an authentication case's `claims` or `token` and `now`, an authorization case's
`request`. Expectations are read by the module of the suite's kind (`crd_cases`, `admission_cases`,
`surface_cases`).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.admission.identity import DEFAULT_USER
from kcel.k8s.admission.served import runtime_config
from kcel.k8s.environment import NEWEST, server_version
from kcel.k8s.manifests.decoding import Document, decode_documents
from kcel.k8s.manifests.files import is_suite, manifest_files
from kcel.k8s.surfaces import dra
from kcel.suites import admission_cases, crd_cases, surface_cases
from kcel.suites.fields import Fields, SuiteError, SuiteLines, Where, attempt, kind_of, raise_every
from kcel.suites.model import (
    ADMISSION,
    AUTHENTICATION,
    AUTHORIZATION,
    CRD,
    DEVICES,
    WEBHOOKS,
    Case,
    ClaimInput,
    Expect,
    ObjectInput,
    ReviewInput,
    Suite,
    SurfaceInput,
    TokenInput,
)

# The key that says what a suite tests: its kind, and what the key holds.
SUBJECTS = {
    "crds": (CRD, "files of CRDs"), "policies": (ADMISSION, "admission policies"),
    "webhooks": (WEBHOOKS, "webhook configurations"), "devices": (DEVICES, "DeviceClasses and ResourceSlices"),
    "authentication": (AUTHENTICATION, "an AuthenticationConfiguration"),
    "authorization": (AUTHORIZATION, "an AuthorizationConfiguration"),
}  # fmt: skip
COMMON_KEYS = ("k8sVersion", "base", "cases")
SUITE_KEYS = {
    CRD: ("crds", *COMMON_KEYS), DEVICES: ("devices", "runtimeConfig", *COMMON_KEYS),
    ADMISSION: ("policies", "params", "namespaces", "rbac", "user", "groups", "runtimeConfig", *COMMON_KEYS),
    WEBHOOKS: ("webhooks", "namespaces", "rbac", "user", "groups", *COMMON_KEYS),
    AUTHENTICATION: ("authentication", "k8sVersion", "cases"), AUTHORIZATION: ("authorization", "k8sVersion", "cases"),
}  # fmt: skip
REQUEST_CASE_KEYS = (
    "name", "object", "patch", "old", "update", "expect", "skip", "k8sVersion", "namespace", "subresource"
)  # fmt: skip
ADMISSION_CASE_KEYS = (*REQUEST_CASE_KEYS, "operation", "user", "groups")
CASE_KEYS = {
    CRD: (*REQUEST_CASE_KEYS, "fieldValidation"), ADMISSION: ADMISSION_CASE_KEYS, WEBHOOKS: ADMISSION_CASE_KEYS,
    DEVICES: ("name", "claim", "patch", "featureGates", "expect", "skip", "k8sVersion"),
    AUTHENTICATION: ("name", "claims", "token", "now", "expect", "skip", "k8sVersion"),
    AUTHORIZATION: ("name", "request", "expect", "skip", "k8sVersion"),
}  # fmt: skip
EXPECT_READERS: dict[str, Callable[[Any, Where, fe.Path], Expect]] = {
    CRD: crd_cases.read_expect, ADMISSION: admission_cases.read_expect, **surface_cases.EXPECT_READERS,
}  # fmt: skip
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
# What the cases of a suite whose base cannot be read patch, so that their own problems are found too.
UNREADABLE_BASE = ObjectInput({"apiVersion": "v1", "kind": "Unreadable"})
CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def suite_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The files named, and the suite files under the directories named (recursively, sorted).

    Raises:
        FileNotFoundError: a path that does not exist.
    """
    return manifest_files(paths, is_suite)


def load_suites(files: Iterable[Path]) -> tuple[list[Suite], list[str]]:
    """Every suite of every file that can be read, and one line for each problem of the others."""
    suites: list[Suite] = []
    problems: list[str] = []
    for path in files:
        found, trouble = load_file(path)
        suites += found
        problems += trouble
    return suites, problems


def load_file(path: Path) -> tuple[list[Suite], list[str]]:
    """The suites of a file that can be read, and every problem of the others (`file:line:` where known)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return [], [f"{path}: cannot read: {err}"]
    return load_text(text, path)


def load_text(text: str, path: Path) -> tuple[list[Suite], list[str]]:
    """A suite file's text, as `load_file` reads it (an editor's unsaved text, for kcel lsp); `path` locates the
    files it names."""
    documents = decode_documents(text, str(path))
    if not documents:
        return [], [f"{path}: no suite in this file (it is empty)"]
    suites, problems = [], []
    lines = SuiteLines({path: text})  # where each problem is, the text composed once for all
    for document in documents:
        where = Where(path, document.index)
        if document.error:
            problems.append(_located(document.error, where))
        elif document.strict_errors:
            problems += [_duplicate(line, document.line, where) for e in document.strict_errors for line in
                         _duplicate_lines(e)]  # fmt: skip
        else:
            try:
                suites.append(read_suite(document.value, where))
            except SuiteError as err:
                problems += [one.located(lines) for one in err.every()]
    return suites, problems


def _located(error: str, where: Where) -> str:
    """`file:4:1: invalid YAML: ...` -> `file:4:1: document 1: invalid YAML: ...`."""
    match = re.match(r"(.*?:\d+:\d+): (.*)", error, re.S)
    return f"{match[1]}: document {where.document}: {match[2]}" if match else f"{where}: {error}"


def _duplicate_lines(strict_error: str) -> list[str]:
    """go-yaml's `yaml: unmarshal errors:\\n  line 3: key "a" already set in map`: one problem a line."""
    return [line.strip() for line in strict_error.splitlines()[1:] if line.strip()] or [strict_error]


def _duplicate(problem: str, first_line: int, where: Where) -> str:
    """`line 3: key "a" already set in map` (a line of the document) as `file:LINE: document N: key "a" ...`."""
    match = re.match(r"line (\d+): (.*)", problem, re.S)
    if not match:
        return f"{where}: {problem}"
    return f"{where.file}:{first_line + int(match[1]) - 1}: document {where.document}: {match[2]}"


# -- a suite ------------------------------------------------------------------------------------------------------


def read_suite(value: Any, where: Where) -> Suite:
    """A suite document; raises SuiteError, or SuiteErrors with every problem found (a problem in one field or case
    does not hide those of the others)."""
    doc = Fields.of(value, where)
    kind = _kind(doc)
    errors: list[SuiteError] = []
    attempt(errors, doc.known, SUITE_KEYS[kind])
    folder = where.file.parent
    inputs = attempt(errors, _suite_inputs, doc, kind, folder)
    versions = attempt(errors, read_versions, doc, "k8sVersion")
    base = None
    if doc.has("base"):
        base = attempt(errors, _claim if kind == DEVICES else _object, doc, "base", folder) or UNREADABLE_BASE
    cases = _cases(doc, kind, base, folder, errors)
    if kind in (ADMISSION, WEBHOOKS):
        identity = attempt(errors, lambda: (doc.string("user"), doc.strings("groups")))
        user, groups = identity if identity is not None else (None, None)
        cases = tuple(replace(c, user=c.user or user or DEFAULT_USER, groups=c.groups or groups or ()) for c in cases)
    raise_every(errors)
    assert inputs is not None and versions is not None
    return Suite(where, kind, cases, versions, **inputs)


def _cases(
    doc: Fields, kind: str, base: ObjectInput | None, folder: Path, errors: list[SuiteError]
) -> tuple[Case, ...]:
    """The cases that can be read; the problems of the others go to `errors`."""
    items = attempt(errors, lambda: list(doc.items("cases", required=True)))
    cases = []
    for index, (_, item) in enumerate(items or ()):
        case = attempt(errors, _case, item, index, doc, kind, base, folder)
        if case is not None:
            cases.append(case)
    errors += _duplicate_names(cases, doc.where)
    return tuple(cases)


def _kind(doc: Fields) -> str:
    given = [key for key in SUBJECTS if doc.has(key)]
    if len(given) > 1:
        first, second = given[:2]
        raise doc.error(second, f"a suite tests either CRDs (crds), admission policies (policies), webhooks, devices, "
                        f"authentication or authorization, not both {first} and {second}: give {second} a suite of "
                        "its own (another YAML document, after ---)")  # fmt: skip
    if not given:
        others = [f"{key} ({what})" for key, (_, what) in SUBJECTS.items()][2:]
        problem = (
            f"a suite needs crds (files of CRDs) or policies (admission policies), or else {', '.join(others[:-1])}"
        )
        raise SuiteError(doc.where, fe.Path(), f"{problem} or {others[-1]}")
    return SUBJECTS[given[0]][0]


def _suite_inputs(doc: Fields, kind: str, folder: Path) -> dict[str, Any]:
    """What the suite loads besides its cases: files, objects written inline, a configuration."""
    if kind == CRD:
        return {"crds": _paths(doc, "crds", folder, required=True)}
    if kind in (AUTHENTICATION, AUTHORIZATION):
        return {"configuration": _object(doc, kind, folder)}
    if kind == DEVICES:
        return {"files": _paths(doc, "devices", folder, required=True), "runtime_config": _runtime_config(doc)}
    rbac_objects, rbac = _objects_or_paths(doc, "rbac", folder)
    if kind == WEBHOOKS:
        return dict(files=_paths(doc, "webhooks", folder, required=True), rbac=rbac, rbac_objects=rbac_objects,
                    objects=tuple(_namespaces(doc)))  # fmt: skip
    objects, params = _objects_or_paths(doc, "params", folder)
    return dict(policies=_paths(doc, "policies", folder, required=True), params=params, rbac=rbac,
                objects=(*objects, *_namespaces(doc)), rbac_objects=rbac_objects,
                runtime_config=_runtime_config(doc))  # fmt: skip


def _runtime_config(doc: Fields) -> tuple[str, ...]:
    """`runtimeConfig:`, the alpha and beta API versions the suite assumes switched on (kcel admit's
    --runtime-config: `admissionregistration.k8s.io/v1beta1`)."""
    given = doc.strings("runtimeConfig") or ()
    try:
        runtime_config(given)
    except ValueError as err:
        raise doc.error("runtimeConfig", str(err)) from None
    return tuple(given)


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


def _duplicate_names(cases: list[Case], where: Where) -> list[SuiteError]:
    """A case's name identifies it (`-k`, reports, `--update`): each name given twice is a problem."""
    seen: dict[str, int] = {}
    errors = []
    for case in cases:
        if case.name in seen:
            problem = f"{case.name!r} is also the name of cases[{seen[case.name]}]"
            errors.append(SuiteError(where, case.path.child("name"), problem))
        seen.setdefault(case.name, case.index)
    return errors


# -- a case -------------------------------------------------------------------------------------------------------


def _case(item: Any, index: int, doc: Fields, kind: str, base: ObjectInput | None, folder: Path) -> Case:
    """A case of the suite `doc`; its unknown keys, its expectation and the rest are read apart, so that each one's
    problem shows."""
    fields = Fields.of(item, doc.where, doc.at("cases").index(index))
    errors: list[SuiteError] = []
    attempt(errors, fields.known, CASE_KEYS[kind])
    expect = attempt(errors, _expect, fields, kind)
    case = attempt(errors, _case_request, fields, index, kind, base, folder, expect)
    raise_every(errors)
    assert case is not None
    return case


def _expect(fields: Fields, kind: str) -> Expect | None:
    reader = EXPECT_READERS[kind]
    return reader(fields.value("expect"), fields.where, fields.at("expect")) if fields.has("expect") else None


def _case_request(
    fields: Fields, index: int, kind: str, base: ObjectInput | None, folder: Path, expect: Expect | None
) -> Case:
    """What a case sends (an object and the request's options, or a surface's input), with its expectation."""
    name = fields.string("name") or f"cases[{index}]"
    given = SURFACE_INPUTS[kind](fields, base, folder) if kind in SURFACE_INPUTS else None
    sent, old = _request_objects(fields, base, folder) if given is None else (None, None)
    common: dict[str, Any] = dict(
        name=name, index=index, object=sent, old=old, expect=expect, skip=_skip(fields),
        versions=read_versions(fields, "k8sVersion"), namespace=fields.string("namespace"),
    )  # fmt: skip
    if given is not None:
        return Case(**common, given=given)
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
    if fields.has("old") and fields.has("update"):
        raise fields.error("update", "give either old or update, not both")
    sent = _sent(fields, "object", base, folder, _object)
    if fields.has("old"):
        return sent, _object(fields, "old", folder)
    if fields.has("update"):
        return _patched(sent, fields, "update"), sent
    return sent, None


def _sent(
    fields: Fields, key: str, base: ObjectInput | None, folder: Path, read: Callable[[Fields, str, Path], ObjectInput]
) -> ObjectInput:
    """`key` (an object or a claim, as `read` reads it), or the suite's `base` with `patch` applied, or the base."""
    if fields.has(key) and fields.has("patch"):
        raise fields.error("patch", f"give either {key} or patch, not both")
    if fields.has(key):
        return read(fields, key, folder)
    if fields.has("patch"):
        if base is None:
            raise fields.error("patch", f"the suite has no base {key} to patch")
        return _patched(base, fields, "patch")
    if base is None:
        raise SuiteError(fields.where, fields.path, f"no {key}: give {key} (or patch, with the suite's base)")
    return base


def _object(fields: Fields, key: str, folder: Path) -> ObjectInput:
    """An object written inline, or a file (relative to the suite) holding one document."""
    value, strict_errors, origin = _document(fields, key, folder)
    return ObjectInput(_kubernetes_object(value, fields, fields.at(key), origin), strict_errors, fields.at(key))


def _document(fields: Fields, key: str, folder: Path) -> tuple[Mapping[str, Any], tuple[str, ...], str]:
    """A mapping written inline, or the one document of a file: the value, its duplicate fields, and the file's
    name to start messages about it with."""
    value = fields.value(key)
    if not isinstance(value, str):
        if not isinstance(value, Mapping):
            raise fields.error(key, f"must be an object or a file holding one, not {kind_of(value)}")
        return value, (), ""
    file = folder / value
    documents = _file_documents(fields, key, file)
    if len(documents) != 1:
        raise fields.error(key, f"{file} holds {len(documents)} documents; an object file holds exactly one")
    (document,) = documents
    if document.error:
        raise fields.error(key, document.error)
    if not isinstance(document.value, Mapping):
        raise fields.error(key, f"{file}: must be an object, not {kind_of(document.value)}")
    return document.value, document.strict_errors, f"{file}: "


def _file_documents(fields: Fields, key: str, file: Path) -> list[Document]:
    if not file.is_file():
        raise fields.error(key, f"{file}: no such file")
    try:
        return decode_documents(file.read_text(encoding="utf-8"), str(file))
    except (OSError, UnicodeDecodeError) as err:
        raise fields.error(key, f"{file}: cannot read: {err}") from None


def _claim(fields: Fields, key: str, folder: Path) -> ObjectInput:
    """A ResourceClaim or ResourceClaimTemplate written inline, or the one in a file (which may hold the
    DeviceClasses and the like beside it: manifests often bundle them)."""
    value = fields.value(key)
    if isinstance(value, str):
        file = folder / value
        documents = _file_documents(fields, key, file)
        if problem := next((d.error for d in documents if d.error), ""):
            raise fields.error(key, problem)
        claims = [d for d in documents if _is_claim(d.value)]
        if len(claims) != 1:
            raise fields.error(key, f"{file} holds {len(claims)} ResourceClaims or ResourceClaimTemplates; "
                               "name a file that holds one")  # fmt: skip
        return ObjectInput(copy.deepcopy(dict(claims[0].value)), claims[0].strict_errors, fields.at(key))
    claim = _object(fields, key, folder)
    if not _is_claim(claim.value):
        kind = f"{claim.value['kind']} ({claim.value['apiVersion']})"
        raise fields.error(key, f"must be a ResourceClaim or ResourceClaimTemplate ({dra.GROUP}), not a {kind}")
    return claim


def _is_claim(value: Any) -> bool:
    return (
        isinstance(value, Mapping) and value.get("kind") in CLAIM_KINDS
        and str(value.get("apiVersion", "")).rpartition("/")[0] == dra.GROUP
    )  # fmt: skip


# -- the inputs of the other surfaces' cases ------------------------------------------------------------------------


def _claim_input(fields: Fields, base: ObjectInput | None, folder: Path) -> SurfaceInput:
    """`claim` (or the base claim, `patch`ed) and `featureGates: {DRAConsumableCapacity: true}`."""
    claim = _sent(fields, "claim", base, folder, _claim)
    gates = fields.mapping("featureGates")
    found = dict(gates.data) if gates else {}
    for name, on in found.items():
        path = fields.at("featureGates").key(str(name))
        if not isinstance(on, bool):
            raise SuiteError(fields.where, path, f"must be true or false, not {kind_of(on)}")
        try:
            dra.selector_env(NEWEST, stored=True, feature_gates={name: on})  # only to know the gate
        except ValueError as err:
            raise SuiteError(fields.where, path, str(err)) from None
    return ClaimInput(claim, found)


def _token_input(fields: Fields, base: ObjectInput | None, folder: Path) -> SurfaceInput:
    """`claims` (a mapping) or `token` (a JWT), and `now`."""
    if fields.has("claims") and fields.has("token"):
        raise fields.error("token", "give either claims or token, not both")
    token: str | Mapping[str, Any]
    if fields.has("token"):
        token = fields.string("token") or ""
        if not token.strip():
            raise fields.error("token", "give a JWT (header.payload.signature)")
    elif fields.has("claims"):
        claims = fields.value("claims")
        if not isinstance(claims, Mapping):
            raise fields.error("claims", f"must be a mapping of the token's claims, not {kind_of(claims)}")
        token = copy.deepcopy(dict(claims))
    else:
        raise SuiteError(fields.where, fields.path, "no token: give claims (the token's claims) or token (a JWT)")
    return TokenInput(token, _moment(fields, "now"))


def _moment(fields: Fields, key: str) -> datetime | None:
    """RFC 3339 (`2025-06-01T12:00:00Z`) or Unix seconds."""
    value = fields.value(key)
    if value is None:
        return None
    problem = f"must be a time in RFC 3339 (2025-06-01T12:00:00Z) or Unix seconds, not {kind_of(value)}"
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", value))  # Python 3.10 reads no Z
        except ValueError:
            raise fields.error(key, f"{problem} {value!r}") from None
        if moment.tzinfo is None:
            raise fields.error(key, f"{value!r} has no time zone: end it with Z for UTC, or an offset (+02:00)")
        return moment
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fields.error(key, problem)
    try:
        return datetime.fromtimestamp(value, timezone.utc)
    except (OverflowError, OSError, ValueError) as err:
        raise fields.error(key, f"{value} seconds: {err}") from None


def _review_input(fields: Fields, base: ObjectInput | None, folder: Path) -> SurfaceInput:
    """`request`: a SubjectAccessReview or its spec, inline or in a file."""
    if not fields.has("request"):
        raise SuiteError(fields.where, fields.path, "no request: give request (a SubjectAccessReview or its spec)")
    value, _, _ = _document(fields, "request", folder)
    return ReviewInput(copy.deepcopy(dict(value)))


SURFACE_INPUTS: dict[str, Callable[[Fields, ObjectInput | None, Path], SurfaceInput]] = {
    DEVICES: _claim_input, AUTHENTICATION: _token_input, AUTHORIZATION: _review_input,
}  # fmt: skip


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
