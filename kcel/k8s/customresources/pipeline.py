"""A create, update or status update of a custom resource, taken through the API server's steps in its order.

1. decoding (k8s.io/apiextensions-apiserver pkg/apiserver/customresource_handler.go `unstructuredSchemaCoercer`):
   metadata through ObjectMeta, unknown fields pruned, non-nullable nulls dropped, embedded resources coerced;
   under strict field validation (kubectl's default) unknown and duplicate fields reject the request (400);
2. defaulting;
3. the registry (pkg/registry/customresource/strategy.go, validator.go, status_strategy.go): status handling,
   then ObjectMeta, OpenAPI schema, embedded resources and list-type checks, and the CEL rules unless a
   Required, NotSupported, TooLong, TooMany or TypeInvalid error came first. Errors make a 422 status.

On update both objects are read the same way; unchanged invalid values are ratcheted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kcel.k8s import field as fe
from kcel.k8s.customresources import objectmeta
from kcel.k8s.customresources.defaulting import default
from kcel.k8s.customresources.listtype import validate_list_sets_and_maps
from kcel.k8s.customresources.openapi import OpenAPIValidator
from kcel.k8s.customresources.pruning import prune, prune_non_nullable_nulls
from kcel.k8s.manifests.decoding import YAML_ERRORS_PREFIX
from kcel.k8s.manifests.nesting import MAX_DEPTH, TooDeep, too_deep_message, too_deep_path
from kcel.k8s.rules.validation import Validator
from kcel.k8s.schemas.correlation import CorrelatedObject
from kcel.k8s.schemas.schema import Schema

FIELD_VALIDATIONS = ("Strict", "Warn", "Ignore")
BLOCKING = frozenset((fe.ErrorType.NOT_SUPPORTED, fe.ErrorType.REQUIRED, fe.ErrorType.TOO_LONG,
                      fe.ErrorType.TOO_MANY, fe.ErrorType.TYPE_INVALID))  # fmt: skip
NOT_CHECKED = (
    "some validation rules were not checked because the object was invalid; correct the existing errors to complete "
    "validation"
)
GENERATED_SUFFIX = "xxxxx"  # stands for the 5 random characters of a generated name, so that output is stable
MAX_GENERATE_NAME = 58


class Kind(Protocol):
    """What the steps need to know of a CRD version (kcel.k8s.crds.crd provides it)."""

    kind: str
    group: str
    version: str
    namespaced: bool
    status_subresource: bool
    schema: Schema | None

    def cel(self) -> Validator: ...

    def openapi(self, part: str = "") -> OpenAPIValidator | None: ...


@dataclass(frozen=True)
class Request:
    """How the object arrives: the operation's options, and what strict decoding found in the body."""

    subresource: str | None = None
    field_validation: str = "Strict"
    namespace: str = "default"  # the request's namespace, for namespaced kinds
    strict_errors: tuple[str, ...] = ()  # duplicate fields found by the decoder (kcel.k8s.manifests.decoding)


@dataclass(frozen=True)
class Outcome:
    """The response: 422 field errors, or a 400 message; warnings; the object as it would be stored."""

    errors: list[fe.FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    message: str = ""
    reason: str = ""  # "Invalid" (422), "BadRequest" (400), or "" when accepted
    object: Any = None


class _Rejected(Exception):
    """A 400 Bad Request while decoding."""


def admit(kind: Kind, obj: Any, old: Any = None, request: Request = Request()) -> Outcome:
    """Run a create (no `old`), update or status update of `obj` through decoding, defaulting and validation."""
    warnings: list[str] = []
    try:
        new = _decode(kind, obj, request, warnings)
        previous = _decode(kind, old, Request(field_validation="Ignore"), []) if old is not None else None
    except _Rejected as err:
        message = f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {err}'
        return Outcome(warnings=warnings, message=message, reason="BadRequest")
    _set_namespace(kind, new, request)
    if previous is not None:
        _set_namespace(kind, previous, request)  # the stored object lives in the request's namespace
    if previous is None:
        errors, cel_warnings = _create(kind, new)
    else:
        errors, cel_warnings = _update(kind, new, previous, request.subresource)
    warnings += cel_warnings
    if not errors:
        old_finalizers = (previous or {}).get("metadata", {}).get("finalizers") or []
        warnings += objectmeta.finalizer_warnings(new["metadata"].get("finalizers") or [], old_finalizers)
        return Outcome(warnings=warnings, object=new)
    name = new.get("metadata", {}).get("name", "")
    message = fe.invalid_status_message(f"{kind.kind}.{kind.group}", name if isinstance(name, str) else "", errors)
    return Outcome(errors, warnings, message, "Invalid", new)


# -- 1 and 2: decoding and defaulting --------------------------------------------------------------------


def _decode(kind: Kind, sent: Any, request: Request, warnings: list[str]) -> dict[str, Any]:
    """unstructuredSchemaCoercer.apply and the defaulter, on a copy."""
    if not isinstance(sent, dict):
        raise _Rejected(f"Object 'Kind' is missing in '{fe.json_text(sent)}'")
    try:
        obj: dict[str, Any] = json_copy(sent)
    except TooDeep:
        raise _Rejected(too_deep_message(too_deep_path(sent) or "")) from None
    unknown: list[str] = []
    meta = None
    if "metadata" in obj:
        try:
            meta, unknown = objectmeta.decode_object_meta(obj["metadata"])
        except objectmeta.MetadataError as err:
            raise _Rejected(str(err)) from None
    if kind.schema is not None:  # a version without a schema keeps unknown fields (preserveUnknownFields)
        unknown += prune(obj, kind.schema, is_resource_root=True)
        prune_non_nullable_nulls(obj, kind.schema)
    error, embedded_unknown = objectmeta.coerce(fe.Path(), obj, kind.schema)
    if error is not None:
        raise _Rejected(str(error))
    unknown += sorted(embedded_unknown)
    if meta is not None:
        meta.pop("creationTimestamp", None)  # set by the server on create, carried over on update
        obj["metadata"] = meta
    _strictness(request, [*request.strict_errors, *(f'unknown field "{path}"' for path in unknown)], warnings)
    default(obj, kind.schema)
    return obj


def json_copy(value: Any, depth: int = 1) -> Any:
    """A deep copy of decoded JSON (dicts, lists, scalars), several times faster than copy.deepcopy. Raises
    TooDeep past kcel's nesting limit: an object given to the embedding API was never decoded, so never checked."""
    if isinstance(value, dict):
        if depth > MAX_DEPTH:
            raise TooDeep
        return {k: json_copy(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth > MAX_DEPTH:
            raise TooDeep
        return [json_copy(v, depth + 1) for v in value]
    return value


def _strictness(request: Request, problems: list[str], warnings: list[str]) -> None:
    if not problems or request.field_validation == "Ignore":
        return
    if request.field_validation == "Strict":
        raise _Rejected("strict decoding error: " + ", ".join(problems))
    for problem in problems:  # Warn: parseYAMLWarnings gives a warning per duplicate line
        if problem.startswith(YAML_ERRORS_PREFIX):
            warnings.extend(line.strip() for line in problem[len(YAML_ERRORS_PREFIX) :].split("\n"))
        else:
            warnings.append(problem)


def _set_namespace(kind: Kind, obj: dict[str, Any], request: Request) -> None:
    """EnsureObjectNamespaceMatchesRequestNamespace for an object sent to the request's namespace."""
    meta = obj.setdefault("metadata", {})
    if kind.namespaced and not meta.get("namespace"):
        meta["namespace"] = request.namespace
    elif not kind.namespaced:
        meta.pop("namespace", None)


# -- 3: the registry ---------------------------------------------------------------------------------------


def _create(kind: Kind, obj: dict[str, Any]) -> tuple[list[fe.FieldError], list[str]]:
    """BeforeCreate: PrepareForCreate, a generated name, then the strategy's Validate."""
    if kind.status_subresource:
        obj.pop("status", None)
    meta = obj["metadata"]
    if meta.get("generateName") and not meta.get("name"):
        meta["name"] = meta["generateName"][:MAX_GENERATE_NAME] + GENERATED_SUFFIX
    errors = objectmeta.validate_object_meta(meta, kind.namespaced, fe.Path.new("metadata"))
    errors += _openapi(kind, obj, None)
    errors += objectmeta.validate_embedded(fe.Path(), obj, kind.schema)
    errors += validate_list_sets_and_maps(fe.Path(), kind.schema, obj)
    return _with_rules(kind, errors, obj, None)


def _update(
    kind: Kind, obj: dict[str, Any], old: dict[str, Any], subresource: str | None
) -> tuple[list[fe.FieldError], list[str]]:
    """BeforeUpdate: system metadata kept from the old object, PrepareForUpdate, then ValidateUpdate."""
    if subresource == "status":
        obj = _status_update(obj, old)
    elif kind.status_subresource:
        obj.pop("status", None)
        if "status" in old:
            obj["status"] = old["status"]
    _keep_system_fields(obj["metadata"], old.setdefault("metadata", {}))
    meta, old_meta = obj["metadata"], old["metadata"]
    errors = objectmeta.validate_object_meta(meta, kind.namespaced, fe.Path.new("metadata"), _path_segment)
    errors += objectmeta.validate_object_meta_update(meta, old_meta, fe.Path.new("metadata"))
    strategy = objectmeta.validate_object_meta_update(meta, old_meta, fe.Path.new("metadata"))
    correlation = CorrelatedObject(obj, old, kind.schema)
    if subresource == "status":
        # Status updates were not ratcheted before 1.33 (apiextensions 25c2ba633, "Fix status subresource ratcheting").
        ratcheting = fe.api_server() >= (1, 33)
        if "status" in obj:
            strategy += _openapi(kind, obj["status"], correlation.key("status") if ratcheting else None, "status")
    else:
        ratcheting = True
        strategy += _openapi(kind, obj, correlation)
        strategy += objectmeta.validate_embedded(fe.Path(), obj, kind.schema)
    if not validate_list_sets_and_maps(fe.Path(), kind.schema, old):
        strategy += validate_list_sets_and_maps(fe.Path(), kind.schema, obj)
    rule_errors, warnings = _with_rules(kind, strategy, obj, old, ratcheting)
    return errors + rule_errors, warnings


def _status_update(obj: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """statusStrategy.PrepareForUpdate: the old object with the new status."""
    merged = {k: json_copy(v) for k, v in old.items() if k != "status"}
    if "status" in obj:
        merged["status"] = obj["status"]
    obj.clear()
    obj.update(merged)
    return obj


def _keep_system_fields(meta: dict[str, Any], old: dict[str, Any]) -> None:
    """What BeforeUpdate (and a patch onto the live object) carries over; offline both sides get a version."""
    old.setdefault("resourceVersion", "1")
    for key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if key in old and not meta.get(key):
            meta[key] = old[key]
    if "generation" in old:
        meta["generation"] = old["generation"]


def _path_segment(name: str, prefix: bool) -> list[str]:
    """path.ValidatePathSegmentName, which rest.ValidateUpdate checks names with."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in name]


def _openapi(kind: Kind, value: Any, correlation: CorrelatedObject | None, part: str = "") -> list[fe.FieldError]:
    validator = kind.openapi(part)
    if validator is None:
        return []
    # A 1.30 API server validated the status without its path (apiextensions 5650a2e3d added it in 1.31).
    path = fe.Path.new(part) if part and fe.api_server() >= (1, 31) else fe.Path()
    return validator.validate_correlated(value, correlation, path=path)


def _with_rules(
    kind: Kind, errors: list[fe.FieldError], obj: dict[str, Any], old: dict[str, Any] | None, ratcheting: bool = True
) -> tuple[list[fe.FieldError], list[str]]:
    """hasBlockingErr, else the CEL rules."""
    if any(error.type in BLOCKING for error in errors):
        return [*errors, fe.invalid(fe.Path(), None, NOT_CHECKED)], []
    result = kind.cel().validate(obj, old, ratcheting=ratcheting)
    return [*errors, *result.errors], result.warnings
