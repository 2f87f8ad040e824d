"""One custom resource through its CRD, as the API server of a given version answers a create or update.

`validate_object` picks the CRD version from the object's apiVersion and hands the request to the registry's
steps (`kcel.k8s.customresources.pipeline`); validators are built once per CRD, version and API server.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.crds.crd import CRD, CRDVersion
from kcel.k8s.customresources.openapi import OpenAPIValidator
from kcel.k8s.customresources.pipeline import FIELD_VALIDATIONS, Request, admit
from kcel.k8s.environment import Version, server_version
from kcel.k8s.rules.validation import Validator
from kcel.k8s.schemas.schema import Schema


@dataclass(frozen=True)
class ObjectResult:
    """The API server's answer to one request: field errors (422) or a decoding error (400), warnings (ratcheted
    rules, unknown fields under `Warn`), the status message, and the object as it would be stored."""

    errors: list[fe.FieldError]
    warnings: list[str]
    message: str  # "" when the request is accepted
    reason: str = ""  # "Invalid" (422 with `errors`), "BadRequest" (400, `message` only), "" when accepted
    object: Any = field(default=None, repr=False)  # decoded, pruned, defaulted (None when rejected while decoding)


def validate_object(
    crd: CRD,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    subresource: str | None = None,
    field_validation: str = "Strict",
    namespace: str = "default",
    strict_errors: tuple[str, ...] = (),
    k8s_version: str | None = None,
) -> ObjectResult:
    """What the API server of `k8s_version` (default the newest) answers to a create (no `old`), update or
    `status` update of a custom resource.

    The version comes from the object's apiVersion. The object is decoded (metadata read as ObjectMeta, unknown
    fields pruned), defaulted, and validated as the registry does: ObjectMeta, the OpenAPI schema, embedded
    resources, list types, then the CEL rules (kcel.k8s.customresources.pipeline). `field_validation` is kubectl's
    `--validate`: "Strict" rejects unknown and duplicate fields (`strict_errors`, from kcel.k8s.manifests.decoding),
    "Warn" turns them into warnings, "Ignore" drops them. Namespaced objects without a namespace are created
    in `namespace`.

    Raises:
        ValueError: the apiVersion is not a served version of this CRD, the options are not understood, or the
            Kubernetes version is not supported.
    """
    server = server_version(k8s_version)
    version = _object_version(crd, obj)
    if subresource not in (None, "status"):
        raise ValueError(f"unsupported subresource {subresource!r}")
    if subresource == "status" and old is None:
        raise ValueError("a status update needs the old object")
    if field_validation not in FIELD_VALIDATIONS:
        raise ValueError(f"field validation must be one of {', '.join(FIELD_VALIDATIONS)}, not {field_validation!r}")
    request = Request(subresource, field_validation, namespace, tuple(strict_errors))
    with fe.answering_as(server):
        outcome = admit(_VersionKind(crd, version, server), obj, old, request)
    return ObjectResult(outcome.errors, outcome.warnings, outcome.message, outcome.reason, outcome.object)


def _object_version(crd: CRD, obj: Mapping[str, Any]) -> CRDVersion:
    api_version = obj.get("apiVersion")
    group, _, name = str(api_version).rpartition("/")
    if group != crd.group:
        raise ValueError(f"apiVersion {api_version!r} is not in group {crd.group!r} of {crd.name}")
    version = next((v for v in crd.versions if v.name == name and v.served), None)
    if version is None:
        raise ValueError(f"{crd.name} serves no version {name!r}")
    return version


_OPENAPI: weakref.WeakKeyDictionary[CRD, dict[tuple[str, str, Version], OpenAPIValidator | None]] = (
    weakref.WeakKeyDictionary()
)


class _VersionKind:
    """One served version of a CRD as kcel.k8s.customresources.pipeline sees it; validators are built once per CRD."""

    def __init__(self, crd: CRD, version: CRDVersion, server: Version) -> None:
        self.crd, self.version_info, self.server = crd, version, server
        self.kind, self.group, self.version = crd.kind, crd.group, version.name
        self.namespaced = crd.scope != "Cluster"
        self.status_subresource = version.status_subresource
        self.schema = crd.schema_of(version)

    def cel(self) -> Validator:
        return self.crd.validator(self.version_info, self.server)

    def openapi(self, part: str = "") -> OpenAPIValidator | None:
        """The OpenAPI validator of the whole schema, or of one property (`status`) when `part` names it."""
        cache = _OPENAPI.setdefault(self.crd, {})
        key = (self.version, part, self.server)
        if key not in cache:
            schema = self.schema if not part else (self.schema.properties or {}).get(part) if self.schema else None
            cache[key] = OpenAPIValidator(schema or Schema(), self.server) if schema is not None or not part else None
        return cache[key]
