"""CRD rule `fieldPath`s: JSONPath-like text resolved against a structural schema, as `ValidFieldPath` does it.

Follows apiextensions-apiserver pkg/apiserver/schema/cel/validation.go, including its tokenizer's quirks: a
quoted string ends at the first `'` not preceded by a backslash, text after `.` is taken whole (quotes and all),
and a token too long for Go's `bufio.Scanner` ends the path silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kcel.k8s.field import Path
from kcel.k8s.schemas.schema import Schema

_MAX_TOKEN = 64 * 1024  # bufio.MaxScanTokenSize: the scanner gives up on a longer token
_DELIMITER = re.compile(r"[.\[\]]")
_QUOTE_END = re.compile(r"(?<!\\)'")
_ESCAPE = re.compile(r"\\.")  # like Go's `.`, never a newline
_UNESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}


class FieldPathError(ValueError):
    """Why a fieldPath is invalid, in upstream's words (CRD validation shows only `must be a valid path`)."""


def valid_field_path(text: str, schema: Schema, *, allow_array_notation: bool = True) -> tuple[Path, Schema]:
    """Resolve `text` (`.a.b`, `.a['x.y']`) against `schema`: the field path and the schema it reaches.

    `.name` and `['name']` select a property, or a key where the schema has `additionalProperties` instead
    of `properties`; list items cannot be selected. The path starts at the nil path. Upstream attaches it to
    a rule's node as a single element, `node.child(str(path))`, so a leading key prints as `root.[k]`.
    `additionalProperties: true` has no schema: an empty one stands in for Go's nil (on which a further step
    panics upstream and reports `does not refer to a valid field` here).

    Args:
        text: the fieldPath; empty text is the nil path.
        schema: the schema of the node the rule is declared on.
        allow_array_notation: False rejects `[...]`, as CRD selectable fields do.

    Raises:
        FieldPathError: with upstream's message, e.g. `does not refer to a valid field`.

    Examples:
        >>> root = Schema.from_json({"type": "object", "properties": {"spec": {"type": "object",
        ...     "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}})
        >>> path, found = valid_field_path(".spec.labels['a.b']", root)
        >>> str(path), found.type
        ('spec.labels[a.b]', 'string')
    """
    tokens = _tokens(text)
    path = Path()
    for token in tokens:
        if token == "[":
            if not allow_array_notation:
                raise FieldPathError("array notation is not allowed")
            quoted = _next(tokens)
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                raise FieldPathError(f"expected single quoted string but got {quoted}")
            path, schema = _step(path, schema, _unquote(quoted[1:-1]))
            closing = _next(tokens)
            if closing != "]":
                raise FieldPathError(f"expected ] but got {closing}")
        elif token == ".":
            path, schema = _step(path, schema, _next(tokens))
        else:
            raise FieldPathError(f"expected [ or . but got: {token}")
    return path, schema


def _step(path: Path, schema: Schema, name: str) -> tuple[Path, Schema]:
    """One selection: a property when the schema declares properties (even none), else a map key."""
    if schema.properties is not None:
        found = schema.properties.get(name)
        if found is None:
            raise FieldPathError("does not refer to a valid field")
        return path.child(name), found
    values = schema.additional_properties
    if values is None:
        raise FieldPathError("does not refer to a valid field")
    return path.key(name), values if isinstance(values, Schema) else Schema()


def _next(tokens: Iterator[str]) -> str:
    token = next(tokens, None)
    if token is None:
        raise FieldPathError("unexpected end of JSON path")
    return token


def _unquote(body: str) -> str:
    """unescapeSingleQuote: the escapes of a quoted key; the last invalid one is reported."""
    invalid: list[str] = []

    def replace(match: re.Match[str]) -> str:
        escaped = _UNESCAPES.get(match.group()[1])
        if escaped is None:
            invalid.append(match.group())
        return escaped or ""

    text = _ESCAPE.sub(replace, body)
    if invalid:
        raise FieldPathError(f"invalid string literal: invalid escape char {invalid[-1]}")
    return text


def _tokens(text: str) -> Iterator[str]:
    """`.`, `[`, `]`, quoted strings and the text between them, as upstream's scanner splits the path."""
    start = 0
    while start < len(text):
        end, self_ending = _token_end(text, start)
        # The scanner must hold the whole token in 64 KiB, plus the byte after it unless the token ends itself.
        if len(text[start:end].encode("utf-8", "surrogatepass")) + (not self_ending) > _MAX_TOKEN:
            return
        yield text[start:end]
        start = end


def _token_end(text: str, start: int) -> tuple[int, bool]:
    """Where the token at `start` ends, and whether its own last character ended it."""
    if text[start] == "'":
        close = _QUOTE_END.search(text, start + 1)
        return (close.end(), True) if close else (len(text), False)
    delimiter = _DELIMITER.search(text, start)
    if delimiter is None:
        return len(text), False
    return (start + 1, True) if delimiter.start() == start else (delimiter.start(), False)
