"""JSON data read through a schema, as Kubernetes' `UnstructuredToVal` presents it to CEL.

Objects stay plain dicts. What the schema changes is applied when a typed field is read, by a
reader the planner binds for that field: a JSON null property is absent, `number` fields are
doubles, `date-time` strings are timestamps, set and map lists get their own `==` and `+`.
Data that does not match the schema gives the API server's error, only if a rule reads it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kcel.errors import EvalError
from kcel.eval.equality import cel_equals
from kcel.k8s.schemas.correlation import deep_equal
from kcel.k8s.schemas.escaping import escape
from kcel.k8s.schemas.maplist import item_key
from kcel.k8s.schemas.schema import Schema
from kcel.temporal import Duration, Timestamp
from kcel.values import NONE, Optional, TypedList, is_mapping

Convert = Callable[[Any], Any]


class DeclType(Protocol):
    """What reading data needs of a schema's CEL type (`kcel.k8s.schemas.decltypes.DeclType`, which builds
    its readers, converter and equality from this module and caches them)."""

    @property
    def kind(self) -> str: ...
    @property
    def schema(self) -> Schema | None: ...
    @property
    def elem(self) -> DeclType | None: ...
    @property
    def fields_by_key(self) -> Mapping[str, DeclField]: ...
    @property
    def converter(self) -> Convert | None: ...
    @property
    def equals(self) -> Callable[[Any, Any], bool]: ...


class DeclField(Protocol):
    """What reading data needs of an object property's declaration (`kcel.k8s.schemas.decltypes.DeclField`)."""

    @property
    def name(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def type(self) -> DeclType: ...


def no_such_key(name: str) -> EvalError:
    return EvalError(f"no such key: {name}")


# -- field access ------------------------------------------------------------------------------


def field_reader(field: DeclField) -> Convert:
    """`obj.<field>` for an object of a schema type: absent and null properties are both missing."""
    key, convert = field.key, field.type.converter

    def read(obj: Any) -> Any:
        value = obj.get(key) if obj.__class__ is dict else _get(obj, key)
        if value is None:
            raise no_such_key(field.name)
        return value if convert is None else convert(value)

    if not _used_as_it_is(field.type):
        return read

    def read_list(obj: Any) -> Any:  # the list itself when it holds no null: one call less for a common read
        value = obj.get(key) if obj.__class__ is dict else _get(obj, key)
        return value if value.__class__ is list and None not in value else read(obj)

    return read_list


def _used_as_it_is(decl: DeclType) -> bool:
    """An atomic list whose items are used as they are: a JSON list without nulls is its CEL value."""
    return (
        decl.kind == "list"
        and decl.schema is not None
        and (decl.schema.list_type or "atomic") == "atomic"
        and decl.elem is not None
        and _element_converter(decl.elem) is None
    )


def field_tester(field: DeclField) -> Convert:
    """`has(obj.<field>)`: present and not null; data that does not match the schema is an error here too."""
    key, convert = field.key, field.type.converter

    def present(obj: Any) -> bool:
        value = obj.get(key) if obj.__class__ is dict else _get(obj, key)
        if value is None:
            return False
        if convert is not None:
            convert(value)
        return True

    return present


def optional_field_reader(field: DeclField) -> Convert:
    """`obj.?<field>`: `optional.none()` for an absent or null property."""
    read, present = field_reader(field), field_tester(field)

    def read_optional(obj: Any) -> Optional:
        if obj.__class__ is Optional:
            if not obj.has_value():
                return obj
            obj = obj.value
        return Optional(read(obj)) if present(obj) else NONE

    return read_optional


def _get(obj: Any, key: str) -> Any:
    if not isinstance(obj, Mapping):
        raise EvalError("invalid data, expected a map for the provided schema with type=object")
    return obj.get(key)


# -- conversion of values ----------------------------------------------------------------------


def convert(value: Any, decl: DeclType) -> Any:
    """The CEL value of JSON data of a schema type (what `self` is at a schema node)."""
    conversion = decl.converter
    if value is None:
        return _null(decl)
    return value if conversion is None else conversion(value)


def make_converter(decl: DeclType) -> Convert | None:
    """Non-null JSON data to its CEL value; None when the data is used as it is. DeclType.converter caches it."""
    kind = decl.kind
    if kind in _SCALAR_CHECKS:
        return _SCALAR_CHECKS[kind]
    if kind in _FORMATS:
        is_date = kind == "timestamp" and decl.schema is not None and decl.schema.format == "date"
        return _date if is_date else _FORMATS[kind]
    if kind == "object":
        return _check_object
    assert decl.elem is not None and decl.schema is not None
    if kind == "map":
        return _map_converter(decl)
    return _list_converter(decl)


def _null(decl: DeclType) -> Any:
    if decl.schema is not None and decl.schema.nullable:
        return None
    raise EvalError("invalid data, got null for schema with nullable=false")


def _check_object(value: Any) -> Any:
    if is_mapping(value):
        return value
    raise EvalError("invalid data, expected a map for the provided schema with type=object")


def _checker(kind: str, accepts: tuple[type, ...], go_name: str) -> Convert:
    message = f"invalid data, expected {go_name}, got %s"

    def check(value: Any) -> Any:
        if value.__class__ in accepts:
            return value
        raise EvalError(message % _go_type(value))

    check.__name__ = f"check_{kind}"
    return check


def _to_double(value: Any) -> float:
    if value.__class__ is float:
        return value
    if value.__class__ is int:
        return float(value)
    raise EvalError(f"invalid data, expected float, got {_go_type(value)}")


def _int_or_string(value: Any) -> Any:
    if value.__class__ is str or value.__class__ is int:
        return value
    raise EvalError("invalid data, expected XIntOrString value to be either a string or integer")


_SCALAR_CHECKS: dict[str, Convert] = {
    "string": _checker("string", (str,), "string"),
    "int": _checker("int", (int,), "int"),
    "bool": _checker("bool", (bool,), "bool"),
    "double": _to_double,
    "dyn": _int_or_string,
}


_GO_TYPES = {
    str: "string", bool: "bool", int: "int64", float: "float64",
    dict: "map[string]interface {}", list: "[]interface {}",
}  # fmt: skip


def _go_type(value: Any) -> str:
    """How Go's `%T` names a decoded JSON value."""
    return _GO_TYPES.get(type(value), type(value).__name__)


# -- string formats (kube-openapi strfmt) ------------------------------------------------------

_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([Zz]|[+-]\d{2}:\d{2})?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_STRFMT_UNITS = {
    "ns": 1, "nano": 1, "nanos": 1, "us": 1_000, "µs": 1_000, "micro": 1_000, "micros": 1_000,
    "ms": 1_000_000, "milli": 1_000_000, "millis": 1_000_000, "s": 10**9, "sec": 10**9, "secs": 10**9,
    "m": 60 * 10**9, "min": 60 * 10**9, "mins": 60 * 10**9, "h": 3600 * 10**9, "hr": 3600 * 10**9,
    "hour": 3600 * 10**9, "hours": 3600 * 10**9, "hrs": 3600 * 10**9, "d": 86400 * 10**9, "day": 86400 * 10**9,
    "days": 86400 * 10**9, "w": 7 * 86400 * 10**9, "wk": 7 * 86400 * 10**9, "week": 7 * 86400 * 10**9,
    "weeks": 7 * 86400 * 10**9, "wks": 7 * 86400 * 10**9,
}  # fmt: skip
_STRFMT_DURATION = re.compile(r"\s*(\d+)\s*([A-Za-zµ]+)")


def _string(value: Any) -> str:
    if value.__class__ is not str:
        raise EvalError(f"invalid data, expected string, got {_go_type(value)}")
    return value


def _date_time(value: Any) -> Timestamp:
    text = _string(value)
    if text == "":
        return Timestamp(0)
    match = _DATE_TIME.fullmatch(text)
    if match is not None:
        date, clock, zone = match.groups()
        with contextlib.suppress(EvalError):  # e.g. a month 13: reported below, as for any other text
            return Timestamp.parse(f"{date}T{clock}{(zone or 'Z').upper()}")
    raise EvalError(f'Invalid date-time formatted string {text}: parsing time "{text}" as a date-time')


def _date(value: Any) -> Timestamp:
    text = _string(value)
    if _DATE.fullmatch(text) is not None:
        with contextlib.suppress(EvalError):
            return Timestamp.parse(f"{text}T00:00:00Z")
    raise EvalError(f'Invalid date formatted string {text}: parsing time "{text}" as "2006-01-02"')


def _duration(value: Any) -> Duration:
    text = _string(value)
    try:
        return Duration.parse(text)
    except EvalError:
        pass
    total, position = 0, 0
    for match in _STRFMT_DURATION.finditer(text):
        if match.start() != position or match.group(2) not in _STRFMT_UNITS:
            break
        total += int(match.group(1)) * _STRFMT_UNITS[match.group(2)]
        position = match.end()
    else:
        if position and text[position:].strip() == "" and total < 2**63:
            return Duration(total)
    raise EvalError(f"Invalid duration {text}: unable to parse {text} as duration")


def _bytes(value: Any) -> bytes:
    text = _string(value)
    try:
        return base64.urlsafe_b64decode(text.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError) as err:
        raise EvalError(f"Invalid byte formatted string {text}: {err}") from None


_FORMATS: dict[str, Convert] = {"timestamp": _date_time, "duration": _duration, "bytes": _bytes}


# -- maps and lists ----------------------------------------------------------------------------


def _map_converter(decl: DeclType) -> Convert:
    assert decl.elem is not None
    elem = decl.elem
    values = _element_converter(elem)

    nullable = elem.schema is not None and elem.schema.nullable

    def convert_map(value: Any) -> Any:
        _check_object(value)
        if not nullable and None in value.values():
            _null(elem)
        if values is None:
            return value
        return {k: v if v is None else values(v) for k, v in value.items()}

    return convert_map


def _element_converter(elem: DeclType) -> Convert | None:
    """Conversion of list items and map values; strings, ints, bools and objects are used as they are."""
    return None if elem.kind in ("string", "int", "bool", "object", "dyn") else elem.converter


def _list_converter(decl: DeclType) -> Convert:
    assert decl.elem is not None and decl.schema is not None
    list_type = decl.schema.list_type or "atomic"
    if list_type not in ("atomic", "set", "map"):
        message = f"invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got {list_type}"

        def invalid(value: Any) -> Any:
            raise EvalError(message)

        return invalid
    items = _element_converter(decl.elem)
    elem = decl.elem
    nullable = elem.schema is not None and elem.schema.nullable

    def convert_list(value: Any) -> Any:
        if value.__class__ is not list and not isinstance(value, (list, tuple)):
            raise EvalError("invalid data, expected an array for the provided schema with type=array")
        if not nullable and None in value:
            _null(elem)  # upstream fails when the item is read; kcel when the list is
        elements = value if items is None else [v if v is None else items(v) for v in value]
        if list_type == "set":
            return SetList(elements)
        if list_type == "map":
            return MapList(elements, decl)
        return elements

    return convert_list


class SetList(TypedList):
    """`x-kubernetes-list-type: set`: equality ignores order and repeats; `+` is a union."""

    __slots__ = ()

    def cel_equals(self, other: Any) -> bool:
        if len(self) != len(other):
            return False
        mine = {_set_key(v) for v in self}
        seen = set()
        for v in other:
            key = _set_key(v)
            if key not in mine:
                return False
            seen.add(key)
        return len(seen) == len(mine)

    def cel_add(self, other: Any) -> list[Any]:
        result = SetList(self)
        present = {_set_key(v) for v in self}
        for v in other:
            key = _set_key(v)
            if key not in present:
                present.add(key)
                result.append(v)
        return result


def _set_key(value: Any) -> Any:
    """Set elements compare by their raw value and type (Go map keys): `1` and `1.0` differ."""
    if isinstance(value, (list, tuple, Mapping)):
        raise EvalError("listSet operations are only supported on lists of scalar values")
    return (value.__class__, value)


def _map_key(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, Mapping):
        raise EvalError(
            f"unexpected data format for element of array with x-kubernetes-list-type=map: {_go_type(item)}"
        )
    return item_key(item, keys)


class MapList(TypedList):
    """`x-kubernetes-list-type: map`: equality matches items by key; `+` merges by key."""

    __slots__ = ("decl",)

    def __init__(self, items: Any, decl: DeclType) -> None:
        super().__init__(items)
        self.decl = decl

    def _keys(self) -> tuple[str, ...]:
        """Key properties as upstream reads them from the data: by their escaped names."""
        assert self.decl.schema is not None
        return tuple(escape(k) or k for k in self.decl.schema.list_map_keys)

    def cel_equals(self, other: Any) -> bool:
        if len(self) != len(other):
            return False
        keys = self._keys()
        mine = {_map_key(item, keys): item for item in self}
        item_equals = self.decl.elem.equals if self.decl.elem is not None else cel_equals
        seen = set()
        for item in other:
            key = _map_key(item, keys)
            if key not in mine or not item_equals(mine[key], item):
                return False
            seen.add(key)
        return len(seen) == len(mine)

    def cel_add(self, other: Any) -> list[Any]:
        keys = self._keys()
        result = MapList(self, self.decl)
        position = {_map_key(item, keys): i for i, item in enumerate(self)}
        for item in other:
            key = _map_key(item, keys)
            if key in position:
                result[position[key]] = item
            else:
                position[key] = len(result)
                result.append(item)
        return result


# -- equality with a schema ----------------------------------------------------------------------


def make_equality(decl: DeclType) -> Callable[[Any, Any], bool]:
    """`a == b` where `a` has the schema type `decl` (upstream `unstructuredMap.Equal`); DeclType.equals caches it."""
    if decl.kind != "object":
        return cel_equals

    # Fields whose values of one class are CEL values as they are (the conversion only checks the class): two
    # such values compare without converting, objects by their own schema.
    fields = {key: (field, PLAIN_KINDS.get(field.type.kind)) for key, field in decl.fields_by_key.items()}

    def equal_objects(a: Any, b: Any) -> bool:
        if not isinstance(b, Mapping):
            raise EvalError("no such overload")
        if len(a) != len(b):
            return False
        for key, mine in a.items():
            known = fields.get(key)
            if known is None:
                if key in b and not deep_equal(mine, b[key]):
                    return False
                continue
            theirs = b.get(key)
            if mine is None or theirs is None:
                if mine is not theirs:
                    return False
                continue
            field, plain = known
            if plain is not None and mine.__class__ is plain and theirs.__class__ is plain:
                if not (field.type.equals(mine, theirs) if plain is dict else mine == theirs):
                    return False
            elif not field.type.equals(_read(field, mine), _read(field, theirs)):
                return False
        return True

    return equal_objects


PLAIN_KINDS: dict[str, type] = {"string": str, "int": int, "bool": bool, "object": dict}
"""Schema kinds whose JSON values are their CEL values: `make_converter` only checks their class."""


def _read(field: DeclField, value: Any) -> Any:
    conversion = field.type.converter
    return value if conversion is None else conversion(value)
