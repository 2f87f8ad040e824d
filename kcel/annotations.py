"""Findings for CI: `-o github` as GitHub Actions workflow commands, which the runner shows on the file and line;
`-o junit` as JUnit XML, one test case per object checked.

The format (docs.github.com, "Workflow commands for GitHub Actions"): `::error file=F,line=L,title=T::message`;
`%`, CR and LF are escaped in the message, and `:` and `,` as well in the properties.
"""

from __future__ import annotations

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
