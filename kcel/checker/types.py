"""CEL types: what the checker reasons about and what library signatures are written in.

A type is a name plus parameters (`list(int)` is `CelType("list", (INT,))`). Type parameters
(`A`, `T`) are types whose `kind` is "param". `str()` prints cel-go's spelling, and
`parse_type()` reads it back, so users may declare variables as `"map(string, dyn)"`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["primitive", "list", "map", "param", "dyn", "null", "type", "error", "opaque", "message"]


@dataclass(frozen=True, slots=True)
class CelType:
    """A CEL type: a name, its type parameters (`list(int)`, `map(string, dyn)`) and what kind of type it is."""

    name: str
    params: tuple[CelType, ...] = ()
    kind: Kind = "primitive"
    # What the type was declared from, if more than its name (a Kubernetes schema's DeclType):
    # the checker asks it for fields, the planner for how to read and compare schema-typed data.
    decl: Any = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        if self.decl is NULLABLE:
            return f"wrapper({self.name})"
        if self.kind == "list":
            return f"list({self.params[0]})"
        if self.kind == "map":
            return f"map({self.params[0]}, {self.params[1]})"
        if self.kind == "type" and self.params:
            return f"type({self.params[0]})"
        if self.kind == "opaque" and self.params:
            return f"{self.name}({', '.join(map(str, self.params))})"
        return self.name

    @property
    def is_param(self) -> bool:
        return self.kind == "param"


NULLABLE = "nullable"
"""The `decl` of a protobuf wrapper type (`google.protobuf.Int64Value`): cel-go's NewNullableType, which is the
wrapped primitive in every comparison (`wrapper(int)` and `int` are the same type to unification) and also
takes `null`; only its printed name, `wrapper(int)`, differs."""

BOOL = CelType("bool")
INT = CelType("int")
UINT = CelType("uint")
DOUBLE = CelType("double")
STRING = CelType("string")
BYTES = CelType("bytes")
NULL = CelType("null_type", kind="null")
DYN = CelType("dyn", kind="dyn")
ANY = CelType("any", kind="dyn")  # google.protobuf.Any as Kubernetes declares it: dyn to the checker, printed `any`
ERROR = CelType("error", kind="error")
TYPE = CelType("type", kind="type")
TIMESTAMP = CelType("google.protobuf.Timestamp", kind="opaque")
DURATION = CelType("google.protobuf.Duration", kind="opaque")
A = CelType("A", kind="param")
B = CelType("B", kind="param")
T = CelType("T", kind="param")
V = CelType("V", kind="param")


def list_of(elem: CelType) -> CelType:
    return CelType("list", (elem,), "list")


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", (key, value), "map")


def optional_of(value: CelType) -> CelType:
    return CelType("optional_type", (value,), "opaque")


def type_of(value: CelType) -> CelType:
    return CelType("type", (value,), "type")


def wrapper_of(primitive: CelType) -> CelType:
    return CelType(primitive.name, kind="primitive", decl=NULLABLE)


def param(name: str) -> CelType:
    return CelType(name, kind="param")


def opaque(name: str, *params: CelType) -> CelType:
    return CelType(name, params, "opaque")


WELL_KNOWN_TYPES: dict[str, CelType] = {
    **{f"google.protobuf.{name}Value": wrapper_of(t) for name, t in (
        ("Bool", BOOL), ("Bytes", BYTES), ("Double", DOUBLE), ("Float", DOUBLE), ("Int64", INT), ("Int32", INT),
        ("UInt64", UINT), ("UInt32", UINT), ("String", STRING))},
    "google.protobuf.Any": CelType("google.protobuf.Any", kind="dyn"),
    "google.protobuf.Duration": DURATION,
    "google.protobuf.Timestamp": TIMESTAMP,
    "google.protobuf.ListValue": list_of(DYN),
    "google.protobuf.NullValue": NULL,
    "google.protobuf.Struct": map_of(STRING, DYN),
    "google.protobuf.Value": DYN,
}  # fmt: skip
"""cel-go's checkedWellKnowns: what a protobuf well-known type is to the checker, wherever it is named (a declared
variable, a message field, a literal): wrappers are nullable primitives, `Struct` a map, `Value` dyn..."""

_NAMED = {t.name: t for t in (BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL, DYN, ERROR, TYPE, TIMESTAMP, DURATION)}
_NAMED["timestamp"] = TIMESTAMP
_NAMED["duration"] = DURATION
_TOKEN = re.compile(r"\s*([A-Za-z_@.][A-Za-z0-9_.@]*|[(),])")


def parse_type(text: str) -> CelType:
    """Read a type written as cel-go prints it, e.g. `map(string, list(int))`.

    >>> str(parse_type("map(string,  list(int))"))
    'map(string, list(int))'
    """
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != "".join(text.split()):
        raise ValueError(f"invalid type: {text!r}")
    result, rest = _parse_tokens(tokens, text)
    if rest:
        raise ValueError(f"invalid type: {text!r}")
    return result


def _parse_tokens(tokens: list[str], text: str) -> tuple[CelType, list[str]]:
    if not tokens or tokens[0] in "(),":
        raise ValueError(f"invalid type: {text!r}")
    name, rest = tokens[0], tokens[1:]
    params: list[CelType] = []
    if rest and rest[0] == "(":
        rest = rest[1:]
        while rest and rest[0] != ")":
            item, rest = _parse_tokens(rest, text)
            params.append(item)
            if rest and rest[0] == ",":
                rest = rest[1:]
        if not rest:
            raise ValueError(f"invalid type: {text!r}")
        rest = rest[1:]
    return _make(name, tuple(params), text), rest


def _make(name: str, params: tuple[CelType, ...], text: str) -> CelType:
    if name == "list" and len(params) == 1:
        return list_of(params[0])
    if name == "map" and len(params) == 2:
        return map_of(params[0], params[1])
    if name == "type":
        return type_of(params[0]) if params else TYPE
    if name == "wrapper" and len(params) == 1 and params[0].kind == "primitive":
        return wrapper_of(params[0])
    if not params and name in _NAMED:
        return _NAMED[name]
    if name in ("list", "map"):
        raise ValueError(f"invalid type: {text!r}")
    if params:
        return opaque(name, *params)
    if name in WELL_KNOWN_TYPES:
        return WELL_KNOWN_TYPES[name]
    if "." in name:
        return CelType(name, kind="message")
    return param(name)
