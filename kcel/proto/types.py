"""Protobuf message types as CEL types (cel-go's pb type provider): the checker's field types, and how the
evaluator reads, tests and builds fields of messages it holds in place (no conversion to dicts).

Each field gets its reader, presence test and setter once, when first asked for; reading a field then costs one
attribute access plus the conversion its kind needs (unsigned ints become `uint`, well-known types CEL values).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from kcel.checker.decls import FieldAccess
from kcel.checker.types import BOOL, BYTES, DOUBLE, INT, STRING, UINT, WELL_KNOWN_TYPES, CelType, list_of, map_of
from kcel.errors import EvalError
from kcel.eval.equality import cel_equals
from kcel.eval.runtime import type_name
from kcel.proto import convert
from kcel.proto.convert import ConversionError, is_map, is_message, is_repeated
from kcel.values import NONE, Optional

_PRIMITIVES = {
    FieldDescriptor.TYPE_BOOL: BOOL, FieldDescriptor.TYPE_BYTES: BYTES, FieldDescriptor.TYPE_STRING: STRING,
    FieldDescriptor.TYPE_DOUBLE: DOUBLE, FieldDescriptor.TYPE_FLOAT: DOUBLE,
    **{t: UINT for t in convert.UNSIGNED},
}  # fmt: skip

_KNOWN: dict[str, Descriptor] = {}
"""Every message descriptor an environment was given, by full name: where an `Any` looks for its type after the
pools of the `Any` itself and the default pool."""


def register(descriptors: dict[str, Descriptor]) -> None:
    _KNOWN.update(descriptors)


def find_descriptor(name: str, near: Descriptor | None = None) -> Descriptor | None:
    for pool in (near.file.pool if near is not None else None, descriptor_pool.Default()):
        if pool is None:
            continue
        try:
            return pool.FindMessageTypeByName(name)
        except KeyError:
            continue
    return _KNOWN.get(name)


def unpack(message: Message) -> Message:
    return convert.unpack_any(message, lambda name: find_descriptor(name, message.DESCRIPTOR), new_message)


def new_message(descriptor: Descriptor) -> Message:
    return message_type(descriptor).message_class()


def singular_type(field: FieldDescriptor) -> CelType:
    if is_message(field):
        return WELL_KNOWN_TYPES.get(field.message_type.full_name) or message_type(field.message_type).cel
    if field.type == FieldDescriptor.TYPE_ENUM:  # every enum, google.protobuf.NullValue too (cel-go IsEnum first)
        return INT
    return _PRIMITIVES.get(field.type, INT)


def field_type(field: FieldDescriptor) -> CelType:
    """The field's CEL type (cel-go fieldDescToCELType): enums are `int`, repeated fields lists, maps maps."""
    if is_map(field):
        entry = field.message_type.fields_by_name
        return map_of(singular_type(entry["key"]), singular_type(entry["value"]))
    return list_of(singular_type(field)) if is_repeated(field) else singular_type(field)


_TYPES: dict[Descriptor, MessageType] = {}


def message_type(descriptor: Descriptor) -> MessageType:
    found = _TYPES.get(descriptor)
    if found is None:
        found = _TYPES[descriptor] = MessageType(descriptor)
    return found


class MessageType:
    """One message type: the `StructType` the checker and planner ask for fields, literals and equality."""

    def __init__(self, descriptor: Descriptor) -> None:
        self.descriptor = descriptor
        self.name = descriptor.full_name
        self._fields: dict[str, _Field | None] = {}

    @cached_property
    def message_class(self) -> type[Message]:
        return message_factory.GetMessageClass(self.descriptor)  # type: ignore[no-any-return]

    @cached_property
    def cel(self) -> CelType:
        return WELL_KNOWN_TYPES.get(self.name) or CelType(self.name, kind="message", decl=self)

    def field(self, name: str) -> _Field | None:
        if name not in self._fields:
            found = self.descriptor.fields_by_name.get(name)
            if found is None and "." in name:  # an extension, by its full name
                extension = find_extension(name)
                found = extension if extension is not None and extension.containing_type is self.descriptor else None
            self._fields[name] = None if found is None else _Field(found)
        return self._fields[name]

    # -- StructType ----------------------------------------------------------------------------

    def field_type(self, name: str, keywords: bool = False) -> CelType | None:
        found = self.field(name)
        return None if found is None else found.cel

    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None:
        found = self.field(name)
        return None if found is None else found.access

    def construct(self, fields: dict[str, Any]) -> Any:
        """A message literal: each field set as cel-go's NewValue sets it; a well-known type becomes its value."""
        message = self.message_class()
        for name, value in fields.items():
            found = self.field(name)
            if found is None:
                raise EvalError(f"no such field: {name}")
            found.set(message, value)
        return convert.message_to_cel(message, unpack)

    @property
    def equals(self) -> Callable[[Any, Any], bool]:
        return cel_equals


_EXTENSIONS: dict[str, FieldDescriptor] = {}


def register_extensions(extensions: dict[str, FieldDescriptor]) -> None:
    _EXTENSIONS.update(extensions)


def find_extension(name: str) -> FieldDescriptor | None:
    return _EXTENSIONS.get(name)


class _Field:
    """One field (or extension) of a message type: its CEL type, and how to read, test and set it."""

    def __init__(self, field: FieldDescriptor) -> None:
        self.descriptor = field
        self.name = field.name
        self.extension = field.is_extension
        self.convert = convert.value_reader(field, unpack)
        self.repeated = is_repeated(field)
        self.owner: type | None = None  # the message class whose instances this field is read from inline
        self.presence = bool(field.has_presence) and not self.repeated and not self.extension
        self.read = self._reader()

    def _reader(self) -> Callable[[Any], Any]:
        """`read`, specialised: on an instance of the field's own message class, an attribute read (and the
        conversion the field's kind needs); anything else takes the general path."""
        field, generic = self.descriptor, self._read
        kind = field.message_type.full_name if is_message(field) else ""
        if self.extension or kind == "google.protobuf.Any":  # an unset Any is an error, read the general way
            return generic
        owner = self.owner = message_type(field.containing_type).message_class
        name, to_cel = self.name, self.convert
        if kind in convert.WRAPPERS and not self.repeated:  # an unset wrapper is null

            def read_wrapper(message: Any) -> Any:
                if message.__class__ is not owner:
                    return generic(message)
                return to_cel(getattr(message, name)) if message.HasField(name) else None

            return read_wrapper
        if to_cel is convert.IDENTITY:  # scalars, and messages (an unset one reads as its default instance)

            def read(message: Any) -> Any:
                return getattr(message, name) if message.__class__ is owner else generic(message)

            return read

        def read_converted(message: Any) -> Any:
            return to_cel(getattr(message, name)) if message.__class__ is owner else generic(message)

        return read_converted

    @cached_property
    def cel(self) -> CelType:
        return field_type(self.descriptor)

    def stored(self, message: Any) -> Any:
        if not isinstance(message, Message):
            raise EvalError(f"no such key: {self.name}")
        if self.extension:
            return message.Extensions[self.descriptor]
        return getattr(message, self.name)

    def _read(self, message: Any) -> Any:
        """The field's CEL value; an unset wrapper is null, an unset message its default instance."""
        field = self.descriptor
        if is_message(field) and not self.repeated:
            name = field.message_type.full_name
            if name in convert.WRAPPERS and not self.test(message):
                return None
            if name == "google.protobuf.Any" and not self.test(message):
                raise EvalError("conversion error: invalid empty type URL")
        return self.convert(self.stored(message))

    def test(self, message: Any) -> bool:
        """`has()`: repeated and map fields when not empty, fields with presence when set, others when not zero."""
        if self.presence and message.__class__ is self.owner:  # the common case: a field with presence, in place
            found: Any = message
            return bool(found.HasField(self.name))
        field = self.descriptor
        if self.repeated:
            return len(self.stored(message)) > 0
        if not isinstance(message, Message):
            raise EvalError(f"no such key: {self.name}")
        if self.extension:
            return bool(message.HasExtension(field))
        if field.has_presence:
            return bool(message.HasField(self.name))
        value = getattr(message, self.name)
        if value.__class__ is float:
            return value != 0 or math.copysign(1.0, value) < 0  # protobuf tests the bits: -0.0 is set
        return bool(value)

    def read_optional(self, message: Any) -> Any:
        if type(message) is Optional:
            if not message.has_value():
                return message
            message = message.value
        return Optional(self.read(message)) if self.test(message) else NONE

    @cached_property
    def access(self) -> FieldAccess:
        inline = self.owner is not None and self.convert is convert.IDENTITY
        return FieldAccess(
            self.read, self.test, self.read_optional, attribute=self.name if inline else None,
            owner=self.owner if inline else None,
        )  # fmt: skip

    # -- setting -------------------------------------------------------------------------------

    def set(self, message: Message, value: Any) -> None:
        try:
            self._set(message, value)
        except ConversionError as err:
            owner = self.descriptor.containing_type.full_name
            raise EvalError(f"field type conversion error for {owner}.{self.name} value type: {err}") from None
        except (TypeError, ValueError) as err:  # what protobuf itself refuses (a closed enum's unknown number)
            raise EvalError(f"field type conversion error for {self.descriptor.full_name}: {err}") from None

    def _unsupported(self, value: Any) -> EvalError:
        owner = self.descriptor.containing_type.full_name
        return EvalError(f"unsupported field type for {owner}.{self.name}: {type_name(value)}")

    def _set(self, message: Message, value: Any) -> None:
        field = self.descriptor
        if is_map(field):
            if not isinstance(value, Mapping):
                raise self._unsupported(value)
            entry = field.message_type.fields_by_name
            key_field, value_field = entry["key"], entry["value"]
            target = self.stored(message)
            for k, v in value.items():
                key = convert.scalar_to_proto(key_field, k)
                if is_message(value_field):
                    element = self._element(value_field, v)
                    if element is not None:
                        target[key].CopyFrom(element)
                else:
                    target[key] = convert.scalar_to_proto(value_field, v)
            return
        if self.repeated:
            if not isinstance(value, convert.LISTS):
                raise self._unsupported(value)
            target = self.stored(message)
            for v in value:
                if is_message(field):
                    element = self._element(field, v)
                    if element is not None:  # a null that leaves a message unset is left out of the list
                        target.add().CopyFrom(element)
                else:
                    target.append(convert.scalar_to_proto(field, v))
            return
        if is_message(field):
            element = self._element(field, value)
            if element is not None:
                (message.Extensions[field] if self.extension else getattr(message, self.name)).CopyFrom(element)
            return
        scalar = convert.scalar_to_proto(field, value)
        if self.extension:
            message.Extensions[field] = scalar
        else:
            setattr(message, self.name, scalar)

    def _element(self, field: FieldDescriptor, value: Any) -> Message | None:
        """A message for a field of message type from a CEL value (None: null, which leaves it unset)."""
        descriptor = field.message_type
        target = new_message(descriptor)
        if descriptor.full_name.startswith("google.protobuf."):
            set_ = convert.well_known_to_proto(descriptor.full_name, value, target, _new_by_name)
            return target if set_ else None
        if value is None:
            return None
        if not isinstance(value, Message) or value.DESCRIPTOR.full_name != descriptor.full_name:
            raise convert.mismatch(value, "*" + descriptor.full_name)
        if value.DESCRIPTOR is descriptor:
            return value
        target.ParseFromString(value.SerializeToString())
        return target


def _new_by_name(name: str) -> Message:
    descriptor = find_descriptor(name)
    if descriptor is None:
        raise EvalError(f"unknown type: {name}")
    return new_message(descriptor)
