"""Protobuf messages as CEL values (`kcel.Env(messages=[...])`, needs `pip install 'kcel[protobuf]'`).

Messages are read in place: a field select is an attribute read plus the conversion its kind needs.
"""

from __future__ import annotations

from typing import Any

try:
    from google.protobuf.message import Message
except ImportError as err:  # the extra is missing
    raise ImportError("protobuf messages need the protobuf package: pip install 'kcel[protobuf]'") from err

from kcel.errors import EvalError
from kcel.proto.equality import messages_equal
from kcel.proto.types import message_type
from kcel.values import OBJECTS


def _field(obj: Any, field: str) -> Any:
    found = message_type(obj.DESCRIPTOR).field(field)
    if found is None:
        raise EvalError(f"no such field '{field}'")  # cel-go protoObj.Get/IsSet (a literal's says `no such field: f`)
    return found


def _read(obj: Any, field: str) -> Any:
    return _field(obj, field).read(obj)


def _test(obj: Any, field: str) -> bool:
    return bool(_field(obj, field).test(obj))


def _type_name(obj: Any) -> str:
    return str(obj.DESCRIPTOR.full_name)


def _is_zero(obj: Any) -> bool:
    return not obj.ListFields()


def _fields(obj: Any) -> list[tuple[str, Any]]:
    """The fields set, by name (an extension by its full name, escaped as CEL writes it), as CEL values."""
    found = []
    for field, _ in obj.ListFields():
        key = field.full_name if field.is_extension else field.name
        found.append((f"`{key}`" if field.is_extension else key, _read(obj, key)))
    return found


OBJECTS.classes = (Message,)
OBJECTS.read = _read
OBJECTS.test = _test
OBJECTS.type_name = _type_name
OBJECTS.equals = messages_equal
OBJECTS.is_zero = _is_zero
OBJECTS.fields = _fields
