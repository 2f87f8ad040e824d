"""What `kcel validate` adds to the API server's strict decoding error: the field of each problem it lists, and for
an unknown field the declared one it is likely a misspelling of (`did you mean maxReplicas?`).

The API server answers a custom resource with unknown or duplicate fields under strict field validation with that
error alone (apiextensions-apiserver's schemaCoercingDecoder makes it, k8s.io/apiserver's create and update
handlers return it before any validation): the schema and CEL errors it would report next are found by validating
again as `--validate warn` does, and shown apart from its answer.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from kcel.k8s.customresources.objectmeta import OBJECT_META
from kcel.k8s.schemas.schema import Schema

STRICT_DECODING = "strict decoding error: "
_PROBLEM = re.compile(r'(unknown|duplicate) field "((?:[^"\\]|\\.)*)"')
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_LIKENESS = 0.6  # difflib's ratio: `maxReplica` for `maxReplicas`, `imag` for `image`, not `mode` for `name`


def decoding_problems(message: str) -> list[tuple[str, str]]:
    """(field, problem) of each problem a strict decoding error lists, or of the one a `--validate warn` warning
    is: `("spec.maxReplica", 'unknown field "spec.maxReplica"')`; none for another message."""
    _, found, listed = message.partition(STRICT_DECODING)
    if not found:
        whole = _PROBLEM.fullmatch(message)
        return [] if whole is None else [(whole[2].replace('\\"', '"'), whole[0])]
    return [(match[2].replace('\\"', '"'), match[0]) for match in _PROBLEM.finditer(listed)]


def field_hint(schema: Schema | None, field: str) -> str:
    """`did you mean spec.maxReplicas?` when the last name of an unknown `field` is close to one declared beside
    it (in the CRD's schema, or ObjectMeta's under `metadata`); empty otherwise."""
    from kcel.annotations import field_elements  # (imported only for an object that has such a field: it is not cheap)

    elements = field_elements(field)
    if not elements or not elements[-1][0]:
        return ""
    *parents, (name, _) = elements
    known = _names_at(schema, [element for element, _ in parents], [index for _, index in parents])
    by_lower = {candidate.lower(): candidate for candidate in known if candidate != name}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=_LIKENESS)
    if not close:
        return ""
    prefix = field[: len(field) - len(name)]
    return f"did you mean {prefix}{by_lower[close[0]]}?"


def _names_at(schema: Schema | None, names: list[str], indexes: list[str]) -> list[str]:
    """The field names declared where the path `names`/`indexes` leads (a name, or an index when the name is
    empty)."""
    if names[:1] == ["metadata"]:
        fields: tuple[Any, ...] = OBJECT_META
        for name in (n for n in names[1:] if n):  # a list's index keeps its items' fields
            found = next((f for f in fields if f.name == name), None)
            fields = found.struct if found is not None else ()
        return [f.name for f in fields]
    node = schema
    for name, index in zip(names, indexes, strict=True):
        if node is None:
            return []
        node = _child(node, name) if name else _item(node, index)
    if node is None or node.properties is None:
        return list(_ROOT_FIELDS) if not names and node is None else []
    return [*node.properties, *(_ROOT_FIELDS if not names else ())]


def _child(node: Schema, name: str) -> Schema | None:
    if node.properties is not None and name in node.properties:
        return node.properties[name]
    return node.additional_properties if isinstance(node.additional_properties, Schema) else None


def _item(node: Schema, index: str) -> Schema | None:
    if node.items is not None:
        return node.items
    return _child(node, index)
