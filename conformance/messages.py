"""The suite's protobuf messages: its `proto/messages.descriptors.json` loaded once per directory, and the
suite's `object` values built as messages (a well-known type as the CEL value it stands for)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kcel.checker.decls import Library

DESCRIPTORS = Path("proto") / "messages.descriptors.json"
FEATURES = frozenset({"proto2", "proto3", "proto2_extensions", "proto_wire", "wkt", "ext:protos"})
"""The `requires` features that need message types."""


@dataclass(frozen=True)
class SuiteMessages:
    library: Library
    registry: Any  # kcel.proto.registry.Messages

    def decode(self, kind: str, body: Any) -> Any:
        from kcel.proto.convert import message_to_cel
        from kcel.proto.types import unpack

        return message_to_cel(self.registry.from_json(kind, body), unpack)


def missing(directory: Path) -> str | None:
    """Why the suite's message tests cannot run here, if they cannot."""
    if not (directory / DESCRIPTORS).is_file():
        return f"protobuf messages: no {DESCRIPTORS} in the suite directory"
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        return "protobuf messages need the protobuf package: pip install 'kcel[protobuf]'"
    return None


@cache
def suite_messages(directory: Path) -> SuiteMessages | None:
    if missing(directory) is not None:
        return None
    from kcel.proto.library import protobuf_library
    from kcel.proto.registry import Messages

    registry = Messages([json.loads((directory / DESCRIPTORS).read_text(encoding="utf-8"))])
    return SuiteMessages(protobuf_library(registry), registry)
