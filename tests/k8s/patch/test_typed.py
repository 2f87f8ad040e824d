"""OpenAPI schemas to structured-merge-diff types, as kube-openapi's schemaconv (openapi.go, smd.go) converts them.

Each case pins one conversion rule: references (plain and `allOf`-wrapped, with a map-type override), list and
map relationships, scalar kinds and formats, untyped and deduced types, preserve-unknown-fields, additional
properties, the hard-coded Quantity and RawExtension, and the GVK index.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kcel.k8s.patch.typed import (
    DEDUCED,
    DEDUCED_ATOM,
    UNTYPED_ATOMIC,
    UNTYPED_ATOMIC_ATOM,
    Atom,
    MapType,
    ObjectType,
    TypeIndex,
    TypeRef,
    convert,
)


class Recording(Mapping[str, Mapping[str, Any]]):
    """Definitions that remember which names were looked up."""

    def __init__(self, definitions: dict[str, Mapping[str, Any]]) -> None:
        self.definitions = definitions
        self.looked_up: list[str] = []

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        self.looked_up.append(name)
        return self.definitions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.definitions)

    def __len__(self) -> int:
        return len(self.definitions)


def struct(atom: Atom | None) -> MapType:
    assert atom is not None and atom.map_type is not None
    return atom.map_type


def field_type(index: TypeIndex, name: str, field: str) -> Atom:
    ref = struct(index.named(name)).fields[field].type
    atom = index.resolve(ref)
    assert atom is not None
    return atom


DEFS: dict[str, Mapping[str, Any]] = {
    "a.Thing": {
        "type": "object",
        "properties": {
            "spec": {"$ref": "#/components/schemas/a.Spec"},
            "wrapped": {"allOf": [{"$ref": "#/components/schemas/a.Spec"}], "default": {}},
            "atomicRef": {"$ref": "#/$defs/a.Spec", "x-kubernetes-map-type": "atomic"},
        },
        "x-kubernetes-group-version-kind": [{"group": "a", "version": "v1", "kind": "Thing"}],
    },
    "a.Spec": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "a.Alias": {"$ref": "#/components/schemas/a.Spec"},
    "a.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
}


def test_named_types_are_converted_on_demand_and_cached() -> None:
    definitions = Recording(dict(DEFS))
    index = TypeIndex(definitions)
    first = index.named("a.Thing")
    assert definitions.looked_up == ["a.Thing"]  # a.Spec is only named, not converted
    assert index.named("a.Thing") is first
    assert definitions.looked_up == ["a.Thing"]
    index.resolve(struct(first).fields["spec"].type)
    assert definitions.looked_up == ["a.Thing", "a.Spec"]
    assert "a.Unused" not in definitions.looked_up


def test_refs_plain_and_allof_wrapped_name_the_last_segment() -> None:
    fields = struct(TypeIndex(DEFS).named("a.Thing")).fields
    assert fields["spec"].type == TypeRef(named="a.Spec")
    assert fields["wrapped"].type == TypeRef(named="a.Spec")
    assert fields["wrapped"].default == {}


def test_map_type_beside_a_ref_overrides_the_named_maps_relationship() -> None:
    index = TypeIndex(DEFS)
    assert struct(index.named("a.Thing")).fields["atomicRef"].type == TypeRef(named="a.Spec", relationship="atomic")
    assert field_type(index, "a.Thing", "atomicRef").map_type is not None
    assert struct(field_type(index, "a.Thing", "atomicRef")).relationship == "atomic"
    assert struct(field_type(index, "a.Thing", "spec")).relationship == ""  # the named type itself is untouched


def test_override_on_a_list_applies_to_the_list_and_on_a_scalar_does_not_resolve() -> None:
    index = TypeIndex(
        {"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}, "s": {"type": "string"}}
    )
    listed = index.resolve(TypeRef(named="l", relationship="atomic"))
    assert listed is not None and listed.list_type is not None and listed.list_type.relationship == "atomic"
    assert index.resolve(TypeRef(named="s", relationship="atomic")) is None


def test_unknown_names_and_top_level_refs_do_not_resolve() -> None:
    index = TypeIndex(DEFS)
    assert index.named("a.Alias") is None  # schemaconv skips definitions that are only a $ref
    assert index.named("nowhere") is None
    assert index.resolve(TypeRef(named="nowhere")) is None


@pytest.mark.parametrize(
    ("spec", "relationship", "keys"),
    [
        ({"type": "array", "items": {"type": "string"}}, "atomic", ()),
        ({"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}}, "atomic", ()),
        ({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}, "associative", ()),
        (
            {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"], "items": {}},
            "associative",
            ("a", "b"),
        ),
        (
            {"type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
            "associative",
            ("name",),
        ),
        ({"type": "array", "x-kubernetes-patch-strategy": "merge,retainKeys"}, "associative", ()),
        ({"type": "array", "x-kubernetes-patch-strategy": "retainKeys"}, "atomic", ()),
        (
            {"type": "array", "x-kubernetes-list-type": "atomic", "x-kubernetes-patch-strategy": "merge"},
            "atomic",
            (),
        ),
    ],
)
def test_list_relationships(spec: dict[str, Any], relationship: str, keys: tuple[str, ...]) -> None:
    listed = convert(spec).list_type
    assert listed is not None
    assert (listed.relationship, listed.keys) == (relationship, keys)


@pytest.mark.parametrize(
    ("extension", "relationship"),
    [({}, ""), ({"x-kubernetes-map-type": "atomic"}, "atomic"), ({"x-kubernetes-map-type": "granular"}, "separable")],
)
def test_map_relationships(extension: dict[str, str], relationship: str) -> None:
    assert struct(convert({"type": "object", **extension})).relationship == relationship


@pytest.mark.parametrize(
    ("spec", "scalar"),
    [
        ({"type": "integer", "format": "int32"}, "numeric"),
        ({"type": "number"}, "numeric"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "string"}, "string"),
        ({"type": "string", "format": "byte"}, "string"),
        ({"type": "string", "format": "int-or-string"}, "untyped"),
        ({"type": "string", "format": "date-time"}, "untyped"),
        ({"type": ["integer", "null"]}, "numeric"),  # kubernetes-validate's nullable types
        ({"type": "nonsense"}, "untyped"),
    ],
)
def test_scalars(spec: dict[str, Any], scalar: str) -> None:
    atom = convert(spec)
    assert (atom.scalar, atom.list_type, atom.map_type) == (scalar, None, None)


def test_no_type_is_untyped_list_and_map_together() -> None:
    atom = convert({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert atom.scalar == "untyped"
    assert atom.list_type is not None and atom.list_type.element == TypeRef(named=UNTYPED_ATOMIC)
    assert atom.list_type.relationship == "atomic"
    assert struct(atom).element == TypeRef(named=DEDUCED)


def test_additional_properties() -> None:
    strict = struct(convert({"type": "object", "properties": {"a": {"type": "string"}}}))
    assert strict.element.empty  # properties only: other keys are not declared
    free = struct(convert({"type": "object"}))
    assert free.element == TypeRef(named=DEDUCED)
    typed_values = struct(convert({"type": "object", "additionalProperties": {"type": "string"}}))
    assert typed_values.element.inline is not None and typed_values.element.inline.scalar == "string"
    allowed = struct(convert({"type": "object", "properties": {"a": {}}, "additionalProperties": True}))
    assert allowed.element == TypeRef(named=DEDUCED)
    refused = struct(convert({"type": "object", "additionalProperties": False}))
    assert refused.element.empty


def test_preserve_unknown_fields_is_inherited_by_inline_objects_only() -> None:
    index = TypeIndex(
        {
            "r": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {
                    "inner": {"type": "object", "properties": {"a": {"type": "string"}}},
                    "named": {"$ref": "#/components/schemas/n"},
                },
            },
            "n": {"type": "object", "properties": {"a": {"type": "string"}}},
        }
    )
    root = struct(index.named("r"))
    assert root.element == TypeRef(named=DEDUCED)
    assert struct(field_type(index, "r", "inner")).element == TypeRef(named=DEDUCED)
    assert struct(field_type(index, "r", "named")).element.empty  # named types convert on their own


def test_items_missing_or_tuple_typed() -> None:
    no_items = convert({"type": "array"}).list_type
    assert no_items is not None and no_items.element == TypeRef(named=UNTYPED_ATOMIC)
    tuple_items = convert({"type": "array", "items": [{"type": "string"}]}).list_type
    assert tuple_items is not None and tuple_items.element == TypeRef(named=DEDUCED)


def test_quantity_raw_extension_and_the_common_types() -> None:
    index = TypeIndex(
        {
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
        }
    )
    quantity = index.named("io.k8s.apimachinery.pkg.api.resource.Quantity")
    assert quantity is not None and (quantity.scalar, quantity.list_type, quantity.map_type) == ("untyped", None, None)
    assert index.named("io.k8s.apimachinery.pkg.runtime.RawExtension") is UNTYPED_ATOMIC_ATOM
    assert index.named(DEDUCED) is DEDUCED_ATOM
    assert struct(DEDUCED_ATOM).relationship == "separable" and struct(UNTYPED_ATOMIC_ATOM).relationship == "atomic"


def test_for_gvk() -> None:
    index = TypeIndex(
        {
            **DEFS,
            "core.Pod": {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Pod"}],
            },
            "shared.Options": {
                "type": "object",
                "x-kubernetes-group-version-kind": [
                    {"group": "", "version": "v1", "kind": "Options"},
                    {"group": "b", "version": "v2", "kind": "Options"},
                ],
            },
        }
    )
    assert index.for_gvk("a", "v1", "Thing") == TypeRef(named="a.Thing")
    assert index.for_gvk("", "v1", "Pod") == TypeRef(named="core.Pod")
    assert index.for_gvk("b", "v2", "Options") == TypeRef(named="shared.Options")
    assert index.for_gvk("a", "v2", "Thing") is None
    assert index.for_gvk("a", "v1", "Spec") is None


@pytest.mark.parametrize(
    ("version", "optional_keys", "duplicates"), [((1, 32), False, False), ((1, 34), True, False), ((1, 35), True, True)]
)
def test_object_type_carries_the_servers_smd_behaviour(
    version: tuple[int, int], optional_keys: bool, duplicates: bool
) -> None:
    root = ObjectType(TypeIndex(DEFS), TypeRef(named="a.Thing"), version)
    assert (root.optional_list_keys, root.live_duplicates_allowed) == (optional_keys, duplicates)
