"""Objects read one at a time from cluster snapshots (`kubectl get -A -o yaml` or `-o json` output, several
documents, `kind: List`), so that a snapshot of any size is read in bounded memory: the items of a List are cut
apart by their lines, without parsing, and each is decoded on its own (by kcel.k8s.manifests.decoding, as the API
server decodes a request body, its 3 MiB limit included) when it is needed, in whichever process needs it.

Cutting by lines follows what kubectl prints: YAML whose `items:` sequence is in block style (each item starts
with `- ` at the sequence's indentation), and indented JSON (each item's `{` and `}` alone on their lines). A List
in any other layout is decoded whole, as one document (a JSON one larger than a request may be, item by item).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kcel.k8s.manifests.decoding import MAX_DOCUMENT_BYTES, DecodeError, decode_documents

_ITEMS_YAML = re.compile(r"items:\s*(#.*)?$")
_ITEMS_JSON = re.compile(r'\s*"items"\s*:\s*\[\s*$')
_KIND = re.compile(r'"?kind"?\s*:\s*"?([A-Za-z0-9]*)')
Line = tuple[int, str]  # (number, text)


@dataclass(frozen=True)
class StoredItem:
    """One object of a snapshot, still as text: `where` is `file: document 2` or `file: document 0: items[17]`."""

    where: str
    line: int  # where its text starts in the file (1-based)
    text: str
    indent: int = -1  # of its top-level keys, when cut from a List (-1: a whole document)

    @property
    def kind(self) -> str | None:
        """The kind named at the item's top level, read off its text without decoding it; None when that cannot
        be told that way (decode it)."""
        if self.indent < 0:
            return None
        text, prefix = "\n" + self.text, "\n" + " " * self.indent
        position = text.find(prefix)
        while position >= 0:
            after = position + len(prefix)
            match = _KIND.match(text, after) if text[after : after + 1] != " " else None
            if match:
                return match[1]
            position = text.find(prefix, after)
        return ""

    def decode(self) -> dict[str, Any]:
        """The object as the API server would decode it; DecodeError when it cannot be, or is not an object."""
        documents = decode_documents(self.text, self.where)
        if len(documents) != 1 or documents[0].error:
            raise DecodeError(documents[0].error if documents else f"{self.where}: empty")
        value = documents[0].value
        if not isinstance(value, dict):
            raise DecodeError(f"{self.where} (line {self.line}): not an object")
        return value


def stored_items(lines: Iterable[str], name: str) -> Iterator[StoredItem]:
    """Every object of a snapshot file (its lines, ends kept): Lists' items one by one, other documents whole.
    Lists themselves are not yielded."""
    document, start, head = 0, 1, list[str]()
    numbered = enumerate(lines, 1)
    pending: Line | None = None
    while True:
        if pending is not None:
            (number, line), pending = pending, None
        else:
            found = next(numbered, None)
            if found is None:
                break
            number, line = found
        if line.startswith("---"):
            yield from _whole(head, name, document, start)
            document, start, head = document + 1, number + 1, []
        elif _ITEMS_JSON.match(line) and _top_level_json(head, line):
            head.append(line)
            pending = yield from _items(numbered, f"{name}: document {document}", json_items=True)
        elif _ITEMS_YAML.match(line):
            head.append("items: []\n")  # the rest of the List decodes without them
            pending = yield from _items(numbered, f"{name}: document {document}", json_items=False)
        else:
            head.append(line)
    yield from _whole(head, name, document, start)


def _items(numbered: Iterator[Line], where: str, json_items: bool) -> Generator[StoredItem, None, Line | None]:
    """The items of one List; returns the first line after them, which the caller reads next."""
    indent: int | None = None
    item: list[str] = []
    first = index = 0
    for number, line in numbered:
        stripped = line.strip()
        depth = len(line) - len(line.lstrip(" "))
        if not stripped or (stripped.startswith("#") and not json_items):
            if item:
                item.append(line)
            continue
        if indent is None:
            starts = stripped == "{" if json_items else stripped == "-" or stripped.startswith("- ")
            if not starts:
                return (number, line)  # not a layout cut here: the document is decoded whole
            indent = depth
        if json_items and depth < indent:
            return (number, line)  # the `]` closing the items
        if json_items and depth == indent and stripped == "{":
            item, first = [line], number
        elif json_items and depth == indent and stripped in ("}", "},"):
            key_indent = len(item[1]) - len(item[1].lstrip(" ")) if len(item) > 1 else indent
            yield StoredItem(f"{where}: items[{index}]", first, "".join(item) + line.replace("},", "}"), key_indent)
            item, index = [], index + 1
        elif json_items or depth > indent:
            item.append(line)
        elif stripped == "-" or stripped.startswith("- "):
            if item:
                yield StoredItem(f"{where}: items[{index}]", first, "".join(item), indent + 2)
                index += 1
            item, first = [line[:depth] + " " + line[depth + 1 :]], number
        else:
            break
    else:
        number, line = 0, ""
    if item:
        yield StoredItem(f"{where}: items[{index}]", first, "".join(item), (indent or 0) + 2)
    return (number, line) if line else None


def _top_level_json(head: list[str], line: str) -> bool:
    """Whether a JSON line is a key of the document itself (at the indentation of its first key), not of a value."""
    first = next((h for h in head if h.lstrip().startswith('"')), line)
    return len(first) - len(first.lstrip(" ")) == len(line) - len(line.lstrip(" "))


def _whole(head: list[str], name: str, document: int, start: int) -> Iterator[StoredItem]:
    """A document whole (a List without its items): itself, unless it is empty or a List."""
    if not any(line.strip() and not line.lstrip().startswith("#") for line in head):
        return
    item = StoredItem(f"{name}: document {document}", start, "".join(head))
    try:
        kind = str(item.decode().get("kind", ""))
    except DecodeError:
        kind = ""
        if len(item.text) > MAX_DOCUMENT_BYTES and item.text.lstrip().startswith("{"):
            yield from _compact_json_list(item)  # one line of JSON (`jq -c`): decoded whole, then item by item
            return
    if not kind.endswith("List"):
        yield item


def _compact_json_list(document: StoredItem) -> Iterator[StoredItem]:
    """The items of a List in JSON too large to be one request and not laid out one item per line; anything else
    stays the document, refused as too large when decoded."""
    try:
        value = json.loads(document.text)
    except (ValueError, RecursionError):
        value = None
    items = value.get("items") if isinstance(value, dict) and str(value.get("kind", "")).endswith("List") else None
    if not isinstance(items, list):
        yield document
        return
    for index, entry in enumerate(items):
        yield StoredItem(f"{document.where}: items[{index}]", document.line, json.dumps(entry))
