"""`-o github`: findings as GitHub Actions workflow commands, which the runner shows on the file and line.

The format (docs.github.com, "Workflow commands for GitHub Actions"): `::error file=F,line=L,title=T::message`;
`%`, CR and LF are escaped in the message, and `:` and `,` as well in the properties.
"""

from __future__ import annotations

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
