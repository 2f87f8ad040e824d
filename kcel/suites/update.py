"""`kcel test --update`: the answers written back into the suite files as expectations, everything else kept.

Only the `expect:` of a case that has none, or whose expectation failed, is written; the rest of the file
(comments, order, quoting) stays as it was, because the new text is spliced in where YAML's own parser
places the case. A case whose answers differ between the Kubernetes versions it runs at, or that could not
be sent, is left alone and reported. Each file's change is shown as a diff before it is written.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from kcel.k8s.manifests.saving import SaveError, save
from kcel.k8s.manifests.yamltext import compose_documents, end_of, key_of, value_of
from kcel.suites.loading import load_text
from kcel.suites.runner import ERROR, FAILED, NEW, SKIPPED, Result


@dataclass(frozen=True)
class Change:
    """An expectation to write: where its case is, and the value (as a suite spells it)."""

    file: Path
    document: int
    index: int
    case_id: str
    expect: Any
    new: bool  # the case had no expectation


def changes(results: Iterable[Result]) -> tuple[list[Change], list[str]]:
    """The expectations to write, and why any case that needs one gets none."""
    by_case: dict[tuple[Path, int, int], list[Result]] = {}
    for result in results:
        where = result.suite.where
        by_case.setdefault((where.file, where.document, result.case.index), []).append(result)
    found, problems = [], []
    for (file, document, index), group in by_case.items():
        if not any(r.status in (FAILED, NEW) for r in group):
            continue
        case_id = group[0].suite.case_id(group[0].case)
        errors = [r for r in group if r.status == ERROR]
        answers = {json.dumps(r.actual, sort_keys=True): r for r in group if r.status not in (ERROR, SKIPPED)}
        if errors:
            problems.append(f"{case_id}: not recorded: {errors[0].detail}")
        elif len(answers) > 1:
            versions = " and ".join(r.version for r in answers.values())
            problems.append(f"{case_id}: not recorded: the answers differ between Kubernetes {versions}")
        else:
            (answer,) = answers.values()
            found.append(Change(file, document, index, case_id, answer.actual, answer.case.expect is None))
    return found, problems


def apply(found: Sequence[Change], stream: TextIO) -> tuple[set[str], list[str]]:
    """Write the changes file by file, showing each file's diff first; returns the ids of the cases written, and
    problems. A file is replaced at once or not at all (kcel.k8s.manifests.saving), its line breaks and byte order
    mark kept."""
    written: set[str] = set()
    problems: list[str] = []
    by_file: dict[Path, list[Change]] = {}
    for change in found:
        by_file.setdefault(change.file, []).append(change)
    for file, file_changes in by_file.items():
        try:
            before = file.read_bytes().decode("utf-8")  # as it is: `\r\n` stays, a byte order mark too
            after = rewrite(before, file_changes)
        except (OSError, UnicodeDecodeError) as err:
            problems.append(f"{file}: not updated: cannot read: {err.strerror if isinstance(err, OSError) else err}")
            continue
        except ValueError as err:
            problems.append(f"{file}: not updated: {err}")
            continue
        _, trouble = load_text(_as_read(after), file)
        if trouble:  # never leave a suite unreadable
            problems.append(f"{file}: not updated: the new text would not read back ({trouble[0]})")
            continue
        stream.write("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                  f"{file} (before)", f"{file} (updated)")))  # fmt: skip
        try:
            save(file, after.encode("utf-8"))
        except SaveError as err:
            problems.append(f"{file}: not updated: {err.what} (the file is as it was)")
            continue
        written.update(change.case_id for change in file_changes)
    return written, problems


def _as_read(text: str) -> str:
    """The text as `kcel test` reads a file (Python's universal newlines: `\r\n` and `\r` as `\n`)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def rewrite(text: str, found: Iterable[Change]) -> str:
    """The text with each change's `expect:` replaced or added; every other character is kept. Each document is
    composed once and the text joined once, so that the time grows with the file, not with the file per change."""
    found = list(found)
    documents = compose_documents(text, (change.document for change in found))
    edits: list[tuple[int, int, str]] = []
    for change in found:
        offset, chunk, root = documents[change.document]
        start, end, replacement = _edit(chunk, root, change)
        edits.append((offset + start, offset + end, replacement))
    pieces, kept_from = [], 0
    for start, end, replacement in sorted(edits):
        pieces += [text[kept_from:start], replacement]
        kept_from = end
    return "".join([*pieces, text[kept_from:]])


def _edit(chunk: str, root: Node | None, change: Change) -> tuple[int, int, str]:
    """Where in the document's text the new `expect:` goes (start, end) and its text."""
    case = _case_node(root, change.index)
    key, value = key_of(case, "expect"), value_of(case, "expect")
    if case.flow_style:  # `- {name: a, patch: {...}}`: the expectation joins the mapping, on its line
        rendered, _ = _rendered(change.expect, "", "", flow=True)
        if key and value:
            return key.start_mark.index, end_of(chunk, value), rendered
        end = end_of(chunk, case.value[-1][1])
        return end, end, f", {rendered}"
    newline = "\r\n" if "\r\n" in chunk else "\n"
    indent = " " * case.value[0][0].start_mark.column
    if key is None or value is None:  # after the case's last line, whatever comment ends that line
        end = _line_end(chunk, end_of(chunk, case))
        head, body = _rendered(change.expect, indent, newline, flow=False)
        return end, end, f"{newline}{indent}{head}{body}"
    return _replaced(chunk, key, value, _rendered(change.expect, indent, newline, _is_flow(value)))


def _case_node(root: Node | None, index: int) -> MappingNode:
    cases = value_of(root, "cases")
    if not isinstance(cases, SequenceNode) or index >= len(cases.value):
        raise ValueError(f"cases[{index}] not found")
    case = cases.value[index]
    if not isinstance(case, MappingNode) or not case.value:
        raise ValueError(f"cases[{index}] is not a mapping")
    return case


def _replaced(chunk: str, key: Node, value: Node, rendered: tuple[str, str]) -> tuple[int, int, str]:
    """Replace `expect:` and its old value, up to the end of the value's last line. The comment ending the
    `expect:` line (or the one-line value's line) stays on the `expect:` line, and so do the comment lines between
    it and a value below it; only comments within the old value's own lines go with it."""
    head, body = rendered
    content_end = end_of(chunk, value)
    end = _line_end(chunk, content_end)
    if value.start_mark.line == key.start_mark.line:  # `expect: {errors: [x]}   # why`
        kept = chunk[content_end:end]
        return key.start_mark.index, end, head + (kept if "#" in kept else "") + body
    colon = chunk.index(":", key.end_mark.index) + 1
    line_end = _line_end(chunk, colon)
    comment = chunk[colon:line_end]
    between = chunk[line_end : _break_before(chunk, value.start_mark.index)]
    return key.start_mark.index, end, head + (comment if "#" in comment else "") + between + body


def _line_end(chunk: str, index: int) -> int:
    """Where the line holding `index` ends (before its line break)."""
    end = chunk.find("\n", index)
    if end < 0:
        return len(chunk)
    return end - 1 if end > index and chunk[end - 1] == "\r" else end


def _break_before(chunk: str, index: int) -> int:
    """Where the line break before the line holding `index` starts."""
    found = chunk.rfind("\n", 0, index)
    return found - 1 if found > 0 and chunk[found - 1] == "\r" else found


def _is_flow(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode)) and bool(node.flow_style)


def _rendered(value: Any, indent: str, newline: str, flow: bool) -> tuple[str, str]:
    """The `expect:` line and the lines below it: `expect: valid`, `expect: {...}` in the style of an old flow
    expectation, or `expect:` with the value's YAML indented under it."""
    if isinstance(value, str):
        return f"expect: {value}", ""
    if flow:
        return f"expect: {json.dumps(value, ensure_ascii=False)}", ""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, allow_unicode=True, width=1_000_000)
    return "expect:", "".join(f"{newline}{indent}  {line}" for line in text.splitlines())
