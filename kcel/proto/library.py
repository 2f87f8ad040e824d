"""Protobuf messages as a library: message type names, enum constants, message literals and cel-go's `ext:protos`
macros (`proto.getExt(msg, pkg.ext)`, `proto.hasExt(msg, pkg.ext)`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kcel.checker.decls import Library
from kcel.checker.types import WELL_KNOWN_TYPES
from kcel.eval.inputs import register_input
from kcel.parser.ast import Expr, Ident, Select
from kcel.parser.macros import Macro, MacroError, NodeFactory
from kcel.proto import types
from kcel.proto.convert import message_to_cel
from kcel.proto.registry import Messages, MessageSource


def _extension_name(node: Expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, Select) and not node.test_only:
        parts.append(node.field)
        node = node.operand
    if not isinstance(node, Ident):
        return None
    return ".".join([node.name, *reversed(parts)])


def _extension(test_only: bool) -> Any:
    def expand(f: NodeFactory, target: Expr | None, args: tuple[Expr, ...]) -> Expr | None:
        if not (isinstance(target, Ident) and target.name == "proto"):
            return None
        name = _extension_name(args[1])
        if name is None:
            raise MacroError("invalid extension field", args[1])
        return f.select(args[0], name, test_only)

    return expand


PROTOS_MACROS = (
    Macro("getExt", 2, True, _extension(False), "proto.getExt(msg, pkg.ext): the extension field of msg"),
    Macro("hasExt", 2, True, _extension(True), "proto.hasExt(msg, pkg.ext): whether msg has the extension set"),
)


def _well_known_input(message: Any) -> Any:
    return message_to_cel(message, types.unpack)


def protobuf_library(sources: Iterable[MessageSource] | Messages) -> Library:
    """The message types of the sources (and the well-known types) as one library."""
    messages = sources if isinstance(sources, Messages) else Messages(sources)
    types.register(messages.descriptors)
    types.register_extensions(messages.extensions)
    for name, cel in WELL_KNOWN_TYPES.items():  # a `Timestamp` message bound to a variable is a timestamp
        if cel.kind != "null":
            for cls in messages.classes_named(name):
                register_input(cls, _well_known_input)
    literals = {name: types.message_type(descriptor) for name, descriptor in messages.descriptors.items()}
    return Library(
        "protobuf",
        macros=PROTOS_MACROS,
        constants=dict(messages.enum_values),
        types=tuple(t.cel for name, t in literals.items() if name not in WELL_KNOWN_TYPES),  # those are declared
        struct_types=literals.get,
    )
