"""Structural-schema invariants: (schema) -> the API server's CRD errors."""

from __future__ import annotations

# ruff: noqa: E501  (golden rows: one case per line, expected texts verbatim)
from typing import Any

import pytest

from kcel.k8s import field as fe
from kcel.k8s.schemas.schema import Schema
from kcel.k8s.schemas.structural import structural_errors

ROWS = [
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"x-kubernetes-int-or-string": True}, "c": {"x-kubernetes-preserve-unknown-fields": True}}}, []),
    ({"type": "array"}, ["s.items: Required value: must be specified", "s.type: Invalid value: \"array\": must be object at the root"]),
    ({"type": "object", "properties": {"l": {"type": "array", "items": {}}}}, ["s.properties[l].items.type: Required value: must not be empty for specified array items"]),
    ({"type": "object", "additionalProperties": {"type": "string"}}, ["s.additionalProperties: Forbidden: must not be used at the root"]),
    ({"type": "object", "properties": {"e": {"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}}, ["s.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true"]),
    ({"type": "object", "properties": {"v": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}, []),
    ({"type": "object", "properties": {"v": {"type": "string", "anyOf": [{"type": "string", "nullable": True}]}}},
     ["s.properties[v].anyOf[0].nullable: Forbidden: must be false to be structural", "s.properties[v].anyOf[0].type: Forbidden: must be empty to be structural"]),
    ({"type": "object", "properties": {"p": {"type": "string", "pattern": "("}}}, ["s.properties[p].pattern: Invalid value: \"(\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(`"]),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "expected"), ROWS)
def test_structural_errors(schema: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in structural_errors(Schema.from_json(schema), fe.Path.new("s"))] == expected
