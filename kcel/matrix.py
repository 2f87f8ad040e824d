"""One command's answers at several Kubernetes versions, told once where they agree and version by version where
they differ (`--k8s-version 1.30-1.37`): a rule that compiles on some versions only, a cost over the limit on some,
an object, request or test case whose outcome or message changes."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from kcel.findings import Finding

_THIS_VERSION = "\0"  # "Kubernetes 1.31" in a message, so that answers differing only by it are told once


@dataclass(frozen=True)
class Outcome:
    """What a command answered about one subject (a CRD, an object, a request, a test case) at one version."""

    subject: str
    verdict: str  # "accepted", "rejected", "valid", "denied", "passed"...
    failed: bool  # a verdict that fails the command
    message: str = ""
    file: str = ""  # where the subject is, for CI formats (not part of the answer)
    line: int = 0


@dataclass(frozen=True)
class Span:
    """The versions that gave one answer."""

    versions: tuple[str, ...]
    verdict: str
    failed: bool
    message: str


@dataclass(frozen=True)
class Row:
    """One subject's answers across the versions: a Span per different answer."""

    subject: str
    spans: tuple[Span, ...]
    file: str = ""
    line: int = 0

    @property
    def differs(self) -> bool:
        return len(self.spans) > 1

    @property
    def failed(self) -> bool:
        return any(span.failed for span in self.spans)


@dataclass(frozen=True)
class Matrix:
    """A command's answers at several versions: the versions asked and a Row per subject."""

    versions: tuple[str, ...]
    rows: tuple[Row, ...]  # in the order the subjects were first answered

    @classmethod
    def of(cls, answers: Mapping[str, Sequence[Outcome]]) -> Matrix:
        """`answers`: each version's outcomes. A subject missing at a version is answered "absent" there."""
        versions = tuple(answers)
        subjects = list(dict.fromkeys(o.subject for outcomes in answers.values() for o in outcomes))
        by_version = {v: {o.subject: o for o in outcomes} for v, outcomes in answers.items()}
        absent = Outcome("", "absent", False)
        rows = []
        for subject in subjects:
            spans: dict[tuple[str, bool, str], list[str]] = {}
            for version in versions:
                outcome = by_version[version].get(subject, absent)
                message = outcome.message.replace(f"Kubernetes {version}", _THIS_VERSION)
                spans.setdefault((outcome.verdict, outcome.failed, message), []).append(version)
            place = next(by_version[v][subject] for v in versions if subject in by_version[v])
            told = []
            for (verdict, failed, message), at in spans.items():
                named = f"Kubernetes {versions_text(at)}"
                told.append(Span(tuple(at), verdict, failed, message.replace(_THIS_VERSION, named)))
            rows.append(Row(subject, tuple(told), place.file, place.line))
        return cls(versions, tuple(rows))

    @property
    def failed(self) -> bool:
        return any(row.failed for row in self.rows)

    def answer_text(self, span: Span) -> str:
        """`rejected on Kubernetes 1.30: message`."""
        message = f": {span.message}" if span.message else ""
        return f"{span.verdict} on Kubernetes {versions_text(span.versions)}{message}"

    def summary(self, noun: str) -> str:
        differ = sum(row.differs for row in self.rows)
        failing = sum(row.failed for row in self.rows)
        return (f"Kubernetes {versions_text(self.versions)}: {len(self.rows)} {noun}: {differ} "
                f"answered differently by version, {failing} failing on at least one")  # fmt: skip

    def print_text(self, noun: str, out: TextIO | None = None) -> None:
        """The subjects whose answers differ by version, a line per answer; then those failing on every version."""
        out = out or sys.stdout
        width = max((len(versions_text(s.versions)) for r in self.rows for s in r.spans), default=0)
        for row in self.rows:
            if row.differs:
                print(row.subject, file=out)
                for span in row.spans:
                    shown = versions_text(span.versions).ljust(width)
                    message = span.message.replace("\n", "\n" + " " * (width + 4))  # continued under the first line
                    print(f"  {shown}  {span.verdict}{': ' + message if message else ''}", file=out)
        for row in self.rows:
            if row.failed and not row.differs:
                (span,) = row.spans
                print(f"{row.subject}: {span.verdict} on every version: {span.message}".rstrip(": "), file=out)
        out.flush()
        print(self.summary(noun), file=sys.stderr)

    def as_json(self) -> dict[str, Any]:
        """Every subject, with its answers by version (one span when every version agrees)."""
        return {
            "versions": list(self.versions), "failed": self.failed,
            "subjects": [{"subject": row.subject, "differs": row.differs, "answers": [
                {"versions": list(span.versions), "verdict": span.verdict, "failed": span.failed,
                 "message": span.message} for span in row.spans]} for row in self.rows],
        }  # fmt: skip


class Note(Protocol):
    """Something told about a subject that does not change its answers (a lint, kcel.commands.crdlints)."""

    def lines(self) -> list[str]: ...  # under the subject, in text

    def finding(self) -> Finding: ...  # for CI formats

    def report(self) -> dict[str, Any]: ...  # for -o json


def report(matrix: Matrix, output: str, tool: str, noun: str, rule: str, problems: Sequence[str] = (),
           notes: Mapping[str, Sequence[Note]] | None = None) -> int:  # fmt: skip
    """The matrix in the command's output format; exit status 1 when any version fails anything, or on problems.
    `notes`, by subject: told under it, as findings in CI formats, in `<system-out>` for JUnit."""
    from kcel.findings import Emitter, Finding, TestCase, junit_xml

    notes = notes or {}
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if output == "json":
        told = [{"subject": subject, **note.report()} for subject, found in notes.items() for note in found]
        print(json.dumps({**matrix.as_json(), "problems": list(problems), "notes": told}, indent=2))
    elif output in ("github", "sarif"):
        emit = Emitter(output, tool)
        emit(Finding("error", problem, problem.partition(": ")[0]) for problem in problems)
        emit(Finding("error", f"{row.subject}: {matrix.answer_text(span)}", row.file, row.line, title=tool, rule=rule)
             for row in matrix.rows for span in row.spans if span.failed)  # fmt: skip
        emit(note.finding() for found in notes.values() for note in found)
        emit.close()
        print(matrix.summary(noun), file=sys.stderr)
    elif output == "junit":
        cases = [
            TestCase(row.subject, row.file, row.line, "failure" if row.failed else "passed",
                     "; ".join(matrix.answer_text(s) for s in row.spans if s.failed),
                     "\n".join(note.finding().message for note in notes.get(row.subject, ())))
            for row in matrix.rows
        ]  # fmt: skip
        print(junit_xml(tool, cases), end="")
    else:
        matrix.print_text(noun)
        for subject, found in notes.items():
            print("\n".join([subject, *(line for note in found for line in note.lines())]))
    return 1 if matrix.failed or problems else 0


def versions_text(versions: Sequence[str]) -> str:
    """`1.30-1.33, 1.36`: runs of consecutive minor versions joined by a dash."""
    runs: list[list[str]] = []
    for version in versions:
        if runs and _minor(version) == _minor(runs[-1][-1]) + 1:
            runs[-1].append(version)
        else:
            runs.append([version])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _minor(version: str) -> int:
    return int(version.split(".")[1])
