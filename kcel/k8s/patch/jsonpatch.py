"""RFC 6902 JSON Patch exactly as the API server applies a MutatingAdmissionPolicy's `JSONPatch` mutation.

Why not a JSON Patch library: Kubernetes uses gopkg.in/evanphx/json-patch.v4, whose quirks reach users: its error
texts, `-1` for the last element, `replace` adding a missing key, `copy` from a missing key writing null, `test`
comparing numbers by their JSON text. This follows its root package (not `v5/`) at v4.13.0 (k8s.io/apiserver 0.35+;
upstream commit 42f26cb, by go.sum's hash), or at v4.12.0 when `answering_as` models a 1.32-1.34 API server.

v4 keeps each value as a lazily decoded Go `*lazyNode`, and that shows: a null read from the document is no node
(None here), while a null written by an operation (its `value`, or a copy of a null node) is a node holding `null`
(`_NULL`), which reads as an empty object whose writes panic; and `test` finds `{}` and `[]` equal to null.
Where Go would panic, PatchPanic is raised (the API server answers with an internal error).

How Kubernetes' use (apiserver pkg/admission/plugin/policy/mutating/patch/json_patch.go) shapes the inputs:
- the object is encoded with the strict JSON serializer first, so the document is always an object;
- each operation is built from the CEL `JSONPatch`: `op` and `path` always (strconv.Quote'd, so a string Go quotes
  with an escape JSON lacks, `\\a \\v \\x7f \\U000e0001`, fails to decode), `from` only when non-empty (an empty
  `from` counts as absent here), `value` only when set, and then as the JSON text of a google.protobuf.Value: a
  null is the text `null`, never Go's nil RawMessage (so `test` with null differs from v4's own tests), and every
  number is a double (kcel.libs.k8s_mutation.to_json converts before this module is called);
- a failed `test` (TestFailed) leaves the object unchanged; any other error fails with "JSON Patch: <text>";
- the result is decoded strictly into the kind (unknown or duplicate fields fail): the caller's job;
- a kube-apiserver sets the process-wide AccumulatedCopySizeLimit to 3 MiB (pkg/server/config.go,
  JSONPatchMaxCopyBytes), and so does ACCUMULATED_COPY_SIZE_LIMIT here (v4's own default is 0, unlimited).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeAlias

from kcel.k8s.environment import Version
from kcel.k8s.field import api_server, json_text, quote

ACCUMULATED_COPY_SIZE_LIMIT = 3 * 1024 * 1024
"""jsonpatch.AccumulatedCopySizeLimit as the API server sets it: the most bytes `copy` operations may add in one
patch (0 is unlimited)."""

V4_13: Version = (1, 35)  # the first API server built with json-patch v4.13.0; 1.32-1.34 have v4.12.0

NIL_MAP = "assignment to entry in nil map"
NIL_POINTER = "runtime error: invalid memory address or nil pointer dereference"


class JSONPatchError(Exception):
    """An error json-patch v4 returns; str() is its text, which the API server reports as "JSON Patch: <text>"."""


class TestFailed(JSONPatchError):
    """A `test` operation failed (jsonpatch.ErrTestFailed): the API server keeps the object unchanged."""

    __test__ = False  # not a pytest test class


class PatchPanic(JSONPatchError):
    """Where json-patch v4 panics (writing into a null, comparing arrays holding null, replacing or testing the whole
    document without a value): the request fails with an internal error. str() is Go's runtime error text."""


class _Null:
    """A node holding JSON null (a nil map once read as an object), unlike a null of the document, which is None."""


_NULL = _Null()

_Node: TypeAlias = "None | _Null | dict[str, _Node] | list[_Node] | str | int | float | bool"
_Container: TypeAlias = "dict[str, _Node] | list[_Node] | _Null"


class _Fail(Exception):
    """An inner error (strconv's, a container's, a field's decoding): the operation wraps its text."""


def _json_kind(value: Any) -> str:
    """How encoding/json names a value's JSON type in an UnmarshalTypeError."""
    kinds = ((bool, "bool"), ((int, float), "number"), (str, "string"), ((list, tuple), "array"))
    return next((name for types, name in kinds if isinstance(value, types)), "object")


def _node(value: Any, top: bool = True) -> _Node:
    """A JSON value as v4 holds it: nulls inside decode to no node, a `value` of null is a node holding null."""
    if value is None:
        return _NULL if top else None
    if isinstance(value, Mapping):
        return {key: _node(item, False) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_node(item, False) for item in value]
    if isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _plain(node: _Node) -> Any:
    """The JSON value a node marshals to."""
    if node is None or isinstance(node, _Null):
        return None
    if isinstance(node, dict):
        return {key: _plain(item) for key, item in node.items()}
    if isinstance(node, list):
        return [_plain(item) for item in node]
    return node


def _text(op: Mapping[str, Any], name: str) -> str | None:
    """A string field of an operation, None when absent, after json_patch.go's strconv.Quote and v4's
    json.Unmarshal: a character Go escapes in a way JSON lacks fails to decode."""
    value = op.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Fail(f"json: cannot unmarshal {_json_kind(value)} into Go value of type string")
    for escape in re.finditer(r"\\(.)", quote(value)):
        if escape.group(1) not in '"\\bfnrtu':
            raise _Fail(f"invalid character '{escape.group(1)}' in string escape code")
    return value


_MISSING = {"path": "operation missing path field", "from": "operation, missing from field"}


def _field(op: Mapping[str, Any], name: str, context: str, cause: bool = True) -> str:
    """`path` or `from` as an operation reads it, a failure wrapped in `context` (some word any "missing value")."""
    try:
        value = _text(op, name)
        if value is None or (name == "from" and not value):  # json_patch.go leaves an empty `from` out
            raise _Fail(f"{_MISSING[name]}: missing value")
        return value
    except _Fail as err:
        raise JSONPatchError(f"{context}: {err if cause else 'missing value'}") from None


@contextmanager
def _wrap(context: str) -> Iterator[None]:
    """Report an inner error as `<context>: <its text>`, as fmt.Errorf("...: %w") does."""
    try:
        yield
    except _Fail as err:
        raise JSONPatchError(f"{context}: {err}") from None


def _kind(op: Mapping[str, Any]) -> str:
    try:
        kind = _text(op, "op")
    except _Fail:
        return "unknown"
    return "unknown" if kind is None else kind


def _value(op: Mapping[str, Any]) -> _Node:
    """The `value` as a node, or no node (None) when the operation has none."""
    return _node(op["value"]) if "value" in op else None


def _unescape(token: str) -> str:
    """RFC 6901 decoding, as strings.NewReplacer("~1", "/", "~0", "~") does it: one left-to-right pass."""
    return re.sub("~[01]", lambda m: "/" if m.group() == "~1" else "~", token)


def _atoi(key: str) -> int:
    """strconv.Atoi on a 64-bit platform, failing with its NumError text."""
    negative = key.startswith("-")
    digits = key[1:] if key[:1] in ("+", "-") else key
    number = 0
    for char in digits or "+":  # no digits is invalid syntax too
        if not "0" <= char <= "9":
            raise _Fail(f"strconv.Atoi: parsing {quote(key)}: invalid syntax")
        number = number * 10 + ord(char) - ord("0")
        if number >= 1 << 64:  # ParseUint stops at the overflow, before looking at later characters
            break
    if number > (1 << 63) - (not negative):
        raise _Fail(f"strconv.Atoi: parsing {quote(key)}: value out of range")
    return -number if negative else number


def _invalid(index: int) -> _Fail:
    return _Fail(f"Unable to access invalid index: {index}: invalid index referenced")


def _index(items: list[_Node], key: str) -> int:
    """partialArray.get's index: negative ones count from the end."""
    index = _atoi(key)
    if index < 0:
        if index < -len(items):
            raise _invalid(index)
        index += len(items)
    if index >= len(items):
        raise _invalid(index)
    return index


def _get(container: _Container, key: str) -> _Node:
    if isinstance(container, list):
        return container[_index(container, key)]
    return None if isinstance(container, _Null) else container.get(key)


def _set(container: _Container, key: str, value: _Node) -> None:
    """`replace`'s write, after a successful _get (so an index is valid)."""
    if isinstance(container, list):
        container[_index(container, key)] = value
    else:
        _add(container, key, value)


def _add(container: _Container, key: str, value: _Node) -> None:
    if isinstance(container, _Null):
        raise PatchPanic(NIL_MAP)
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _Fail as err:
        raise _Fail(f"value was not a proper array index: '{key}': {err}") from None
    size = len(container) + 1
    if index >= size or index < -size:
        raise _invalid(index)
    container.insert(index + size if index < 0 else index, value)


def _remove(container: _Container, key: str) -> None:
    if isinstance(container, list):
        index = _atoi(key)
        if index >= len(container) or index < -len(container):
            raise _invalid(index)
        del container[index]
    elif isinstance(container, _Null) or key not in container:
        raise _Fail(f"Unable to remove nonexistent key: {key}: missing value")
    else:
        del container[key]


def _equal(node: _Node, other: _Node) -> bool:
    """lazyNode.equal: objects key by key (a null node counts as `{}`), arrays element by element (a null node
    counts as `[]`; a null element panics), anything else by its compact JSON text (so `1` equals `1.0`)."""
    if node is None or other is None:
        raise PatchPanic(NIL_POINTER)
    if isinstance(node, (dict, _Null)):
        if not isinstance(other, (dict, _Null)):
            return False
        mine = {} if isinstance(node, _Null) else node
        theirs = {} if isinstance(other, _Null) else other
        return len(mine) == len(theirs) and all(  # Go visits the keys in random order
            key in theirs and (value is None) == (theirs[key] is None) and (value is None or _equal(value, theirs[key]))
            for key, value in mine.items()
        )
    if isinstance(node, list):
        items = [] if isinstance(other, _Null) else other
        if not isinstance(items, list) or len(items) != len(node):
            return False
        return all(_equal(mine, theirs) for mine, theirs in zip(node, items, strict=True))
    return not isinstance(other, (dict, list, _Null)) and json_text(node) == json_text(other)


class _Patcher:
    """One Patch.Apply: the document (Go's container) and the bytes copied so far."""

    def __init__(self, document: Any) -> None:
        root = _node(document)  # json.Unmarshal of null leaves a nil map, which is what a null node reads as
        if not isinstance(root, (dict, list, _Null)):
            kind = _json_kind(document)
            raise JSONPatchError(f"json: cannot unmarshal {kind} into Go value of type jsonpatch.partialDoc")
        self.root: _Container = root
        self.copied = 0

    def find(self, path: str) -> tuple[_Container, str] | None:
        """findObject: the container holding the path's last token, and that token; None when there is none."""
        tokens = path.split("/")
        if len(tokens) < 2:
            return None
        container = self.root
        for token in tokens[1:-1]:
            try:
                node = _get(container, _unescape(token))
            except _Fail:
                return None
            if not isinstance(node, (dict, list, _Null)):
                return None  # missing, null, or a scalar, which does not decode into an object
            container = node
        return container, _unescape(tokens[-1])

    def locate(self, path: str, context: str) -> tuple[_Container, str]:
        found = self.find(path)
        if found is None:
            raise JSONPatchError(f"{context}: missing value")
        return found

    def add(self, op: Mapping[str, Any]) -> None:
        path = _field(op, "path", "add operation failed to decode path", cause=False)
        found = self.locate(path, f'add operation does not apply: doc is missing path: "{path}"')
        with _wrap(f"error in add for path: '{path}'"):
            _add(*found, _value(op))

    def remove(self, op: Mapping[str, Any]) -> None:
        path = _field(op, "path", "remove operation failed to decode path", cause=False)
        found = self.locate(path, f'remove operation does not apply: doc is missing path: "{path}"')
        with _wrap(f"error in remove for path: '{path}'"):
            _remove(*found)

    def replace(self, op: Mapping[str, Any]) -> None:
        path = _field(op, "path", "replace operation failed to decode path")
        value = _value(op)
        if path == "":
            if value is None:
                raise PatchPanic(NIL_POINTER)
            if isinstance(value, (dict, list, _Null)):
                self.root = value
            elif api_server() >= V4_13:  # v4.12 wrapped a nil error: no error, and no change
                raise JSONPatchError("replace operation value must be object or array: %!w(<nil>)")
            return
        found = self.locate(path, f"replace operation does not apply: doc is missing path: {path}")
        try:
            _get(*found)
        except _Fail:
            raise JSONPatchError(
                f"replace operation does not apply: doc is missing key: {path}: missing value"
            ) from None
        _set(*found, value)

    def move(self, op: Mapping[str, Any]) -> None:
        source = _field(op, "from", "move operation failed to decode from")
        found = self.locate(source, f"move operation does not apply: doc is missing from path: {source}")
        with _wrap(f"error in move for path: '{found[1]}'"):
            value = _get(*found)
            _remove(*found)
        path = _field(op, "path", "move operation failed to decode path")
        found = self.locate(path, f"move operation does not apply: doc is missing destination path: {path}")
        with _wrap(f"error in move for path: '{path}'"):
            _add(*found, value)

    def copy(self, op: Mapping[str, Any]) -> None:
        source = _field(op, "from", "copy operation failed to decode from")
        found = self.locate(source, f"copy operation does not apply: doc is missing from path: {source}")
        with _wrap(f"error in copy for from: '{source}'"):
            value = _get(*found)
        path = _field(op, "path", "copy operation failed to decode path", cause=False)
        found = self.locate(path, f"copy operation does not apply: doc is missing destination path: {path}")
        if value is not None:  # the copy is the marshalled value, decoded again
            self.copied += len(json_text(_plain(value)).encode())
            value = _node(_plain(value))
        limit = ACCUMULATED_COPY_SIZE_LIMIT
        if limit > 0 and self.copied > limit:
            raise JSONPatchError(
                f"Unable to complete the copy, the accumulated size increase of copy is {self.copied}, "
                f"exceeding the limit {limit}"
            )
        with _wrap("error while adding value during copy"):
            _add(*found, value)

    def test(self, op: Mapping[str, Any]) -> None:
        path = _field(op, "path", "test operation failed to decode path")
        value = _value(op)
        if path == "":
            if not _equal(self.root, value):
                raise TestFailed("testing value  failed: test failed")
            return
        found = self.locate(path, f"test operation does not apply: is missing path: {path}")
        with _wrap(f"error in test for path: '{path}'"):
            current = _get(*found)
        if current is None and value is None:  # absent, or null in the document, tested without a value
            if api_server() < V4_13:
                raise PatchPanic(NIL_POINTER)  # v4.12 reads the missing value's bytes
            return
        if current is None or value is None or not _equal(current, value):
            raise TestFailed(f"testing value {path} failed: test failed")


_OPERATIONS: dict[str, Callable[[_Patcher, Mapping[str, Any]], None]] = {
    "add": _Patcher.add,
    "remove": _Patcher.remove,
    "replace": _Patcher.replace,
    "move": _Patcher.move,
    "test": _Patcher.test,
    "copy": _Patcher.copy,
}


def apply_patch(document: Any, operations: Sequence[Mapping[str, Any]]) -> Any:
    """Apply the operations in order to a JSON value (dict/list/str/int/float/bool/None, as json.loads gives) and
    return the new value; `document` is not modified.

    Each operation has "op", "path", maybe "from" and maybe "value" (a JSON value; absent is not null). Raises
    TestFailed when a `test` fails, PatchPanic where Go panics, JSONPatchError with v4's text otherwise.

    >>> apply_patch({"a": [1, 2]}, [{"op": "add", "path": "/a/-1", "value": 3}, {"op": "remove", "path": "/a/0"}])
    {'a': [2, 3]}
    """
    patcher = _Patcher(document)
    for op in operations:
        kind = _kind(op)
        apply = _OPERATIONS.get(kind)
        if apply is None:
            raise JSONPatchError(f"Unexpected kind: {kind}")
        apply(patcher, op)
    return _plain(patcher.root)
