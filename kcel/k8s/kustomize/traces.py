"""Where each field of a patched object was written: the base file, or the patch that added or changed it.

A `Trace` follows the object's shape only where patches touched it; an untouched subtree is one node that says
"all of this is at that place, field for field", so tracing a large CRD costs nothing until a patch changes it.
`locate` turns an API server's field path (kcel.k8s.field elements) into the file, document and path to look
the line up in (kcel.annotations does it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Step = str | int


@dataclass(frozen=True)
class Place:
    """A field in a YAML file: the file, its document, and the path inside it. `exact`: a field below this one is
    at the same relative path (false for an inline patch, a YAML string inside a kustomization: all of it is
    shown at that string)."""

    file: str
    document: int
    path: tuple[Step, ...] = ()
    exact: bool = True

    def child(self, step: Step) -> Place:
        return Place(self.file, self.document, (*self.path, step), self.exact) if self.exact else self


Children = dict[str, "Trace"] | list["Trace"] | None


@dataclass(frozen=True)
class Trace:
    """A value's place and, where patches changed what is below it, its children's traces (None: the whole
    subtree is at `place`)."""

    place: Place
    children: Children = None


def expanded(trace: Trace, value: Any) -> dict[str, Trace] | list[Trace] | None:
    """A fresh copy of a node's children's traces, made from its value where the subtree was uniform (None for a
    scalar)."""
    if isinstance(trace.children, dict):
        return dict(trace.children)
    if isinstance(trace.children, list):
        return list(trace.children)
    if isinstance(value, Mapping):
        return {key: Trace(trace.place.child(key)) for key in value}
    if isinstance(value, list):
        return [Trace(trace.place.child(i)) for i in range(len(value))]
    return None


@dataclass(frozen=True)
class Origins:
    """The trace of one patched object, for kcel.annotations: where the field an error names was written."""

    trace: Trace
    patched_by: tuple[str, ...]  # the patch files (or kustomizations, for inline patches) applied, in order

    def locate(self, elements: tuple[tuple[str, str], ...]) -> tuple[str, int, tuple[tuple[str, str], ...]]:
        """The file, document and field path elements where the field at `elements` (of the patched object) is
        written; the nearest field above it that a trace knows when the path goes further than the trace."""
        node = self.trace
        rest = list(elements)
        while rest and node.children is not None:
            name, subscript = rest[0]
            step = name or subscript
            if isinstance(node.children, list):
                if not step.isdigit() or int(step) >= len(node.children):
                    break
                node = node.children[int(step)]
            elif step in node.children:
                node = node.children[step]
            else:
                break
            rest.pop(0)
        place = node.place
        path = tuple((step, "") if isinstance(step, str) else ("", str(step)) for step in place.path)
        return place.file, place.document, path + (tuple(rest) if place.exact else ())
