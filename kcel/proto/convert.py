"""Protobuf values and CEL values, both ways, as cel-go converts them (common/types/pb and each type's
ConvertToNative): wrappers read as their value or null, `Timestamp`/`Duration` as CEL's, `Struct`/`Value`/
`ListValue` as JSON-like maps and lists, `Any` unpacked; and the other way when a message literal sets a field.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from kcel.errors import EvalError
from kcel.eval.runtime import type_name
from kcel.temporal import Duration, Timestamp
from kcel.values import ListView, Uint

NANOS = 1_000_000_000
LISTS = (list, tuple, ListView)
"""What a CEL list is at run time: a list (a tuple from a caller), or a view of a repeated field."""
INT32_MIN, INT32_MAX, UINT32_MAX = -(2**31), 2**31 - 1, 2**32 - 1
JSON_SAFE = 2**53 - 1  # cel-go isJSONSafe: integers a double holds exactly become JSON numbers

WRAPPERS = {
    "google.protobuf.BoolValue": "bool",
    "google.protobuf.BytesValue": "bytes",
    "google.protobuf.DoubleValue": "double",
    "google.protobuf.FloatValue": "double",
    "google.protobuf.Int64Value": "int",
    "google.protobuf.Int32Value": "int",
    "google.protobuf.UInt64Value": "uint",
    "google.protobuf.UInt32Value": "uint",
    "google.protobuf.StringValue": "string",
}
UNSIGNED = frozenset({FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED32,
                      FieldDescriptor.TYPE_FIXED64})  # fmt: skip
NULL_VALUE = "google.protobuf.NullValue"

Convert = Callable[[Any], Any]
UnpackAny = Callable[[Message], Message]


# -- protobuf to CEL ---------------------------------------------------------------------------


def message_to_cel(message: Message, unpack: UnpackAny) -> Any:
    """A message as CEL sees it: a well-known type as its CEL value, any other message as itself."""
    name = message.DESCRIPTOR.full_name
    if not name.startswith("google.protobuf."):
        return message
    if name in WRAPPERS:
        value = message.value
        return Uint(value) if WRAPPERS[name] == "uint" else value
    if name == "google.protobuf.Timestamp":
        return Timestamp(message.seconds * NANOS + message.nanos)
    if name == "google.protobuf.Duration":
        return Duration(message.seconds * NANOS + message.nanos)
    if name == "google.protobuf.Value":
        return json_value_to_cel(message)
    if name == "google.protobuf.Struct":
        return {key: json_value_to_cel(v) for key, v in message.fields.items()}
    if name == "google.protobuf.ListValue":
        return [json_value_to_cel(v) for v in message.values]
    if name == "google.protobuf.Any":
        return message_to_cel(unpack(message), unpack)
    return message


def json_value_to_cel(value: Message) -> Any:
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "struct_value":
        return {key: json_value_to_cel(v) for key, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [json_value_to_cel(v) for v in value.list_value.values]
    return getattr(value, kind)


def element_reader(field: FieldDescriptor, unpack: UnpackAny) -> Convert | None:
    """How one stored element of the field becomes a CEL value (None: it already is one)."""
    if is_message(field):
        if field.message_type.full_name.startswith("google.protobuf."):
            return lambda message: message_to_cel(message, unpack)
        return None
    if field.type in UNSIGNED:
        return Uint
    return None


def is_message(field: FieldDescriptor) -> bool:
    """A field holding a message: of message type, or a proto2 group."""
    return bool(field.type == FieldDescriptor.TYPE_MESSAGE or field.type == FieldDescriptor.TYPE_GROUP)


def is_map(field: FieldDescriptor) -> bool:
    message = field.message_type
    return message is not None and message.GetOptions().map_entry and is_repeated(field)


def is_repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 5.29+; `label` is gone in 7
    return bool(repeated) if repeated is not None else field.label == FieldDescriptor.LABEL_REPEATED


def value_reader(field: FieldDescriptor, unpack: UnpackAny) -> Convert:
    """How the field's stored value (`getattr`, or `Extensions[...]`) becomes a CEL value: repeated and map fields
    as views of the stored field, whose elements convert when read."""
    if is_map(field):
        entry = field.message_type.fields_by_name
        key, value = element_reader(entry["key"], unpack), element_reader(entry["value"], unpack) or _same
        key_type = entry["key"].type
        return lambda stored: MessageMap(stored, key or _same, value, key_type)
    element = element_reader(field, unpack)
    if is_repeated(field):
        return lambda stored: RepeatedField(stored, element)
    return element or _same


class RepeatedField(ListView):
    """A repeated field as a CEL list, read in place."""

    __slots__ = ("stored", "convert")

    def __init__(self, stored: Any, convert: Convert | None) -> None:
        self.stored = stored
        self.convert = convert

    def __len__(self) -> int:
        return len(self.stored)

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is slice:
            return list(self)[index]
        item = self.stored[index]
        return item if self.convert is None else self.convert(item)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.stored) if self.convert is None else map(self.convert, self.stored)

    def __repr__(self) -> str:
        return repr(list(self))


_KEY_CLASSES: dict[int, tuple[type, ...]] = {
    FieldDescriptor.TYPE_STRING: (str,), FieldDescriptor.TYPE_BOOL: (bool,),
}  # fmt: skip


class MessageMap(Mapping[Any, Any]):
    """A map field as a CEL map, read in place: a lookup converts one key and one value, not the whole map."""

    __slots__ = ("stored", "key", "value", "key_classes")
    cel_typed_keys = True  # its keys are all of the field's key type: no `true` stored under `1`

    def __init__(self, stored: Any, key: Convert, value: Convert, key_type: int) -> None:
        self.stored = stored
        self.key = key
        self.value = value
        self.key_classes = _KEY_CLASSES.get(key_type, (int, Uint))

    def __getitem__(self, key: Any) -> Any:
        cls = key.__class__
        if cls is float and self.key_classes[0] is int and key.is_integer():  # CEL finds `1` by `1.0`
            key, cls = int(key), int
        if cls not in self.key_classes:
            raise KeyError(key)
        try:
            if key not in self.stored:
                raise KeyError(key)
        except (TypeError, ValueError):  # out of the key type's range
            raise KeyError(key) from None
        return self.value(self.stored[key])

    def __iter__(self) -> Iterator[Any]:
        return map(self.key, self.stored)

    def __len__(self) -> int:
        return len(self.stored)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def _same(value: Any) -> Any:
    return value


IDENTITY = _same
"""The reader of a field whose stored value is its CEL value (strings, int64s, doubles...)."""


# -- CEL to protobuf ---------------------------------------------------------------------------


class ConversionError(EvalError):
    """A value a message field cannot hold (cel-go's ConvertToNative errors)."""


_SCALAR_NAMES = {
    FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_SINT32: "int32", FieldDescriptor.TYPE_SFIXED32: "int32",
    FieldDescriptor.TYPE_INT64: "int64", FieldDescriptor.TYPE_SINT64: "int64", FieldDescriptor.TYPE_SFIXED64: "int64",
    FieldDescriptor.TYPE_UINT32: "uint32", FieldDescriptor.TYPE_FIXED32: "uint32",
    FieldDescriptor.TYPE_UINT64: "uint64", FieldDescriptor.TYPE_FIXED64: "uint64",
    FieldDescriptor.TYPE_DOUBLE: "float64", FieldDescriptor.TYPE_FLOAT: "float32", FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BYTES: "[]uint8", FieldDescriptor.TYPE_ENUM: "int32",
}  # fmt: skip


# How each CEL type's ConvertToNative words a refusal (cel-go common/types/<type>.go), the target being Go's name of
# the field's type (`int32`, `[]uint8`, `*wrapperspb.Int64Value`).
_REFUSALS = {
    "bool": "type conversion error from bool to '{}'", "bytes": "type conversion error from Bytes to '{}'",
    "double": "type conversion error from Double to '{}'", "int": "unsupported type conversion from 'int' to {}",
    "string": "unsupported native conversion from string to '{}'",
    "uint": "unsupported type conversion from 'uint' to {}",
    "null_type": "type conversion error from 'null_type' to '{}'", "list": "type conversion error from list to '{}'",
    "map": "type conversion error from map to '{}'",
    "google.protobuf.Timestamp": "type conversion error from 'Timestamp' to '{}'",
    "google.protobuf.Duration": "type conversion error from 'Duration' to '{}'",
}  # fmt: skip


def mismatch(value: Any, target: str) -> ConversionError:
    name = type_name(value)
    refusal = _REFUSALS.get(name, f"type conversion error from '*{name}' to '{{}}'")  # a message (Go: its pointer)
    return ConversionError(refusal.format(target))


def scalar_to_proto(field: FieldDescriptor, value: Any) -> Any:
    """A CEL value as a scalar (or enum) field holds it; range errors as cel-go's."""
    kind = _SCALAR_NAMES[field.type]
    cls = value.__class__
    if kind in ("int32", "int64"):
        if cls is not int:
            if field.type == FieldDescriptor.TYPE_ENUM and field.enum_type.full_name == NULL_VALUE and value is None:
                return 0
            raise mismatch(value, kind)
        if kind == "int32" and not INT32_MIN <= value <= INT32_MAX:
            raise ConversionError("integer overflow")
        return value
    if kind in ("uint32", "uint64"):
        if cls is not Uint:
            raise mismatch(value, kind)
        if kind == "uint32" and value > UINT32_MAX:
            raise ConversionError("unsigned integer overflow")
        return int(value)
    if cls is not _SCALAR_CLASSES[kind]:
        raise mismatch(value, kind)
    return value


_SCALAR_CLASSES: dict[str, type] = {"float64": float, "float32": float, "bool": bool, "string": str, "[]uint8": bytes}
_WRAPPED_CLASSES: dict[str, type] = {"bool": bool, "bytes": bytes, "double": float, "int": int, "uint": Uint,
                                     "string": str}  # fmt: skip


def to_json_value(value: Any, target: Message) -> None:
    """Set a `google.protobuf.Value` from a CEL value (cel-go's ConvertToNative(JSONValueType))."""
    cls = value.__class__
    if value is None:
        target.null_value = 0
    elif cls is bool:
        target.bool_value = value
    elif cls is int or cls is Uint:
        if -JSON_SAFE <= value <= JSON_SAFE:
            target.number_value = float(value)
        else:  # proto3's JSON writes 64-bit integers as strings; a double would lose digits
            target.string_value = str(int(value))
    elif cls is float:
        target.number_value = value
    elif cls is str:
        target.string_value = value
    elif cls is bytes:
        target.string_value = base64.b64encode(value).decode("ascii")
    elif cls is Timestamp or cls is Duration:
        target.string_value = value.format()
    elif isinstance(value, Mapping):
        target.struct_value.SetInParent()  # set, even when empty
        to_struct(value, target.struct_value)
    elif isinstance(value, LISTS):
        target.list_value.SetInParent()
        to_list_value(value, target.list_value)
    elif isinstance(value, Message):
        json_format.ParseDict(json_format.MessageToDict(value), target)
    else:
        raise mismatch(value, "*structpb.Value")


def to_struct(value: Any, target: Message) -> None:
    if not isinstance(value, Mapping):
        raise mismatch(value, "*structpb.Struct")
    fields = target.fields
    for key, item in value.items():
        if key.__class__ is not str:
            raise ConversionError(f"bad key type: {type_name(key)}")
        to_json_value(item, fields[key])


def to_list_value(value: Any, target: Message) -> None:
    if not isinstance(value, LISTS):
        raise mismatch(value, "*structpb.ListValue")
    values = target.values
    for item in value:
        to_json_value(item, values.add())


_ANY_WRAPPERS = {bool: "BoolValue", int: "Int64Value", Uint: "UInt64Value", float: "DoubleValue", str: "StringValue",
                 bytes: "BytesValue"}  # fmt: skip


def well_known_to_proto(name: str, value: Any, target: Message, new: Callable[[str], Message]) -> bool:
    """Set a well-known message from a CEL value; False when null leaves it unset (cel-go's nil)."""
    if name in WRAPPERS:
        if value is None:
            return False
        kind = WRAPPERS[name]
        if value.__class__ is not _WRAPPED_CLASSES[kind]:
            raise mismatch(value, "*wrapperspb." + name.rsplit(".", 1)[1])
        number: Any = value
        if name == "google.protobuf.Int32Value" and not INT32_MIN <= number <= INT32_MAX:
            raise ConversionError("integer overflow")
        if name == "google.protobuf.UInt32Value" and number > UINT32_MAX:
            raise ConversionError("unsigned integer overflow")
        target.value = value
        return True
    if name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        if value is None:
            return False
        expected = Timestamp if name.endswith("Timestamp") else Duration
        if value.__class__ is not expected:
            short = name.rsplit(".", 1)[1]
            raise mismatch(value, f"*{short.lower()}pb.{short}")
        seconds, nanos = divmod(value.nanos, NANOS)
        if name.endswith("Duration") and seconds < 0 and nanos:  # a Duration's nanos take the seconds' sign
            seconds, nanos = seconds + 1, nanos - NANOS
        target.seconds, target.nanos = seconds, nanos
        return True
    if name == "google.protobuf.Value":
        to_json_value(value, target)
        return True
    if name == "google.protobuf.Struct":
        to_struct(value, target)
        return True
    if name == "google.protobuf.ListValue":
        to_list_value(value, target)
        return True
    if name == "google.protobuf.Any":
        target.Pack(to_packable(value, new))
        return True
    if value is None:
        return False
    if not isinstance(value, Message) or value.DESCRIPTOR.full_name != name:
        raise mismatch(value, "*" + name)
    target.CopyFrom(value)
    return True


def to_packable(value: Any, new: Callable[[str], Message]) -> Message:
    """The message an `Any` field packs for a CEL value: the message itself, or its well-known type."""
    if isinstance(value, Message):
        return value
    cls = value.__class__
    if cls in _ANY_WRAPPERS:
        name = "google.protobuf." + _ANY_WRAPPERS[cls]
    elif cls is Timestamp or cls is Duration:
        name = value.cel_type_name
    elif isinstance(value, Mapping):
        name = "google.protobuf.Struct"
    elif isinstance(value, LISTS):
        name = "google.protobuf.ListValue"
    elif value is None:
        name = "google.protobuf.Value"
    else:
        raise mismatch(value, "*anypb.Any")
    message = new(name)
    well_known_to_proto(name, value, message, new)
    return message


def unpack_any(
    message: Message, find: Callable[[str], Descriptor | None], new: Callable[[Descriptor], Message]
) -> Message:
    """The message an `Any` holds; an empty or unknown type URL, or bad bytes, fail as cel-go's UnmarshalNew does."""
    url = message.type_url
    if not url:
        raise EvalError("conversion error: invalid empty type URL")
    name = url.rsplit("/", 1)[-1]
    descriptor = find(name)
    if descriptor is None:
        raise EvalError(f"conversion error: unknown type: {name}")
    inner = new(descriptor)
    try:
        inner.ParseFromString(message.value)
    except DecodeError as err:
        raise EvalError(f"conversion error: {err}") from None
    return inner
