"""`kcel check`'s lints of a CRD's rules (kcel.k8s.rules.lints): what the API server will not say, at the file, line
and column of the character each concerns, in every output format. check.py calls `crd_lints` with the CRD's checks
at the versions it answered; a lint is shown only when it concerns a version asked about (without `--k8s-version`
or a `.kcel.yaml`, every version kcel knows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcel.findings import Finding
from kcel.k8s.rules.lints import LINTS, LintFinding, confirmed_reserved, cost_by_version, rule_lints


@dataclass(frozen=True)
class PlacedLint:
    """A lint of one of a CRD's rules, and where that character is."""

    lint: LintFinding
    file: str
    line: int
    column: int  # 0: not known
    field: str  # the rule's field path, as the API server names it
    marker: str  # `file.go:line` of the Go marker the rule came from, "" if none
    strict: bool = False  # --strict: a lint fails the check

    def lines(self) -> list[str]:
        """What `kcel check` prints under the CRD."""
        at = f"{self.line}:{self.column}" if self.column else str(self.line)
        marker = f" (the marker at {self.marker})" if self.marker else ""
        return [f"  {self.lint.text()}", f"    at {self.file}:{at}: {self.field}{marker}"]

    def finding(self) -> Finding:
        """For -o github and sarif: a warning (an error with --strict) named by the lint."""
        return Finding("error" if self.strict else "warning", f"{self.field}: {self.lint.text()}", self.file, self.line,
                       self.column, rule=self.lint.lint, help=LINTS[self.lint.lint].finds)  # fmt: skip

    def report(self) -> dict[str, Any]:
        """For -o json."""
        return {"lint": self.lint.lint, "versions": list(self.lint.versions), "message": self.lint.message,
                "fix": self.lint.fix, "field": self.field, "file": self.file, "line": self.line,
                "column": self.column, "marker": self.marker}  # fmt: skip


def crd_lints(crd: Any, checks: Mapping[str, Any], versions: Sequence[str], strict: bool = False) -> list[PlacedLint]:
    """The lints of a CRD's rules. `checks`: its CRDCheck at each version answered (the cost lint needs two or
    more); `versions`: those asked about; `strict`: lints fail the check."""
    newest = checks[max(checks, key=lambda version: tuple(int(part) for part in version.split(".")))]
    found = []
    for cost in newest.costs:
        shown = [n for n in (f.within(versions) for f in rule_lints(cost.expression)) if n is not None]
        found += [_placed(crd, cost.path, lint, strict) for lint in confirmed_reserved(shown, cost)]
    if len(checks) > 1:
        by_path: dict[str, dict[str, Any]] = {}
        for version, check in checks.items():
            for cost in check.costs:
                by_path.setdefault(str(cost.path), {})[version] = cost
        for costs in by_path.values():
            lint = cost_by_version(costs) if len(costs) == len(checks) else None
            if lint is not None:
                found.append(_placed(crd, next(iter(costs.values())).path, lint, strict))
    return found


def _placed(crd: Any, path: Any, lint: LintFinding, strict: bool) -> PlacedLint:
    from kcel.annotations import character_position, crd_field_place, crd_rule_marker

    position = character_position(crd, path, lint.start)
    file, line, column = position if position is not None else (*crd_field_place(crd, path), 0)
    return PlacedLint(lint, file, line, column, str(path), crd_rule_marker(crd, path), strict)


def go_marker_lints(folders: Sequence[Any], strict: bool = False) -> list[Finding]:
    """The marker-comma lint of each XValidation marker in the Go packages' files (kcel.k8s.rules.markerargs): a
    rule controller-gen reads otherwise than it is written, at its file, line and column."""
    from pathlib import Path

    from kcel.k8s.gotypes.packages import shown_path
    from kcel.k8s.rules.markerargs import MARKER, marker_lints

    found = []
    for folder in folders:
        for path in sorted(Path(folder).glob("*.go")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # the derivation reports it
            shown = shown_path(path)
            for number, line in enumerate(text.splitlines(), 1):
                if MARKER in line:
                    found += [Finding("error" if strict else "warning", lint.text(), shown, number, lint.start + 1,
                                      rule=lint.lint, help=LINTS[lint.lint].finds)
                              for lint in marker_lints(line)]  # fmt: skip
    return found
