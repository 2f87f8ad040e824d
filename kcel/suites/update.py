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

from kcel.k8s.manifests.yamltext import compose_document, end_of, key_of, value_of
from kcel.suites.loading import load_file
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
    problems."""
    written: set[str] = set()
    problems: list[str] = []
    by_file: dict[Path, list[Change]] = {}
    for change in found:
        by_file.setdefault(change.file, []).append(change)
    for file, file_changes in by_file.items():
        before = file.read_text(encoding="utf-8")
        try:
            after = rewrite(before, file_changes)
        except ValueError as err:
            problems.append(f"{file}: not updated: {err}")
            continue
        stream.write("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                  f"{file} (before)", f"{file} (updated)")))  # fmt: skip
        file.write_text(after, encoding="utf-8")
        _, trouble = load_file(file)
        if trouble:  # never leave a suite unreadable: put the old text back
            file.write_text(before, encoding="utf-8")
            problems.append(f"{file}: not updated: the new text would not read back ({trouble[0]})")
            continue
        written.update(change.case_id for change in file_changes)
    return written, problems


def rewrite(text: str, found: Iterable[Change]) -> str:
    """The text with each change's `expect:` replaced or added."""
    edits: list[tuple[int, int, str]] = []
    for change in found:
        offset, chunk, root = compose_document(text, change.document)
        start, end, replacement = _edit(chunk, root, change)
        edits.append((offset + start, offset + end, replacement))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _edit(chunk: str, root: Node | None, change: Change) -> tuple[int, int, str]:
    cases = value_of(root, "cases")
    if not isinstance(cases, SequenceNode) or change.index >= len(cases.value):
        raise ValueError(f"cases[{change.index}] not found")
    case = cases.value[change.index]
    if not isinstance(case, MappingNode) or not case.value:
        raise ValueError(f"cases[{change.index}] is not a mapping")
    key, value = key_of(case, "expect"), value_of(case, "expect")
    if case.flow_style:
        rendered = f"expect: {json.dumps(change.expect, ensure_ascii=False)}"
        if key and value:
            return key.start_mark.index, end_of(chunk, value), rendered
        closing = chunk.rindex("}", 0, case.end_mark.index)
        return closing, closing, f", {rendered}"
    indent = " " * case.value[0][0].start_mark.column
    rendered = _block(change.expect, indent)
    if key and value:
        return key.start_mark.index, end_of(chunk, value), rendered
    end = end_of(chunk, case)
    return end, end, f"\n{indent}{rendered}"


def _block(value: Any, indent: str) -> str:
    """`expect: valid`, or `expect:` and the value's YAML indented under it."""
    if isinstance(value, str):
        return f"expect: {value}"
    body = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, allow_unicode=True, width=1_000_000)
    return "expect:" + "".join(f"\n{indent}  {line}" for line in body.splitlines())
