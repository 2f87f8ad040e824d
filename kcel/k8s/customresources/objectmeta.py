"""`metadata` of custom resources and of embedded resources, read and checked as the API server does.

Decoding (apiextensions-apiserver pkg/apiserver/schema/objectmeta/coerce.go): metadata round-trips through the
typed `ObjectMeta`, so unknown fields go (reported under strict field validation), wrongly typed ones are
decode errors worded as encoding/json words them, and empty ones disappear. Embedded resources get the same
treatment (`Coerce`) plus `apiVersion`/`kind` checks (validation.go). At the root, `ValidateObjectMeta` of
apimachinery pkg/api/validation: name or generateName, DNS-subdomain names, namespace, labels, annotations,
owner references and finalizers; on update the immutable fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.schemas.schema import Schema, found_below
from kcel.libs.k8s_format import FORMATS, label_key_errors, label_value_errors

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
_STRING, _INT64, _BOOL, _TIME = "string", "int64", "bool", "v1.Time"


@dataclass(frozen=True)
class _Field:
    """A field of a Go struct of ObjectMeta, as its JSON encoder writes it."""

    name: str
    kind: str  # a Go type: string, int64, bool, v1.Time, map[string]string, []string, a struct list, raw JSON
    omit_empty: bool = True
    pointer: bool = False  # a Go pointer: omitted only when unset, so 0 and false are written
    struct: tuple[_Field, ...] = ()
    struct_name: str = ""


_OWNER_REFERENCE = (
    _Field("apiVersion", _STRING, False), _Field("kind", _STRING, False), _Field("name", _STRING, False),
    _Field("uid", _STRING, False), _Field("controller", _BOOL, pointer=True),
    _Field("blockOwnerDeletion", _BOOL, pointer=True),
)  # fmt: skip
_MANAGED_FIELDS_ENTRY = (
    _Field("manager", _STRING), _Field("operation", _STRING), _Field("apiVersion", _STRING), _Field("time", _TIME),
    _Field("fieldsType", _STRING), _Field("fieldsV1", "json"), _Field("subresource", _STRING),
)  # fmt: skip
OBJECT_META = (
    _Field("name", _STRING), _Field("generateName", _STRING), _Field("namespace", _STRING),
    _Field("selfLink", _STRING), _Field("uid", _STRING), _Field("resourceVersion", _STRING),
    _Field("generation", _INT64), _Field("creationTimestamp", _TIME, False), _Field("deletionTimestamp", _TIME),
    _Field("deletionGracePeriodSeconds", _INT64, pointer=True), _Field("labels", "map[string]string"),
    _Field("annotations", "map[string]string"),
    _Field("ownerReferences", "[]v1.OwnerReference", struct=_OWNER_REFERENCE, struct_name="OwnerReference"),
    _Field("finalizers", "[]string"),
    _Field("managedFields", "[]v1.ManagedFieldsEntry", struct=_MANAGED_FIELDS_ENTRY, struct_name="ManagedFieldsEntry"),
)  # fmt: skip
"""metav1.ObjectMeta's JSON fields, in the order Go writes them."""


class MetadataError(ValueError):
    """Metadata that does not decode into ObjectMeta; the text is encoding/json's (or time.Parse's)."""


# -- decoding ---------------------------------------------------------------------------------------------


def decode_object_meta(metadata: Any, prefix: str = "metadata") -> tuple[dict[str, Any], list[str]]:
    """ObjectMeta as Go holds it after json.Unmarshal, written back as ToUnstructured writes it, and the paths
    of the fields it dropped as unknown (`metadata.foo`).

    >>> decode_object_meta({"name": "a", "labels": {}, "x": 1})
    ({'name': 'a', 'creationTimestamp': None}, ['metadata.x'])

    Raises:
        MetadataError: `json: cannot unmarshal number into Go struct field ObjectMeta.name of type string`.
    """
    if not isinstance(metadata, dict):
        raise MetadataError(f"json: cannot unmarshal {fe.json_kind(metadata)} into Go value of type v1.ObjectMeta")
    unknown: list[str] = []
    meta = _decode_struct(metadata, OBJECT_META, "ObjectMeta", (), prefix, unknown)
    return meta, unknown


def _decode_struct(data: dict[str, Any], fields: tuple[_Field, ...], struct: str, stack: tuple[str, ...],
                   path: str, unknown: list[str]) -> dict[str, Any]:  # fmt: skip
    """One struct; Go decodes the keys in the order json.Marshal wrote them (sorted), so the first error is
    the first in key order."""
    by_name = {f.name: f for f in fields}
    decoded: dict[str, Any] = {}
    for key in sorted(data):
        found = by_name.get(key)
        if found is None:
            unknown.append(f"{path}.{key}")
            continue
        decoded[key] = _decode_field(data[key], found, struct, (*stack, key), f"{path}.{key}", unknown)
    result = {}
    for f in fields:  # ToUnstructured: omitempty fields only when set, creationTimestamp always
        value = decoded.get(f.name)
        if not f.omit_empty or (value is not None if f.pointer else not _empty(value)):
            result[f.name] = value if value is not None or f.kind != _STRING else ""
    return result


def _decode_field(value: Any, spec: _Field, struct: str, stack: tuple[str, ...], path: str,
                  unknown: list[str]) -> Any:  # fmt: skip
    if value is None:
        return None
    kind = spec.kind
    if kind == "json":
        return value
    if kind == _TIME:
        return _time(value)
    if kind == "map[string]string":
        entries = _expect(value, dict, kind, struct, stack)
        return {k: _expect(v, str, _STRING, struct, stack) for k, v in entries.items()}
    if kind == "[]string":
        return [_expect(v, str, _STRING, struct, stack) for v in _expect(value, list, kind, struct, stack)]
    if spec.struct:
        items = _expect(value, list, kind, struct, stack)
        return [
            _decode_struct(_expect(item, dict, kind[2:], struct, stack), spec.struct, spec.struct_name, stack,
                           f"{path}[{i}]", unknown)
            for i, item in enumerate(items)
        ]  # fmt: skip
    if kind == _INT64:
        return _int64(value, struct, stack)
    return _expect(value, bool if kind == _BOOL else str, kind, struct, stack)


def _expect(value: Any, python_type: type, go_type: str, struct: str, stack: tuple[str, ...]) -> Any:
    if value is None:
        return python_type()
    if type(value) is not python_type:
        raise _type_error(fe.json_kind(value), go_type, struct, stack)
    return value


def _int64(value: Any, struct: str, stack: tuple[str, ...]) -> int:
    if type(value) is int:
        return value
    if type(value) is float:
        raise _type_error(f"number {fe.render_value(value)}", _INT64, struct, stack)
    raise _type_error(fe.json_kind(value), _INT64, struct, stack)


def _type_error(value: str, go_type: str, struct: str, stack: tuple[str, ...]) -> MetadataError:
    return MetadataError(f"json: cannot unmarshal {value} into Go struct field {struct}.{'.'.join(stack)} of type "
                         f"{go_type}")  # fmt: skip


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _time(value: Any) -> str:
    """metav1.Time.UnmarshalJSON: an RFC 3339 string (kept as written)."""
    if not isinstance(value, str):
        raise MetadataError(f"json: cannot unmarshal {fe.json_kind(value)} into Go value of type string")
    if not _RFC3339.fullmatch(value):
        raise MetadataError(f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse "{value}" as '
                            '"2006-01-02T15:04:05Z07:00"')  # fmt: skip
    return value


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == 0 and type(value) is int or value == {} or value == []


# -- embedded resources --------------------------------------------------------------------------------------


def coerce(path: fe.Path, obj: Any, schema: Schema | None) -> tuple[fe.FieldError | None, list[str]]:
    """Embedded resources' TypeMeta and ObjectMeta as CoerceWithOptions fixes them, in place: the first error
    and the unknown metadata field paths."""
    unknown: list[str] = []
    return _coerce(path, obj, schema, unknown), unknown


def _embeds(schema: Schema) -> bool:
    return found_below(schema, "embedded", lambda s: s.embedded_resource)


def _coerce(path: fe.Path, value: Any, schema: Schema | None, unknown: list[str]) -> fe.FieldError | None:
    if schema is None or not _embeds(schema):
        return None
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            if schema.embedded_resource:
                error = _coerce_meta(path, value, key, item, unknown)
                if error is not None:
                    return error
            child = _child(schema, key)
            if child is not None:
                error = _coerce(_step(path, schema, key), value[key], child, unknown)
                if error is not None:
                    return error
    elif isinstance(value, list):
        for i, item in enumerate(value):
            error = _coerce(path.index(i), item, schema.items, unknown)
            if error is not None:
                return error
    return None


def _coerce_meta(path: fe.Path, obj: dict[str, Any], key: str, value: Any, unknown: list[str]) -> fe.FieldError | None:
    if key in ("apiVersion", "kind") and not isinstance(value, str):
        return fe.invalid(path.child(key), value, "must be a string")
    if key == "metadata":
        try:
            meta, extra = decode_object_meta(value, str(path.child("metadata")) if path.elements else "metadata")
        except MetadataError as err:
            return fe.invalid(path.child("metadata"), value, str(err))
        unknown.extend(extra)
        if meta.get("creationTimestamp") is None:
            meta.pop("creationTimestamp", None)
        obj["metadata"] = meta
    return None


def _child(schema: Schema, key: str) -> Schema | None:
    if schema.properties is not None and key in schema.properties:
        return schema.properties[key]
    extra = schema.additional_properties
    return extra if isinstance(extra, Schema) else None


def _step(path: fe.Path, schema: Schema, key: str) -> fe.Path:
    return path.child(key) if schema.properties is not None and key in schema.properties else path.key(key)


def validate_embedded(path: fe.Path, obj: Any, schema: Schema | None) -> list[fe.FieldError]:
    """objectmeta.Validate: apiVersion and kind required at every embedded resource, and their metadata checked."""
    if schema is None or not _embeds(schema):
        return []
    errors: list[fe.FieldError] = []
    if isinstance(obj, dict):
        if schema.embedded_resource:
            errors += _embedded_resource(path, obj)
        for key, value in obj.items():
            child = _child(schema, key)
            if child is not None:
                errors += validate_embedded(_step(path, schema, key), value, child)
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            errors += validate_embedded(path.index(i), item, schema.items)
    return errors


def _embedded_resource(path: fe.Path, obj: dict[str, Any]) -> list[fe.FieldError]:
    detail = "" if fe.api_server() >= (1, 34) else "must not be empty"  # apiextensions f0841a757 dropped it
    errors = [fe.required(path.child(key), detail) for key in ("apiVersion", "kind") if key not in obj]
    for key, value in obj.items():
        if key == "apiVersion":
            errors += _embedded_api_version(path.child(key), value)
        elif key == "kind":
            errors += _embedded_kind(path.child(key), value)
        elif key == "metadata":
            errors += _embedded_metadata(path.child(key), value)
    return errors


def _embedded_api_version(path: fe.Path, value: Any) -> list[fe.FieldError]:
    if not isinstance(value, str):
        return [fe.invalid(path, value, "must be a string")]
    if not value:
        return [fe.invalid(path, value, "must not be empty")]
    problem = parse_group_version(value)
    return [fe.invalid(path, value, problem)] if problem else []


def parse_group_version(text: str) -> str:
    """schema.ParseGroupVersion's error text ("" when `text` is a valid apiVersion)."""
    if not text or text == "/":
        return ""
    if text.count("/") > 1:
        return f"unexpected GroupVersion string: {text}"
    return ""


def _embedded_kind(path: fe.Path, value: Any) -> list[fe.FieldError]:
    if not isinstance(value, str):
        return [fe.invalid(path, value, "must be a string")]
    if not value:
        return [fe.invalid(path, value, "must not be empty")]
    problems = FORMATS["dns1035Label"].validator(value.lower())
    if problems:
        return [fe.invalid(path, value, "may have mixed case, but should otherwise match: " + ",".join(problems))]
    return []


def _embedded_metadata(path: fe.Path, value: Any) -> list[fe.FieldError]:
    try:
        meta, _ = decode_object_meta(value)
    except MetadataError as err:
        return [fe.invalid(path, value, str(err))]
    meta = {**meta, "name": meta.get("name") or "fakename"}  # upstream sets a name to avoid the Required error
    return validate_object_meta(meta, bool(meta.get("namespace")), path, _path_segment_name)


def _path_segment_name(name: str, prefix: bool) -> list[str]:
    """content.IsPathSegmentName / IsPathSegmentPrefix."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in name]


# -- ObjectMeta validation ---------------------------------------------------------------------------------------

NameCheck = Callable[[str, bool], list[str]]


def dns_subdomain_name(name: str, prefix: bool) -> list[str]:
    """NameIsDNSSubdomain: custom resources' names (a prefix may end in '-')."""
    return FORMATS["dns1123SubdomainPrefix" if prefix else "dns1123Subdomain"].validator(name)


def validate_object_meta(
    meta: dict[str, Any], namespaced: bool, path: fe.Path, name_check: NameCheck = dns_subdomain_name
) -> list[fe.FieldError]:
    """ValidateObjectMeta on create, for decoded metadata (`decode_object_meta`)."""
    errors: list[fe.FieldError] = []
    generate_name, name = meta.get("generateName", ""), meta.get("name", "")
    if generate_name:
        errors += [fe.invalid(path.child("generateName"), generate_name, m) for m in name_check(generate_name, True)]
    if not name:
        errors.append(fe.required(path.child("name"), "name or generateName is required"))
    else:
        errors += [fe.invalid(path.child("name"), name, m) for m in name_check(name, False)]
    return errors + _common(meta, namespaced, path)


def _common(meta: dict[str, Any], namespaced: bool, path: fe.Path) -> list[fe.FieldError]:
    errors: list[fe.FieldError] = []
    namespace = meta.get("namespace", "")
    if namespaced:
        if not namespace:
            errors.append(fe.required(path.child("namespace"), ""))
        else:
            problems = FORMATS["dns1123Label"].validator(namespace)
            errors += [fe.invalid(path.child("namespace"), namespace, m) for m in problems]
    elif namespace:
        errors.append(fe.forbidden(path.child("namespace"), "not allowed on this type"))
    if meta.get("generation", 0) < 0:
        errors.append(fe.invalid(path.child("generation"), meta["generation"], "must be greater than or equal to 0"))
    return errors + _labels_and_more(meta, path)


def _labels_and_more(meta: dict[str, Any], path: fe.Path) -> list[fe.FieldError]:
    errors = validate_labels(meta.get("labels") or {}, path.child("labels"))
    errors += validate_annotations(meta.get("annotations") or {}, path.child("annotations"))
    errors += _owner_references(meta.get("ownerReferences") or [], path.child("ownerReferences"))
    errors += _finalizers(meta.get("finalizers") or [], path.child("finalizers"))
    return errors + _managed_fields(meta.get("managedFields") or [], path.child("managedFields"))


def validate_labels(labels: dict[str, str], path: fe.Path) -> list[fe.FieldError]:
    errors = []
    for key, value in labels.items():
        errors += [fe.invalid(path, key, m) for m in label_key_errors(key, _legacy_labels())]
        errors += [fe.invalid(path, value, m) for m in label_value_errors(value, _legacy_labels())]
    return errors


def validate_annotations(annotations: dict[str, str], path: fe.Path) -> list[fe.FieldError]:
    legacy = _legacy_labels()
    errors = [fe.invalid(path, key, m) for key in annotations for m in label_key_errors(_go_lower(key), legacy)]
    size = sum(len(k.encode("utf-8", "surrogatepass")) + len(v.encode("utf-8", "surrogatepass"))
               for k, v in annotations.items())  # fmt: skip
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errors.append(fe.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errors


def _go_lower(text: str) -> str:
    return text.replace("\u0130", "i").lower()


def _owner_references(references: list[dict[str, Any]], path: fe.Path) -> list[fe.FieldError]:
    """ValidateOwnerReferences. Before 1.37 every reference was checked at the list's own path, with Invalid
    values ("kind must not be empty" before 1.34, apimachinery 5937fdff); 1.37 indexes them and says Required
    (5c912ee7)."""
    errors: list[fe.FieldError] = []
    controller = ""
    indexed = fe.api_server() >= (1, 37)
    for i, reference in enumerate(references):
        if indexed:
            errors += _owner_reference(reference, path.index(i))
        else:
            errors += _owner_reference_before_1_37(reference, path)
        if reference.get("apiVersion") == "v1" and reference.get("kind") == "Event":
            here = path.index(i) if indexed else path
            errors.append(
                fe.invalid(here, _owner_value(reference), "/v1, Kind=Event is disallowed from being an owner")
            )
        if reference.get("controller"):
            current = f"{reference.get('kind', '')}/{reference.get('name', '')}"
            if controller:
                listed = fe.GoSlice("v1.OwnerReference", tuple(map(_owner_value, references)))
                errors.append(fe.invalid(path, listed, "Only one reference can have Controller set to true. "
                                         f'Found "true" in references for {controller} and {current}'))  # fmt: skip
            else:
                controller = current
    return errors


def _owner_reference(reference: dict[str, Any], here: fe.Path) -> list[fe.FieldError]:
    errors = []
    api_version = reference.get("apiVersion", "")
    if not api_version:
        errors.append(fe.required(here.child("apiVersion"), "must not be empty"))
    elif parse_group_version(api_version) or api_version.endswith("/") or api_version == "/":
        errors.append(fe.invalid(here.child("apiVersion"), api_version, "must be <group>/<version> or <version>"))
    for key in ("kind", "name", "uid"):
        if not reference.get(key):
            errors.append(fe.required(here.child(key), "must not be empty"))
    return errors


def _owner_reference_before_1_37(reference: dict[str, Any], path: fe.Path) -> list[fe.FieldError]:
    api_version = reference.get("apiVersion", "")
    errors = []
    if parse_group_version(api_version) or not api_version.rpartition("/")[2]:  # no version (FromAPIVersionAndKind)
        errors.append(fe.invalid(path.child("apiVersion"), api_version, "version must not be empty"))
    named = fe.api_server() < (1, 34)
    for key in ("kind", "name", "uid"):
        if not reference.get(key):
            errors.append(fe.invalid(path.child(key), "", f"{key} must not be empty" if named else "must not be empty"))
    return errors


_OWNER_FIELDS = (("APIVersion", "apiVersion"), ("Kind", "kind"), ("Name", "name"), ("UID", "uid"),
                 ("Controller", "controller"), ("BlockOwnerDeletion", "blockOwnerDeletion"))  # fmt: skip


def _owner_value(reference: dict[str, Any]) -> fe.GoStruct:
    """A metav1.OwnerReference as a bad value: its fields in declaration order, the pointers omitted when empty."""
    go = tuple((name, reference.get(key, None if name in ("Controller", "BlockOwnerDeletion") else ""))
               for name, key in _OWNER_FIELDS)  # fmt: skip
    json = tuple((key, value) for (_, key), (name, value) in zip(_OWNER_FIELDS, go, strict=True)
                 if value is not None)  # fmt: skip
    pointers = (("Controller", "bool"), ("BlockOwnerDeletion", "bool"))
    return fe.GoStruct(go, "v1.OwnerReference", pointers, json)


def _finalizers(finalizers: list[str], path: fe.Path) -> list[fe.FieldError]:
    errors = [fe.invalid(path, f, m) for f in finalizers for m in label_key_errors(f, _legacy_labels())]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        both = "finalizer orphan and foregroundDeletion cannot be both set"
        errors.append(fe.invalid(path, fe.GoSlice("string", tuple(finalizers)), both))
    return errors


_STANDARD_FINALIZERS = frozenset(("orphan", "foregroundDeletion", "kubernetes"))


def finalizer_warnings(finalizers: list[str], old_finalizers: list[str]) -> list[str]:
    """WarningsOnCreate/WarningsOnUpdate of custom resources: for each finalizer added, what IsQualifiedName says of
    it, and, for a name without a path that Kubernetes does not define, a nudge toward a domain-qualified one (which
    names the missing path from 1.32 when the name has a dot, apiextensions 08ef780a3)."""
    warnings = []
    path = "metadata.finalizers"
    for name in sorted(set(finalizers) - set(old_finalizers)):
        warnings += [f"{path}: {fe.quote(name)}: {m}" for m in label_key_errors(name, _legacy_labels())]
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            qualified = "a domain-qualified finalizer name"
            if "." in name and fe.api_server() >= (1, 32):
                qualified += " including a path (/)"
            warnings.append(f"{path}: {fe.quote(name)}: prefer {qualified} to avoid accidental conflicts with other "
                            "finalizer writers")  # fmt: skip
    return warnings


def _managed_fields(entries: list[dict[str, Any]], path: fe.Path) -> list[fe.FieldError]:
    errors: list[fe.FieldError] = []
    for i, entry in enumerate(entries):
        here = path.index(i)
        operation = entry.get("operation", "")
        if operation in ("Apply", "Update"):
            pass
        elif fe.api_server() < (1, 37):  # one Invalid text for every bad operation before apimachinery 5c912ee7
            errors.append(fe.invalid(here.child("operation"), operation, "must be `Apply` or `Update`"))
        elif not operation:
            errors.append(fe.required(here.child("operation"), "must not be empty"))
        else:
            errors.append(fe.not_supported(here.child("operation"), operation, ("Apply", "Update")))
        if entry.get("fieldsType") and entry["fieldsType"] != "FieldsV1":
            errors.append(fe.invalid(here.child("fieldsType"), entry["fieldsType"], "must be `FieldsV1`"))
    return errors


def validate_object_meta_update(new: dict[str, Any], old: dict[str, Any], path: fe.Path) -> list[fe.FieldError]:
    """ValidateObjectMetaUpdate: system fields may not change; labels and the rest are checked again."""
    errors: list[fe.FieldError] = []
    if old.get("deletionTimestamp"):
        added = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
        if added:
            detail = (
                f"no new finalizers can be added if the object is being deleted, found new finalizers "
                f"[]string{_go_strings(added)}"
            )
            errors.append(fe.forbidden(path.child("finalizers"), detail))
    if not new.get("resourceVersion"):
        errors.append(fe.invalid(path.child("resourceVersion"), "", "must be specified for an update"))
    generation = new.get("generation", 0)
    if generation < 0 and fe.api_server() >= (1, 37):  # checked on update too from apimachinery f988e75e
        errors.append(fe.invalid(path.child("generation"), generation, "must be greater than or equal to 0"))
    if generation < old.get("generation", 0):
        errors.append(fe.invalid(path.child("generation"), generation, "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if new.get(key) != old.get(key):
            errors.append(fe.invalid(path.child(key), new.get(key, "" if key in ("name", "namespace", "uid") else None),
                                     "field is immutable"))  # fmt: skip
    errors += validate_labels(new.get("labels") or {}, path.child("labels"))
    errors += validate_annotations(new.get("annotations") or {}, path.child("annotations"))
    errors += _owner_references(new.get("ownerReferences") or [], path.child("ownerReferences"))
    return errors + _managed_fields(new.get("managedFields") or [], path.child("managedFields"))


def _go_strings(values: list[str]) -> str:
    return "{" + ", ".join(f'"{v}"' for v in values) + "}"


def _legacy_labels() -> bool:
    """Label keys and values were checked with util/validation's texts before 1.35 (apimachinery da7b67ed)."""
    return fe.api_server() < (1, 35)
