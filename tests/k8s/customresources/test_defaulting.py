"""Defaulting: (schema, object) -> defaulted object, in objects, list items and maps, with pruned defaults."""

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.customresources.defaulting import default
from kcel.k8s.schemas.schema import Schema

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
    "replicas": {"type": "integer", "default": 1},
    "mode": {"type": "string", "default": "Safe"},
    "nullable": {"type": "string", "nullable": True, "default": "n"},
    "ports": {"type": "array", "items": {"type": "object", "default": {"port": 80},
              "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}},
    "limits": {"type": "object", "additionalProperties": {"type": "object", "default": {"max": 1, "junk": 2},
               "properties": {"max": {"type": "integer"}, "unit": {"type": "string", "default": "s"}}}},
}}}}  # fmt: skip

ROWS = [
    ({}, {"spec": {"replicas": 1, "mode": "Safe", "nullable": "n"}}),
    ({"spec": {"replicas": 3, "mode": None, "nullable": None}}, {"spec": {"replicas": 3, "mode": "Safe", "nullable": None}}),
    # list items: a null item takes the items default, then every item is defaulted inside
    ({"spec": {"ports": [{"port": 1}, None]}},
     {"spec": {"replicas": 1, "mode": "Safe", "nullable": "n", "ports": [{"port": 1, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}]}}),
    # map values likewise; the default itself is pruned (junk) before it is used
    ({"spec": {"limits": {"a": None, "b": {"max": 5}}}},
     {"spec": {"replicas": 1, "mode": "Safe", "nullable": "n", "limits": {"a": {"max": 1, "unit": "s"}, "b": {"max": 5, "unit": "s"}}}}),
]  # fmt: skip


@pytest.mark.parametrize(("obj", "defaulted"), ROWS)
def test_default(obj: dict[str, Any], defaulted: dict[str, Any]) -> None:
    default(obj, Schema.from_json(SCHEMA))
    assert obj == defaulted


def test_defaults_are_copies() -> None:
    schema = Schema.from_json({"type": "object", "properties": {"a": {"type": "object", "default": {"x": [1]},
                               "properties": {"x": {"type": "array", "items": {"type": "integer"}}}}}})  # fmt: skip
    first, second = {}, {}
    default(first, schema)
    first["a"]["x"].append(2)
    default(second, schema)
    assert second == {"a": {"x": [1]}}
