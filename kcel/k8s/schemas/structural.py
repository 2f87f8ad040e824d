"""Whether a CRD schema is structural: the invariants the API server checks before it accepts a CRD.

k8s.io/apiextensions-apiserver pkg/apiserver/schema/validation.go `validateStructuralInvariants` and the
junctor rules of `validateNestedValueValidation`: every field and array item has a type (unless it is
int-or-string or preserves unknown fields), arrays have items, the root is an object, and allOf/anyOf/oneOf/not
only add value validations. Objects of a CRD whose schema is not structural cannot exist, so validating them is
pointless; these errors say why. (The completeness check, that junctors name only declared properties, is not
made here.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kcel.goregex import GoRegexError, compile_go_regex
from kcel.k8s import field as fe
from kcel.k8s.schemas.schema import Schema

_ROOT, _FIELD, _ITEM = "root", "field", "item"
_EMPTY_TYPE = {
    _ROOT: "must not be empty at the root",
    _ITEM: "must not be empty for specified array items",
    _FIELD: "must not be empty for specified object fields",
}


def structural_errors(schema: Schema, path: fe.Path) -> list[fe.FieldError]:
    """The structural-schema errors of a version's schema, sorted by their text as the API server sorts them.

    >>> [str(e) for e in structural_errors(Schema(properties={"a": Schema()}), fe.Path.new("schema"))]
    ['schema.properties[a].type: Required value: must not be empty for specified object fields', \
'schema.type: Required value: must not be empty at the root']
    """
    return sorted(_invariants(schema, _ROOT, path), key=str)


def _invariants(schema: Schema, level: str, path: fe.Path) -> Iterator[fe.FieldError]:
    if schema.type == "array" and schema.items is None:
        yield fe.required(path.child("items"), "must be specified")
    if schema.items is not None:
        yield from _invariants(schema.items, _ITEM, path.child("items"))
    for name, prop in (schema.properties or {}).items():
        yield from _invariants(prop, _FIELD, path.child("properties").key(name))
    extra = schema.additional_properties
    if extra is not None and extra is not False:
        if level == _ROOT:
            yield fe.forbidden(path.child("additionalProperties"), "must not be used at the root")
        if isinstance(extra, Schema):
            yield from _invariants(extra, _FIELD, path.child("additionalProperties"))
    yield from _type(schema, level, path)
    yield from _junctors(schema, path)


def _type(schema: Schema, level: str, path: fe.Path) -> Iterator[fe.FieldError]:
    if schema.int_or_string and schema.preserve_unknown_fields:
        yield fe.invalid(path.child("x-kubernetes-preserve-unknown-fields"), True,
                         "must be false if x-kubernetes-int-or-string is true")  # fmt: skip
    if schema.embedded_resource and schema.type != "object":
        if not schema.type:
            yield fe.required(path.child("type"), "must be object if x-kubernetes-embedded-resource is true")
        else:
            yield fe.invalid(
                path.child("type"), schema.type, "must be object if x-kubernetes-embedded-resource is true"
            )
    elif not schema.type and not schema.int_or_string and not schema.preserve_unknown_fields:
        yield fe.required(path.child("type"), _EMPTY_TYPE[level])
    if level == _ROOT and schema.type and schema.type != "object":
        yield fe.invalid(path.child("type"), schema.type, "must be object at the root")


def _junctors(schema: Schema, path: fe.Path, skip_any_of: bool = False) -> Iterator[fe.FieldError]:
    """validateValueValidation: the junctors' entries, and the pattern. The int-or-string spelling
    `anyOf: [{type: integer}, {type: string}]` (directly, or in the first allOf entry) is allowed."""
    if not (skip_any_of or _int_or_string_pair(schema.any_of)):
        for i, entry in enumerate(schema.any_of):
            yield from _nested(entry, path.child("anyOf").index(i))
    for i, entry in enumerate(schema.all_of):
        yield from _nested(entry, path.child("allOf").index(i), i == 0 and _int_or_string_pair(entry.any_of))
    for i, entry in enumerate(schema.one_of):
        yield from _nested(entry, path.child("oneOf").index(i))
    if schema.not_ is not None:
        yield from _nested(schema.not_, path.child("not"))
    if schema.pattern:
        try:
            compile_go_regex(schema.pattern)
        except GoRegexError as err:
            yield fe.invalid(
                path.child("pattern"), schema.pattern, f"must be a valid regular expression, but isn't: {err}"
            )


def _int_or_string_pair(entries: tuple[Schema, ...]) -> bool:
    return len(entries) == 2 and all(
        e.type == t and _only_type(e) for e, t in zip(entries, ("integer", "string"), strict=True)
    )


def _only_type(schema: Schema) -> bool:
    return schema.with_changes(type="").__dict__ == Schema().__dict__


_FORBIDDEN_NESTED: tuple[tuple[str, Callable[[Schema], bool], str], ...] = (
    ("additionalProperties", lambda s: s.additional_properties is not None, "must be undefined to be structural"),
    ("default", lambda s: s.has_default and s.default is not None, "must be undefined to be structural"),
    ("nullable", lambda s: s.nullable, "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", lambda s: s.preserve_unknown_fields, "must be false to be structural"),
    ("x-kubernetes-embedded-resource", lambda s: s.embedded_resource, "must be false to be structural"),
    ("x-kubernetes-int-or-string", lambda s: s.int_or_string, "must be false to be structural"),
    ("x-kubernetes-list-map-keys", lambda s: bool(s.list_map_keys), "must be empty to be structural"),
    ("x-kubernetes-list-type", lambda s: s.list_type is not None, "must be undefined to be structural"),
    ("x-kubernetes-map-type", lambda s: s.map_type is not None, "must be undefined to be structural"),
)


def _nested(schema: Schema, path: fe.Path, skip_any_of: bool = False) -> Iterator[fe.FieldError]:
    """A schema under allOf/anyOf/oneOf/not may only hold value validations (its rules are checked elsewhere)."""
    if schema.type:
        yield fe.forbidden(path.child("type"), "must be empty to be structural")
    for name, present, detail in _FORBIDDEN_NESTED:
        if present(schema):
            yield fe.forbidden(path.child(name), detail)
    if schema.properties and "metadata" in schema.properties:
        yield fe.forbidden(path.child("properties").key("metadata"), "must not be specified in a nested context")
    if schema.items is not None:
        yield from _nested(schema.items, path.child("items"))
    for name, prop in (schema.properties or {}).items():
        yield from _nested(prop, path.child("properties").key(name))
    yield from _junctors(schema, path, skip_any_of)
