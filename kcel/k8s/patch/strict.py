"""Strict decoding of a patched built-in object: the fields its Go type does not have.

The API server decodes a JSON Patch's result into the kind's Go struct with a strict serializer
(mutating/patch/json_patch.go: `json.SerializerOptions{Strict: true}`); a field the struct lacks is
`strict decoding error: unknown field "spec.template.spec.containers[1].ports[0].containerPortZ"`, all of
them in one message. The struct is known here by its OpenAPI schema: declared properties, and maps
(`additionalProperties`) that take any key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kcel.k8s.patch.typed import ObjectType, TypeRef


def unknown_fields(root: ObjectType, obj: Mapping[str, Any]) -> list[str]:
    """The paths of the fields of `obj` its type does not declare, in the order of the patched document."""
    return list(_walk(root, root.ref, obj, ""))


def strict_decoding_error(fields: list[str]) -> str:
    """sigs.k8s.io/json's strict error, as runtime.NewStrictDecodingError words it."""
    return "strict decoding error: " + ", ".join(f'unknown field "{path}"' for path in fields)


def _walk(root: ObjectType, ref: TypeRef, value: Any, path: str) -> Iterator[str]:
    atom = root.index.resolve(ref)
    if atom is None or atom.scalar == "untyped":  # untyped, raw, int-or-string: anything decodes
        return
    if isinstance(value, Mapping) and atom.map_type is not None:
        struct = atom.map_type
        for key in sorted(value):  # json-patch writes each object it changed back as a Go map: keys sorted
            item, field = value[key], struct.fields.get(key)
            inner = f"{path}.{key}" if path else str(key)
            if field is not None:
                yield from _walk(root, field.type, item, inner)
            elif not struct.element.empty:  # a map: any key, its values typed by the element
                yield from _walk(root, struct.element, item, inner)
            else:
                yield inner
    elif isinstance(value, list) and atom.list_type is not None:
        for i, item in enumerate(value):
            yield from _walk(root, atom.list_type.element, item, f"{path}[{i}]")
