"""Pruning of unknown fields and of non-nullable nulls: (schema, object) -> (pruned object, unknown paths)."""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.customresources.pruning import prune, prune_non_nullable_nulls
from kcel.k8s.schemas.schema import Schema

SPEC = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "known": {"type": "string"},
    "items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
             "properties": {"inner": {"type": "object", "properties": {"x": {"type": "string"}}}}},
    "any": {"type": "object", "additionalProperties": True},
    "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                 "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
}}}}  # fmt: skip

ROWS = [
    ({"spec": {"known": "a", "extra": 1}}, {"spec": {"known": "a"}}, ["spec.extra"]),
    ({"spec": {"items": [{"a": 1, "b": 2}, {"c": 3}]}}, {"spec": {"items": [{"a": 1}, {}]}},
     ["spec.items[0].b", "spec.items[1].c"]),
    ({"spec": {"labels": {"k": {"v": "x", "w": "y"}}}}, {"spec": {"labels": {"k": {"v": "x"}}}}, ["spec.labels.k.w"]),
    # below x-kubernetes-preserve-unknown-fields unknown fields stay, but declared ones are still pruned inside
    ({"spec": {"free": {"anything": {"deep": 1}, "inner": {"x": "a", "y": "b"}}}},
     {"spec": {"free": {"anything": {"deep": 1}, "inner": {"x": "a"}}}}, ["spec.free.inner.y"]),
    # additionalProperties: true has no schema, so object values lose all their fields (scalars stay)
    ({"spec": {"any": {"a": 1, "b": {"c": 2}}}}, {"spec": {"any": {"a": 1, "b": {}}}}, ["spec.any.b.c"]),
    # embedded resources keep apiVersion, kind and metadata; the root keeps them and does not report strays
    ({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "spec": {"x": "a", "y": 1}, "z": 2}}},
     {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "spec": {"x": "a"}}}},
     ["spec.template.spec.y", "spec.template.z"]),
    ({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a"}, "status": {}}, {"apiVersion": "v1", "kind": "K",
     "metadata": {"name": "a"}}, ["status"]),
]  # fmt: skip


@pytest.mark.parametrize(("obj", "pruned", "unknown"), ROWS)
def test_prune(obj: dict[str, Any], pruned: dict[str, Any], unknown: list[str]) -> None:
    assert prune(obj, Schema.from_json(SPEC)) == unknown
    assert obj == pruned


def test_nulls_go_where_the_schema_is_not_nullable_and_has_no_default() -> None:
    schema = Schema.from_json({"type": "object", "properties": {
        "plain": {"type": "string"}, "nullable": {"type": "string", "nullable": True},
        "defaulted": {"type": "string", "default": "x"}, "list": {"type": "array", "items": {"type": "string"}},
        "map": {"type": "object", "additionalProperties": {"type": "string"}}}})  # fmt: skip
    obj = {"plain": None, "nullable": None, "defaulted": None, "list": [None], "map": {"a": None}, "unknown": None}
    prune_non_nullable_nulls(obj, schema)
    assert obj == {"nullable": None, "defaulted": None, "list": [None], "map": {}, "unknown": None}
