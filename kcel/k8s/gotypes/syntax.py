"""A Go file as controller-gen needs it: the package clause, imports, type declarations with their fields and
struct tags, string constants, method names, and every comment with its place, read with tree-sitter-go (never
regular expressions: a marker-like line inside a raw string or a function body is no marker).

Offsets are character offsets into the file's text (tree-sitter's byte offsets converted), so that a finding's
column counts characters as the YAML side does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

GO_EXTRA_HINT = "reading Go needs: pip install 'kcel[go]'"
MAX_GO_FILE_BYTES = 8 * 1024 * 1024  # far past any API types file; bounds the parse of a stray generated file


class GoSyntaxError(ValueError):
    """A Go file that cannot be read: missing tree-sitter, too large, or not Go; the message says which."""


@dataclass(frozen=True)
class Comment:
    """One `//` or `/* */` comment as written. `trailing`: on the same line as the token before it (a line
    comment, never a doc comment)."""

    text: str
    start: int
    end: int
    line: int
    end_line: int
    trailing: bool


@dataclass(frozen=True)
class CommentGroup:
    """Comments on adjacent lines, as go/parser groups them."""

    comments: tuple[Comment, ...]

    @property
    def start(self) -> int:
        return self.comments[0].start

    @property
    def end(self) -> int:
        return self.comments[-1].end

    @property
    def line(self) -> int:
        return self.comments[0].line

    @property
    def end_line(self) -> int:
        return self.comments[-1].end_line


@dataclass(frozen=True)
class TypeExpr:
    """A Go type as written. `kind`: name (`string`, `Foo`), qualified (`metav1.Time`), pointer, slice, array,
    map, struct, interface, or other (func, chan, generics: not in CRD schemas)."""

    kind: str
    start: int
    text: str
    name: str = ""
    package: str = ""  # the import's name, for qualified
    elem: TypeExpr | None = None  # pointer, slice and array element; map value
    key: TypeExpr | None = None  # map key
    fields: tuple[Field, ...] = ()  # struct


@dataclass(frozen=True)
class Field:
    """A struct field (`names` empty for an embedded one) with its tag's text (unquoted)."""

    names: tuple[str, ...]
    type: TypeExpr
    tag: str
    start: int
    end: int
    line: int


@dataclass(frozen=True)
class TypeSpec:
    """`type Name T` or `type Name = T`; `grouped`: inside `type ( ... )`."""

    name: str
    type: TypeExpr
    alias: bool
    grouped: bool
    start: int  # of the spec; the declaration's `type` keyword when not grouped
    end: int
    line: int
    name_start: int


@dataclass(frozen=True)
class Node:
    """A top-level declaration or a struct field, in source order, as the marker collector walks them: what it
    is (`package`, `type`, `grouped-types`, `other`; `field`) and where."""

    kind: str
    start: int
    end: int
    line: int
    children: tuple[Node, ...] = ()  # a type declaration's specs; a spec's fields
    spec: TypeSpec | None = None
    field: Field | None = None


@dataclass(frozen=True)
class GoFile:
    """What controller-gen reads of one Go file."""

    path: str
    text: str
    package: str
    imports: tuple[tuple[str, str], ...]  # (name as used, import path); name "" for a dot or blank import
    types: tuple[TypeSpec, ...]
    nodes: tuple[Node, ...]  # top level, in order
    groups: tuple[CommentGroup, ...]
    constants: tuple[tuple[str, str, str], ...]  # (name, declared type, string value) of typed string constants
    methods: frozenset[tuple[str, str]]  # (receiver type, method name)
    build_ignored: bool  # `//go:build ignore` (or `// +build ignore`) before the package clause

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def column_of(self, offset: int) -> int:
        return offset - (self.text.rfind("\n", 0, offset) + 1) + 1


@cache
def _parser() -> Any:
    try:
        import tree_sitter
        import tree_sitter_go
    except ImportError:
        raise GoSyntaxError(GO_EXTRA_HINT) from None
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_go.language()))


def go_available() -> bool:
    """Whether tree-sitter-go is installed (Go files can be read)."""
    try:
        _parser()
    except GoSyntaxError:
        return False
    return True


def parse_go(text: str, path: str = "<go>") -> GoFile:
    """A Go file's text read.

    Raises:
        GoSyntaxError: tree-sitter is not installed, the file is too large, or it has no package clause.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_GO_FILE_BYTES:
        raise GoSyntaxError(f"{path}: larger than {MAX_GO_FILE_BYTES // (1024 * 1024)} MiB, not read as Go")
    tree = _parser().parse(data)
    return _Reader(text, data, path).file(tree.root_node)


class _Reader:
    """One file's tree turned into dataclasses; byte offsets become character offsets."""

    def __init__(self, text: str, data: bytes, path: str) -> None:
        self.text, self.data, self.path = text, data, path
        self.ascii = len(data) == len(text)
        self._chars: list[int] = []

    def offset(self, byte: int) -> int:
        if self.ascii:
            return byte
        if not self._chars:
            chars, position = [0] * (len(self.data) + 1), 0
            for index, char in enumerate(self.text):
                width = len(char.encode("utf-8", "surrogatepass"))
                for i in range(width):
                    chars[position + i] = index
                position += width
            chars[position] = len(self.text)
            self._chars = chars
        return self._chars[byte]

    def source(self, node: Any) -> str:
        return str(self.data[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    def file(self, root: Any) -> GoFile:
        package, imports, types, nodes, constants, methods = "", [], [], [], [], set()
        comments = []
        first_token_line = None
        for child in root.named_children:
            if child.type == "comment":
                comments.append(child)
                continue
            if child.type == "package_clause":
                package = next((self.source(c) for c in child.named_children if c.type == "package_identifier"), "")
                first_token_line = child.start_point[0]
                nodes.append(self._node("package", child))
            elif child.type == "import_declaration":
                imports += self._imports(child)
                nodes.append(self._node("other", child))
            elif child.type == "type_declaration":
                node, specs = self._type_declaration(child, comments)
                types += specs
                nodes.append(node)
            elif child.type == "const_declaration":
                constants += self._constants(child)
                nodes.append(self._node("other", child))
            elif child.type == "method_declaration":
                methods.add(self._method(child))
                nodes.append(self._node("other", child))
            else:
                nodes.append(self._node("other", child))
        if not package:
            raise GoSyntaxError(f"{self.path}: not a Go file (no package clause)")
        groups = _groups([self._comment(c) for c in _all_comments(root)])
        header = [g for g in groups if first_token_line is not None and g.end_line <= first_token_line + 1]
        ignored = any(_ignores_build(c.text) for g in header for c in g.comments)
        return GoFile(self.path, self.text, package, tuple(imports), tuple(types), tuple(nodes), tuple(groups),
                      tuple(constants), frozenset(methods), ignored)  # fmt: skip

    def _node(self, kind: str, node: Any, children: tuple[Node, ...] = (), **more: Any) -> Node:
        return Node(kind, self.offset(node.start_byte), self.offset(node.end_byte), node.start_point[0] + 1,
                    children, **more)  # fmt: skip

    def _comment(self, node: Any) -> Comment:
        start = node.start_byte
        before = self.data.rfind(b"\n", 0, start)
        prefix = self.data[before + 1 : start]
        trailing = bool(prefix.strip()) and not prefix.strip().startswith(b"/*")
        return Comment(self.source(node), self.offset(start), self.offset(node.end_byte), node.start_point[0] + 1,
                       node.end_point[0] + 1, trailing)  # fmt: skip

    def _imports(self, declaration: Any) -> list[tuple[str, str]]:
        found = []
        for spec in _descendants(declaration, "import_spec"):
            path_node = spec.child_by_field_name("path")
            name_node = spec.child_by_field_name("name")
            path = _unquote_simple(self.source(path_node)) if path_node is not None else ""
            name = self.source(name_node) if name_node is not None else path.rsplit("/", 1)[-1]
            found.append(("" if name in (".", "_") else name, path))
        return found

    def _type_declaration(self, declaration: Any, comments: list[Any]) -> tuple[Node, list[TypeSpec]]:
        grouped = any(c.type == "(" for c in declaration.children)
        specs, children = [], []
        for child in declaration.named_children:
            if child.type not in ("type_spec", "type_alias"):
                continue
            name = child.child_by_field_name("name")
            type_node = child.child_by_field_name("type")
            if name is None or type_node is None:
                continue
            outer = child if grouped else declaration
            generic = child.child_by_field_name("type_parameters") is not None
            expr = self._type(type_node)
            if generic:
                expr = TypeExpr("other", expr.start, expr.text)
            spec = TypeSpec(self.source(name), expr, child.type == "type_alias", grouped,
                            self.offset(outer.start_byte), self.offset(outer.end_byte), outer.start_point[0] + 1,
                            self.offset(name.start_byte))  # fmt: skip
            specs.append(spec)
            fields = tuple(self._field_node(f) for f in _struct_fields(type_node))
            children.append(self._node("type", child, fields, spec=spec))
        return self._node("grouped-types" if grouped else "type", declaration, tuple(children)), specs

    def _field_node(self, node: Any) -> Node:
        field = self._field(node)
        return self._node("field", node, field=field)

    def _field(self, node: Any) -> Field:
        names = tuple(self.source(n) for n in node.children_by_field_name("name"))
        type_node = node.child_by_field_name("type")
        expr = self._type(type_node) if type_node is not None else TypeExpr("other", self.offset(node.start_byte), "")
        if not names and any(c.type == "*" for c in node.children):  # an embedded *T
            expr = TypeExpr("pointer", self.offset(node.start_byte), "*" + expr.text, elem=expr)
        tag_node = node.child_by_field_name("tag")
        tag = _unquote_simple(self.source(tag_node)) if tag_node is not None else ""
        return Field(names, expr, tag, self.offset(node.start_byte), self.offset(node.end_byte),
                     node.start_point[0] + 1)  # fmt: skip

    def _type(self, node: Any) -> TypeExpr:
        start, text, kind = self.offset(node.start_byte), self.source(node), node.type
        if kind == "parenthesized_type" and node.named_children:
            return self._type(node.named_children[0])
        if kind == "type_identifier":
            return TypeExpr("name", start, text, name=text)
        if kind == "qualified_type":
            package, name = node.child_by_field_name("package"), node.child_by_field_name("name")
            return TypeExpr("qualified", start, text, name=self.source(name), package=self.source(package))
        if kind == "pointer_type":
            return TypeExpr("pointer", start, text, elem=self._type(node.named_children[-1]))
        if kind == "slice_type":
            return TypeExpr("slice", start, text, elem=self._type(node.child_by_field_name("element")))
        if kind == "array_type":
            return TypeExpr("array", start, text, elem=self._type(node.child_by_field_name("element")))
        if kind == "map_type":
            key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
            return TypeExpr("map", start, text, key=self._type(key), elem=self._type(value))
        if kind == "struct_type":
            return TypeExpr("struct", start, text, fields=tuple(self._field(f) for f in _struct_fields(node)))
        if kind == "interface_type" or (kind == "type_identifier" and text == "any"):
            return TypeExpr("interface", start, text)
        return TypeExpr("other", start, text)

    def _constants(self, declaration: Any) -> list[tuple[str, str, str]]:
        found = []
        for spec in _descendants(declaration, "const_spec"):
            type_node = spec.child_by_field_name("type")
            value = spec.child_by_field_name("value")
            if type_node is None or value is None:
                continue
            names = [self.source(n) for n in spec.children_by_field_name("name")]
            values = [v for v in value.named_children]
            for name, literal in zip(names, values, strict=False):
                if literal.type in ("interpreted_string_literal", "raw_string_literal"):
                    found.append((name, self.source(type_node), go_unquote(self.source(literal))))
        return found

    def _method(self, node: Any) -> tuple[str, str]:
        receiver = node.child_by_field_name("receiver")
        name = node.child_by_field_name("name")
        types = [t for t in _descendants(receiver, "type_identifier")] if receiver is not None else []
        return (self.source(types[0]) if types else "", self.source(name) if name is not None else "")


def _struct_fields(type_node: Any) -> list[Any]:
    if type_node.type != "struct_type":
        return []
    body = next((c for c in type_node.named_children if c.type == "field_declaration_list"), None)
    return [] if body is None else [c for c in body.named_children if c.type == "field_declaration"]


def _descendants(node: Any, kind: str) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            found.append(current)
            continue
        stack.extend(reversed(current.named_children))
    return found


def _all_comments(root: Any) -> list[Any]:
    """Every comment of the tree in source order (tree-sitter keeps them as extra nodes wherever they fall)."""
    found, stack = [], [root]
    while stack:
        current = stack.pop()
        if current.type == "comment":
            found.append(current)
            continue
        stack.extend(reversed(current.children))
    return found


def _groups(comments: list[Comment]) -> list[CommentGroup]:
    """go/parser's comment groups: a comment on the line of the token before it starts a group of the comments
    on that line only; any other takes comments while each starts at most one line after the last ends."""
    groups: list[list[Comment]] = []
    for comment in comments:
        if groups and not comment.trailing:
            current = groups[-1]
            if comment.line <= current[-1].end_line + (0 if current[0].trailing else 1):
                current.append(comment)
                continue
        groups.append([comment])
    return [CommentGroup(tuple(g)) for g in groups]


def _ignores_build(comment: str) -> bool:
    body = comment[2:].strip() if comment.startswith("//") else ""
    if body.startswith("go:build") or comment.startswith("// +build"):
        return body.replace("go:build", "").replace("+build", "").strip() == "ignore"
    return False


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
                   '"': '"', "'": "'"}  # fmt: skip


def go_unquote(literal: str) -> str:
    """A Go string literal's value (interpreted or raw), leniently: a bad escape is kept as written."""
    return "".join(chars for chars, _ in literal_characters(literal, 0)[0])


def _unquote_simple(literal: str) -> str:
    return go_unquote(literal)


def literal_characters(literal: str, start: int, quote: str = '"') -> tuple[list[tuple[str, int]], str]:
    """Each character of a Go string literal's value with the offset (from `start`, the literal's first quote)
    where it is written, as Go's strconv.Unquote reads the literal; and the error when it is not valid."""
    if literal.startswith("`"):
        body = literal[1:-1] if literal.endswith("`") and len(literal) > 1 else literal[1:]
        return [(c, start + 1 + i) for i, c in enumerate(body) if c != "\r"], ""
    out: list[tuple[bytes, int]] = []
    i, end = 1, len(literal) - 1 if len(literal) > 1 and literal.endswith(literal[0]) else len(literal)
    error = "" if end < len(literal) else "literal not terminated"
    while i < end:
        char = literal[i]
        if char != "\\":
            out.append((char.encode("utf-8", "surrogatepass"), start + i))
            i += 1
            continue
        escape = literal[i + 1] if i + 1 < end else ""
        if escape in _SIMPLE_ESCAPES and (escape != "'" or quote == "'") and (escape != '"' or quote == '"'):
            out.append((_SIMPLE_ESCAPES[escape].encode(), start + i))
            i += 2
        elif escape in ("x", "u", "U") or escape.isdigit():
            width = {"x": 2, "u": 4, "U": 8}.get(escape, 3)
            digits = literal[i + 2 : i + 2 + width] if escape in "xuU" else literal[i + 1 : i + 4]
            base = 8 if escape not in "xuU" else 16
            try:
                value = int(digits, base) if len(digits) == width else -1
            except ValueError:
                value = -1
            if value < 0 or (escape in "uU" and (value > 0x10FFFF or 0xD800 <= value < 0xE000)) or value > 0x10FFFF:
                error = error or "invalid syntax"
                out.append((literal[i].encode(), start + i))
                i += 1
                continue
            encoded = bytes([value]) if escape not in "uU" else chr(value).encode("utf-8")
            out.append((encoded, start + i))
            i += (2 if escape in "xuU" else 1) + width
        else:
            error = error or "invalid syntax"
            out.append((b"\\", start + i))
            i += 1
    return _decode(out), error


def _decode(pieces: list[tuple[bytes, int]]) -> list[tuple[str, int]]:
    """Bytes with their offsets as characters with the offset of their first byte (an invalid byte is U+FFFD, as
    Go's encoding/json writes it)."""
    data = b"".join(p for p, _ in pieces)
    owners = [offset for piece, offset in pieces for _ in piece]
    found, index = [], 0
    while index < len(data):
        for width in (1, 2, 3, 4):
            try:
                char = data[index : index + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            found.append((char, owners[index]))
            index += width
            break
        else:
            found.append(("\ufffd", owners[index]))
            index += 1
    return found
