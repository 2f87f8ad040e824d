"""CRD rules written as kubebuilder markers in Go (`// +kubebuilder:validation:XValidation:rule="...",message="..."`):
where each character of a rule is in the Go file, and the API server's verdict on it.

A rule is checked in the CRD controller-gen made from the markers when one in the project holds the same rule text
(its schema types `self`, and its cost counts); otherwise it is compiled with `self` as `dyn`, which finds the
errors of syntax, names and functions but not of fields.
"""

from __future__ import annotations

from pathlib import Path

from kcel.annotations import Marker, error_character, go_markers
from kcel.lsp.analysis import Analysis, Diagnostic, analyze


def diagnostics(text: str, go_file: Path | None, k8s_version: str | None) -> list[Diagnostic]:
    """The API server's errors on each marker's rule, at the characters they concern in the Go file."""
    crds = _project_crds(go_file, k8s_version) if go_file is not None else []
    found: list[Diagnostic] = []
    for marker in go_markers(text):
        generated = [(a, e) for a in crds for e in a.expressions if e.text == marker.rule]
        if generated:
            analysis, expression = generated[0]
            for d in analysis.diagnostics:
                if expression.start <= d.start <= expression.end:
                    inside = expression.character_at(d.start) or 0
                    start = marker.positions[min(inside, len(marker.positions) - 1)]
                    found.append(Diagnostic(start, max(start + 1, d.end - d.start + start), d.message, d.severity))
            continue
        found += _compiled(marker, k8s_version) + _rule_lints(marker)
    return found + _marker_lints(text)


def _rule_lints(marker: Marker) -> list[Diagnostic]:
    """The lints of a rule no generated CRD holds (kcel.k8s.rules.lints), at the characters of the marker."""
    from kcel.k8s.rules.lints import concerns_newest, rule_lints

    last = len(marker.positions) - 1
    return [
        Diagnostic(marker.positions[min(lint.start, last)], marker.positions[min(lint.end, last)], lint.said(),
                   "warning" if concerns_newest(lint) else "information")
        for lint in rule_lints(marker.rule)
    ]  # fmt: skip


def _marker_lints(text: str) -> list[Diagnostic]:
    """Each XValidation marker controller-gen reads otherwise than it is written (kcel.k8s.rules.markerargs)."""
    from kcel.k8s.rules.markerargs import MARKER, marker_lints

    found = []
    line_start = 0
    for line in text.splitlines(keepends=True):
        if MARKER in line:
            found += [Diagnostic(line_start + lint.start, line_start + lint.end, lint.said(), "warning")
                      for lint in marker_lints(line.rstrip("\r\n"))]  # fmt: skip
        line_start += len(line)
    return found


def _compiled(marker: Marker, k8s_version: str | None) -> list[Diagnostic]:
    from kcel.errors import CompileError
    from kcel.k8s.surfaces.environments import environment

    try:
        environment("crd", k8s_version).compile(marker.rule)
    except CompileError as err:
        character = error_character(str(err), marker.rule)
        if character is None:
            return [Diagnostic(marker.start, marker.end, str(err))]
        start = marker.positions[min(character, len(marker.positions) - 1)]
        return [Diagnostic(start, start + 1, str(err))]
    return []


def _project_crds(go_file: Path, k8s_version: str | None) -> list[Analysis]:
    """The CRDs of the Go project the file is in (the nearest folder above it with a go.mod), analysed."""
    project = next((d for d in go_file.resolve().parents if (d / "go.mod").is_file()), None)
    if project is None:
        return []
    found = []
    for path in sorted(project.rglob("*.yaml")):
        if any(part.startswith(".") or part == "vendor" for part in path.relative_to(project).parts[:-1]):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "kind: CustomResourceDefinition" in text and "x-kubernetes-validations" in text:
            found.append(analyze(text, k8s_version))
    return found
