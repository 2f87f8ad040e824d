"""Kubebuilder markers as controller-tools reads them: which comments belong to a package, a type or a field
(pkg/markers/collect.go), and each marker's arguments by its definition's grammar (pkg/markers/parse.go).

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors): the
association walk and the argument parser, in Python; the marker definitions are those of `controller-gen crd`.

A marker belongs to a type or field when it is in its doc comment or in the comment group just above that
(separated by a blank line); other groups between declarations, and everything before the package clause, belong
to the package. A marker whose name no definition for its target has is not a marker (controller-gen ignores it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcel.k8s.gotypes.markerargs import Argument, MarkerSyntaxError, parse_arguments
from kcel.k8s.gotypes.syntax import CommentGroup, GoFile, Node, parse_go

PACKAGE, TYPE, FIELD = "package", "type", "field"


@dataclass(frozen=True)
class RawMarker:
    """A marker comment's text (after `//`, trimmed) and where its `+` is in the file."""

    text: str
    start: int
    line: int
    column: int
    from_godoc: bool


@dataclass(frozen=True)
class Definition:
    """A marker controller-gen knows: its name, what it describes, and its arguments (`()`: none; one named ""
    for a marker that takes a bare value)."""

    name: str
    target: str
    arguments: tuple[tuple[str, Argument], ...] = ()
    json_value: bool = False  # `+default=<JSON>` (KubernetesDefault's own ParseMarker)


@dataclass(frozen=True)
class Marker:
    """A parsed marker: its definition's name, its value (a bare value, a dict of named arguments, or None), and
    for each string argument the file offset of each of its characters."""

    name: str
    value: Any
    raw: RawMarker
    positions: Mapping[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MarkerError:
    """A marker that does not parse: controller-gen stops with this message at the marker."""

    message: str
    raw: RawMarker


@dataclass(frozen=True)
class FileMarkers:
    """The markers of one file: its package's, each type's (by name) and each field's (by type name and field
    index), with the doc comment groups descriptions come from."""

    package: tuple[RawMarker, ...]
    types: Mapping[str, tuple[RawMarker, ...]]
    fields: Mapping[tuple[str, int], tuple[RawMarker, ...]]
    type_docs: Mapping[str, CommentGroup | None]
    field_docs: Mapping[tuple[str, int], CommentGroup | None]


def _definitions() -> dict[tuple[str, str], Definition]:
    string, integer, number, boolean, anything = (Argument(k) for k in ("string", "int", "number", "bool", "any"))
    strings = Argument("slice", Argument("string"))
    optional_string = Argument("string", optional=True)
    found: list[Definition] = []
    validation = {"Maximum": number, "Minimum": number, "ExclusiveMaximum": boolean, "ExclusiveMinimum": boolean,
                  "MultipleOf": number, "MinProperties": integer, "MaxProperties": integer, "MaxLength": integer,
                  "MinLength": integer, "Pattern": string, "MaxItems": integer, "MinItems": integer,
                  "UniqueItems": boolean, "Enum": Argument("slice", anything), "Format": string, "Type": string,
                  "XPreserveUnknownFields": None, "XEmbeddedResource": None, "XIntOrString": None}  # fmt: skip
    xvalidation = (("rule", string), ("message", optional_string), ("messageExpression", optional_string),
                   ("reason", optional_string), ("fieldPath", optional_string),
                   ("optionalOldSelf", Argument("bool", optional=True)))  # fmt: skip
    for prefix in ("kubebuilder:validation:", "kubebuilder:validation:items:"):
        for target in (FIELD, TYPE):
            for name, argument in validation.items():
                found.append(Definition(prefix + name, target, (("", argument),) if argument else ()))
            found.append(Definition(prefix + "XValidation", target, xvalidation))
    for name in ("ExactlyOneOf", "AtMostOneOf", "AtLeastOneOf"):
        found.append(Definition("kubebuilder:validation:" + name, TYPE, (("", strings),)))
    found += [Definition("k8s:enum", TYPE), Definition("k8s:enum", FIELD)]
    for name in ("kubebuilder:validation:Required", "kubebuilder:validation:Optional", "required", "optional",
                 "k8s:required", "k8s:optional", "nullable", "kubebuilder:validation:EmbeddedResource",
                 "kubebuilder:validation:Schemaless", "k8s:immutable"):  # fmt: skip
        found.append(Definition(name, FIELD))
    found += [Definition("kubebuilder:default", FIELD, (("", anything),)),
              Definition("default", FIELD, (("", anything),), json_value=True),
              Definition("kubebuilder:example", FIELD, (("", anything),))]  # fmt: skip
    for target in (FIELD, TYPE):
        found += [
            Definition("kubebuilder:pruning:PreserveUnknownFields", target),
            Definition("kubebuilder:title", target, (("", anything),)),
            Definition("kubebuilder:externalDocs", target, (("url", string), ("description", optional_string))),
        ]
        for name in ("listMapKey", "listType", "mapType", "structType"):  # (+k8s:listType only after v0.21.0)
            found.append(Definition(name, target, (("", string),)))  # fmt: skip
    optional_strings = Argument("slice", Argument("string"), optional=True)
    found += [
        Definition("kubebuilder:subresource:status", TYPE),
        Definition("kubebuilder:subresource:scale", TYPE, (("specpath", string), ("statuspath", string),
                                                            ("selectorpath", optional_string))),
        Definition("kubebuilder:printcolumn", TYPE, (("name", string), ("type", string), ("JSONPath", string),
                                                     ("description", optional_string), ("format", optional_string),
                                                     ("priority", Argument("int", optional=True)))),
        Definition("kubebuilder:resource", TYPE, (("path", optional_string), ("shortName", optional_strings),
                                                  ("categories", optional_strings), ("singular", optional_string),
                                                  ("scope", optional_string))),
        Definition("kubebuilder:storageversion", TYPE), Definition("kubebuilder:skipversion", TYPE),
        Definition("kubebuilder:unservedversion", TYPE),
        Definition("kubebuilder:deprecatedversion", TYPE, (("warning", optional_string),)),
        Definition("kubebuilder:metadata", TYPE, (("annotations", optional_strings), ("labels", optional_strings))),
        Definition("kubebuilder:selectablefield", TYPE, (("JSONPath", string),)),
        Definition("groupName", PACKAGE, (("", Argument("string", optional=True)),)),
        Definition("versionName", PACKAGE, (("", string),)),
        Definition("kubebuilder:validation:Optional", PACKAGE), Definition("kubebuilder:validation:Required", PACKAGE),
        Definition("kubebuilder:skip", PACKAGE),
    ]  # fmt: skip
    return {(d.target, d.name): d for d in found}


DEFINITIONS = _definitions()


def split_marker(text: str) -> tuple[str, str, str]:
    """A marker's name, its name with the first argument's (`kubebuilder:resource:path`), and the rest after the
    first `=` (splitMarker)."""
    body = text[1:]
    anonymous, equals, rest = body.partition("=")
    if not equals:
        return anonymous, anonymous, ""
    parts = anonymous.split(":")
    return (":".join(parts[:-1]) if len(parts) > 1 else anonymous), anonymous, rest


def lookup(text: str, target: str) -> Definition | None:
    """The definition a marker's text names for a target (tryAnonLookup: the longer name first)."""
    name, anonymous, _ = split_marker(text)
    return DEFINITIONS.get((target, anonymous)) or DEFINITIONS.get((target, name))


def parse_marker(raw: RawMarker, definition: Definition) -> Marker:
    """A marker's value by its definition (Definition.Parse).

    Raises:
        MarkerSyntaxError: arguments the grammar rejects, with the message controller-gen gives.
    """
    name, anonymous, rest = split_marker(raw.text)
    if definition.json_value:
        return Marker(definition.name, _json_default(rest), raw)
    arguments = dict(definition.arguments)
    if list(arguments) not in ([""], []) and len(anonymous) >= len(name) + 1:
        fields_start = 1 + len(name) + 1  # `rule="..."`: the first argument's name was part of the marker's name
    else:
        fields_start = 1 + len(anonymous) + 1
    fields = raw.text[fields_start:] if len(raw.text) > len(anonymous) + 1 else ""
    del rest
    value, positions = parse_arguments(fields, arguments)
    offset = raw.start + fields_start
    return Marker(definition.name, value, raw, {k: tuple(offset + i for i in v) for k, v in positions.items()})


def _json_default(rest: str) -> Any:
    import json

    if rest.strip().startswith("ref("):
        return None
    try:
        return json.loads(rest)
    except ValueError as err:
        raise MarkerSyntaxError(f"invalid JSON: {err}") from None


def file_markers(go: GoFile) -> FileMarkers:
    """Every marker comment of a file, given to its package, types and fields as controller-tools does."""
    walk = _Walk(go)
    walk.top_level()
    return FileMarkers(tuple(walk.package), walk.types, walk.fields, walk.type_docs, walk.field_docs)


class _Walk:
    """The collector's visit of one file: for each node, the comment groups since the last node; the last one
    (or the one before a doc comment) is the node's marker block."""

    def __init__(self, go: GoFile) -> None:
        self.go = go
        self.groups = go.groups
        self.package: list[RawMarker] = []
        self.types: dict[str, tuple[RawMarker, ...]] = {}
        self.fields: dict[tuple[str, int], tuple[RawMarker, ...]] = {}
        self.type_docs: dict[str, CommentGroup | None] = {}
        self.field_docs: dict[tuple[str, int], CommentGroup | None] = {}

    def top_level(self) -> None:
        for node, others, block, doc in self._attached(self.go.nodes):
            self.package += self._markers(others)
            if node.kind == "package":
                self.package += self._markers([block, doc])
            elif node.kind == "type":
                (child,) = node.children or (None,)
                if child is not None and child.spec is not None:
                    self._type(child, self._markers([block]) + self._markers([doc], godoc=True), doc)
            else:
                self.package += self._markers([block])
                if node.kind == "grouped-types":
                    for spec_node, spec_others, spec_block, spec_doc in self._attached(node.children, node.start):
                        del spec_others  # groups between specs other than their own belong to no one
                        found = self._markers([spec_block]) + self._markers([spec_doc], godoc=True)
                        self._type(spec_node, found, spec_doc)
        last = self.go.nodes[-1].end if self.go.nodes else 0
        self.package += self._markers([g for g in self.groups if g.start >= last])

    def _type(self, node: Node, found: list[RawMarker], doc: CommentGroup | None) -> None:
        assert node.spec is not None
        kept = []
        for raw in found:  # a package marker in a type's marker block (not its godoc) is the package's
            if not raw.from_godoc and lookup(raw.text, TYPE) is None and lookup(raw.text, PACKAGE) is not None:
                self.package.append(raw)
            else:
                kept.append(raw)
        name = node.spec.name
        self.types[name] = tuple(kept)
        self.type_docs[name] = doc
        for index, (field_node, _, block, field_doc) in enumerate(self._attached(node.children, node.start)):
            del field_node
            self.fields[(name, index)] = tuple(self._markers([block]) + self._markers([field_doc], godoc=True))
            self.field_docs[(name, index)] = field_doc

    def _attached(
        self, nodes: tuple[Node, ...], cursor: int = 0
    ) -> Iterator[tuple[Node, list[CommentGroup], CommentGroup | None, CommentGroup | None]]:
        groups = self.groups
        index = next((i for i, g in enumerate(groups) if g.start >= cursor), len(groups))
        previous_end_line = 0
        for node in nodes:
            candidates = []
            while index < len(groups) and groups[index].end <= node.start:
                group = groups[index]
                index += 1
                if group.comments[0].trailing and group.line == previous_end_line:
                    continue  # the previous node's line comment
                candidates.append(group)
            doc = candidates[-1] if candidates and candidates[-1].end_line + 1 == node.line else None
            if doc is not None and doc.comments[0].trailing:
                doc = None
            rest = candidates[:-1] if doc is not None else candidates
            block = rest[-1] if rest else None
            yield node, rest[:-1], block, doc
            while index < len(groups) and groups[index].start < node.end:
                index += 1
            previous_end_line = self.go.line_of(node.end)

    def _markers(self, groups: Sequence[CommentGroup | None], godoc: bool = False) -> list[RawMarker]:
        found = []
        for group in groups:
            if group is None:
                continue
            for comment in group.comments:
                if not comment.text.startswith("//"):
                    continue
                body = comment.text[2:]
                stripped = body.strip()
                if not stripped.startswith("+"):
                    continue
                start = comment.start + 2 + (len(body) - len(body.lstrip()))
                found.append(RawMarker(stripped, start, comment.line, self.go.column_of(start), godoc))
        return found


@dataclass(frozen=True)
class Markers:
    """A node's parsed markers by definition name, in order, with the errors of the ones that did not parse."""

    values: Mapping[str, tuple[Marker, ...]]

    def get(self, name: str) -> Marker | None:
        found = self.values.get(name)
        return found[0] if found else None

    def has(self, name: str) -> bool:
        return bool(self.values.get(name))


def parsed(raws: tuple[RawMarker, ...], target: str, errors: list[MarkerError]) -> Markers:
    """The markers of a node parsed for its target; the ones that do not parse go to `errors`."""
    values: dict[str, list[Marker]] = {}
    for raw in raws:
        definition = lookup(raw.text, target)
        if definition is None:
            continue
        try:
            marker = parse_marker(raw, definition)
        except MarkerSyntaxError as err:
            errors.append(MarkerError(str(err), raw))
            continue
        values.setdefault(definition.name, []).append(marker)
    return Markers({k: tuple(v) for k, v in values.items()})


@dataclass(frozen=True)
class RuleSource:
    """A rule in a kubebuilder XValidation marker: its text, and the file offset of each of its characters (and
    one past the end), as controller-gen reads the marker's string."""

    rule: str
    positions: tuple[int, ...]

    @property
    def start(self) -> int:
        return self.positions[0] - 1 if self.positions else 0

    @property
    def end(self) -> int:
        return self.positions[-1] + 1 if self.positions else 0


def xvalidation_rules(text: str, path: str = "<go>") -> Iterator[RuleSource]:
    """Every XValidation rule of a Go file's markers (types and fields, items variants included), in file order.

    Raises:
        GoSyntaxError: the file cannot be read as Go (kcel[go] not installed, or no package clause).
    """
    go = parse_go(text, path)
    found = file_markers(go)
    raws = [(raw, FIELD) for markers in found.fields.values() for raw in markers]
    raws += [(raw, TYPE) for markers in found.types.values() for raw in markers]
    for raw, target in sorted(raws, key=lambda pair: pair[0].start):
        definition = lookup(raw.text, target)
        if definition is None or not definition.name.endswith(":XValidation"):
            continue
        try:
            marker = parse_marker(raw, definition)
        except MarkerSyntaxError:
            continue
        rule = marker.value.get("rule") if isinstance(marker.value, dict) else None
        if isinstance(rule, str):
            positions = marker.positions.get("rule", ())
            end = positions[-1] + 1 if positions else raw.start
            yield RuleSource(rule, (*positions, end))
