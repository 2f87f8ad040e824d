"""`kcel test`: run suites of cases (CRDs, admission policies, webhook match conditions, DRA device selectors,
structured authentication and authorization), as Kubernetes would answer them, without a cluster.

Only argparse is imported at module level, so that building the `kcel` parser stays cheap.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kcel.k8s.environment import add_version_option

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcel.findings import Finding
    from kcel.suites.model import Case, Suite
    from kcel.suites.runner import Result

EXAMPLES = """\
Suites are the files named *.kcel-test.yaml (or kcel-test.yaml) under the paths given (default: the current
folder); a file named directly is read whatever its name.

examples:
  kcel test examples/
  kcel test examples/widget.kcel-test.yaml -k immutable -v
  kcel test --k8s-version 1.36 -o junit examples/ > kcel-test.xml
  kcel test --update examples/widget.kcel-test.yaml   # record answers of new cases, rewrite failing ones

Every problem of every suite file is shown (file:line: where known); the suites (and cases) it concerns are
left out and the others still run.

exit status: 0 all passed (or no suite found, unless --require-suites), 1 a case failed, 2 a suite (or a case of
it) cannot be read or prepared, whatever the other suites did (or the --junit-xml file cannot be written, or bad
usage)
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `kcel test`'s arguments to `parser`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("paths", nargs="*", metavar="PATH", help="suite files and folders to search (default: .)")
    parser.add_argument("-k", dest="pattern", metavar="PATTERN",
                        help="run only the cases whose FILE::NAME contains PATTERN (case-insensitive)")  # fmt: skip
    add_version_option(parser, several=True)
    parser.add_argument("--update", action="store_true",
                        help="write the answers back as expectations: for cases with none, and for failing ones "
                        "(each file's diff is shown first)")  # fmt: skip
    parser.add_argument("--output", "-o", choices=("text", "json", "junit", "github", "sarif"), default="text",
                        help="github: workflow commands on the failing cases' lines, for GitHub Actions; sarif: "
                        "SARIF 2.1.0, for code scanning")  # fmt: skip
    parser.add_argument("--junit-xml", metavar="FILE", type=Path, help="also write JUnit XML to FILE")
    parser.add_argument("--verbose", "-v", action="store_true", help="also list passed and skipped cases")
    parser.add_argument("--require-suites", action="store_true",
                        help="fail (status 2) when no suite is found; by default that is said and passes, so a "
                        "repository without suites yet keeps a green CI")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Load every suite and run those that can be read; 0 passed, 1 failed, 2 a suite had a problem (each shown)."""
    from kcel.suites.loading import load_suites, suite_files

    try:
        files = suite_files(args.paths or ["."])
    except FileNotFoundError as err:
        print(f"kcel test: {err}", file=sys.stderr)
        return 2
    if not files:
        where = ", ".join(args.paths or ["."])
        print(f"kcel test: no suites under {where} (files named *.kcel-test.yaml)", file=sys.stderr)
        if args.require_suites:
            return 2
        return _run(args, [])  # the reports CI asked for, empty
    suites, problems = load_suites(files)
    if not args.update:
        suites, missing = _without_missing_expectations(suites)
        problems += missing
    return _run(args, suites, problems)


def _without_missing_expectations(suites: list[Suite]) -> tuple[list[Suite], list[str]]:
    """The suites without their cases that have no expectation (nothing to check their answers against: a problem
    at each one's line, so that an editor or CI log opens it), the other cases still run."""
    from dataclasses import replace

    from kcel.k8s import field as fe
    from kcel.suites.fields import SuiteError, located

    problem = "no expectation: give expect (or run kcel test --update to record the answer)"
    kept, problems = [], []
    for suite in suites:
        missing = {case.index for case in suite.cases if case.expect is None and not case.skip}
        if missing:
            errors = [SuiteError(suite.where, fe.Path.new("cases").index(i), problem) for i in sorted(missing)]
            problems += located(errors)  # each at its case's line
        kept.append(replace(suite, cases=tuple(case for case in suite.cases if case.index not in missing)))
    return kept, problems


def _selector(pattern: str | None) -> Callable[[Suite, Case], bool]:
    """-k: the cases whose `file::name` contains the pattern, ignoring case."""

    def selected(suite: Suite, case: Case) -> bool:
        return pattern is None or pattern.lower() in suite.case_id(case).lower()

    return selected


def _run(args: argparse.Namespace, suites: list[Suite], problems: list[str] | None = None) -> int:
    """Run the suites that can be prepared; the problems (of reading, of preparing) are reported with the results."""
    from kcel.settings import requested_versions
    from kcel.suites import reports, runner

    try:
        versions = requested_versions(args.k8s_version)
    except ValueError as err:  # a broken .kcel.yaml
        print(f"kcel test: {err}", file=sys.stderr)
        return 2
    if len(versions) > 1 and args.update:
        print("kcel test: --update records the answer of one Kubernetes version: name one", file=sys.stderr)
        return 2
    if len(versions) > 1:
        return _at_each(args, suites, versions, problems or [])
    plans, more, deselected = runner.prepare(suites, _selector(args.pattern), versions)
    problems = [*(problems or []), *more]
    if problems and not plans:
        return _unreadable(args, problems)
    if args.output == "text":
        results = reports.print_text(runner.run(plans), args.verbose)
    else:
        results = list(runner.run(plans))
    trouble: list[str] = []
    if args.update:
        results, trouble = _update(results, args)
    summary = reports.Summary.of(results, deselected)
    unsaved = _write_junit(args, results, problems)
    if args.output == "json":
        print(json.dumps(reports.report_json(results, summary, problems + trouble), indent=2))
    elif args.output == "junit":
        print(reports.junit_xml(results, problems), end="")
    elif args.output in ("github", "sarif"):
        _emit(args.output, reports.findings(results, problems + trouble))
        print(summary.line(), file=sys.stderr)
    else:
        for problem in problems + trouble:
            print(f"error: {problem}", file=sys.stderr)
        print(summary.line())
    if problems:
        print(f"kcel test: {_count(problems)}; the suites and cases they concern were not run", file=sys.stderr)
    if unsaved:
        print(f"kcel test: --junit-xml {unsaved}", file=sys.stderr)
    if problems or unsaved:
        return 2
    return 1 if summary.failed or trouble else 0


def _at_each(args: argparse.Namespace, suites: list[Suite], versions: tuple[str, ...], problems: list[str]) -> int:
    """Every case at each version: where the answers differ, and what fails (`--k8s-version 1.30-1.37`). A suite
    that cannot be prepared at a version (a kind that version does not serve) answers an error for its cases there."""
    from kcel.matrix import Matrix, Outcome, report
    from kcel.suites import runner
    from kcel.suites.reports import outcomes

    selected = _selector(args.pattern)
    answers: dict[str, list[Outcome]] = {}
    for version in versions:
        answers[version] = []
        for suite in suites:
            plans, trouble, _ = runner.prepare([suite], selected, (version,))
            answers[version] += outcomes(list(runner.run(plans))).get(version, []) if plans else [
                Outcome(suite.case_id(case), "error", True, "; ".join(trouble), str(suite.where.file))
                for case in suite.cases if selected(suite, case)
            ]  # fmt: skip
    return report(Matrix.of(answers), args.output, "kcel test", "cases", "test-failed", problems)


def _count(problems: list[str]) -> str:
    return f"{len(problems)} suite problem{'s' if len(problems) != 1 else ''}"


def _update(results: list[Result], args: argparse.Namespace) -> tuple[list[Result], list[str]]:
    """Write the answers of new and failing cases back; those written count as recorded, not failed."""
    from dataclasses import replace

    from kcel.suites import update
    from kcel.suites.runner import FAILED, NEW, RECORDED

    found, problems = update.changes(results)
    written, trouble = update.apply(found, sys.stdout if args.output == "text" else sys.stderr)
    results = [
        replace(r, status=RECORDED) if r.status in (FAILED, NEW) and r.suite.case_id(r.case) in written else r
        for r in results
    ]
    return results, problems + trouble


def _emit(output: str, findings: list[Finding]) -> None:
    from kcel.findings import Emitter

    emit = Emitter(output, "kcel test")
    emit(findings)
    emit.close()


def _write_junit(args: argparse.Namespace, results: list[Result], problems: list[str] | None = None) -> str | None:
    """`--junit-xml FILE`, replaced at once (CI must never read half a report); why it could not be, if not."""
    if args.junit_xml:
        from kcel.k8s.manifests.saving import SaveError, save
        from kcel.suites.reports import junit_xml

        try:
            save(args.junit_xml, junit_xml(results, problems or []).encode("utf-8"))
        except SaveError as err:
            return str(err)
    return None


def _unreadable(args: argparse.Namespace, problems: list[str]) -> int:
    """No suite can be read or prepared: a line for each problem, nothing run, exit status 2."""
    from kcel.suites import reports

    unsaved = _write_junit(args, [], problems)
    if args.output == "json":
        print(json.dumps(reports.report_json([], reports.Summary(), problems), indent=2))
    elif args.output == "junit":
        print(reports.junit_xml([], problems), end="")
    elif args.output in ("github", "sarif"):
        _emit(args.output, reports.findings([], problems))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"kcel test: {_count(problems)}; no case was run", file=sys.stderr)
    if unsaved:
        print(f"kcel test: --junit-xml {unsaved}", file=sys.stderr)
    return 2
