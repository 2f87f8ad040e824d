"""Where things are in a YAML file's text: its documents' offsets and the node at a field path (for line numbers in
messages and CI annotations, and for `kcel test --update`, which splices new text in without disturbing the rest)."""

from __future__ import annotations

from collections.abc import Iterable

from yaml import SafeLoader, YAMLError, compose
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kcel.k8s import field as fe


def split_documents(text: str) -> list[tuple[int, str]]:
    """(offset, text) of each `---`-separated part, cut as kcel.k8s.manifests.decoding cuts a file (so that
    the indices are the documents' numbers in messages)."""
    chunks: list[tuple[int, str]] = []
    lines: list[str] = []
    start, offset = 0, 0
    for line in text.splitlines(keepends=True):
        if line.startswith("---"):
            if lines:
                chunks.append((start, "".join(lines)))
            rest = line[3:].strip()
            starts_here = rest and not rest.startswith("#")  # `--- {a: 1}`
            start, lines = (offset, [line]) if starts_here else (offset + len(line), [])
        else:
            lines.append(line)
        offset += len(line)
    if lines:
        chunks.append((start, "".join(lines)))
    return chunks


def compose_documents(text: str, documents: Iterable[int]) -> dict[int, tuple[int, str, Node | None]]:
    """The offset, text and node tree of each document named, the text split once and each document composed once
    (raises ValueError when there is no such document)."""
    chunks = split_documents(text)
    return {document: _compose(chunks, document) for document in set(documents)}


def _compose(chunks: list[tuple[int, str]], document: int) -> tuple[int, str, Node | None]:
    if document >= len(chunks):
        raise ValueError(f"document {document} not found")
    offset, chunk = chunks[document]
    try:
        return offset, chunk, compose(chunk, Loader=SafeLoader)
    except YAMLError as err:
        raise ValueError(f"document {document} does not parse: {err}") from None


def value_of(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None)


def key_of(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((k for k, _ in node.value if isinstance(k, ScalarNode) and k.value == key), None)


def find(root: Node | None, path: fe.Path) -> Node | None:
    """The node at a field path (`cases[2].expect`); the key's node for the last step into a mapping, so that an
    unknown field points at its name. None when the path leads nowhere."""
    node = root
    for position, (name, subscript) in enumerate(path.elements):
        last = position == len(path.elements) - 1
        if isinstance(node, SequenceNode) and not name and subscript.isdigit():
            index = int(subscript)
            node = node.value[index] if index < len(node.value) else None
        else:
            key = name or subscript
            node = key_of(node, key) if last else value_of(node, key)
        if node is None:
            return None
    return node


def line_of(text: str, document: int, path: fe.Path) -> int | None:
    """The 1-based line of a field in a suite file, when it can be found (to ask for many: `Lines`)."""
    return Lines(text).line(document, path)


class Lines:
    """The lines of fields in one YAML text, each document composed once however many lines are asked: a report
    giving the line of each of a suite's failing cases would otherwise parse the file once a case (which made
    `kcel test` quadratic in its failing cases)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._chunks: list[tuple[int, str]] | None = None
        # document: (its offset in the text, its first line, 0-based, its root node)
        self._trees: dict[int, tuple[int, int, Node | None] | None] = {}

    def line(self, document: int, path: fe.Path) -> int | None:
        """The 1-based line of the field at `path` of a document (of the document itself for an empty path)."""
        tree = self._tree(document)
        if tree is None:
            return None
        _, first, root = tree
        node = find(root, path) if path.elements else root
        return None if node is None else first + int(node.start_mark.line) + 1

    def document(self, document: int) -> tuple[int, Node | None] | None:
        """A document's offset in the text and its node tree; None when there is no such document, or it does not
        parse."""
        tree = self._tree(document)
        return None if tree is None else (tree[0], tree[2])

    def _tree(self, document: int) -> tuple[int, int, Node | None] | None:
        if document not in self._trees:
            if self._chunks is None:
                self._chunks = split_documents(self.text)
            try:
                offset, _, root = _compose(self._chunks, document)
            except ValueError:
                self._trees[document] = None
            else:
                self._trees[document] = (offset, self.text.count("\n", 0, offset), root)
        return self._trees[document]


def end_of(chunk: str, node: Node) -> int:
    """Where a node's text ends: its last scalar or flow collection, not the comments and blank lines after it."""
    end = _content_end(node)
    while end > node.start_mark.index and chunk[end - 1] in " \t\r\n":
        end -= 1
    return end


def _content_end(node: Node) -> int:
    if isinstance(node, ScalarNode) or getattr(node, "flow_style", False):
        return int(node.end_mark.index)
    children: list[Node] = []
    if isinstance(node, MappingNode):
        children = [part for pair in node.value for part in pair]
    elif isinstance(node, SequenceNode):
        children = list(node.value)
    return max((_content_end(child) for child in children), default=int(node.end_mark.index))
