"""CRD rules written as kubebuilder markers in Go (`// +kubebuilder:validation:XValidation:rule="...",message="..."`):
the API server's verdict on each, at the characters of the marker it concerns, as the editor holds the file.

The file's package is derived as controller-gen would derive it (kcel.k8s.gotypes), from the editor's text of the
file and the disk for the rest, and each CRD found is checked as `kcel check` checks it: `self` has the type of the
Go type the marker is on, costs count its bounds, and no YAML needs regenerating. A marker outside any CRD (a type
no kind uses, a package without `+groupName`) is checked in a CRD the project generated with the same rule, else
compiled with `self` as `dyn`, which finds the errors of syntax, names and functions but not of fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kcel.annotations import Marker, error_character, go_markers
from kcel.k8s import field as fe
from kcel.lsp.analysis import Analysis, Diagnostic, Expression, analyze, crd_errors

RULE_KEYS = ("rule", "messageExpression")


def go_analysis(text: str, go_file: Path | None, k8s_version: str | None) -> Analysis:
    """The rules of a Go file's markers (as expressions of the CRDs derived from its package), the API server's
    errors on them, controller-gen's errors on the markers, and the lints, at their characters in the file."""
    analysis = Analysis()
    if go_file is not None:
        _check_derived(analysis, text, go_file.resolve(), k8s_version)
    covered = {e.positions[0] for e in analysis.expressions if e.positions}
    rest = [m for m in go_markers(text) if m.positions and m.positions[0] not in covered]
    if rest:
        crds = _project_crds(go_file, k8s_version) if go_file is not None else []
        for marker in rest:
            analysis.diagnostics += _generated(marker, crds, k8s_version)
    analysis.diagnostics += _marker_lints(text)
    return analysis


def _check_derived(analysis: Analysis, text: str, go_file: Path, k8s_version: str | None) -> None:
    """Derive the file's package with the editor's text, and check each CRD that has a rule or its kind here."""
    from kcel.k8s.gotypes.derive import derive_crds
    from kcel.k8s.gotypes.syntax import GoSyntaxError, go_available

    if not go_available():
        return
    try:
        derivation = derive_crds([go_file.parent], sources={go_file: text})
    except (GoSyntaxError, OSError, ValueError):
        return
    here = _FileMatcher(go_file)
    for problem in derivation.problems:
        if here(problem.file):
            start = _offset(text, problem.line, problem.column)
            analysis.diagnostics.append(Diagnostic(start, _line_end(text, start), problem.message, problem.severity))
    for derived in derivation.crds:
        mine = {key: o for key, o in derived.origins.items() if key[-1:] and key[-1] in RULE_KEYS and here(o.file)}
        if not mine and not here(derived.file):
            continue
        index = len(analysis.documents)
        analysis.documents.append((0, None, derived.manifest))
        for key, origin in mine.items():
            elements, rule = _walked(derived.manifest, key)
            if isinstance(rule, str) and origin.positions:
                positions = tuple(origin.positions)
                analysis.expressions.append(Expression(index, fe.Path(elements), rule, positions[0], positions[-1],
                                                       positions))  # fmt: skip
        placed = _Placer(analysis, index, derived, here, text)
        for path, message, severity in crd_errors(analysis, index, derived.manifest, k8s_version):
            found = placed(path, message, severity)
            if found is not None:
                analysis.diagnostics.append(found)


class _FileMatcher:
    """Whether a file name a derivation gives (relative to the working folder, or absolute) is the edited file."""

    def __init__(self, go_file: Path) -> None:
        self.go_file = go_file
        self.seen: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        if name not in self.seen:
            self.seen[name] = Path(name).resolve() == self.go_file
        return self.seen[name]


class _Placer:
    """Where an error of a derived CRD goes: at the characters of the rule it names (those a compile error names),
    else at the marker or the kind's type it comes from; nowhere when that is in another file."""

    def __init__(self, analysis: Analysis, index: int, derived: Any, here: _FileMatcher, text: str) -> None:
        from kcel.k8s.crds.crd import crds_of

        self.analysis, self.index, self.derived, self.here, self.text = analysis, index, derived, here, text
        self.crds = crds_of([derived.manifest])

    def __call__(self, path: fe.Path, message: str, severity: str) -> Diagnostic | None:
        from kcel.annotations import crd_elements, nearest_rule_origin

        expression = self.analysis.expression_named(self.index, path)
        if expression is not None:
            character = error_character(message, expression.text)
            if character is None:
                return Diagnostic(expression.start, expression.end, message, severity)
            start = expression.offset_of(character)
            return Diagnostic(start, max(start + 1, expression.offset_of(character + 1)), message, severity)
        elements = crd_elements(self.crds[0], path) if self.crds else path.elements
        origin = nearest_rule_origin(self.derived.origins, elements)
        file, line, column = (
            (origin.file, origin.line, origin.column) if origin else (self.derived.file, self.derived.line, 1)
        )
        if not self.here(file):
            return None
        start = _offset(self.text, line, column)
        return Diagnostic(start, _line_end(self.text, start), message, severity)


def _walked(manifest: Mapping[str, Any], key: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], Any]:
    """A manifest path's keys as field path elements (an index where the node is a list, else a name), and the
    value there (None when there is none)."""
    found: list[tuple[str, str]] = []
    node: Any = manifest
    for step in key:
        if isinstance(node, list):
            found.append(("", step))
            node = node[int(step)] if step.isdigit() and int(step) < len(node) else None
        else:
            found.append((step, ""))
            node = node.get(step) if isinstance(node, Mapping) else None
    return tuple(found), node


def _offset(text: str, line: int, column: int) -> int:
    """The offset of a 1-based line and column (characters) in the text."""
    start = 0
    for _ in range(line - 1):
        found = text.find("\n", start)
        if found < 0:
            return len(text)
        start = found + 1
    return min(start + max(column - 1, 0), len(text))


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return max(start + 1, end if end >= 0 else len(text))


# -- markers outside any derived CRD ------------------------------------------------------------------------------


def _generated(marker: Marker, crds: list[Analysis], k8s_version: str | None) -> list[Diagnostic]:
    """A rule's errors in a CRD the project generated holding the same rule, else compiled with `self` as `dyn`."""
    generated = [(a, e) for a in crds for e in a.expressions if e.text == marker.rule]
    if not generated:
        return _compiled(marker, k8s_version) + _rule_lints(marker)
    analysis, expression = generated[0]
    found = []
    for d in analysis.diagnostics:
        if expression.start <= d.start <= expression.end:
            inside = expression.character_at(d.start) or 0
            start = marker.positions[min(inside, len(marker.positions) - 1)]
            found.append(Diagnostic(start, max(start + 1, d.end - d.start + start), d.message, d.severity))
    return found


def _rule_lints(marker: Marker) -> list[Diagnostic]:
    """The lints of a rule no CRD holds (kcel.k8s.rules.lints), at the characters of the marker."""
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
