"""What `kcel test` prints: failures with what was expected and what came, then one closing line; or JSON; or JUnit XML.

The JUnit XML follows the shape CI systems read (Jenkins, GitLab, GitHub test reporters): `<testsuites>` with a
`<testsuite>` per suite document and a `<testcase>` per case and version, holding `<failure>`, `<error>` or
`<skipped>`.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from kcel import colour
from kcel.findings import Finding
from kcel.suites.fields import SuiteLines
from kcel.suites.model import Mismatch
from kcel.suites.runner import ERROR, FAILED, NEW, PASSED, RECORDED, SKIPPED, Result

if TYPE_CHECKING:
    from kcel.matrix import Outcome


@dataclass(frozen=True)
class Summary:
    """The counts `kcel test` closes with: passed, failed (errors too), skipped, deselected and recorded."""

    passed: int = 0
    failed: int = 0  # failures and errors
    skipped: int = 0
    deselected: int = 0
    recorded: int = 0  # expectations written by --update

    @classmethod
    def of(cls, results: Iterable[Result], deselected: int = 0) -> Summary:
        """The counts; a case still without an expectation counts as failed."""
        counts = Counter(result.status for result in results)
        failed = counts[FAILED] + counts[ERROR] + counts[NEW]
        return cls(counts[PASSED], failed, counts[SKIPPED], deselected, counts[RECORDED])

    def line(self) -> str:
        """`9 passed, 1 failed` (then skipped, deselected and recorded counts when there are any)."""
        parts = [f"{self.passed} passed", f"{self.failed} failed"]
        extra = (("skipped", self.skipped), ("deselected", self.deselected), ("recorded", self.recorded))
        return ", ".join(parts + [f"{count} {name}" for name, count in extra if count])

    def as_json(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped,
                "deselected": self.deselected, "recorded": self.recorded}  # fmt: skip


# -- text -------------------------------------------------------------------------------------------------------


class Colour:
    """ANSI colour as kcel.colour decides (a terminal, --color, NO_COLOR, FORCE_COLOR)."""

    def __init__(self, stream: TextIO) -> None:
        self.enabled = colour.wanted(stream)

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


def text_lines(
    result: Result, verbose: bool = False, colour: Colour | None = None, lines: SuiteLines | None = None
) -> list[str]:
    """The lines for one result: a failure or an error in full, passes and skips only when verbose (`lines`: the
    suite files already read, to find a failing case's line)."""
    paint = colour or (lambda code, text: text)
    if result.status in (FAILED, ERROR):
        head = [f"{paint('31', 'FAIL' if result.status == FAILED else 'ERROR')} {result.id}"]
        line = _case_line(result, lines or SuiteLines())  # for editors and terminals that open file:line
        place = [f"  at {result.suite.where.file}:{line}"] if line else []
        if result.status == ERROR:
            return head + [f"  {result.detail}"] + place
        return head + [line for mismatch in result.mismatches for line in mismatch_lines(mismatch)] + place
    if not verbose:
        return []
    if result.status == SKIPPED:
        return [f"{paint('33', 'SKIP')} {result.id}: {result.detail}"]
    return [f"{paint('32', 'PASS' if result.status == PASSED else 'RECORDED')} {result.id}"]


def mismatch_lines(mismatch: Mismatch) -> list[str]:
    if mismatch.diff:
        return [f"  {mismatch.field} (- expected, + actual)", *(f"    {line}" for line in mismatch.diff)]
    return [
        f"  {mismatch.field}",
        *_labelled("expected: ", mismatch.expected),
        *_labelled("got:      ", mismatch.actual),
    ]


def _labelled(label: str, text: str) -> list[str]:
    lines = text.splitlines() or [""]
    return [f"    {label}{lines[0]}", *(f"    {' ' * len(label)}{line}" for line in lines[1:])]


def print_text(results: Iterable[Result], verbose: bool, stream: TextIO | None = None) -> list[Result]:
    """Print results as they come (to stdout by default); returns them all."""
    stream = stream or sys.stdout
    colour, kept = Colour(stream), []
    lines = SuiteLines()  # each suite file read once
    for result in results:
        kept.append(result)
        for line in text_lines(result, verbose, colour, lines):
            print(line, file=stream)
    return kept


# -- JSON -------------------------------------------------------------------------------------------------------


def result_json(result: Result) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": result.id, "file": str(result.suite.where.file), "document": result.suite.where.document,
        "case": result.case.name, "index": result.case.index, "k8sVersion": result.version,
        "status": result.status, "seconds": round(result.seconds, 6),
    }  # fmt: skip
    if result.detail:
        record["detail"] = result.detail
    if result.mismatches:
        record["mismatches"] = [
            {"field": m.field, "expected": m.expected, "actual": m.actual, **({"diff": list(m.diff)} if m.diff else {})}
            for m in result.mismatches
        ]
    if result.actual is not None:
        record["actual"] = result.actual
    return record


def report_json(results: Sequence[Result], summary: Summary, problems: Sequence[str] = ()) -> dict[str, Any]:
    return {"problems": list(problems), "results": [result_json(r) for r in results], "summary": summary.as_json()}


# -- JUnit XML --------------------------------------------------------------------------------------------------


def findings(results: Sequence[Result], problems: Sequence[str] = ()) -> list[Finding]:
    """`-o github`, `-o sarif`: an error on the case's line for each case that failed, erred or has no expectation,
    and one for each suite problem."""
    lines = SuiteLines()
    found = [Finding("error", p, p.split(": ")[0], title="kcel test", rule="input-error") for p in problems]
    for result in results:
        if result.status not in (FAILED, ERROR, NEW):
            continue
        file, line = str(result.suite.where.file), _case_line(result, lines)
        if result.status == FAILED:
            message = "\n".join(line for m in result.mismatches for line in mismatch_lines(m))
        else:
            message = result.detail or "no expectation (kcel test --update records the answer)"
        title = f"kcel test: {result.case.name}" + (f" [{result.version}]" if result.several else "")
        found.append(Finding("error", message, file, line, title=title, rule="test-failed"))
    return found


def outcomes(results: Sequence[Result]) -> dict[str, list[Outcome]]:
    """Each version's outcome of each case, for `kcel test --k8s-version 1.30-1.37` to tell where they differ."""
    from kcel.matrix import Outcome

    case_lines = SuiteLines()
    found: dict[str, list[Outcome]] = {}
    for result in results:
        lines = [line.strip() for m in result.mismatches for line in mismatch_lines(m)]
        message = "; ".join(lines) or result.detail
        found.setdefault(result.version, []).append(Outcome(
            result.suite.case_id(result.case), result.status, result.status in (FAILED, ERROR, NEW), message,
            str(result.suite.where.file), _case_line(result, case_lines),
        ))  # fmt: skip
    return found


def _case_line(result: Result, lines: SuiteLines) -> int:
    """The line where a case starts in its suite file (0 when it cannot be found)."""
    return lines.line(result.suite.where, result.case.path) or 0


def junit_xml(results: Sequence[Result], problems: Sequence[str] = ()) -> str:
    """JUnit XML: a <testsuite> per suite document (and one for suites that could not be read)."""
    root = ET.Element("testsuites", name="kcel test")
    lines = SuiteLines()  # the suite files, read once, to find each case's line
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(_suite_name(result), []).append(result)
    for name, members in groups.items():
        suite = ET.SubElement(root, "testsuite", name=name)
        for result in members:
            _testcase(suite, result, lines)
        _counts(suite, members)
    if problems:
        unreadable = ET.SubElement(root, "testsuite", name="unreadable suites", tests=str(len(problems)),
                                   failures="0", errors=str(len(problems)), skipped="0", time="0")  # fmt: skip
        for problem in problems:
            case = ET.SubElement(unreadable, "testcase", classname="kcel test", name=problem.split(": ")[0])
            ET.SubElement(case, "error", message=problem, type="unreadable suite")
    _counts(root, results, extra_errors=len(problems))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite_name(result: Result) -> str:
    where = result.suite.where
    return str(where.file) + (f" (document {where.document})" if where.document else "")


def _testcase(parent: ET.Element, result: Result, lines: SuiteLines) -> None:
    name = result.case.name + (f" [{result.version}]" if result.several else "")
    case = ET.SubElement(parent, "testcase", classname=str(result.suite.where.file), name=name,
                         file=str(result.suite.where.file), line=str(_case_line(result, lines)),
                         time=f"{result.seconds:.6f}")  # fmt: skip
    if result.status == FAILED:
        first = result.mismatches[0]
        failure = ET.SubElement(case, "failure", message=f"{first.field}: expected {first.expected}", type="mismatch")
        failure.text = "\n".join(line for m in result.mismatches for line in mismatch_lines(m))
    elif result.status == ERROR:
        ET.SubElement(case, "error", message=result.detail, type="error")
    elif result.status == SKIPPED:
        ET.SubElement(case, "skipped", message=result.detail)
    elif result.status == RECORDED:
        ET.SubElement(case, "system-out").text = "kcel test --update recorded the answer as the expectation"
    elif result.status == NEW:
        ET.SubElement(case, "failure", message="no expectation", type="no expectation")


def _counts(element: ET.Element, results: Sequence[Result], extra_errors: int = 0) -> None:
    counts = Counter(result.status for result in results)
    element.set("tests", str(len(results) + extra_errors))
    element.set("failures", str(counts[FAILED] + counts[NEW]))
    element.set("errors", str(counts[ERROR] + extra_errors))
    element.set("skipped", str(counts[SKIPPED]))
    element.set("time", f"{sum(result.seconds for result in results):.6f}")
