"""Findings for CI, each at a place in a file, in the formats CI systems read:

- `-o github`: GitHub Actions workflow commands (docs.github.com, "Workflow commands for GitHub Actions"),
  `::error file=F,line=L,col=C,title=T::message`, which the runner shows on the file and line; `%`, CR and LF
  are escaped in the message, and `:` and `,` as well in the properties;
- `-o sarif`: a SARIF 2.1.0 log (OASIS), which GitHub code scanning and other tools import;
- `-o junit`: JUnit XML, a test case per object checked.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

# What each kind of finding means: SARIF's rules, named by the findings' `rule`.
RULES = {
    "crd-rejected": "The API server would reject the CustomResourceDefinition (a rule that does not compile, "
    "an estimated cost over the limit, a schema error).",
    "object-invalid": "The API server would reject the object: its schema or a validation rule fails.",
    "object-not-validated": "The object could not be validated (it cannot be read, or a rule cannot run).",
    "admission-denied": "An admission policy denies the request.",
    "test-failed": "A kcel test case failed, or has no expectation yet.",
    "input-error": "An input file could not be read.",
    "warning": "The API server would return a warning.",
    "go-marker-invalid": "controller-gen would not make the CRD from the Go types as written: a marker or a type "
    "it rejects.",
    "go-type-not-found": "A Go type the CRD's schema needs was not found in the module, vendor/ or the module "
    "cache: its schema is left open.",
}
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@dataclass(frozen=True)
class Finding:
    """One error or warning, where it is (a line and column of 0: not known), and what kind it is (a RULES key)."""

    level: str  # "error" or "warning"
    message: str
    file: str = ""
    line: int = 0
    column: int = 0
    title: str = "kcel"
    rule: str = "input-error"
    help: str = ""  # what a rule not in RULES means (a lint's, kcel.k8s.rules.lints)
    related: tuple[tuple[str, int, int, str], ...] = ()  # other places of the same finding: file, line, column, why


def workflow_command(finding: Finding) -> str:
    """One `::error ...::` (or `::warning`) line."""
    properties = [f"file={_property(finding.file)}"] if finding.file else []
    if finding.file and finding.line > 0:
        properties.append(f"line={finding.line}")
        if finding.column > 0:
            properties.append(f"col={finding.column}")
    if finding.title:
        properties.append(f"title={_property(finding.title)}")
    joined = " " + ",".join(properties) if properties else ""
    return f"::{finding.level}{joined}::{_data(finding.message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def sarif_log(tool: str, findings: Iterable[Finding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run of `tool` (`kcel check`...): a result per finding, the rules the results name."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("kcel")
    except PackageNotFoundError:  # run from a checkout
        release = "0"
    findings = list(findings)
    results = [_sarif_result(f) for f in findings]
    helps = {f.rule: f.help for f in findings if f.help}
    used = sorted({r["ruleId"] for r in results})
    rules = [{"id": rule, "shortDescription": {"text": RULES.get(rule) or helps[rule]}} for rule in used]
    driver = {"name": "kcel", "fullName": tool, "version": release, "semanticVersion": release,
              "informationUri": "https://pypi.org/project/kcel/", "rules": rules}  # fmt: skip
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}


def _sarif_result(finding: Finding) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": finding.level,
        "message": {"text": finding.message or finding.title},
    }
    if finding.file:
        result["locations"] = [{"physicalLocation": _physical(finding.file, finding.line, finding.column)}]
    if finding.related:
        result["relatedLocations"] = [
            {"id": number, "message": {"text": why}, "physicalLocation": _physical(file, line, column)}
            for number, (file, line, column, why) in enumerate(finding.related, 1)
        ]
    return result


def _physical(file: str, line: int, column: int) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(file)}}
    if line > 0:
        physical["region"] = {"startLine": line} | ({"startColumn": column} if column else {})
    return physical


def _uri(file: str) -> str:
    """A file as SARIF names it: relative to the working directory (the repository, in CI) when inside it."""
    path = Path(file)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    return path.as_posix()


class Emitter:
    """Findings written as the command finds them (`-o github`), or all at its end (`-o sarif`)."""

    def __init__(self, output: str, tool: str) -> None:
        self.output, self.tool = output, tool
        self.kept: list[Finding] = []

    def __call__(self, findings: Iterable[Finding]) -> None:
        if self.output == "github":  # an annotation at each place: the YAML rule's line and its Go marker's
            for finding in findings:
                print(workflow_command(finding))
                for file, line, column, _ in finding.related:
                    print(workflow_command(replace(finding, file=file, line=line, column=column, related=())))
        elif self.output == "sarif":
            self.kept.extend(findings)

    def close(self) -> None:
        if self.output == "sarif":
            print(json.dumps(sarif_log(self.tool, self.kept), indent=2))


# -- JUnit XML ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestCase:
    """One object checked, for JUnit: `status` passed, failure (invalid, rejected), error (unreadable) or skipped."""

    name: str
    file: str
    line: int
    status: str
    message: str = ""
    output: str = ""  # told beside the verdict (<system-out>): lints


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
            if case.output:
                ET.SubElement(element, "system-out").text = case.output
        _count(suite, members)
    _count(root, cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _count(element: ET.Element, cases: Sequence[TestCase]) -> None:
    element.set("tests", str(len(cases)))
    for status, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(sum(case.status == status for case in cases)))
