"""A Go struct's fields as a schema's properties (controller-gen's structToSchema): the json tag names each
property (`-` leaves it out, `inline` or an embedded field merges it through `allOf`), and a field is required
unless `omitempty`/`omitzero`, an optional marker or the package's `+kubebuilder:validation:Optional` says not.

Ported from kubernetes-sigs/controller-tools pkg/crd/schema.go (Apache License 2.0, Copyright 2019 The
Kubernetes Authors).
"""

from __future__ import annotations

from typing import Any, Protocol

from kcel.k8s.gotypes.markers import Markers
from kcel.k8s.gotypes.syntax import GoFile, TypeExpr


class StructContext(Protocol):
    """What a struct's schema needs of the type being made (kcel.k8s.gotypes.schemas' type context)."""

    @property
    def go(self) -> GoFile: ...

    @property
    def type_name(self) -> str: ...

    def error(self, message: str, offset: int) -> None: ...

    def field_markers(self, index: int) -> Markers: ...

    def field_doc(self, index: int) -> str: ...

    def default_optional(self) -> bool: ...

    def type_schema(self, expr: TypeExpr, doc: str, markers: Markers, top: bool = False) -> dict[str, Any]: ...

    def apply(self, markers: Markers, schema: dict[str, Any], offset: int, field: bool = False) -> None: ...


ONE_OF = ("kubebuilder:validation:ExactlyOneOf", "kubebuilder:validation:AtMostOneOf",
          "kubebuilder:validation:AtLeastOneOf")  # fmt: skip


def struct_tag(tag: str, key: str) -> str | None:
    """reflect.StructTag.Lookup: the value of `key:"value"` in a struct tag, None when absent or malformed."""
    i = 0
    while i < len(tag):
        while i < len(tag) and tag[i] == " ":
            i += 1
        start = i
        while i < len(tag) and tag[i] > " " and tag[i] != ":" and tag[i] != '"' and tag[i] != "\x7f":
            i += 1
        if i == start or i + 1 >= len(tag) or tag[i] != ":" or tag[i + 1] != '"':
            return None
        name = tag[start:i]
        i += 1
        value_start = i
        i += 1
        while i < len(tag) and tag[i] != '"':
            i += 2 if tag[i] == "\\" else 1
        if i >= len(tag):
            return None
        quoted = tag[value_start : i + 1]
        i += 1
        if name == key:
            from kcel.k8s.gotypes.syntax import go_unquote

            return go_unquote(quoted)
    return None


def _one_of_fields(type_markers: Markers) -> tuple[set[str], str]:
    fields: set[str] = set()
    for name in ONE_OF:
        for marker in type_markers.values.get(name, ()):
            nested = [f for f in marker.value or [] if "." in f]
            if nested:
                return set(), f"{name}: cannot reference nested fields: {','.join(nested)}"
            fields.update(marker.value or [])
    return fields, ""


def struct_schema(ctx: StructContext, expr: TypeExpr, type_markers: Markers) -> dict[str, Any]:
    props: dict[str, Any] = {"type": "object", "properties": {}}
    one_of, problem = _one_of_fields(type_markers)
    if problem:
        ctx.error(problem, expr.start)
        return props
    required: list[str] = []
    immutable: list[str] = []
    index = -1
    for field in expr.fields:
        for name in field.names or ("",):
            index += 1
            json_tag = struct_tag(field.tag, "json")
            if json_tag is None:
                ctx.error(f'encountered struct field "{name}" without JSON tag in type "{ctx.type_name}"', field.start)
                continue
            options = json_tag.split(",")
            if options == ["-"]:
                continue
            inline = "inline" in options[1:]
            omit_empty = any(o in ("omitempty", "omitzero") for o in options[1:])
            field_name = options[0]
            inline = inline or field_name == ""
            markers = ctx.field_markers(index)
            if _required(markers, ctx.default_optional(), inline, omit_empty):
                if field_name in one_of:
                    why = "cannot be marked as required" if _marked_required(markers) else \
                          "must have omitempty or omitzero tag"  # fmt: skip
                    ctx.error(f"field {field_name} is part of OneOf constraint and {why}", expr.start)
                    return props
                required.append(field_name)
            if markers.has("kubebuilder:validation:Schemaless"):
                schema: dict[str, Any] = {}
            else:
                schema = ctx.type_schema(field.type, "", Markers({}))
            doc = ctx.field_doc(index)
            if doc:
                schema["description"] = doc
            else:
                schema.pop("description", None)
            ctx.apply(markers, schema, field.start, field=True)
            if inline:
                props.setdefault("allOf", []).append(schema)
                continue
            if markers.has("k8s:immutable"):
                immutable.append(field_name)
            props["properties"][field_name] = schema
    if required:
        props["required"] = sorted(required)
    for field_name in immutable:
        if field_name not in required:
            props.setdefault("x-kubernetes-validations", []).append(
                {"rule": f"!has(oldSelf.{field_name}) || has(self.{field_name})",
                 "message": f"field {field_name} is immutable once set"})  # fmt: skip
    return props


def _marked_required(markers: Markers) -> bool:
    return any(markers.has(n) for n in ("kubebuilder:validation:Required", "required", "k8s:required"))


def _required(markers: Markers, optional_by_default: bool, inline: bool, omit_empty: bool) -> bool:
    """Whether a field is required, by the first rule that decides (structToSchema's switch)."""
    if markers.has("kubebuilder:validation:Optional"):
        return False
    if markers.has("kubebuilder:validation:Required"):
        return True
    if markers.has("optional") or markers.has("k8s:optional"):
        return False
    if markers.has("required") or markers.has("k8s:required"):
        return True
    return not optional_by_default and not inline and not omit_empty
