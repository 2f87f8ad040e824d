"""OpenAPI v3 structural schemas as CRD authors write them, read into small frozen objects.

Kept: types and formats, the `x-kubernetes-*` extensions, the value validations the API server
checks (sizes, bounds, `pattern`, `multipleOf`, `uniqueItems`, enums), defaults, and the
`x-kubernetes-validations` rules. A schema that is
not shaped as a schema (a string where an object belongs, ...) raises `SchemaError` naming the
field path of the problem, e.g. `properties.spec.items: must be an object`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_ABSENT: Any = object()


class SchemaError(ValueError):
    """A schema document that cannot be read; the message starts with the field path."""


@dataclass(frozen=True)
class ValidationRule:
    """One `x-kubernetes-validations` entry (absent fields are None)."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None


@dataclass(frozen=True, eq=False)
class Schema:
    """A structural schema node. Compared by identity: nodes are shared and used as cache keys."""

    type: str = ""
    format: str = ""
    properties: Mapping[str, Schema] | None = None  # None: absent; {} (present, empty) differs
    items: Schema | None = None
    additional_properties: Schema | bool | None = None
    nullable: bool = False
    int_or_string: bool = False
    embedded_resource: bool = False
    preserve_unknown_fields: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    max_length: int | None = None
    max_items: int | None = None
    max_properties: int | None = None
    min_length: int | None = None
    min_items: int | None = None
    min_properties: int | None = None
    pattern: str = ""
    minimum: float | None = None  # JSONSchemaProps keeps bounds as float64
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    unique_items: bool = False
    enum: tuple[Any, ...] | None = None
    default: Any = field(default=_ABSENT, repr=False)
    required: tuple[str, ...] = ()
    validations: tuple[ValidationRule, ...] = ()
    all_of: tuple[Schema, ...] = ()
    any_of: tuple[Schema, ...] = ()
    one_of: tuple[Schema, ...] = ()
    not_: Schema | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _ABSENT

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> Schema:
        """Read a schema from decoded JSON/YAML (`openAPIV3Schema`, or any node of one)."""
        return _read(data, path)

    def with_changes(self, **changes: Any) -> Schema:
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values.update(changes)
        return Schema(**values)


def children(schema: Schema) -> Iterator[Schema]:
    """The nodes data below this one is checked against: properties, items, an additionalProperties schema."""
    yield from (schema.properties or {}).values()
    if schema.items is not None:
        yield schema.items
    if isinstance(schema.additional_properties, Schema):
        yield schema.additional_properties


_STRUCTURES: weakref.WeakKeyDictionary[Schema, tuple[Any, ...]] = weakref.WeakKeyDictionary()


def structure(schema: Schema) -> tuple[Any, ...]:
    """A hashable value equal for schemas of the same content (nodes compare by identity): every field, children
    by their own structure; remembered per node, so a whole tree costs one walk however often it is asked."""
    found = _STRUCTURES.get(schema)
    if found is None:
        values: list[Any] = []
        for name in schema.__dataclass_fields__:
            value = getattr(schema, name)
            if isinstance(value, Schema):
                value = structure(value)
            elif name == "properties" and value is not None:
                value = tuple((key, structure(child)) for key, child in value.items())
            elif name in ("all_of", "any_of", "one_of"):
                value = tuple(structure(child) for child in value)
            elif name in ("enum", "default"):
                value = repr(value)  # JSON values: lists and maps are not hashable
            values.append(value)
        found = _STRUCTURES[schema] = tuple(values)
    return found


_FOUND: weakref.WeakKeyDictionary[Schema, dict[str, bool]] = weakref.WeakKeyDictionary()


def found_below(schema: Schema, name: str, test: Callable[[Schema], bool]) -> bool:
    """Whether `test` holds at this node or anywhere below it; remembered per node under `name`, so walks over
    data can skip the parts of a schema that have nothing to check.

    >>> found_below(Schema(items=Schema(list_type="set")), "sets", lambda s: s.list_type == "set")
    True
    """
    known = _FOUND.setdefault(schema, {})
    if name not in known:
        known[name] = test(schema) or any(found_below(child, name, test) for child in children(schema))
    return known[name]


# Keys that most nodes of real schemas have nothing but (and documentation the reader ignores): such nodes are
# read through these alone, the other fields keeping their defaults, as the full reading would leave them.
_COMMON_KEYS = frozenset({"type", "description", "properties", "items", "format", "title"})


def _read(data: Any, path: str) -> Schema:
    if not isinstance(data, Mapping):
        raise SchemaError(f"{path or '<root>'}: must be an object, got {_json_kind(data)}")
    reader = _Reader(data, path)
    properties = reader.mapping("properties")
    common: dict[str, Any] = {
        "type": reader.string("type"), "format": reader.string("format"),
        "properties": (
            None if properties is None else {k: _read(v, reader.at("properties", k)) for k, v in properties.items()}
        ),
        "items": _read(data["items"], reader.at("items")) if data.get("items") is not None else None,
    }  # fmt: skip
    if _COMMON_KEYS.issuperset(data):
        return Schema(**common)
    additional = data.get("additionalProperties")
    rules = reader.items("x-kubernetes-validations")
    return Schema(
        **common,
        additional_properties=(
            additional if isinstance(additional, bool) or additional is None
            else _read(additional, reader.at("additionalProperties"))
        ),
        nullable=reader.flag("nullable"),
        int_or_string=reader.flag("x-kubernetes-int-or-string"),
        embedded_resource=reader.flag("x-kubernetes-embedded-resource"),
        preserve_unknown_fields=reader.flag("x-kubernetes-preserve-unknown-fields"),
        list_type=reader.string("x-kubernetes-list-type") or None,
        list_map_keys=tuple(reader.strings("x-kubernetes-list-map-keys")),
        map_type=reader.string("x-kubernetes-map-type") or None,
        max_length=reader.integer("maxLength"),
        max_items=reader.integer("maxItems"),
        max_properties=reader.integer("maxProperties"),
        min_length=reader.integer("minLength"),
        min_items=reader.integer("minItems"),
        min_properties=reader.integer("minProperties"),
        pattern=reader.string("pattern"),
        minimum=reader.number("minimum"),
        maximum=reader.number("maximum"),
        exclusive_minimum=reader.flag("exclusiveMinimum"),
        exclusive_maximum=reader.flag("exclusiveMaximum"),
        multiple_of=reader.number("multipleOf"),
        unique_items=reader.flag("uniqueItems"),
        enum=tuple(data["enum"]) if isinstance(data.get("enum"), list) else None,
        default=data.get("default", _ABSENT),
        required=tuple(reader.strings("required")),
        validations=tuple(_rule(r, reader.at("x-kubernetes-validations", i)) for i, r in rules),
        all_of=tuple(_read(s, reader.at("allOf", i)) for i, s in reader.items("allOf")),
        any_of=tuple(_read(s, reader.at("anyOf", i)) for i, s in reader.items("anyOf")),
        one_of=tuple(_read(s, reader.at("oneOf", i)) for i, s in reader.items("oneOf")),
        not_=_read(data["not"], reader.at("not")) if data.get("not") is not None else None,
    )  # fmt: skip


def _rule(data: Any, path: str) -> ValidationRule:
    if not isinstance(data, Mapping):
        raise SchemaError(f"{path}: must be an object, got {_json_kind(data)}")
    reader = _Reader(data, path)
    optional = data.get("optionalOldSelf")
    if optional is not None and not isinstance(optional, bool):
        raise SchemaError(f"{reader.at('optionalOldSelf')}: must be a boolean")
    return ValidationRule(
        rule=reader.string("rule"),
        message=reader.optional_string("message"),
        message_expression=reader.optional_string("messageExpression"),
        reason=reader.optional_string("reason"),
        field_path=reader.optional_string("fieldPath"),
        optional_old_self=optional,
    )


@dataclass(frozen=True)
class _Reader:
    """A schema node's JSON with its path, for errors that say where a value is wrong."""

    data: Mapping[str, Any]
    path: str

    def at(self, *parts: str | int) -> str:
        text = self.path
        for part in parts:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
        return text

    def optional_string(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, str):
            raise SchemaError(f"{self.at(key)}: must be a string, got {_json_kind(value)}")
        return value

    def string(self, key: str) -> str:
        return self.optional_string(key) or ""

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise SchemaError(f"{self.at(key)}: must be a boolean, got {_json_kind(value)}")
        return value

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise SchemaError(f"{self.at(key)}: must be an integer, got {_json_kind(value)}")
        return value

    def number(self, key: str) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise SchemaError(f"{self.at(key)}: must be a number, got {_json_kind(value)}")
        return float(value)

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise SchemaError(f"{self.at(key)}: must be an object, got {_json_kind(value)}")
        return value

    def items(self, key: str) -> list[tuple[int, Any]]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise SchemaError(f"{self.at(key)}: must be an array, got {_json_kind(value)}")
        return list(enumerate(value))

    def strings(self, key: str) -> list[str]:
        values = [v for _, v in self.items(key)]
        if not all(isinstance(v, str) for v in values):
            raise SchemaError(f"{self.at(key)}: must be an array of strings")
        return values


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__
