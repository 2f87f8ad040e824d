"""OpenAPI schemas as CEL types (k8s.io/apiserver `SchemaDeclType`, `DeclType`).

`schema_decl_type(schema)` gives a `DeclType`: the CEL type a rule sees for a schema node, with
the size bounds the cost estimator needs and, for objects, the declared fields under their
escaped names. Its `cel` attribute is a `CelType` whose `decl` points back here, which is how
the checker finds fields (`self.spec.replicas`) and the planner finds how to read them from JSON.
Object types are called `object` until `assign_type_name` names them as a rule's `self` type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from kcel.checker.decls import FieldAccess
from kcel.checker.types import BOOL, BYTES, DOUBLE, DURATION, DYN, INT, STRING, TIMESTAMP, CelType, list_of, map_of
from kcel.k8s import field as fe
from kcel.k8s.schemas import values
from kcel.k8s.schemas.escaping import RESERVED, escape
from kcel.k8s.schemas.schema import Schema

# k8s.io/apiserver pkg/cel/limits.go
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
MAX_DURATION_SIZE_JSON = 32
MAX_DATETIME_SIZE_JSON = 32
MIN_DURATION_SIZE_JSON = 3
JSON_DATE_SIZE = 12
MIN_DATETIME_SIZE_JSON = 21
MIN_STRING_SIZE = 2
MIN_BOOL_SIZE = 4
MIN_NUMBER_SIZE = 1
NAME_MAX_LENGTH = 253  # DNS-1123 subdomain: metadata.name


@dataclass(frozen=True, eq=False)
class DeclField:
    """An object property visible to CEL: `name` is the escaped name rules use, `key` the data key."""

    name: str
    key: str
    type: DeclType
    required: bool = False
    enum: tuple[Any, ...] | None = None
    default: Any = None

    @cached_property
    def access(self) -> FieldAccess:
        plain = values.PLAIN_KINDS.get(self.type.kind)
        return FieldAccess(
            values.field_reader(self), values.field_tester(self), values.optional_field_reader(self),
            self.key if plain else None, plain,
        )  # fmt: skip


@dataclass(frozen=True, eq=False)
class DeclType:
    """A CEL type made from a schema node, with the bounds used for cost estimation."""

    kind: str  # "object", "list", "map", or the scalar's CEL name ("string", "int", "dyn", ...)
    schema: Schema | None
    max_elements: int = 0
    min_size: int = 1  # smallest serialized size in bytes (how many can fit in a request)
    name: str = "object"  # objects only
    fields: Mapping[str, DeclField] = field(default_factory=dict)
    elem: DeclType | None = None  # lists and maps

    @cached_property
    def cel(self) -> CelType:
        """The checker's view of this type; it carries this DeclType so fields can be found."""
        if self.kind == "object":
            return CelType(self.name, kind="message", decl=self)
        assert self.elem is not None or self.kind not in ("list", "map")
        if self.kind == "list":
            return replace(list_of(self.elem.cel), decl=self)  # type: ignore[union-attr]
        if self.kind == "map":
            return replace(map_of(STRING, self.elem.cel), decl=self)  # type: ignore[union-attr]
        return replace(_SCALARS[self.kind], decl=self)

    @cached_property
    def fields_by_key(self) -> Mapping[str, DeclField]:
        """Fields by the data key they read (the unescaped property name)."""
        return {f.key: f for f in self.fields.values()}

    def field(self, name: str, keywords: bool = False) -> DeclField | None:
        """The field selected by `.name`; with `keywords` (Kubernetes 1.31+) `namespace` finds `__namespace__`."""
        found = self.fields.get(name)
        if found is None and keywords and name in RESERVED:
            found = self.fields.get(f"__{name}__")
        return found

    def field_type(self, name: str, keywords: bool = False) -> CelType | None:
        found = self.field(name, keywords)
        return found.type.cel if found is not None else None

    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None:
        """How generated code reads, tests (`has`) and optionally reads (`.?`) a field from JSON data."""
        found = self.field(name, keywords)
        return found.access if found is not None else None

    @cached_property
    def converter(self) -> Callable[[Any], Any] | None:
        """JSON data (not null) to its CEL value; None when the data is used as it is (kcel.k8s.schemas.values)."""
        return values.make_converter(self)

    @cached_property
    def equals(self) -> Callable[[Any, Any], bool]:
        """`==` with a value of this type on the left (objects compare by their schema)."""
        return values.make_equality(self)


_SCALARS = {
    "string": STRING, "bytes": BYTES, "bool": BOOL, "int": INT, "double": DOUBLE, "dyn": DYN,
    "timestamp": TIMESTAMP, "duration": DURATION,
}  # fmt: skip


def schema_decl_type(schema: Schema | None, is_resource_root: bool = False) -> DeclType | None:
    """The CEL type of a schema node, or None when the node is not visible to CEL."""
    if schema is None:
        return None
    if schema.int_or_string:
        # an int-or-string's maxLength bounds it from 1.34 (apiserver 76004fdd7)
        bounded = schema.max_length is not None and fe.api_server() >= (1, 34)
        size = _max_from_length(schema) if bounded else MAX_REQUEST_SIZE_BYTES - 2
        return DeclType("dyn", schema, size, 1)
    if is_resource_root:
        schema = with_type_and_object_meta(schema)
    if schema.type == "array":
        return _list_type(schema)
    if schema.type == "object":
        return _object_or_map_type(schema)
    if schema.type == "string":
        return _string_type(schema)
    if schema.type == "boolean":
        return DeclType("bool", schema, 0, MIN_BOOL_SIZE)
    if schema.type == "number":
        return DeclType("double", schema, 0, MIN_NUMBER_SIZE)
    if schema.type == "integer":
        return DeclType("int", schema, 0, MIN_NUMBER_SIZE)
    return None


def _list_type(schema: Schema) -> DeclType | None:
    if schema.items is None:
        return None
    items = schema_decl_type(schema.items, schema.items.embedded_resource)
    if items is None:
        return None
    max_items = _declared_or(schema.max_items, (MAX_REQUEST_SIZE_BYTES - 2) // (items.min_size + 1))
    return DeclType("list", schema, max_items, 2, elem=items)


def _object_or_map_type(schema: Schema) -> DeclType | None:
    additional = schema.additional_properties
    if isinstance(additional, Schema):
        value_type = schema_decl_type(additional, additional.embedded_resource)
        if value_type is None:
            return None
        # each entry takes at least its value, two quotes, a colon, a comma and a one-byte key
        max_properties = _declared_or(schema.max_properties, (MAX_REQUEST_SIZE_BYTES - 2) // (value_type.min_size + 6))
        return DeclType("map", schema, max_properties, 2, elem=value_type)
    fields: dict[str, DeclField] = {}
    required = set(schema.required)
    min_size = 2  # `{}`
    for key, prop in (schema.properties or {}).items():
        prop_type = schema_decl_type(prop, prop.embedded_resource)
        if prop_type is None:
            continue
        name = escape(key)
        if name is not None:
            default = prop.default if prop.has_default else None
            fields[name] = DeclField(name, key, prop_type, key in required, prop.enum, default)
        if key in required and not prop.has_default:  # defaults are filled in server-side
            min_size += len(key) + prop_type.min_size + 4
    return DeclType("object", schema, 0, min_size, fields=fields)


def _string_type(schema: Schema) -> DeclType:
    fmt = schema.format
    if fmt == "byte":
        return DeclType("bytes", schema, _declared_or(schema.max_length, MAX_REQUEST_SIZE_BYTES - 2), MIN_STRING_SIZE)
    if fmt == "duration":
        return DeclType("duration", schema, MAX_DURATION_SIZE_JSON, MIN_DURATION_SIZE_JSON)
    if fmt == "date":
        return DeclType("timestamp", schema, JSON_DATE_SIZE, JSON_DATE_SIZE)
    if fmt == "date-time":
        return DeclType("timestamp", schema, MAX_DATETIME_SIZE_JSON, MIN_DATETIME_SIZE_JSON)
    if schema.max_length is not None:
        size = _max_from_length(schema)
    elif schema.enum:
        size = max((len(v) for v in schema.enum if isinstance(v, str)), default=0)
    else:
        size = MAX_REQUEST_SIZE_BYTES - 2
    return DeclType("string", schema, size, MIN_STRING_SIZE)


def _declared_or(declared: int | None, estimate: int) -> int:
    """A declared maxItems/maxProperties/maxLength (negative counts as 0), else what fits in a request."""
    return max(declared, 0) if declared is not None else estimate


def _max_from_length(schema: Schema) -> int:
    """maxLength counts code points; a code point can take 4 bytes, and sizes are in bytes."""
    assert schema.max_length is not None
    return max(schema.max_length, 0) * 4


def with_type_and_object_meta(schema: Schema) -> Schema:
    """A resource root: `apiVersion`, `kind`, `metadata.name` and `metadata.generateName` always exist.

    Unless the schema already declares all four, `metadata` is replaced by an object with only
    `name` and `generateName` (so `self.metadata.namespace` is an undefined field), bounded by 253 and 252
    characters from 1.37 (apiextensions 1f3023483; before, plain strings, whatever the schema said).
    """
    props = schema.properties or {}
    metadata = props.get("metadata")
    meta_props = (metadata.properties if metadata is not None else None) or {}
    if (
        schema.properties is not None
        and _is(props, "kind", "string")
        and _is(props, "apiVersion", "string")
        and _is(props, "metadata", "object")
        and metadata is not None
        and metadata.properties is not None
        and _is(meta_props, "name", "string")
        and _is(meta_props, "generateName", "string")
    ):
        return schema
    string = Schema(type="string")
    capped = fe.api_server() >= (1, 37)
    new_meta = Schema(
        type="object",
        properties={
            "name": _capped_string(meta_props.get("name"), NAME_MAX_LENGTH) if capped else string,
            "generateName": _capped_string(meta_props.get("generateName"), NAME_MAX_LENGTH - 1) if capped else string,
        },
    )
    return schema.with_changes(properties={**props, "kind": string, "apiVersion": string, "metadata": new_meta})


def _is(props: Mapping[str, Schema], key: str, type_name: str) -> bool:
    return key in props and props[key].type == type_name


def _capped_string(existing: Schema | None, max_length: int) -> Schema:
    if existing is not None and existing.max_length is not None and existing.max_length < max_length:
        max_length = existing.max_length
    return Schema(type="string", max_length=max_length)


def assign_type_name(decl: DeclType, name: str) -> DeclType:
    """Name an object type (and the objects inside it) as Kubernetes does for a rule's `self`.

    Fields become `<name>.<field>`, list items `<name>.@idx`, map values `<name>.@elem`.
    Non-object types without objects inside come back unchanged.
    """
    # Built with the constructors, not dataclasses.replace: this runs for every node of a rule's type at each
    # compilation, and replace's introspection was most of a large CRD's check.
    if decl.kind == "object":
        if decl.name != "object":
            name = decl.name
        fields = {
            n: DeclField(name=f.name, key=f.key, type=assign_type_name(f.type, f"{name}.{n}"), required=f.required,
                         enum=f.enum, default=f.default)
            for n, f in decl.fields.items()
        }  # fmt: skip
        return _renamed(decl, name=name, fields=fields, elem=decl.elem)
    if decl.elem is not None:
        suffix = "@idx" if decl.kind == "list" else "@elem"
        elem = assign_type_name(decl.elem, f"{name}.{suffix}")
        return decl if elem is decl.elem else _renamed(decl, name=decl.name, fields=decl.fields, elem=elem)
    return decl


def _renamed(decl: DeclType, name: str, fields: Mapping[str, DeclField], elem: DeclType | None) -> DeclType:
    return DeclType(kind=decl.kind, schema=decl.schema, max_elements=decl.max_elements, min_size=decl.min_size,
                    name=name, fields=fields, elem=elem)  # fmt: skip


def object_type_names(decl: DeclType) -> list[str]:
    """Every object type name reachable from `decl` (upstream `FieldTypeMap`, objects only)."""
    found: list[str] = []
    if decl.kind == "object":
        found.append(decl.name)
        for f in decl.fields.values():
            found.extend(object_type_names(f.type))
    elif decl.elem is not None:
        found.extend(object_type_names(decl.elem))
    return found
