"""The protobuf message types an environment knows (cel-go's `pb.Db`): descriptors by full name, their classes,
extensions and enum values, gathered from generated classes, modules or `FileDescriptorSet`s.

Needs the `protobuf` package (`pip install 'kcel[protobuf]'`; kcel.proto says so when it is missing); nothing
outside kcel.proto imports it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    json_format,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message import Message

from kcel.proto.convert import is_repeated

WELL_KNOWN_MODULES = (any_pb2, duration_pb2, empty_pb2, field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)
"""The well-known types cel-go registers in every environment (pb.DefaultDb)."""

MessageSource = Any
"""What `Env(messages=...)` takes: a generated message class, a generated `_pb2` module, a `FileDescriptor`, a
`FileDescriptorSet` (as a message, serialized bytes, protobuf JSON as a dict, or a path to a `.json`/`.pb` file),
or another `Messages` registry."""


class Messages:
    """Every message type, extension and enum value reachable from the sources and the well-known types."""

    def __init__(self, sources: Iterable[MessageSource] = ()) -> None:
        self.descriptors: dict[str, Descriptor] = {}
        self.extensions: dict[str, FieldDescriptor] = {}
        self.enum_values: dict[str, int] = {}
        self._files: set[str] = set()
        self._pools: list[Any] = []
        self.files: list[FileDescriptor] = []
        """The files the sources gave (without the well-known ones every registry has)."""
        for module in WELL_KNOWN_MODULES:
            self._add_file(module.DESCRIPTOR)
        for source in sources:
            for file in source.files if isinstance(source, Messages) else _files(source):
                self.files.append(file)
                self._add_file(file)

    def message_class(self, descriptor: Descriptor) -> type[Message]:
        return message_factory.GetMessageClass(descriptor)  # type: ignore[no-any-return]  # protobuf caches it

    def classes_named(self, name: str) -> list[type[Message]]:
        """The message classes of one full name in every pool the sources came from (and protobuf's default)."""
        found = []
        for pool in [descriptor_pool.Default(), *self._pools]:
            try:
                found.append(self.message_class(pool.FindMessageTypeByName(name)))
            except KeyError:
                continue
        return found

    def from_json(self, name: str, value: Any) -> Message:
        """A message from protobuf's JSON mapping (`{"single_int32": 1}`), as the cel-spec suite writes it."""
        descriptor = self.descriptors[name]
        for pool in self._pools:  # the pool of the given files also knows the types an `Any` may name
            try:
                descriptor = pool.FindMessageTypeByName(name)
                break
            except KeyError:
                continue
        message = self.message_class(descriptor)()
        pool = descriptor.file.pool
        repeated = {}  # protobuf before 7 cannot parse a repeated extension of messages from JSON: set it here
        if isinstance(value, dict):
            for key in [k for k in value if k.startswith("[") and k.endswith("]")]:
                extension = self.extensions.get(key[1:-1])
                if extension is not None and extension.message_type is not None and is_repeated(extension):
                    repeated[extension] = value[key]
            taken = {f"[{extension.full_name}]" for extension in repeated}
            value = {k: v for k, v in value.items() if k not in taken}
        json_format.ParseDict(value, message, descriptor_pool=pool)
        for extension, items in repeated.items():
            for item in items:
                json_format.ParseDict(item, message.Extensions[extension].add(), descriptor_pool=pool)
        return message

    def _add_file(self, file: FileDescriptor) -> None:
        if file.pool not in self._pools and file.pool is not descriptor_pool.Default():
            self._pools.append(file.pool)
        if file.name in self._files:
            return
        self._files.add(file.name)
        for dependency in file.dependencies:  # the types its fields name
            self._add_file(dependency)
        for message in file.message_types_by_name.values():
            self._add_message(message)
        for enum in file.enum_types_by_name.values():
            self._add_enum(enum)
        for extension in file.extensions_by_name.values():
            self.extensions[extension.full_name] = extension

    def _add_message(self, message: Descriptor) -> None:
        self.descriptors[message.full_name] = message
        for nested in message.nested_types:
            self._add_message(nested)
        for enum in message.enum_types:
            self._add_enum(enum)
        for extension in message.extensions:
            self.extensions[extension.full_name] = extension

    def _add_enum(self, enum: EnumDescriptor) -> None:
        for value in enum.values:  # cel-go declares `pkg.Msg.Enum.VALUE` (not the C++-scoped `pkg.Msg.VALUE`)
            self.enum_values[f"{enum.full_name}.{value.name}"] = value.number


def _files(source: MessageSource) -> Iterator[FileDescriptor]:
    if isinstance(source, FileDescriptor):
        yield source
    elif isinstance(source, type) and issubclass(source, Message):
        yield source.DESCRIPTOR.file  # type: ignore[attr-defined]
    elif isinstance(source, Message) and source.DESCRIPTOR.full_name != "google.protobuf.FileDescriptorSet":
        yield source.DESCRIPTOR.file
    elif hasattr(source, "DESCRIPTOR") and isinstance(source.DESCRIPTOR, FileDescriptor):  # a `_pb2` module
        yield source.DESCRIPTOR
    else:
        yield from _descriptor_set_files(_descriptor_set(source))


def _descriptor_set(source: Any) -> descriptor_pb2.FileDescriptorSet:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.suffix == ".json":
            return _descriptor_set(json.loads(path.read_text(encoding="utf-8")))
        return _descriptor_set(path.read_bytes())
    if isinstance(source, bytes):
        return descriptor_pb2.FileDescriptorSet.FromString(source)
    if isinstance(source, dict):
        return json_format.ParseDict(source, descriptor_pb2.FileDescriptorSet())
    if isinstance(source, Message) and source.DESCRIPTOR.full_name == "google.protobuf.FileDescriptorSet":
        return descriptor_pb2.FileDescriptorSet.FromString(source.SerializeToString())
    raise TypeError(
        f"not a protobuf message source: {type(source).__name__} (give message classes, _pb2 modules, "
        "FileDescriptors or a FileDescriptorSet)"
    )


_POOLS: dict[bytes, list[FileDescriptor]] = {}


def _descriptor_set_files(files: descriptor_pb2.FileDescriptorSet) -> list[FileDescriptor]:
    """The set's files in a pool of their own, after the well-known files they import (protobuf ships those).

    One pool per distinct set: every registry given the same set shares its descriptors and message classes, so
    messages built through one are the exact classes another reads inline."""
    key = files.SerializeToString(deterministic=True)
    if key not in _POOLS:
        _POOLS[key] = _in_default_pool(files) or _new_pool(files)
    return _POOLS[key]


def _in_default_pool(files: descriptor_pb2.FileDescriptorSet) -> list[FileDescriptor] | None:
    """The set's files as protobuf's default pool already holds them (generated code, or files a program added),
    so that messages of its classes are the ones kcel reads inline; None unless every file is there, the same."""
    default, found = descriptor_pool.Default(), []
    for given in files.file:
        try:
            existing = default.FindFileByName(given.name)
        except KeyError:
            return None
        if _comparable(existing) != _comparable(given):
            return None
        found.append(existing)
    return found


def _comparable(file: Any) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    if isinstance(file, FileDescriptor):
        file.CopyToProto(proto)
    else:
        proto.CopyFrom(file)
    proto.ClearField("source_code_info")
    if proto.syntax == "proto2":  # the default syntax, which CopyToProto leaves out
        proto.ClearField("syntax")
    fields = [f for m in _all_messages(proto.message_type) for f in (*m.field, *m.extension)]
    for field in [*fields, *proto.extension]:
        field.ClearField("json_name")
        if field.HasField("default_value") and field.type in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
            try:  # upb writes a default back in its own digits ("6.4" as "6.4000000000000004")
                field.default_value = repr(float(field.default_value))
            except ValueError:
                pass
    return proto


def _all_messages(messages: Iterable[Any]) -> Iterator[Any]:
    for message in messages:
        yield message
        yield from _all_messages(message.nested_type)


def _new_pool(files: descriptor_pb2.FileDescriptorSet) -> list[FileDescriptor]:
    pool = descriptor_pool.DescriptorPool()
    given = {f.name for f in files.file}
    default = descriptor_pool.Default()
    for module in WELL_KNOWN_MODULES:
        if module.DESCRIPTOR.name not in given:
            proto = descriptor_pb2.FileDescriptorProto()
            default.FindFileByName(module.DESCRIPTOR.name).CopyToProto(proto)
            pool.Add(proto)
    for file in files.file:
        pool.Add(file)
    return [pool.FindFileByName(f.name) for f in files.file]
