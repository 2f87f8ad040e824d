"""`-o github`: findings as GitHub Actions workflow commands, which the runner shows on the file and line.

The format (docs.github.com, "Workflow commands for GitHub Actions"): `::error file=F,line=L,title=T::message`;
`%`, CR and LF are escaped in the message, and `:` and `,` as well in the properties.
"""

from __future__ import annotations


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
