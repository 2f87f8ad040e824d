"""The message types a MutatingAdmissionPolicy builds (k8s.io/apiserver pkg/cel/mutation).

`JSONPatch{op, path, from, value}` is one RFC 6902 operation; `Object{...}`, `Object.spec{...}`,
`Object.spec.template{...}` are the parts of an apply configuration. Object types are dynamic: any
field name is allowed and every field is `dyn` — the resource's schema types the result only when it is
merged into the object, and each nested `Object.x.y` must be named after the field path it sits at
(`check_type_names`). The type resolver is only in the mutation environments, as upstream's
`hasPatchTypes` option adds it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from kcel.checker.decls import FieldAccess, Library
from kcel.checker.types import DYN, STRING, CelType
from kcel.errors import EvalError
from kcel.eval.equality import cel_equals
from kcel.libs.timestamps import duration_to_string, timestamp_to_string
from kcel.temporal import Duration, Timestamp, go_quote
from kcel.values import NONE, Optional, TypedList, TypeValue, Uint

OBJECT, JSON_PATCH = "Object", "JSONPatch"
_UNSET = object()  # a JSONPatch field the literal did not set (distinct from `value: null`)


class ObjectValue:
    """dynamic.ObjectVal: a typed bag of fields; equal when the type and every field are."""

    __slots__ = ("type_name", "fields")

    def __init__(self, type_name: str, fields: dict[str, Any]) -> None:
        self.type_name = type_name
        self.fields = fields

    @property
    def cel_type_name(self) -> str:
        return self.type_name

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ObjectValue)
            and other.type_name == self.type_name
            and other.fields.keys() == self.fields.keys()
            and all(cel_equals(v, other.fields[k]) for k, v in self.fields.items())
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{self.type_name}{self.fields!r}"


class JSONPatchValue:
    """mutation.JSONPatchVal: one operation; `value` is `_UNSET` when the literal did not give one."""

    __slots__ = ("op", "path", "from_", "value")
    cel_type_name = JSON_PATCH

    def __init__(self, op: str = "", path: str = "", from_: str = "", value: Any = _UNSET) -> None:
        self.op, self.path, self.from_, self.value = op, path, from_, value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JSONPatchValue) or (self.op, self.path, self.from_) != (
            other.op,
            other.path,
            other.from_,
        ):
            return False
        if (self.value is _UNSET) or (other.value is _UNSET):
            return self.value is other.value
        return cel_equals(self.value, other.value)

    __hash__ = None  # type: ignore[assignment]

    def has_value(self) -> bool:
        return self.value is not _UNSET


def _go_type(value: Any) -> str:
    """The Go type upstream's `%T` names for a field of the wrong type (`value.Value()`'s native type)."""
    natives = {bool: "bool", int: "int64", Uint: "uint64", float: "float64", bytes: "[]uint8", str: "string"}
    if value is None:
        return "structpb.NullValue"
    for cls, name in natives.items():
        if type(value) is cls:
            return name
    if isinstance(value, Mapping):
        return "map[ref.Val]ref.Val"
    if isinstance(value, (list, tuple)):
        return "[]ref.Val"
    return "*" + type(value).__name__


def _build_patch(fields: dict[str, Any]) -> JSONPatchValue:
    """JSONPatchType.Val: op, path and from must be strings; any other field is an error."""
    patch = JSONPatchValue()
    for name, value in fields.items():
        if name in ("op", "path", "from"):
            if type(value) is not str:
                raise EvalError(f"unexpected type {_go_type(value)} for JSONPatchType '{name}' field")
            setattr(patch, "from_" if name == "from" else name, value)
        elif name == "value":
            patch.value = value
        else:
            raise EvalError(f"unexpected JSONPatchType field: {name}")
    return patch


def _patch_field(name: str) -> FieldAccess:
    attribute = "from_" if name == "from" else name

    def read(patch: Any) -> Any:
        if not isinstance(patch, JSONPatchValue):
            raise EvalError("no such overload")
        value = getattr(patch, attribute)
        if value is _UNSET:
            raise EvalError(f"no such field: {name}")
        return value

    def test(patch: Any) -> bool:
        if not isinstance(patch, JSONPatchValue):
            raise EvalError("no such overload")
        value = getattr(patch, attribute)
        return value is not _UNSET and value != ""

    return FieldAccess.of(read, test)


@dataclass(frozen=True, eq=False)
class MutationType:
    """`JSONPatch` (four declared fields) or an `Object...` type (any field, each `dyn`)."""

    name: str

    @cached_property
    def cel(self) -> CelType:
        return CelType(self.name, kind="message", decl=self)

    def field_type(self, name: str, keywords: bool = False) -> CelType | None:
        if self.name != JSON_PATCH:
            return DYN
        return {"op": STRING, "path": STRING, "from": STRING, "value": DYN}.get(name)

    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None:
        if self.name == JSON_PATCH:
            return _patch_field(name) if name in ("op", "path", "from", "value") else None
        return _object_field(name)

    def construct(self, fields: dict[str, Any]) -> Any:
        return _build_patch(fields) if self.name == JSON_PATCH else ObjectValue(self.name, fields)

    @property
    def equals(self) -> Callable[[Any, Any], bool]:
        return cel_equals


def _object_field(name: str) -> FieldAccess:
    """A field of an `Object...` value, as cel-go's field qualifier reads it through ObjectType.Field: from the
    value's native form (ObjectVal.Value(), nested objects become plain maps), an absent field being null."""

    def native(obj: Any) -> dict[str, Any] | None:
        if not isinstance(obj, ObjectValue):
            raise EvalError("no such overload")
        try:
            return _native_object(obj)
        except MutationValueError:
            return None  # Value() gave an error, which is no map: the field is neither set nor readable

    def read(obj: Any) -> Any:
        fields = native(obj)
        if fields is None:
            raise EvalError(f"cannot get field {go_quote(name)}")
        return fields.get(name)

    def test(obj: Any) -> bool:
        fields = native(obj)
        return fields is not None and name in fields

    def read_optional(obj: Any) -> Optional:
        fields = native(obj)
        return Optional(fields[name]) if fields is not None and name in fields else NONE

    return FieldAccess(read, test, read_optional)


def _native_object(value: ObjectValue) -> dict[str, Any]:
    """ObjectVal.ConvertToNative to map[string]any, as CEL sees it again: nested objects become maps; a map field
    with a key that is not a string is an error (list elements are taken as they are)."""
    result: dict[str, Any] = {}
    for name, field in value.fields.items():
        if isinstance(field, ObjectValue):
            field = _native_object(field)
        elif isinstance(field, (list, tuple, TypedList)):
            field = [_native_object(x) if isinstance(x, ObjectValue) else x for x in field]
        elif isinstance(field, Mapping):
            for key in field:
                if not isinstance(key, str):
                    raise MutationValueError(f"map key {go_quote(str(key))} is of type {_go_type(key)}, not string")
            field = {k: _native_object(v) if isinstance(v, ObjectValue) else v for k, v in field.items()}
        result[name] = field
    return result


@cache
def resolve(name: str) -> MutationType | None:
    """mutation.DynamicTypeResolver: `JSONPatch`, `Object` and every `Object.<path>`."""
    if name == JSON_PATCH or name == OBJECT or name.startswith(OBJECT + "."):
        return MutationType(name)
    return None


# -- results, as the dispatcher reads them --------------------------------------------------------------------------


class MutationValueError(Exception):
    """A result that cannot become JSON (upstream's ConvertToNative errors)."""


def check_type_names(value: ObjectValue) -> list[str]:
    """ObjectVal.CheckTypeNamesMatchFieldPathNames: each nested Object type names the field path it is at."""
    problems: list[str] = []
    _check_names(value, [value.type_name], problems)
    return problems


def _check_names(value: Any, path: list[str], problems: list[str]) -> None:
    if isinstance(value, ObjectValue):
        expected = ".".join(path)
        if value.type_name != expected:
            problems.append(
                f"unexpected type name {go_quote(value.type_name)}, expected {go_quote(expected)}, which matches "
                "field name path from root Object type"
            )
        for key, field in value.fields.items():
            _check_names(field, [*path, key], problems)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_names(item, path, problems)
    elif isinstance(value, Mapping):
        for item in value.values():
            _check_names(item, path, problems)


def to_json(value: Any, doubles: bool = True) -> Any:
    """A CEL value as the JSON upstream marshals: bytes as base64, timestamps and durations as their JSON strings.

    A JSONPatch value goes through google.protobuf.Value, whose numbers are doubles (`doubles`): an integral number
    is written without a fraction. An apply configuration keeps Go's int64 and float64 (`doubles=False`)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if not doubles and isinstance(value, (int, float)):
        return int(value) if isinstance(value, int) else value
    if isinstance(value, (int, float)):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            raise MutationValueError(f"invalid NumberValue: {value}")
        return int(number) if number.is_integer() and abs(number) < 1e21 else number
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Timestamp):
        return timestamp_to_string(value)
    if isinstance(value, Duration):
        return duration_to_string(value)
    if isinstance(value, ObjectValue):
        return {k: to_json(v, doubles) for k, v in value.fields.items()}
    if isinstance(value, (list, tuple, TypedList)):
        return [to_json(v, doubles) for v in value]
    if isinstance(value, Mapping):
        converted = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise MutationValueError(f"map key {go_quote(str(key))} is of type {_go_type(key)}, not string")
            converted[key] = to_json(item, doubles)
        return converted
    if isinstance(value, Optional):
        raise MutationValueError("type conversion error from 'optional_type' to 'google.protobuf.Value'")
    if isinstance(value, TypeValue):
        raise MutationValueError("type conversion error from 'type' to 'google.protobuf.Value'")
    raise MutationValueError(f"type conversion error from '{getattr(value, 'cel_type_name', type(value).__name__)}'")


LIBRARY = Library("kubernetes.mutation", struct_types=resolve)
