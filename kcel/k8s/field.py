"""Field paths and field errors, printed byte for byte as k8s.io/apimachinery prints them.

Users compare these strings (CRD validation errors, `kubectl` output, test expectations), so rendering follows
pkg/util/validation/field (`Path.String`, `Error.Error`, `ErrorBody`) and the 422 status message of
pkg/api/errors `NewInvalid` exactly, including Go's `%v`, `%q` and `encoding/json` spellings of bad values.

The texts changed between Kubernetes versions. `answering_as(version)` sets the API server being modelled for
the code it surrounds (the entry points `validate_object`, `check_crd` and `PolicySet.admit` do it); each error
remembers the version it was made under and renders as that API server did.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from decimal import Decimal
from enum import Enum
from typing import Any

from kcel.gofloat import format_double
from kcel.k8s.environment import LATEST, Version
from kcel.temporal import go_quote

_ANSWERING_AS: ContextVar[Version] = ContextVar("kcel_k8s_answering_as", default=LATEST)


def api_server() -> Version:
    """The API server version being modelled here (the newest unless `answering_as` says otherwise)."""
    return _ANSWERING_AS.get()


@contextmanager
def answering_as(version: Version) -> Iterator[None]:
    """Model the API server of `version` for errors made, and texts chosen, inside the block (thread- and
    task-local, so concurrent requests at different versions do not mix)."""
    token = _ANSWERING_AS.set(version)
    try:
        yield
    finally:
        _ANSWERING_AS.reset(token)


@dataclass(frozen=True, slots=True)
class Path:
    """field.Path: the way from a root to a field. `Path()` is Go's nil path, printed `<nil>`.

    Each element is `(name, subscript)` as in Go: an element with an empty name is a subscript, so
    `child("")` prints `[]` just as upstream does.

    Examples:
        >>> str(Path().child("spec").child("containers").index(0).key("a.b"))
        'spec.containers[0][a.b]'
        >>> str(Path.new("root", "spec")), str(Path())
        ('root.spec', '<nil>')
    """

    elements: tuple[tuple[str, str], ...] = ()

    @classmethod
    def new(cls, name: str, *more: str) -> Path:
        """field.NewPath: a path that starts at a named root (CRD validation tests use `root`)."""
        return cls(tuple((n, "") for n in (name, *more)))

    def child(self, name: str, *more: str) -> Path:
        return Path(self.elements + Path.new(name, *more).elements)

    def index(self, index: int) -> Path:
        return Path((*self.elements, ("", str(index))))

    def key(self, key: str) -> Path:
        return Path((*self.elements, ("", key)))

    def root(self) -> Path:
        """The first element alone (the nil path for the nil path, where Go would panic)."""
        return Path(self.elements[:1])

    def __str__(self) -> str:
        if not self.elements:
            return "<nil>"
        return "".join(
            (f".{name}" if position else name) if name else f"[{subscript}]"
            for position, (name, subscript) in enumerate(self.elements)
        )


class ErrorType(str, Enum):
    """field.ErrorType. The value is the machine-readable reason that status causes carry."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TOO_FEW = "FieldValueTooFew"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"
    TOO_SHORT = "FieldValueTooShort"

    @property
    def reason(self) -> str:
        return self.value

    @property
    def text(self) -> str:
        """ErrorType.String(): the words that start an error's body."""
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.NOT_FOUND: "Not found", ErrorType.REQUIRED: "Required value", ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value", ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden", ErrorType.TOO_LONG: "Too long", ErrorType.TOO_MANY: "Too many",
    ErrorType.TOO_FEW: "Too few", ErrorType.INTERNAL: "Internal error", ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.TOO_SHORT: "Too short",
}  # fmt: skip

# The types whose body shows the bad value; the others only name the type (ErrorBody's first case).
_SHOWS_VALUE = frozenset({
    ErrorType.INVALID, ErrorType.TYPE_INVALID, ErrorType.NOT_SUPPORTED, ErrorType.NOT_FOUND,
    ErrorType.DUPLICATE, ErrorType.TOO_MANY, ErrorType.TOO_FEW,
})  # fmt: skip


class _Omitted:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omitted()
"""field.OmitValueType{}: a bad value that is not shown (CRD rules on objects and arrays use it)."""


@dataclass(frozen=True, slots=True)
class GoStruct:
    """A Go struct as a bad value: from 1.34 rendered as JSON in field order (no JSON tags: Go's field names), before
    as `%#v` does, `go_type{Field:value, ...}`, with nil pointers as `(*T)(nil)` (`pointers` names their types)."""

    fields: tuple[tuple[str, Any], ...]
    go_type: str = "struct"
    pointers: tuple[tuple[str, str], ...] = ()  # field name -> the Go type it points to
    json: tuple[tuple[str, Any], ...] | None = None  # what encoding/json writes, where the struct has JSON tags


@dataclass(frozen=True, slots=True)
class GoSlice:
    """A typed Go slice as a bad value: JSON from 1.34, `[]element_type{item, ...}` before (`[]string{"a"}`)."""

    element_type: str
    items: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class FieldError:
    """field.Error: a type, the field it is about, the offending value and a detail text.

    Examples:
        >>> str(invalid(Path().child("spec", "x"), "object", "failed rule: self.a < self.b"))
        'spec.x: Invalid value: "object": failed rule: self.a < self.b'
        >>> str(duplicate(Path.new("spec"), 5)), str(forbidden(Path(), "msg"))
        ('spec: Duplicate value: 5', '<nil>: Forbidden: msg')
    """

    type: ErrorType
    field: Path
    bad_value: Any = OMIT
    detail: str = ""
    version: Version = dataclass_field(default_factory=api_server, compare=False, repr=False)
    """The API server whose texts it renders with: the one modelled where it was made."""

    def body(self) -> str:
        """ErrorBody(): the message without the field, as status causes carry it."""
        text = self.type.text
        if self.type in _SHOWS_VALUE and self.bad_value is not OMIT:
            text += ": " + render_value(self.bad_value, self.version)
        return f"{text}: {self.detail}" if self.detail else text

    def error(self) -> str:
        return f"{self.field}: {self.body()}"

    __str__ = error

    def cause(self) -> dict[str, str]:
        """The `details.causes[]` entry of a 422 status."""
        return {"reason": self.type.reason, "message": self.body(), "field": str(self.field)}


def invalid(path: Path, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path, value, detail)


def type_invalid(path: Path, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, path, value, detail)


def not_found(path: Path, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, path, value)


def required(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.REQUIRED, path, "", detail)


def forbidden(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path, "", detail)


def duplicate(path: Path, value: Any) -> FieldError:
    """field.Duplicate: takes no detail, so a CRD rule's message is dropped."""
    return FieldError(ErrorType.DUPLICATE, path, value)


def not_supported(path: Path, value: Any, supported: Iterable[str]) -> FieldError:
    """field.NotSupported: the detail lists the supported values, quoted, in the order given."""
    quoted = ", ".join(quote(v) for v in supported)
    return FieldError(ErrorType.NOT_SUPPORTED, path, value, f"supported values: {quoted}" if quoted else "")


def too_long(path: Path, max_length: int, unit: str = "byte") -> FieldError:
    """field.TooLong (`unit="character"`: TooLongCharacters); the value itself is never shown.

    Before 1.32 its detail was "must have at most N bytes"; 1.32 and 1.33 said "may not be more than N bytes",
    even for one (apimachinery 51cdbebd, c58e197e)."""
    if max_length >= 0 and api_server() < (1, 32):
        detail = f"must have at most {max_length} bytes"
    elif max_length < 0:
        detail = "value is too long"
    elif api_server() < (1, 34):
        detail = f"may not be more than {max_length} {unit}s"
    else:
        detail = f"may not be more than {_count(max_length, unit)}"
    return FieldError(ErrorType.TOO_LONG, path, "<value omitted>", detail)


def too_long_max_length(path: Path, max_length: int) -> FieldError:
    """field.TooLongMaxLength, which OpenAPI `maxLength` errors used before 1.32 ("may not be longer than N");
    from 1.32 it is `too_long`."""
    if api_server() >= (1, 32):
        return too_long(path, max_length)
    detail = f"may not be longer than {max_length}" if max_length >= 0 else "value is too long"
    return FieldError(ErrorType.TOO_LONG, path, "<value omitted>", detail)


def too_short(path: Path, value: str, min_length: int) -> FieldError:
    detail = f"must be at least {_count(min_length, 'character')}" if min_length >= 0 else "value is too short"
    return FieldError(ErrorType.TOO_SHORT, path, value, detail)


def too_many(path: Path, actual: int, maximum: int) -> FieldError:
    """field.TooMany: a negative `actual` means unknown and is not shown ("1 items" before 1.34)."""
    items = _count(maximum, "item") if api_server() >= (1, 34) else f"{maximum} items"
    detail = f"must have at most {items}" if maximum >= 0 else "has too many items"
    return FieldError(ErrorType.TOO_MANY, path, actual if actual >= 0 else OMIT, detail)


def too_few(path: Path, actual: int, minimum: int) -> FieldError:
    detail = f"must have at least {_count(minimum, 'item')}" if minimum >= 0 else "has too few items"
    return FieldError(ErrorType.TOO_FEW, path, actual, detail)


def internal_error(path: Path, message: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, path, OMIT, message)


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def invalid_status_message(kind_group: str, name: str, errors: Iterable[FieldError]) -> str:
    """The message of NewInvalid's 422 status: one error as is, several as `[e1, e2]` without repeats.

    Examples:
        >>> invalid_status_message("Widget.example.com", "w1", [invalid(Path.new("spec", "replicas"), 5, "too many")])
        'Widget.example.com "w1" is invalid: spec.replicas: Invalid value: 5: too many'
    """
    head = f"{kind_group} {quote(name)} is invalid"
    messages = list(dict.fromkeys(error.error() for error in errors))  # ToAggregate drops repeated strings
    if not messages:
        return head
    return f"{head}: {messages[0]}" if len(messages) == 1 else f"{head}: [{', '.join(messages)}]"


# --- bad values as ErrorBody prints them --------------------------------------------------------------------


def render_value(value: Any, version: Version = LATEST) -> str:
    """A bad value as ErrorBody prints it: `%v` for numbers and bools, `%q` for strings, JSON otherwise.

    Floats use Go's shortest `%v` (exponent form below 1e-4 and from 1e+06 on). Inside JSON (maps, lists,
    `GoStruct`) encoding/json's spelling applies instead: exponent form only below 1e-6 and from 1e+21 on.

    Examples:
        >>> [render_value(v) for v in (3, 1e6, 0.0001, True, None, "a\\n")]
        ['3', '1e+06', '0.0001', 'true', 'null', '"a\\\\n"']
        >>> render_value({"b": [1.0, 1e6], "a": "<"})
        '{"a":"\\\\u003c","b":[1,1000000]}'
    """
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return quote(value)
    if version < JSON_BAD_VALUES:
        return quote("null") if value is None else go_syntax(value)
    return _json(value)  # ints and bools print alike either way


JSON_BAD_VALUES: Version = (1, 34)
"""Since 1.34 ErrorBody renders maps, lists and structs as JSON and nil as `null`; before, nil was the string
"null" and anything else not a number, bool or string Go's `%#v` (apimachinery c58e197e, "Nicer value rendering")."""


def go_syntax(value: Any, nested: bool = False) -> str:
    """Go's `%#v` of a decoded (unstructured) value: `map[string]interface {}{"a":1, "b":[]interface {}{true}}`.

    >>> go_syntax({"name": "a", "ports": [80, 1.5, None]})
    'map[string]interface {}{"name":"a", "ports":[]interface {}{80, 1.5, interface {}(nil)}}'
    """
    if value is None:
        return "interface {}(nil)" if nested else "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, Mapping):
        entries = ", ".join(f"{quote(k)}:{go_syntax(v, True)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + entries + "}"
    if isinstance(value, GoSlice):
        return f"[]{value.element_type}{{" + ", ".join(go_syntax(v, True) for v in value.items) + "}"
    if isinstance(value, GoStruct):
        pointers = dict(value.pointers)
        fields = ", ".join(
            f"{name}:{_go_pointer(pointers[name], v) if name in pointers else go_syntax(v, True)}"
            for name, v in value.fields
        )
        return f"{value.go_type}{{{fields}}}"
    if isinstance(value, (list, tuple)):
        return "[]interface {}{" + ", ".join(go_syntax(v, True) for v in value) + "}"
    raise TypeError(f"cannot render a bad value of type {type(value).__name__}")


def _go_pointer(target: str, value: Any) -> str:
    """A pointer field: `(*bool)(nil)`, or an address, which Go prints and which differs every run."""
    return f"(*{target})(nil)" if value is None else f"(*{target})(0xc000000000)"


def json_kind(value: Any) -> str:
    """The JSON kind encoding/json names in an UnmarshalTypeError (`cannot unmarshal number into ...`)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_text(value: Any) -> str:
    """encoding/json.Marshal of a decoded value, e.g. an enum value the API server lists as supported.

    >>> json_text(1e21), json_text([1.0, None])
    ('1e+21', '[1,null]')
    """
    return _json(value)


_LONE_SURROGATES = re.compile("([\ud800-\udfff]+)")


def quote(text: str) -> str:
    """Go's `%q` (strconv.Quote). Lone surrogates stand for invalid UTF-8 bytes (Python's surrogateescape)."""
    if not _LONE_SURROGATES.search(text):
        return go_quote(text)
    parts = _LONE_SURROGATES.split(text)  # valid text at even positions, surrogate runs at odd ones
    return '"' + "".join(_hex_bytes(p) if i % 2 else go_quote(p)[1:-1] for i, p in enumerate(parts)) + '"'


def _hex_bytes(surrogates: str) -> str:
    return "".join(f"\\x{byte:02x}" for byte in _go_bytes(surrogates))


def _go_bytes(surrogates: str) -> bytes:
    """The bytes lone surrogates stand for: surrogateescape's own byte, else their (invalid) UTF-8 encoding."""
    return b"".join(
        bytes([ord(c) - 0xDC00]) if 0xDC80 <= ord(c) <= 0xDCFF else c.encode("utf-8", "surrogatepass")
        for c in surrogates
    )


def _json(value: Any) -> str:
    """encoding/json.Marshal of a decoded (unstructured) value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return '"' + _JSON_ESCAPED.sub(_json_escape, value) + '"'
    if isinstance(value, Mapping):
        return _json_object(sorted(value.items()))
    if isinstance(value, GoStruct):
        return _json_object(value.json if value.json is not None else value.fields)
    if isinstance(value, GoSlice):
        return _json(list(value.items))
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(_json, value)) + "]"
    raise TypeError(f"cannot render a bad value of type {type(value).__name__}")


def _json_object(items: Iterable[tuple[str, Any]]) -> str:
    return "{" + ",".join(f"{_json(k)}:{_json(v)}" for k, v in items) + "}"


def _json_float(value: float) -> str:
    """encoding/json's float64: shortest digits, in exponent form (`1e-7`, `1e+21`) outside [1e-6, 1e21)."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {format_double(value)}")
    if value != 0 and not 1e-6 <= abs(value) < 1e21:
        # repr already uses the exponent form here; Go drops a leading zero from a negative exponent.
        return _PADDED_EXPONENT.sub(r"e-\1", repr(value))
    return format(Decimal(repr(value)).normalize(), "f")


_PADDED_EXPONENT = re.compile(r"e-0(\d)$")

# encoding/json escapes: the usual ones, HTML-sensitive characters, line/paragraph separators, invalid UTF-8.
_JSON_ESCAPED = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')
_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _JSON_SHORT:
        return _JSON_SHORT[char]
    if "\ud800" <= char <= "\udfff":
        return "\\ufffd" * len(_go_bytes(char))
    return f"\\u{ord(char):04x}"
