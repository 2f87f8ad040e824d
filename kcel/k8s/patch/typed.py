"""Structured-merge-diff's schema model, built from OpenAPI v3 schemas as kube-openapi's `schemaconv` does.

The API server types a MutatingAdmissionPolicy's ApplyConfiguration, and the object it patches, with the
sigs.k8s.io/structured-merge-diff (SMD) schema that `managedfields.NewTypeConverter(schemas, false)` derives
from the group-version's OpenAPI v3 document. Every type is an *atom*: some of a scalar kind, a list (with its
element type, relationship and keys) and a map/struct (declared fields, the type of other keys, relationship).
Named types are converted on first use and cached: the built-in definitions hold ~860 types and a merge touches
a few dozen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kcel.k8s.environment import LATEST, Version

Scalar = Literal["numeric", "string", "boolean", "untyped"]
# SMD's ElementRelationship: "" (unset) merges maps granularly like "separable"
Relationship = Literal["atomic", "separable", "associative", ""]

UNTYPED_ATOMIC = "__untyped_atomic_"
DEDUCED = "__untyped_deduced_"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"


@dataclass(frozen=True)
class TypeRef:
    """A reference to a type: a named definition or an inlined atom. `relationship` is SMD's per-reference
    override, set from `x-kubernetes-map-type` beside a `$ref`. Neither name nor atom: no type (a struct's
    unknown keys are not allowed)."""

    named: str | None = None
    inline: Atom | None = None
    relationship: Relationship | None = None

    @property
    def empty(self) -> bool:
        return self.named is None and self.inline is None

    def describe(self) -> str:
        """How SMD names the type in `schema error: no type found matching: ...`."""
        return self.named if self.named is not None else "inlined type"


@dataclass(frozen=True, eq=False)
class StructField:
    """A struct's declared field: its name, its type and its OpenAPI `default`."""

    name: str
    type: TypeRef
    default: Any = None  # the OpenAPI `default`: a missing associative-list key takes it


@dataclass(frozen=True, eq=False)
class MapType:
    """A struct (declared fields) and/or a map (`element` types the other keys)."""

    fields: Mapping[str, StructField]
    element: TypeRef
    relationship: Relationship = ""


@dataclass(frozen=True, eq=False)
class ListType:
    """SMD's List: the element type, its relationship (associative for sets and maps) and the map keys."""

    element: TypeRef
    relationship: Relationship = "atomic"
    keys: tuple[str, ...] = ()  # x-kubernetes-list-map-keys; associative without keys is a set


@dataclass(frozen=True, eq=False)
class Atom:
    """What a value of this type may be; several parts at once for untyped or deduced values."""

    scalar: Scalar | None = None
    list_type: ListType | None = None
    map_type: MapType | None = None


_UNTYPED = TypeRef(named=UNTYPED_ATOMIC)
_DEDUCED = TypeRef(named=DEDUCED)
UNTYPED_ATOMIC_ATOM = Atom("untyped", ListType(_UNTYPED, "atomic"), MapType({}, _UNTYPED, "atomic"))
DEDUCED_ATOM = Atom("untyped", ListType(_UNTYPED, "atomic"), MapType({}, _DEDUCED, "separable"))


def _type_name(spec: Mapping[str, Any]) -> str:
    """The schema's type; kubernetes-validate's JSON Schemas write nullable types as `["object", "null"]`."""
    typ = spec.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), typ[0] if typ else "")
    return typ if isinstance(typ, str) else ""


def _map_relationship(spec: Mapping[str, Any]) -> Relationship:
    map_type = spec.get("x-kubernetes-map-type")
    return "atomic" if map_type == "atomic" else "separable" if map_type == "granular" else ""


def _list_relationship(spec: Mapping[str, Any]) -> tuple[Relationship, tuple[str, ...]]:
    """x-kubernetes-list-type (default atomic), else the strategic-merge-patch strategy of older schemas."""
    list_type = spec.get("x-kubernetes-list-type")
    if list_type is not None:
        if list_type == "set":
            return "associative", ()
        if list_type == "map":
            keys = spec.get("x-kubernetes-list-map-keys")
            return "associative", tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
        return "atomic", ()
    strategy = spec.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        key = spec.get("x-kubernetes-patch-merge-key")
        return "associative", (key,) if isinstance(key, str) else ()
    return "atomic", ()


def _ref_name(spec: Mapping[str, Any]) -> str:
    """The last segment of a `$ref`, also when wrapped as `allOf: [{$ref}]` (as OpenAPI v3 documents do)."""
    ref = spec.get("$ref")
    if not isinstance(ref, str) or not ref:
        all_of = spec.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            ref = all_of[0].get("$ref")
    return ref.rpartition("/")[2] if isinstance(ref, str) else ""


def convert(spec: Mapping[str, Any], preserve_unknown: bool = False) -> Atom:
    """One schema's atom (schemaconv visitSpec/parseSchema); `x-kubernetes-preserve-unknown-fields` makes the
    objects below it accept unknown keys as deduced values."""
    if spec.get("x-kubernetes-preserve-unknown-fields") is True:
        preserve_unknown = True
    typ = _type_name(spec)
    if typ == "":
        return Atom("untyped", _list(spec, preserve_unknown), _object(spec, preserve_unknown))
    if typ == "object":
        return Atom(map_type=_object(spec, preserve_unknown))
    if typ == "array":
        return Atom(list_type=_list(spec, preserve_unknown))
    if typ in ("integer", "number"):
        return Atom("numeric")
    if typ == "boolean":
        return Atom("boolean")
    if typ == "string" and spec.get("format", "") in ("", "byte"):
        return Atom("string")
    return Atom("untyped")  # int-or-string, date-time and other formats; unknown types


def _ref(spec: Mapping[str, Any], preserve_unknown: bool) -> TypeRef:
    name = _ref_name(spec)
    if name:
        return TypeRef(named=name, relationship=_map_relationship(spec) or None)
    return TypeRef(inline=convert(spec, preserve_unknown))


def _object(spec: Mapping[str, Any], preserve_unknown: bool) -> MapType:
    properties = spec.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    fields = {
        name: StructField(name, _ref(member, preserve_unknown), member.get("default"))
        for name, member in properties.items()
        if isinstance(member, Mapping)
    }
    extra = spec.get("additionalProperties")
    if isinstance(extra, Mapping):
        element = _ref(extra, preserve_unknown)
    elif extra is True or (extra is None and (preserve_unknown or not properties)):
        element = _DEDUCED  # a free-form object, or one that keeps unknown fields
    else:
        element = TypeRef()  # properties only: other keys are "not declared in schema"
    return MapType(fields, element, _map_relationship(spec))


def _list(spec: Mapping[str, Any], preserve_unknown: bool) -> ListType:
    relationship, keys = _list_relationship(spec)
    items = spec.get("items")
    if isinstance(items, Mapping):
        element = _ref(items, preserve_unknown)
    elif items is not None:
        element = _DEDUCED  # tuple-typed items: schemaconv reports them and deduces
    else:
        element = _UNTYPED
    return ListType(element, relationship, keys)


class TypeIndex:
    """The SMD types of one set of OpenAPI definitions (name -> schema), converted lazily.

    Conversion is deterministic, so two threads racing on a name only do the work twice.
    """

    def __init__(self, definitions: Mapping[str, Mapping[str, Any]]) -> None:
        self._definitions = definitions
        self._named: dict[str, Atom | None] = {}
        self._overridden: dict[tuple[str, str], Atom | None] = {}
        self._gvks: dict[tuple[str, str, str], str] | None = None

    @property
    def definitions(self) -> Mapping[str, Mapping[str, Any]]:
        return self._definitions

    def named(self, name: str) -> Atom | None:
        """A definition's atom; None when there is none (or it is only a `$ref`, which schemaconv skips)."""
        if name in self._named:
            return self._named[name]
        if name == UNTYPED_ATOMIC:
            return UNTYPED_ATOMIC_ATOM
        if name == DEDUCED:
            return DEDUCED_ATOM
        spec = self._definitions.get(name)
        atom: Atom | None = None
        if isinstance(spec, Mapping) and not spec.get("$ref"):
            if name == QUANTITY:
                atom = Atom("untyped")
            elif name == RAW_EXTENSION:
                atom = UNTYPED_ATOMIC_ATOM
            else:
                atom = convert(spec)
        self._named[name] = atom
        return atom

    def resolve(self, ref: TypeRef) -> Atom | None:
        """SMD's Schema.Resolve: a relationship override applies to the map part, else the list part; a scalar
        cannot take one (then the type does not resolve)."""
        if ref.named is None:
            return ref.inline
        if ref.relationship is None:
            return self.named(ref.named)
        key = (ref.named, ref.relationship)
        if key not in self._overridden:
            atom = self.named(ref.named)
            if atom is not None and atom.map_type is not None:
                m = atom.map_type
                atom = Atom(atom.scalar, atom.list_type, MapType(m.fields, m.element, ref.relationship))
            elif atom is not None and atom.list_type is not None:
                lt = atom.list_type
                atom = Atom(atom.scalar, ListType(lt.element, ref.relationship, lt.keys), atom.map_type)
            else:
                atom = None
            self._overridden[key] = atom
        return self._overridden[key]

    def for_gvk(self, group: str, version: str, kind: str) -> TypeRef | None:
        """The type that `x-kubernetes-group-version-kind` names for this kind (managedfields indexModels)."""
        if self._gvks is None:
            gvks: dict[tuple[str, str, str], str] = {}
            for name, spec in self._definitions.items():
                claimed = spec.get("x-kubernetes-group-version-kind") if isinstance(spec, Mapping) else None
                for gvk in claimed if isinstance(claimed, list) else ():
                    if isinstance(gvk, Mapping) and all(isinstance(gvk.get(k), str) for k in ("group", "version")):
                        if isinstance(gvk.get("kind"), str) and gvk["kind"]:
                            gvks.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
            self._gvks = gvks
        found = self._gvks.get((group, version, kind))
        return TypeRef(named=found) if found is not None else None


@dataclass(frozen=True)
class ObjectType:
    """A kind's root type, where its names resolve, and the API server version whose SMD behaviour applies
    (1.34 took SMD v6.3, whose associative lists allow missing keys; 1.35 lets the live object hold duplicates)."""

    index: TypeIndex
    ref: TypeRef
    k8s_version: Version = LATEST

    @property
    def optional_list_keys(self) -> bool:
        return self.k8s_version >= (1, 34)

    @property
    def live_duplicates_allowed(self) -> bool:
        return self.k8s_version >= (1, 35)
