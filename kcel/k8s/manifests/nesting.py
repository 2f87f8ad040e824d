"""How deeply a manifest's maps and lists may nest: at most MAX_DEPTH levels, refused past it by the field path.

The API server stops at 10,000 levels: Go's encoding/json and sigs.k8s.io/json (`exceeded max depth`), go-yaml
v2's scanner (`exceeded max depth of 10000`) and apimachinery's number conversion (`exceeded max depth of
10000`). kcel stops at 1,000, the limit libyaml (PyYAML's C loader) already puts on YAML, and holds JSON and
values given to the embedding API to the same: kcel's walks over an object or a schema recurse once or more per
level and Python's stack is bounded, so a deeper document would end in a RecursionError somewhere in validation,
pruning or evaluation rather than in a clear refusal here. A document between 1,001 and 10,000 levels deep is the
one thing the API server accepts and kcel refuses; no real manifest or CRD comes near either limit.

Each walk here is iterative (no recursion on the depth it measures). They run where a deep document has already
been noticed, or on a value that was never decoded here (the embedding API's), so they cost nothing on the way of
ordinary documents.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 1000
"""Levels of maps and lists a document may nest (the 1,001st is refused): libyaml's limit, kcel's for JSON too."""
API_SERVER_MAX_DEPTH = 10_000
TOO_DEEP = f"exceeded max depth of {MAX_DEPTH}"
LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"  # libyaml's problem, past its 1,000 levels


class TooDeep(Exception):
    """Raised by a walk that found a container nested past MAX_DEPTH; the caller finds and names the place."""


def too_deep_path(value: Any) -> str | None:
    """The field path of the first map or list nested past MAX_DEPTH in a JSON-like value, else None.

    >>> too_deep_path({"spec": {"a": [1]}}) is None
    True
    >>> deep: Any = "x"
    >>> for _ in range(MAX_DEPTH): deep = [deep]
    >>> abbreviated(too_deep_path({"a": deep}) or "", 4)
    'a[0][0]…998 more…[0]'
    """
    stack: list[tuple[Any, int, tuple[str, ...]]] = [(value, 1, ())]
    while stack:
        item, depth, path = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return _joined(path)
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, (*path, _segment(key))))
    return None


def _segment(key: Any) -> str:
    return f"[{key}]" if isinstance(key, int) else f".{key}"


def _joined(segments: tuple[str, ...] | list[str]) -> str:
    return "".join(segments).removeprefix(".")


def abbreviated(path: str, keep: int = 8) -> str:
    """A path of many segments with its middle elided (`spec.a.a…990 more….a`): where a document passes the limit,
    readable in one line (the whole path would be thousands of characters)."""
    segments = re.findall(r"\.?[^.\[]+|\[[^\]]*\]", path)
    if len(segments) <= 2 * keep:
        return path
    head, tail = _joined(segments[:keep]), "".join(segments[-(keep // 2) :])
    return f"{head}…{len(segments) - keep - keep // 2} more…{tail}"


def too_deep_message(path: str) -> str:
    """What kcel says of a document nested past its limit at `path` (abbreviated)."""
    where = abbreviated(path) if path else "the document"
    return f"{where}: {TOO_DEEP} (kcel's limit; the API server's is {API_SERVER_MAX_DEPTH:,})"


# -- finding the place in a document's text -------------------------------------------------------------------

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')


def json_too_deep(text: str) -> tuple[str, int, int] | None:
    """(path, line, column) of the first `{` or `[` nested past MAX_DEPTH in JSON text, else None; read token by
    token, as deep as the text goes (Python's json module recurses, and gives up near Python's recursion limit)."""
    frames: list[list[Any]] = []  # [is_object, key or index of the next child]
    path: list[str] = []
    key: Any = None
    for token in _JSON_TOKEN.finditer(text):
        mark = token[0]
        if mark in "{[":
            if frames:
                path.append(_segment(frames[-1][1]))
            if len(frames) + 1 > MAX_DEPTH:
                line = text.count("\n", 0, token.start()) + 1
                return _joined(path), line, token.start() - text.rfind("\n", 0, token.start())
            frames.append([mark == "{", 0 if mark == "[" else None])
        elif mark in "}]" and frames:
            frames.pop()
            if frames:  # the end of a child: its segment goes
                path.pop()
        elif mark == "," and frames and not frames[-1][0]:
            frames[-1][1] += 1
        elif mark[0] == '"' and frames and frames[-1][0]:
            key = mark[1:-1]
        elif mark == ":" and frames and frames[-1][0]:
            frames[-1][1] = key
    return None


def yaml_too_deep(text: str, stopped_at: int | None = None) -> tuple[str, int, int] | None:
    """(path, line, column) of the first map or list nested past MAX_DEPTH in YAML text, else None: read event by
    event by PyYAML's Python parser, which keeps its own stack, so has no depth limit of its own. `stopped_at` is
    where libyaml stopped (`exceeded maximum nesting depth`: its scanner runs ahead of its parser, which says only
    where): the text is read a few characters past it, no further (the Python scanner checks every open simple
    key at each token: quadratic in the depth, 0.2 s at 1,000 levels of `[`, 3 s at 2,000). Aliases are not
    followed (their depth is the constructed value's, see too_deep_path)."""
    import yaml  # here: the `kcel` front end imports this module for MAX_DEPTH, and yaml costs its start
    from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, MappingStartEvent, ScalarEvent

    if stopped_at is not None:
        text = text[: stopped_at + _LOOKAHEAD]
    frames: list[list[Any]] = []  # [is_mapping, expecting a key, key or index of the next child]
    path: list[str] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, CollectionEndEvent):
                frames.pop()
                if frames:
                    path.pop()
                    _advance(frames[-1])
                continue
            if not isinstance(event, (CollectionStartEvent, ScalarEvent, AliasEvent)):
                continue
            parent = frames[-1] if frames else None
            if not isinstance(event, CollectionStartEvent):
                if parent is not None:
                    if parent[0] and parent[1]:
                        parent[2] = event.value if isinstance(event, ScalarEvent) else "*"
                    _advance(parent)
                continue
            if parent is not None:
                path.append(_segment("?" if parent[0] and parent[1] else parent[2]))
            if len(frames) + 1 > MAX_DEPTH:
                return _joined(path), event.start_mark.line + 1, event.start_mark.column + 1
            frames.append([isinstance(event, MappingStartEvent), True, 0])
    except yaml.YAMLError:
        return None
    return None


_LOOKAHEAD = 16  # characters past libyaml's stop the Python parser needs to emit the collection there (3 for `- - `)


def _advance(frame: list[Any]) -> None:
    """After one child of a collection: a mapping alternates keys and values, a sequence counts its items."""
    if frame[0]:
        frame[1] = not frame[1]
    else:
        frame[2] += 1
