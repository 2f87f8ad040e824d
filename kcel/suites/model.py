"""What a suite file holds once read: suites, their cases and expectations, as frozen values the runner takes.

A suite is one YAML document of a `*.kcel-test.yaml` file. It tests either CRDs (`crds:`) or admission
policies (`policies:`); its cases carry the request to send (object, old object, options) and what the
API server must answer. Paths are resolved against the suite file's folder when the suite is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe
from kcel.suites.fields import Where

CRD, ADMISSION = "crd", "admission"


@dataclass(frozen=True)
class ObjectInput:
    """An object a case sends; `strict_errors` are the duplicate fields its file had (what Strict rejects)."""

    value: Mapping[str, Any]
    strict_errors: tuple[str, ...] = ()
    path: fe.Path = fe.Path()  # the suite field it came from (`cases[2].patch`), for messages


@dataclass(frozen=True)
class CRDExpect:
    """What the API server must answer to a custom resource: valid or not, texts its message contains,
    warnings, and the object as stored (after pruning and defaulting)."""

    valid: bool
    errors: tuple[str, ...] = ()
    reason: str | None = None
    warnings: tuple[str, ...] | None = None  # None: not checked; (): there must be none
    stored: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class AdmissionExpect:
    """What the admission policies must decide: allowed or denied (reason, code, a text of the message),
    warnings and audit annotations."""

    allowed: bool
    message: str | None = None
    reason: str | None = None
    code: int | None = None
    warnings: tuple[str, ...] | None = None
    audit_annotations: Mapping[str, str] | None = None
    patched: Mapping[str, Any] | None = None  # the object after the MutatingAdmissionPolicies
    patch: tuple[Mapping[str, Any], ...] | None = None  # the JSON Patch a webhook would return (): not mutated


Expect = CRDExpect | AdmissionExpect


@dataclass(frozen=True)
class Case:
    """One request and the answer expected; `versions` empty means the suite's (or the newest)."""

    name: str
    index: int
    object: ObjectInput
    old: ObjectInput | None = None
    expect: Expect | None = None
    skip: str | None = None
    versions: tuple[str, ...] = ()
    namespace: str | None = None
    subresource: str | None = None
    field_validation: str = "Strict"  # CRDs: kubectl's --validate
    operation: str | None = None  # admission: default UPDATE with an old object, else CREATE
    user: str = ""
    groups: tuple[str, ...] = ()

    @property
    def path(self) -> fe.Path:
        return fe.Path.new("cases").index(self.index)


@dataclass(frozen=True)
class Suite:
    """One suite document: what it tests (`kind`), the files it loads, the objects given inline, and its cases."""

    where: Where
    kind: str  # CRD or ADMISSION
    cases: tuple[Case, ...]
    versions: tuple[str, ...] = ()
    crds: tuple[Path, ...] = ()
    policies: tuple[Path, ...] = ()
    params: tuple[Path, ...] = ()
    rbac: tuple[Path, ...] = ()
    objects: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)  # inline params and Namespaces
    rbac_objects: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)

    def case_id(self, case: Case) -> str:
        """`file::name`, what -k selects on and reports print."""
        return f"{self.where.file}::{case.name}"


@dataclass(frozen=True)
class Mismatch:
    """One way the answer differs from the expectation: the field, both sides as text, and a diff for objects."""

    field: str
    expected: str
    actual: str
    diff: tuple[str, ...] = ()
