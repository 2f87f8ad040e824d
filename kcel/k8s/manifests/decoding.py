"""Manifests decoded as the API server decodes a request body: YAML and JSON documents, numbers and duplicate keys.

YAML goes through sigs.k8s.io/yaml, which reads it with go-yaml v2 and turns it into JSON. That decides what a
plain scalar is (`y`, `on` and `NO` are booleans, `1e3` and `0x1F` are numbers, `1:20` and dates stay strings),
that keys become strings and that whole floats become integers (`1.0` arrives as the integer 1). JSON numbers
decode as the API server's (int64 when integral, else float64). Duplicate keys are what strict field validation
rejects; each document carries them as the strict decoder words them:

* YAML: `yaml: unmarshal errors:\\n  line 3: key "a" already set in map` (go-yaml's UnmarshalStrict);
* JSON: `duplicate field "spec.a"` (sigs.k8s.io/json's UnmarshalStrict), one per duplicate.

Without strict validation the last value of a duplicated key wins, as in Go. A file is split into documents
at lines starting with `---` as kubectl's YAML reader splits it, so a broken document does not hide the others.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode

from kcel.gofloat import format_double
from kcel.k8s.manifests.nesting import (
    LIBYAML_TOO_DEEP,
    MAX_DEPTH,
    TooDeep,
    json_too_deep,
    too_deep_message,
    too_deep_path,
    yaml_too_deep,
)
from kcel.k8s.schemas.maplist import tag
from kcel.temporal import go_quote
from kcel.values import decimal_int

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1
YAML_ERRORS_PREFIX = "yaml: unmarshal errors:\n"


class DecodeError(ValueError):
    """A document that cannot be decoded; the message says where (`file:line:column` when known)."""


@dataclass(frozen=True)
class Document:
    """One decoded document: its JSON value, where it starts, and what strict decoding would reject in it."""

    index: int  # position among the file's non-empty documents
    line: int  # 1-based line of the document's first line
    value: Any = None
    strict_errors: tuple[str, ...] = ()
    error: str = ""  # why the document could not be decoded ("" when it could)


def decode_documents(text: str, name: str = "<text>") -> list[Document]:
    """Every non-empty document of a YAML or JSON file; a document that fails to decode carries its error.

    A `.json` file is a stream of JSON values; otherwise the text is cut at `---` lines and each part is JSON
    when it starts with `{` (as kubectl sniffs it), else YAML. Indices count the parts, empty ones included.

    >>> [d.value for d in decode_documents("a: 1.0\nb: on\n---\nc: 0x10\n")]
    [{'a': 1, 'b': True}, {'c': 16}]
    >>> decode_documents("a: 1\na: 2\n")[0].strict_errors
    ('yaml: unmarshal errors:\n  line 2: key "a" already set in map',)
    """
    if name.endswith(".json"):
        return _json_documents(text, name, 1, 0)
    documents: list[Document] = []
    for index, (line, chunk) in enumerate(_yaml_chunks(text)):
        if chunk.lstrip()[:1] == "{":
            documents += _json_documents(chunk, name, line, index)
            continue
        try:
            value, strict = _decode_yaml(chunk, name, line)
        except DecodeError as err:
            documents.append(Document(index, line, error=str(err)))
            continue
        if value is not None:
            documents.append(Document(index, line, value, strict))
    return documents


def decode_value(text: str, name: str = "<text>") -> Any:
    """The single document of a text (None when empty); raises DecodeError when it does not decode."""
    documents = decode_documents(text, name)
    for document in documents:
        if document.error:
            raise DecodeError(document.error)
    return documents[0].value if documents else None


# -- splitting ------------------------------------------------------------------------------------


def _yaml_chunks(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each `---`-separated chunk, as apimachinery's YAMLReader cuts a stream."""
    start, chunk = 1, []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if not line.startswith("---"):
            chunk.append(line)
            continue
        if chunk:
            yield start, "".join(chunk)
        rest = line[3:].strip()
        if rest and not rest.startswith("#"):  # `--- {a: 1}`: a document that starts on its separator line
            start, chunk = number, [line]
        else:
            start, chunk = number + 1, []
    if chunk:
        yield start, "".join(chunk)


# -- YAML -----------------------------------------------------------------------------------------

_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_STR, _NULL, _BOOL, _NUMBER = (
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:kcel,2024:number"
)  # fmt: skip


def go_yaml_scalar(text: str) -> Any:
    """What go-yaml v2 makes of a plain (unquoted) scalar in an untyped value (its `resolve`).

    >>> [go_yaml_scalar(s) for s in ("y", "0755", "08", "1_000", "1e3", ".5", "1:20", "2024-01-01", "~")]
    [True, 493, 8.0, 1000, 1000.0, 0.5, '1:20', '2024-01-01', None]
    """
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    first = text[0]
    if first == ".":
        return _go_float(text, text)
    if first in "+-0123456789":
        return _go_number(text)
    return text


def _go_number(text: str) -> Any:
    plain = text.replace("_", "")
    number = _go_parse_int(plain)
    if number is not None:
        if INT64_MIN <= number <= INT64_MAX:
            return number
        if 0 <= number <= UINT64_MAX and plain[:1] not in "+-":  # strconv.ParseUint, which takes no sign
            return number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        return _go_float(plain, text)
    return text


def _go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, ...) without the range check: sign, then 0x/0o/0b or a leading-0 octal."""
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    base = 10
    if digits[:2].lower() in ("0x", "0o", "0b"):
        base, digits = {"x": 16, "o": 8, "b": 2}[digits[1].lower()], digits[2:]
    elif len(digits) > 1 and digits[0] == "0":
        base, digits = 8, digits[1:]
    if not digits or not digits.isascii() or not digits.isalnum():
        return None
    try:
        return sign * int(digits, base)
    except ValueError:
        return None


def _go_float(text: str, original: str) -> Any:
    """strconv.ParseFloat: out of range is an error, so the scalar stays a string."""
    try:
        value = float(text)
    except ValueError:
        return original
    return original if math.isinf(value) else value


_LIBYAML = hasattr(yaml, "CSafeLoader")  # whose parser stops at 1,000 levels (see kcel.k8s.manifests.nesting)


class _GoYAMLLoader(yaml.CSafeLoader if _LIBYAML else yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML with go-yaml v2's reading of plain scalars and JSON's string keys; duplicate keys are recorded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """The tag of an untagged node (libyaml asks for every one): what go-yaml makes of plain scalars; quoted
        ones are strings, collections maps and sequences (PyYAML's defaults, without its generic lookup)."""
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR
            if value == "<<":
                return "tag:yaml.org,2002:merge"
            resolved = go_yaml_scalar(value)
            if resolved is None:
                return _NULL
            if isinstance(resolved, bool):
                return _BOOL
            return _STR if isinstance(resolved, str) else _NUMBER
        return _MAP if kind is MappingNode else _SEQ

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers are registered: nothing to track (libyaml calls this for every collection)."""

    def ascend_resolver(self) -> None:
        """See descend_resolver."""


def _construct_number(loader: _GoYAMLLoader, node: ScalarNode) -> Any:
    return go_yaml_scalar(node.value)


def _construct_bool(loader: _GoYAMLLoader, node: ScalarNode) -> Any:
    value = go_yaml_scalar(node.value)
    if not isinstance(value, bool):  # an explicit `!!bool` tag on something go-yaml would not read as one
        raise yaml.constructor.ConstructorError(None, None, f"cannot decode {node.value!r} as a bool", node.start_mark)
    return value


def _construct_binary(loader: _GoYAMLLoader, node: ScalarNode) -> Any:
    data = loader.construct_yaml_binary(node)
    return data.decode("utf-8", "replace")  # json.Marshal writes invalid UTF-8 as U+FFFD


def _construct_mapping(loader: _GoYAMLLoader, node: MappingNode) -> dict[str, Any]:
    """A mapping with JSON string keys; a key seen twice is recorded (go-yaml strict) and the last value kept."""
    loader.flatten_mapping(node)
    result: dict[str, Any] = {}
    seen: set[Any] = set()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        marker = tag(key) if not isinstance(key, (list, dict)) else None
        if marker is not None and marker in seen:
            line = value_node.start_mark.line + 1
            loader.duplicates.append(f"line {line}: key {_go_sharp_v(key)} already set in map")
        seen.add(marker)
        result[_json_key(key, key_node)] = loader.construct_object(value_node, deep=True)
    return result


def _json_key(key: Any, node: Any) -> str:
    """sigs.k8s.io/yaml's map key conversion: numbers and booleans become strings, nothing else is allowed."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(_float32_g(key), _float32_g(key))
    raise yaml.constructor.ConstructorError(
        None, None, f"unsupported map key of type: {_go_type(key)}, key: {_go_sharp_v(key)}", node.start_mark
    )


def _float32_g(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 32): the shortest digits that round-trip through float32."""
    if math.isinf(value) or math.isnan(value):
        return format_double(value)
    single = struct.unpack("f", struct.pack("f", value))[0] if abs(value) < 3.5e38 else value
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return format_double(float(text))
    return format_double(single)


_GO_TYPES: dict[type, str] = {list: "[]interface {}", dict: "map[interface {}]interface {}"}


def _go_type(value: Any) -> str:
    return "%!s(<nil>)" if value is None else _GO_TYPES.get(type(value), type(value).__name__)


def _go_sharp_v(value: Any) -> str:
    """fmt's %#v of a decoded YAML key."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float):
        return format_double(value)
    return str(value)


_GoYAMLLoader.add_constructor(_NUMBER, _construct_number)
_GoYAMLLoader.add_constructor(_BOOL, _construct_bool)
_GoYAMLLoader.add_constructor("tag:yaml.org,2002:binary", _construct_binary)
_GoYAMLLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
for _tag in ("timestamp", "value"):  # explicit `!!timestamp`: go-yaml keeps the text in untyped values
    _GoYAMLLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _GoYAMLLoader.construct_yaml_str)


def _decode_yaml(chunk: str, name: str, first_line: int) -> tuple[Any, tuple[str, ...]]:
    if len(chunk) > MAX_DOCUMENT_BYTES and len(chunk.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise DecodeError(f"{name}:{first_line}: {TOO_LARGE}")
    loader = _GoYAMLLoader(chunk)
    try:
        node = loader.get_single_node()
        duplicates: list[str] = []
        try:  # most documents: no alias (so no alias bomb), no explicit tag
            fast = _plain_value(node, duplicates, set()) if node is not None else None
        except _NotPlain:
            fast = _NOT_PLAIN
        if fast is not _NOT_PLAIN:
            if not _LIBYAML and too_deep_path(fast) is not None:  # libyaml would have stopped at the limit
                raise TooDeep
            loader.duplicates += duplicates
            return fast, _strict(loader.duplicates)
        refused = aliasing_problem(node) if node is not None else None
        if refused is not None:
            raise DecodeError(f"{name}:{first_line}: invalid YAML: {refused}")
        value = _json_compatible(loader.construct_document(node), name, first_line) if node is not None else None
        deep_path = too_deep_path(value)  # aliases nest what they name: deeper than the text (not the common path)
        if deep_path is not None:
            raise DecodeError(f"{name}:{first_line}: invalid YAML: {too_deep_message(deep_path)}")
    except yaml.MarkedYAMLError as err:
        if err.problem == LIBYAML_TOO_DEEP:
            stopped = err.problem_mark.index if err.problem_mark is not None else None
            raise DecodeError(_yaml_too_deep(chunk, name, first_line, stopped)) from None
        raise DecodeError(_yaml_problem(err, name, first_line)) from None
    except yaml.YAMLError as err:
        raise DecodeError(f"{name}: invalid YAML: {err}") from None
    except (RecursionError, TooDeep):
        raise DecodeError(_yaml_too_deep(chunk, name, first_line)) from None
    finally:
        loader.dispose()
    return value, _strict(loader.duplicates)


def _yaml_too_deep(chunk: str, name: str, first_line: int, stopped: int | None = None) -> str:
    """The error for a YAML document nested past kcel's limit, at the place and field path it is passed (the
    document's first line when only aliases nest it so deep); `stopped`: where libyaml stopped."""
    found = yaml_too_deep(chunk, stopped)
    if found is None:
        return f"{name}:{first_line}: invalid YAML: {too_deep_message('')}"
    path, line, column = found
    return f"{name}:{line + first_line - 1}:{column}: invalid YAML: {too_deep_message(path)}"


def _strict(duplicates: list[str]) -> tuple[str, ...]:
    return (YAML_ERRORS_PREFIX + "\n".join(f"  {d}" for d in duplicates),) if duplicates else ()


class _NotPlain(Exception):
    """A node the plain builder leaves to PyYAML's constructors and the alias-bomb guard (an alias, explicit tags,
    merge keys, odd keys or numbers)."""


_NOT_PLAIN = object()
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


def _plain_value(node: Any, duplicates: list[str], seen: set[int]) -> Any:
    """The value the constructors and _json_compatible would make of a document of plain maps, lists and scalars,
    built directly (most manifests are only that, and PyYAML's generic construction costs most of the decoding);
    raises _NotPlain for anything else, and at the first node met twice (an alias), before expanding it."""
    if id(node) in seen:
        raise _NotPlain
    seen.add(id(node))
    if isinstance(node, ScalarNode):
        if node.tag == _STR:
            return node.value
        if node.tag == _NULL:
            return None
        if node.tag not in (_NUMBER, _BOOL):
            raise _NotPlain
        value = go_yaml_scalar(node.value)
        if node.tag == _BOOL and not isinstance(value, bool):
            raise _NotPlain
        if isinstance(value, float) and not math.isfinite(value):
            raise _NotPlain  # the general path words the error
        return _json_scalar(value)
    if node.tag == _SEQ:
        return [_plain_value(item, duplicates, seen) for item in node.value]
    if node.tag != _MAP:
        raise _NotPlain
    result: dict[str, Any] = {}
    keys: set[Any] = set()
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag not in (_STR, _NUMBER, _BOOL) or id(key_node) in seen:
            raise _NotPlain  # merge keys, null, compound or aliased keys: the constructors say what they make of them
        seen.add(id(key_node))
        key = key_node.value if key_node.tag == _STR else go_yaml_scalar(key_node.value)  # as Go reads a key
        if key_node.tag == _BOOL and not isinstance(key, bool):
            raise _NotPlain
        marker = tag(key)
        if marker in keys:
            duplicates.append(f"line {value_node.start_mark.line + 1}: key {_go_sharp_v(key)} already set in map")
        keys.add(marker)
        result[key if type(key) is str else _json_key(key, key_node)] = _plain_value(value_node, duplicates, seen)
    return result


MAX_DOCUMENT_BYTES = 3 * 1024 * 1024
"""The API server's limit on a request body (3 MiB): a bigger object is refused before it is decoded."""
TOO_LARGE = f"Request entity too large: limit is {MAX_DOCUMENT_BYTES}"


def aliasing_problem(root: Any) -> str | None:
    """What go-yaml refuses in a composed document's aliases, found without expanding them: an anchor that contains
    itself, or excessive aliasing (a billion laughs); None when neither. For readers that compose YAML themselves
    (the language server), before anything walks the nodes or the value."""
    try:
        return "document contains excessive aliasing" if _excessive_aliasing(root) else None
    except DecodeError as err:
        return str(err)


def _excessive_aliasing(root: Any) -> bool:
    """go-yaml v2's guard against alias bombs, which sigs.k8s.io/yaml (so the API server) applies: decoding counts
    every node it unmarshals, through aliases too, and fails once more than 100 of over 1,000 came from aliases
    and their share passes allowedAliasRatio (99% up to 400,000 decodes, scaling down to 10% at 4,000,000).

    PyYAML's graph shares an anchored node wherever it is referenced: the document is walked in order without
    expanding anything, an alias adding its target's expanded size (counted once per node) at one step. Within an
    alias the share only grows while the allowed ratio only falls, so checking at its end decides as go-yaml's
    check at every node does. Raises DecodeError for an anchor that contains itself."""
    sizes: dict[int, int] = {}
    defining: set[tuple[int, int]] = set()  # (parent, position) of each node's first occurrence
    seen: set[int] = set()
    decoded, aliased = 1, 0  # the document node
    stack: list[tuple[Any, int, int]] = [(root, 0, 0)]
    while stack:
        node, parent, position = stack.pop()
        if id(node) in seen:  # an alias node, then its target unmarshalled under it
            size = _expanded_size(node, sizes, defining)
            decoded, aliased = decoded + 1 + size, aliased + size
        else:
            seen.add(id(node))
            defining.add((parent, position))
            decoded += 1
            children = _children(node)
            stack.extend((children[i], id(node), i) for i in range(len(children) - 1, -1, -1))
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            return True
    return False


def _children(node: Any) -> list[Any]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node.value, list) else []


def _expanded_size(target: Any, sizes: dict[int, int], defining: set[tuple[int, int]]) -> int:
    """Decodes to unmarshal `target` with every alias inside it expanded, each alias node counting one more."""
    pending, open_nodes = [(target, False)], set()
    while pending:
        node, ready = pending.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if ready:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(
                sizes[id(child)] + ((id(node), i) not in defining) for i, child in enumerate(children)
            )
            continue
        if id(node) in open_nodes:
            raise DecodeError("anchor value contains itself")
        open_nodes.add(id(node))
        pending.append((node, True))
        pending.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(target)]


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= 400_000:
        return 0.99
    if decoded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decoded - 400_000) / 3_600_000


def _yaml_problem(err: yaml.MarkedYAMLError, name: str, first_line: int) -> str:
    mark = err.problem_mark or err.context_mark
    where = f"{name}:{mark.line + first_line}:{mark.column + 1}" if mark is not None else name
    problem = err.problem or err.context or "cannot parse"
    context = err.context_mark
    if err.context and err.problem and context is not None:
        problem += f" ({err.context} at line {context.line + first_line}, column {context.column + 1})"
    return f"{where}: invalid YAML: {problem}"


def _json_compatible(value: Any, name: str, line: int) -> Any:
    """The value after sigs.k8s.io/yaml's json.Marshal and the API server's JSON decoding."""
    if isinstance(value, dict):
        return {k: _json_compatible(v, name, line) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_compatible(v, name, line) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise DecodeError(f"{name}:{line}: json: unsupported value: {format_double(value)}")
    return _json_scalar(value)


def _json_scalar(value: Any) -> Any:
    """A finite scalar after json.Marshal and the API server's JSON decoding."""
    if isinstance(value, float):
        if value.is_integer() and -(2.0**63) <= value < 2.0**63:
            return int(value)  # json.Marshal writes 1.0 as 1, which decodes as an integer
        return value
    if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        return float(value)  # beyond int64 the JSON number decodes as a float64
    return value


# -- JSON -----------------------------------------------------------------------------------------


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object's members in document order, duplicates included, until they are checked."""


def json_int(text: str) -> int | float:
    """A whole JSON number as apimachinery's JSON decoding keeps it: an int when int64 holds it, else a double."""
    number = decimal_int(text)
    return number if INT64_MIN <= number <= INT64_MAX else json_float(text)


def json_float(text: str) -> float:
    """A JSON number as a double; past float64's range an error, as Go's strconv.ParseFloat has it."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


def _json_constant(text: str) -> Any:
    raise ValueError(f"invalid character '{text[0]}' looking for beginning of value")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_Pairs, parse_int=json_int, parse_float=json_float, parse_constant=_json_constant
)


def _json_documents(text: str, name: str, first_line: int, first_index: int) -> list[Document]:
    """One document per JSON value in the text (kubectl reads a stream of them)."""
    documents: list[Document] = []
    position = 0
    while True:
        position = _skip_space(text, position)
        if position >= len(text):
            return documents
        index, line = first_index + len(documents), first_line + text.count("\n", 0, position)
        start = position
        try:
            raw, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as err:
            where = f"{name}:{err.lineno + first_line - 1}:{err.colno}"
            return [*documents, Document(index, line, error=f"{where}: invalid JSON: {err.msg}")]
        except RecursionError:  # Python's json recurses: past some thousands of levels, where kcel's limit is passed
            return [*documents, Document(index, line, error=_json_too_deep(text, start, name, first_line))]
        except ValueError as err:
            return [*documents, Document(index, line, error=f"{name}:{line}: invalid JSON: {err}")]
        if position - start > MAX_DOCUMENT_BYTES and len(text[start:position].encode("utf-8")) > MAX_DOCUMENT_BYTES:
            documents.append(Document(index, line, error=f"{name}:{line}: {TOO_LARGE}"))
            continue
        duplicates: list[str] = []
        try:
            value = _unpair(raw, "", duplicates, 1)
        except TooDeep:
            documents.append(Document(index, line, error=_json_too_deep(text[:position], start, name, first_line)))
            continue
        if value is not None:
            documents.append(Document(index, line, value, tuple(duplicates)))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _unpair(value: Any, path: str, duplicates: list[str], depth: int) -> Any:
    """Plain dicts from `_Pairs`, recording `duplicate field "<path>"` in document order; the last value wins.
    Raises TooDeep at a map or list nested past kcel's limit (see kcel.k8s.manifests.nesting)."""
    if isinstance(value, _Pairs):
        if depth > MAX_DEPTH:
            raise TooDeep
        result: dict[str, Any] = {}
        for key, item in value:
            if key in result:
                duplicates.append(f"duplicate field {go_quote(f'{path}.{key}' if path else key)}")
            result[key] = _unpair(item, f"{path}.{key}" if path else key, duplicates, depth + 1)
        return result
    if isinstance(value, list):
        if depth > MAX_DEPTH:
            raise TooDeep
        return [_unpair(item, f"{path}[{i}]", duplicates, depth + 1) for i, item in enumerate(value)]
    return value


def _json_too_deep(text: str, start: int, name: str, first_line: int) -> str:
    """The error for the JSON document at `start` nested past kcel's limit, at the place and field path it is
    passed."""
    found = json_too_deep(text[start:])
    path, line, column = found if found is not None else ("", 1, 1)
    line += text.count("\n", 0, start)
    if line == 1 + text.count("\n", 0, start):
        column += start - text.rfind("\n", 0, start) - 1
    return f"{name}:{line + first_line - 1}:{column}: invalid JSON: {too_deep_message(path)}"
