"""Message equality as cel-go's `pb.Equal`: the same type, the same fields set to equal values, NaN unequal to
itself (protobuf's own `==` calls two NaNs equal), and `Any` fields compared by what they hold."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from kcel.errors import EvalError
from kcel.proto.convert import is_map


def messages_equal(a: Message, b: Message) -> bool:
    descriptor = a.DESCRIPTOR
    if descriptor.full_name != b.DESCRIPTOR.full_name:
        return False
    if descriptor.full_name == "google.protobuf.Any":
        return _any_equal(a, b)
    fields_a, fields_b = a.ListFields(), b.ListFields()
    if len(fields_a) != len(fields_b):
        return False
    theirs = {field.full_name: value for field, value in fields_b}
    for field, value in fields_a:
        other = theirs.get(field.full_name, _MISSING)
        if other is _MISSING or not _field_equal(field, value, other):
            return False
    return True


_MISSING: Any = object()


def _field_equal(field: FieldDescriptor, a: Any, b: Any) -> bool:
    if is_map(field):
        value_field = field.message_type.fields_by_name["value"]
        return len(a) == len(b) and all(k in b and _value_equal(value_field, a[k], b[k]) for k in a)
    if isinstance(a, (str, bytes, int, float, bool)):
        return _value_equal(field, a, b)
    try:
        return len(a) == len(b) and all(_value_equal(field, x, y) for x, y in zip(a, b, strict=True))
    except TypeError:
        return _value_equal(field, a, b)


def _value_equal(field: FieldDescriptor, a: Any, b: Any) -> bool:
    if isinstance(a, Message):
        return isinstance(b, Message) and messages_equal(a, b)
    return bool(a == b)  # NaN != NaN, as Go's == on floats


def _any_equal(a: Message, b: Message) -> bool:
    from kcel.proto.types import unpack

    try:
        return messages_equal(unpack(a), unpack(b))
    except EvalError:  # a type neither side can unpack: compare what is stored
        return bool(a.type_url == b.type_url and a.value == b.value)
