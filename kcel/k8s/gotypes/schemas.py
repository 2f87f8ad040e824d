"""Go types as OpenAPI v3 schemas, before flattening, as controller-gen's schema.go and known_types.go make
them: a named type is a `$ref` to its own schema, a struct's fields are properties (json tags, `inline`,
`omitempty`, required by default), markers apply by priority, and a few apimachinery types have fixed schemas.

Ported from kubernetes-sigs/controller-tools pkg/crd/schema.go, known_types.go and markers/*.go (Apache License
2.0, Copyright 2019 The Kubernetes Authors). Schemas are dicts in their JSON spelling.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcel.k8s.gotypes.docs import description
from kcel.k8s.gotypes.fields import struct_schema
from kcel.k8s.gotypes.markers import FIELD, PACKAGE, TYPE, MarkerError, Markers, RawMarker, parsed
from kcel.k8s.gotypes.options import GenerationOptions
from kcel.k8s.gotypes.packages import Declared, Package, import_package
from kcel.k8s.gotypes.schemamarkers import apply_markers
from kcel.k8s.gotypes.syntax import GoFile, TypeExpr

METAV1 = "k8s.io/apimachinery/pkg/apis/meta/v1"
BASIC = {"bool": ("boolean", ""), "string": ("string", ""), "int": ("integer", ""), "int8": ("integer", ""),
         "int16": ("integer", ""), "int32": ("integer", "int32"), "int64": ("integer", "int64"),
         "uint": ("integer", ""), "uint8": ("integer", ""), "byte": ("integer", ""), "uint16": ("integer", ""),
         "uint32": ("integer", "int32"), "uint64": ("integer", "int64"), "uintptr": ("integer", ""),
         "rune": ("integer", "int32"), "float32": ("number", ""), "float64": ("number", "")}  # fmt: skip
_QUANTITY = ("^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)"
             "|(\\.[0-9]+))))?$")  # fmt: skip
_INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
# known_types.go: packages whose types have fixed schemas; `True`: the package's other types are read from source
KNOWN: dict[str, tuple[dict[str, dict[str, Any]], bool]] = {
    METAV1: ({"ObjectMeta": {"type": "object"}, "Time": {"type": "string", "format": "date-time"},
              "MicroTime": {"type": "string", "format": "date-time"}, "Duration": {"type": "string"},
              "Fields": {"type": "object", "additionalProperties": True}}, True),
    "k8s.io/apimachinery/pkg/api/resource": ({"Quantity": {**_INT_OR_STRING, "pattern": _QUANTITY}}, False),
    "k8s.io/apimachinery/pkg/runtime": ({"RawExtension": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}, True),
    "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured": ({"Unstructured": {"type": "object"}}, True),
    "k8s.io/apimachinery/pkg/util/intstr": ({"IntOrString": dict(_INT_OR_STRING)}, False),
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1": (
        {"JSON": {"x-kubernetes-preserve-unknown-fields": True}}, True),
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1": (
        {"JSON": {"x-kubernetes-preserve-unknown-fields": True}}, True),
}  # fmt: skip
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
# known_types.go's ObjectMetaPackages: an embedded ObjectMeta's schema under crd:generateEmbeddedObjectMeta=true
EMBEDDED_OBJECT_META = {"type": "object", "properties": {
    "name": {"type": "string"}, "namespace": {"type": "string"}, "annotations": _STRINGS, "labels": _STRINGS,
    "finalizers": {"type": "array", "items": {"type": "string"}}}}  # fmt: skip


@dataclass(frozen=True)
class GoProblem:
    """An error (controller-gen stops at it) or a warning (kcel's: a type it could not find) at a place in Go."""

    severity: str
    message: str
    file: str
    line: int
    column: int


@dataclass(frozen=True)
class TypeRef:
    """A named type: its package's import path and its name (controller-gen's TypeIdent)."""

    package: str
    name: str

    def link(self, local: str) -> str:
        """The `$ref` to it from a schema in the package `local` (TypeRefLink)."""
        if self.package == local:
            return "#/definitions/" + self.name
        return "#/definitions/" + self.package.replace("/", "~1") + "~0" + self.name


class Schemas:
    """The unflattened schema of each type asked for, read from its package on first use (Parser.NeedSchemaFor),
    with the problems found on the way."""

    def __init__(self, sources: Mapping[Path, str] | None = None, options: GenerationOptions | None = None) -> None:
        self.sources = sources  # unsaved texts of Go files, read instead of the files
        self.options = options or GenerationOptions()
        self.packages: dict[str, Package | None] = {}
        self.schemata: dict[TypeRef, dict[str, Any]] = {}
        self.problems: list[GoProblem] = []
        self._reported: set[tuple[str, str, int]] = set()
        self._markers: dict[tuple[str, str, int], Markers] = {}

    # -- packages and markers ---------------------------------------------------------------------------------

    def add(self, package: Package) -> None:
        self.packages.setdefault(package.path, package)

    def package(self, path: str, importer: Package) -> Package | None:
        if path not in self.packages:
            self.packages[path] = import_package(path, importer, self.sources)
        return self.packages[path]

    def parse(self, raws: tuple[RawMarker, ...], target: str, go: GoFile) -> Markers:
        key = (go.path, target, raws[0].start if raws else -1)
        if key not in self._markers:
            errors: list[MarkerError] = []
            self._markers[key] = parsed(raws, target, errors)
            for error in errors:
                self.error(error.message, go, error.raw.start)
        return self._markers[key]

    def package_markers(self, package: Package) -> Markers:
        raws = tuple(raw for found in package.markers for raw in found.package)
        return self.parse(raws, PACKAGE, package.files[0]) if raws else Markers({})

    def type_markers(self, declared: Declared) -> Markers:
        return self.parse(declared.markers.types.get(declared.spec.name, ()), TYPE, declared.file)

    def error(self, message: str, go: GoFile, offset: int) -> None:
        self._problem("error", message, go, offset)

    def warning(self, message: str, go: GoFile, offset: int) -> None:
        self._problem("warning", message, go, offset)

    def _problem(self, severity: str, message: str, go: GoFile, offset: int) -> None:
        key = (message, go.path, offset)
        if key not in self._reported:
            self._reported.add(key)
            self.problems.append(GoProblem(severity, message, go.path, go.line_of(offset), go.column_of(offset)))

    # -- types --------------------------------------------------------------------------------------------------

    def schema_of(self, ref: TypeRef, importer: Package | None = None) -> dict[str, Any] | None:
        """The unflattened schema of a named type (None when its package or the type cannot be found)."""
        if ref in self.schemata:
            return self.schemata[ref]
        known = KNOWN.get(ref.package)
        if ref == TypeRef(METAV1, "ObjectMeta") and self.options.embedded_object_meta:
            self.schemata[ref] = copy.deepcopy(EMBEDDED_OBJECT_META)
            return self.schemata[ref]
        if known is not None and ref.name in known[0]:
            self.schemata[ref] = dict(known[0][ref.name])
            return self.schemata[ref]
        package = self.packages.get(ref.package)
        if package is None or (known is not None and not known[1]):
            return None
        declared = package.types.get(ref.name)
        if declared is None:
            return None
        self.schemata[ref] = {}  # a type that refers to itself finds this (NeedSchemaFor)
        self.schemata[ref] = _TypeContext(self, package, declared).info_schema()
        return self.schemata[ref]


class _TypeContext:
    """One named type's schema being made (schemaContext with its TypeInfo)."""

    def __init__(self, schemas: Schemas, package: Package, declared: Declared) -> None:
        self.schemas, self.package, self.declared, self.go = schemas, package, declared, declared.file
        self.imports = package.imports_of(declared.file)

    def info_schema(self) -> dict[str, Any]:
        """infoToSchema: a type with MarshalJSON keeps only what its markers say when they set a type; one with
        MarshalText is a string."""
        spec, markers = self.declared.spec, self.schemas.type_markers(self.declared)
        methods = {name for receiver, name in self.go_methods() if receiver == spec.name}
        if "MarshalJSON" in methods:
            schema: dict[str, Any] = {}
            self.apply(markers, schema, spec.start)
            if schema.get("type"):
                return schema
        elif "MarshalText" in methods:
            schema = {"type": "string"}
            self.apply(markers, schema, spec.start)
            if schema.get("type") != "string":
                self.schemas.error(f'"{spec.name}" implements encoding.TextMarshaler but schema type is not string: '
                                   f'"{schema.get("type", "")}"', self.go, spec.name_start)  # fmt: skip
            return schema
        doc = self.declared.markers.type_docs.get(spec.name)
        return self.type_schema(spec.type, description(doc), markers, top=True)

    def go_methods(self) -> set[tuple[str, str]]:
        return {m for go in self.package.files for m in go.methods}

    def apply(self, markers: Markers, schema: dict[str, Any], offset: int, field: bool = False) -> None:
        for message in apply_markers(markers, schema, None if field else self.enum_values, self.go.path):
            self.schemas.error(message, self.go, offset)

    def enum_values(self) -> list[str]:
        """The string constants of this type in its package (`+k8s:enum`)."""
        name = self.declared.spec.name
        return [value for go in self.package.files for _, typed, value in go.constants if typed == name]

    def type_schema(self, expr: TypeExpr, doc: str, markers: Markers, top: bool = False) -> dict[str, Any]:
        """typeToSchema: the schema of a type expression, with the description and markers of its field or type."""
        kind = expr.kind
        if kind == "name":
            schema = self.local_named(expr)
        elif kind == "qualified":
            schema = self.qualified(expr)
        elif kind in ("slice", "array"):
            schema = self.array(expr)
        elif kind == "map":
            schema = self.map(expr)
        elif kind == "pointer":
            assert expr.elem is not None
            schema = self.type_schema(expr.elem, "", Markers({}))
        elif kind == "struct":
            if not top:
                self.schemas.error("inline struct types are not supported, use a named type instead", self.go,
                                   expr.start)  # fmt: skip
                return {"type": "object"}
            schema = self.struct(expr, markers)
        elif kind == "interface":
            self.schemas.error("interface type is not supported in CRD schemas; consider using an explicit type or "
                               "apiextensionsv1.JSON instead", self.go, expr.start)  # fmt: skip
            return {}
        else:
            self.schemas.error(f"unsupported type {expr.text}", self.go, expr.start)
            return {}
        if doc:
            schema["description"] = doc
        else:
            schema.pop("description", None)
        self.apply(markers, schema, expr.start)
        return schema

    def local_named(self, expr: TypeExpr) -> dict[str, Any]:
        """localNamedToSchema: a built-in type, or a `$ref` to a type of this package (with the type and format
        of one whose underlying type is built in)."""
        declared = self.package.types.get(expr.name)
        if declared is None:
            if expr.name in BASIC:
                type_name, format_name = BASIC[expr.name]
                if type_name == "number" and not self.schemas.options.allow_dangerous_types:
                    self.schemas.error("found float, the usage of which is highly discouraged, as support for them "
                                       "varies across languages. Please consider serializing your float as string "
                                       "instead. If you are really sure you want to use them, re-run with "
                                       "crd:allowDangerousTypes=true", self.go, expr.start)  # fmt: skip
                    return {}
                return _basic(type_name, format_name)
            if expr.name == "any":
                return self.type_schema(TypeExpr("interface", expr.start, expr.text), "", Markers({}))
            self.schemas.error(f"unknown type {expr.name}", self.go, expr.start)
            return {}
        spec = declared.spec
        if spec.alias:  # the alias's right-hand side, read in the alias's own file (its imports)
            target, context = spec.type, _TypeContext(self.schemas, self.package, declared)
            if target.kind == "name" and target.name in BASIC and target.name not in self.package.types:
                schema = context.local_named(target)
                schema["$ref"] = TypeRef(self.package.path, expr.name).link(self.package.path)
                self.need(TypeRef(self.package.path, expr.name))
                return schema
            if target.kind == "qualified":
                return context.qualified(target)
            if target.kind == "name":
                return context.local_named(target)
        ref = TypeRef(self.package.path, expr.name)
        self.need(ref)
        schema = {"$ref": ref.link(self.package.path)}
        if spec.type.kind == "name" and spec.type.name in BASIC and spec.type.name not in self.package.types:
            named = self.schemas.schemata.get(ref) or {}
            for key in ("type", "format"):
                if named.get(key):
                    schema[key] = named[key]
            return {k: schema[k] for k in ("type", "format", "$ref") if k in schema}
        return schema

    def need(self, ref: TypeRef) -> None:
        if self.schemas.schema_of(ref) is None and ref.package == self.package.path:
            self.schemas.error(f"unknown type {ref.name}", self.go, self.declared.spec.start)

    def qualified(self, expr: TypeExpr) -> dict[str, Any]:
        """namedToSchema: a `$ref` to a type of an imported package, found from the module."""
        path = self.imports.get(expr.package)
        if path is None:
            self.schemas.error(f"unknown type {expr.text}: no import named {expr.package}", self.go, expr.start)
            return {}
        ref = TypeRef(path, expr.name)
        known = KNOWN.get(path)
        if known is None or expr.name not in known[0]:
            package = self.schemas.package(path, self.package)
            if package is None:
                self.schemas.warning(
                    f"type {expr.text} not found: package {path} is not in the module, vendor/ "
                    f"or the module cache; its schema is left open ({{}})",
                    self.go,
                    expr.start,
                )
                return {}
            if expr.name not in package.types:
                self.schemas.warning(f"type {expr.text} not found in {path}; its schema is left open ({{}})",
                                     self.go, expr.start)  # fmt: skip
                return {}
        self.schemas.schema_of(ref)
        return {"$ref": ref.link(self.package.path)}

    def array(self, expr: TypeExpr) -> dict[str, Any]:
        assert expr.elem is not None
        elem = expr.elem
        if expr.kind == "slice" and elem.kind == "name" and elem.name in ("byte", "uint8") and (
                elem.name not in self.package.types):  # fmt: skip
            return {"type": "string", "format": "byte"}
        return {"type": "array", "items": self.type_schema(elem, "", Markers({}))}

    def map(self, expr: TypeExpr) -> dict[str, Any]:
        assert expr.key is not None and expr.elem is not None
        if not self.string_key(expr.key):
            self.schemas.error(f"map keys must be strings, not {expr.key.text}",
                               self.go, expr.key.start)  # fmt: skip
            return {}
        value = expr.elem
        if value.kind not in ("name", "qualified", "slice", "array", "pointer", "map"):
            what = "interface type is not supported as map value in CRD schemas; consider using an explicit type " \
                   "or apiextensionsv1.JSON instead" if value.kind == "interface" else \
                   f"not a supported map value type: {value.text}"  # fmt: skip
            self.schemas.error(what, self.go, value.start)
            return {}
        return {"type": "object", "additionalProperties": self.type_schema(value, "", Markers({}))}

    def string_key(self, key: TypeExpr) -> bool:
        seen = set()
        while key.kind == "name" and key.name not in seen:
            seen.add(key.name)
            declared = self.package.types.get(key.name)
            if declared is None:
                return key.name == "string"
            key = declared.spec.type
        return key.kind == "qualified"  # a named type of another package: taken as its string kind

    def struct(self, expr: TypeExpr, type_markers: Markers) -> dict[str, Any]:
        """structToSchema: each field with a json tag a property (or, inline, an allOf branch)."""
        return struct_schema(self, expr, type_markers)

    @property
    def type_name(self) -> str:
        return self.declared.spec.name

    def error(self, message: str, offset: int) -> None:
        self.schemas.error(message, self.go, offset)

    def field_markers(self, index: int) -> Markers:
        raws = self.declared.markers.fields.get((self.declared.spec.name, index), ())
        return self.schemas.parse(raws, FIELD, self.go)

    def field_doc(self, index: int) -> str:
        return description(self.declared.markers.field_docs.get((self.declared.spec.name, index)))

    def default_optional(self) -> bool:
        return self.schemas.package_markers(self.package).has("kubebuilder:validation:Optional")


def _basic(type_name: str, format_name: str) -> dict[str, Any]:
    return {"type": type_name, **({"format": format_name} if format_name else {})}
