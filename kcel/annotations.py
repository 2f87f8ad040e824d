"""Findings for CI: `-o github` as GitHub Actions workflow commands, which the runner shows on the file and line;
`-o junit` as JUnit XML, one test case per object checked.

The format (docs.github.com, "Workflow commands for GitHub Actions"): `::error file=F,line=L,title=T::message`;
`%`, CR and LF are escaped in the message, and `:` and `,` as well in the properties.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe


def workflow_command(level: str, message: str, file: str = "", line: int = 0, title: str = "") -> str:
    """One `::error ...::` (or `::warning`, `::notice`) line."""
    properties = [f"file={_property(file)}"] if file else []
    if file and line > 0:
        properties.append(f"line={line}")
    if title:
        properties.append(f"title={_property(title)}")
    joined = " " + ",".join(properties) if properties else ""
    return f"::{level}{joined}::{_data(message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def crd_field_line(crd: Any, path: fe.Path) -> int:
    """The line of a field of a CRD (kcel.k8s.crds.crd.CRD) in its file, for an error the API server reports at
    `path`; the CRD's first line when the field cannot be found. An error under `spec.validation` is where the
    versions' one schema is (the API server moves a schema all versions share there)."""
    from kcel.suites.yamltext import line_of

    elements = path.elements
    if elements[:2] == (("spec", ""), ("validation", "")) and crd.api_version.endswith("/v1") and crd.versions:
        elements = (("spec", ""), ("versions", ""), ("", "0"), ("schema", ""), *elements[2:])
    try:
        found = line_of(_text(crd.file), crd.document, fe.Path(elements))
    except (OSError, UnicodeDecodeError):
        found = None
    return found or crd.line


@cache
def _text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")


def crd_rule_marker(crd: Any, path: fe.Path) -> str:
    """`file.go:line` of the `+kubebuilder:validation:XValidation` marker that holds the rule an error names, when
    controller-gen made the CRD from Go types of the same project (the nearest folder above it with a go.mod);
    empty otherwise."""
    from kcel.suites.yamltext import compose_document, find, value_of

    elements = path.elements
    if not elements or elements[-1] not in (("rule", ""), ("messageExpression", "")):
        return ""
    if elements[:2] == (("spec", ""), ("validation", "")) and crd.api_version.endswith("/v1") and crd.versions:
        elements = (("spec", ""), ("versions", ""), ("", "0"), ("schema", ""), *elements[2:])
    try:
        _, _, root = compose_document(_text(crd.file), crd.document)
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    node = value_of(find(root, fe.Path(elements[:-1])), elements[-1][0])
    if node is None or not isinstance(node.value, str):
        return ""
    project = next((d for d in Path(crd.file).resolve().parents if (d / "go.mod").is_file()), None)
    if project is None:
        return ""
    for file, line, rule in _markers(str(project)):
        if rule == node.value:
            return f"{file}:{line}"
    return ""


@cache
def _markers(project: str) -> tuple[tuple[str, int, str], ...]:
    """(file, line, rule) of every XValidation marker in the project's Go files (vendor/ and hidden folders aside)."""
    found = []
    root = Path(project)
    for file in sorted(root.rglob("*.go")):
        parts = file.relative_to(root).parts
        if any(p == "vendor" or p.startswith(".") for p in parts[:-1]):
            continue
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, text in enumerate(lines, 1):
            match = _MARKER.search(text)
            if match:
                found.append((str(file.relative_to(Path.cwd()) if file.is_relative_to(Path.cwd()) else file),
                              number, _go_string(match.group(1))))  # fmt: skip
    return tuple(found)


_MARKER = re.compile(r"\+kubebuilder:validation:XValidation:.*?\brule=(\"(?:[^\"\\]|\\.)*\"|`[^`]*`)")


def _go_string(literal: str) -> str:
    """The value of a Go string literal as controller-gen reads a marker's argument (interpreted or raw)."""
    if literal.startswith("`"):
        return literal[1:-1]
    return json.loads(literal) if "\\x" not in literal else literal[1:-1]


@dataclass(frozen=True)
class TestCase:
    """One object checked, for JUnit: `status` passed, failure (invalid, rejected), error (unreadable) or skipped."""

    name: str
    file: str
    line: int
    status: str
    message: str = ""


def junit_xml(tool: str, cases: Sequence[TestCase]) -> str:
    """JUnit XML: a <testsuite> per file, a <testcase> per object with its file and line."""
    root = ET.Element("testsuites", name=tool)
    files: dict[str, list[TestCase]] = {}
    for case in cases:
        files.setdefault(case.file, []).append(case)
    for file, members in files.items():
        suite = ET.SubElement(root, "testsuite", name=file)
        for case in members:
            element = ET.SubElement(suite, "testcase", classname=file, name=case.name, file=file, line=str(case.line))
            if case.status in ("failure", "error"):
                ET.SubElement(element, case.status, message=case.message.splitlines()[0] if case.message else "",
                              type=case.status).text = case.message  # fmt: skip
            elif case.status == "skipped":
                ET.SubElement(element, "skipped", message=case.message)
        _count(suite, members)
    _count(root, cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _count(element: ET.Element, cases: Sequence[TestCase]) -> None:
    element.set("tests", str(len(cases)))
    for status, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(sum(case.status == status for case in cases)))
