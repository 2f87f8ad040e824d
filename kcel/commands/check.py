"""`kcel check`: CRDs, admission policies and the other objects that hold CEL, checked as the API server checks
them on create: every expression compiles, every estimated cost fits its limit."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import json
import multiprocessing
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel.commands import UsageError, plural, requested_versions
from kcel.k8s.environment import NEWEST

if TYPE_CHECKING:
    from kcel.matrix import Outcome


def run(args: argparse.Namespace) -> int:
    """CRD create checks with every expression's estimated cost; exit 1 when any CRD would be rejected. At several
    versions, what differs between them."""
    from kcel.k8s.environment import supported_versions

    versions = requested_versions(args.k8s_version)
    args.lint_versions = versions or supported_versions()  # lints: of the versions asked about, or of every one
    if len(versions) > 1:
        return _at_each(args, versions)
    args.k8s_version = versions[0] if versions else None
    return _check(args)


def _at_each(args: argparse.Namespace, versions: tuple[str, ...]) -> int:
    from kcel.matrix import Matrix, report

    crds, problems, others_files = [], [], []
    for path in _files(args.crds):
        found, problem, more = _crds_of(path)
        crds += found
        problems += [problem] if problem else []
        others_files += [path] if more else []
    answers = {}
    checks: list[dict[str, Any]] = [{} for _ in crds]  # each CRD's check at each version
    for version in versions:
        answers[version], found_problems = _outcomes(crds, others_files, version, checks)
        problems += [problem for problem in found_problems if problem not in problems]
    lints = _lints_at_each(crds, checks, args)
    code = report(Matrix.of(answers), args.output, "kcel check", "CRDs and objects", "crd-rejected", problems,
                  lints)  # fmt: skip
    return 1 if code or (args.strict and any(lints.values())) else 0


def _lints_at_each(crds: list[Any], checks: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, list[Any]]:
    """Each CRD's lints (kcel.commands.crdlints) by its subject in the matrix."""
    found = {}
    for crd, by_version in zip(crds, checks, strict=True):
        lints = _lints(crd, by_version, args)
        if lints:
            found[f"{crd.source}: CRD {crd.name}"] = lints
    return found


def _outcomes(
    crds: list[Any], files: list[Any], version: str, checks: list[dict[str, Any]]
) -> tuple[list[Outcome], list[str]]:
    """Every CRD's and other object's verdict at one version (each CRD's check kept in `checks`), and the
    documents that could not be read."""
    from kcel.k8s import field
    from kcel.k8s.crds.crd import check_crd
    from kcel.k8s.surfaces.checking import check_files
    from kcel.matrix import Outcome

    outcomes = []
    for crd, kept in zip(crds, checks, strict=True):
        check = kept[version] = check_crd(crd, k8s_version=version)
        message = field.invalid_status_message(CRD_KIND, crd.name, check.errors) if check.errors else ""
        message = "; ".join([message, *(f"Warning: {w}" for w in check.warnings)]).strip("; ")
        verdict = "rejected" if check.errors else "accepted"
        outcomes.append(
            Outcome(f"{crd.source}: CRD {crd.name}", verdict, bool(check.errors), message, crd.file, crd.line)
        )
    others = check_files(files, version, report_unreadable=False)
    for where, checked in others.checked:
        message = "; ".join([*checked.errors, *(f"Warning: {w}" for w in checked.warnings)])
        subject = f"{where}: {checked.kind} {checked.name}".rstrip()
        outcomes.append(Outcome(subject, "accepted" if checked.valid else "rejected", not checked.valid, message,
                                where.partition(": ")[0]))  # fmt: skip
    return outcomes, others.problems


def _check(args: argparse.Namespace) -> int:
    """File by file: each decoded once, its CRDs checked and reported, then dropped (memory stays flat in the number
    of files); the files holding anything else are checked together after (policies need their bindings)."""
    from kcel import annotations
    from kcel.findings import Emitter, Finding
    from kcel.k8s.surfaces.checking import check_files
    from kcel.k8s.surfaces.checking import report as checked_report

    reports: list[dict[str, Any]] = []
    cases: list[Any] = []  # for -o junit
    emit = Emitter(args.output, "kcel check")
    problems: list[str] = []
    others_files = []
    crds = rules = 0
    for path, file_check in _checked_files(_files(args.crds), args):
        if file_check.problem:
            problems.append(file_check.problem)
            print(f"error: {file_check.problem}", file=sys.stderr)
            emit([Finding("error", file_check.problem, file_check.problem.partition(": ")[0])])
        if file_check.more:
            others_files.append(path)
        sys.stdout.write(file_check.text)
        emit(file_check.findings)
        cases += file_check.cases
        reports += file_check.reports
        crds, rules = crds + len(file_check.reports), rules + sum(report["rules"] for report in file_check.reports)
    others = check_files(others_files, args.k8s_version or NEWEST, report_unreadable=False)
    problems += others.problems
    for problem in others.problems:
        print(f"error: {problem}", file=sys.stderr)
    emit(Finding("error", problem, problem.partition(": ")[0]) for problem in others.problems)
    for where, checked in others.checked:
        reports.append(checked_report(where, checked))
        if args.output == "text":
            _print_checked(where, checked)
        else:
            emit(annotations.checked_findings(where, checked))
    for skipped in others.skipped:
        print(f"skipped: {skipped}", file=sys.stderr)
    if args.output == "json":
        print(json.dumps(reports + [{"skipped": s} for s in others.skipped], indent=2))
    elif args.output == "junit":
        print(annotations.check_junit(cases, others), end="")
    emit.close()
    if not reports and not problems:
        print("kcel check: nothing to check: no CRD, admission policy or other object with CEL in the files given",
              file=sys.stderr)  # fmt: skip
        return 1 if args.strict else 0
    summary = f"{plural(crds, 'CRD')}, {plural(rules, 'rule')}"
    if others.checked:
        summary += f", {plural(len(others.checked), 'other object')}"
    skipped = f", {len(others.skipped)} skipped" if others.skipped else ""
    linted = sum(len(r.get("lints", ())) for r in reports)
    lints = f", {plural(linted, 'lint')}" if linted else ""
    print(f"{summary}: {sum(not r['valid'] for r in reports)} rejected{skipped}{lints}", file=sys.stderr)
    failed = not all(r["valid"] for r in reports) or problems or (args.strict and linted)
    return 1 if failed else 0


@dataclass(frozen=True)
class _FileCheck:
    """One file's CRDs checked: what to print and report for them, and what is left for the other checks."""

    problem: str  # why its CRDs could not be read ("" when they could)
    more: bool  # it holds documents other than CRDs
    reports: list[dict[str, Any]]
    text: str  # what -o text prints for its CRDs
    findings: list[Any]
    cases: list[Any]


PARALLEL_FROM = 8  # files: below this, starting worker processes costs more than it saves


def _checked_files(files: list[Path], args: argparse.Namespace) -> Iterator[tuple[Path, _FileCheck]]:
    """Each file's check, in file order, on up to `--jobs` forked worker processes (or in this one for few files,
    one job, or where processes cannot be forked)."""
    if args.jobs <= 1 or len(files) < PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        yield from ((path, _check_file(path, args)) for path in files)
        return
    from concurrent.futures import ProcessPoolExecutor  # here: its import took 4 ms of a one-file check

    with ProcessPoolExecutor(args.jobs, multiprocessing.get_context("fork")) as pool:
        yield from zip(files, pool.map(functools.partial(_check_file, args=args), files), strict=True)


def _check_file(path: Path, args: argparse.Namespace) -> _FileCheck:
    """A file decoded once and its CRDs checked; what they print is kept, to be written in file order."""
    found, problem, more = _crds_of(path)
    findings: list[Any] = []
    cases: list[Any] = []
    with contextlib.redirect_stdout(io.StringIO()) as text:
        reports = [_check_one(crd, args, findings.extend, cases) for crd in found]
    return _FileCheck(problem, more, reports, text.getvalue(), findings, cases)


def _check_one(crd: Any, args: argparse.Namespace, emit: Any, cases: list[Any]) -> dict[str, Any]:
    """One CRD checked and reported (text, or findings); its report for -o json and the summary."""
    from kcel import annotations
    from kcel.k8s import field
    from kcel.k8s.crds.crd import check_crd, count_rules
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_CRD_COST_LIMIT

    check = check_crd(crd, k8s_version=args.k8s_version)
    lints = _lints(crd, {args.k8s_version or NEWEST: check}, args)
    if args.output == "junit":
        cases.append(_with_lints(annotations.crd_test_case(crd, check), lints, args.strict))
    totals = [{"schema": str(path), "cost": total, "share": _share(total, STATIC_ESTIMATED_CRD_COST_LIMIT)}
              for path, total in check.totals]  # fmt: skip
    report = {"crd": crd.name, "rules": sum(count_rules(crd.schema_of(version)) for version in crd.versions),
              "valid": not check.errors, "errors": [e.cause() for e in check.errors], "warnings": check.warnings,
              "costs": [_cost_report(cost, args.explain_above) for cost in check.costs], "totals": totals,
              "lints": [lint.report() for lint in lints]}  # fmt: skip
    if args.output == "text":
        message = field.invalid_status_message(CRD_KIND, crd.name, check.errors) if check.errors else ""
        _print_check(report, message, annotations.error_places(crd, check.errors), lints)
    else:
        emit(annotations.crd_findings(crd, check.errors, report["warnings"]))
        emit(lint.finding() for lint in lints)
    return report


def _lints(crd: Any, checks: dict[str, Any], args: argparse.Namespace) -> list[Any]:
    """What the API server will not say about the CRD's rules (kcel.commands.crdlints)."""
    from kcel.commands.crdlints import crd_lints

    return crd_lints(crd, checks, args.lint_versions, args.strict)


def _with_lints(case: Any, lints: list[Any], strict: bool) -> Any:
    """A JUnit test case with the CRD's lints told beside it (with --strict, failing it)."""
    if not lints:
        return case
    text = "\n".join(lint.lint.text() for lint in lints)
    if strict and case.status == "passed":
        return dataclasses.replace(case, status="failure", message=text, output=text)
    return dataclasses.replace(case, output=text)


CRD_KIND = "CustomResourceDefinition.apiextensions.k8s.io"


def _print_checked(where: str, checked: Any) -> None:
    verdict = "accepted" if checked.valid else "rejected"
    named = f"{checked.kind} {checked.name}" if checked.name else checked.kind
    print(f"{where}: {named}: {verdict} ({plural(checked.expressions, 'expression')})")
    for error in checked.errors:
        print(f"  {error}")
    for warning in checked.warnings:
        print(f"  Warning: {warning}")


def _cost_report(cost: Any, explain_above: float) -> dict[str, Any]:
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_COST_LIMIT

    share = _share(cost.cost, STATIC_ESTIMATED_COST_LIMIT)
    if share > explain_above:
        from kcel.k8s.rules.explain import explain

        explanation = explain(cost).lines()
    else:
        explanation = []
    return {
        "path": str(cost.path), "location": cost.location or "<root>", "expression": cost.expression,
        "estimated": cost.estimated, "cardinality": cost.cardinality, "runs": cost.effective_cardinality,
        "cost": cost.cost, "share": share,
        "compiles": (cost.compiled.message_program if cost.message else cost.compiled.program) is not None,
        "explanation": explanation,
    }  # fmt: skip


def _share(cost: int, limit: int) -> float:
    """The cost as a percentage of its limit."""
    return round(100 * cost / limit, 2)


def _print_check(report: dict[str, Any], message: str, places: list[str], lints: list[Any]) -> None:
    verdict = "accepted" if report["valid"] else "rejected"
    print(f"{report['crd']}: {verdict} ({plural(report['rules'], 'rule')})")
    if message:
        print(f"  {message}")
    for place in places:
        print(f"  at {place}")
    for warning in report["warnings"]:
        print(f"  Warning: {warning}")
    for lint in lints:
        print("\n".join(lint.lines()))
    for cost in report["costs"]:
        kind = "messageExpression" if cost["path"].endswith("messageExpression") else "rule"
        runs = cost["runs"] if cost["cardinality"] is not None else f"{cost['runs']:,} (unbounded)"
        runs = f"{runs:,}" if isinstance(runs, int) else runs
        print(f"  {cost['location']} {kind}: {cost['expression']}")
        if not cost["compiles"]:
            print("    does not compile (see the error above): no cost estimate")
            continue
        print(f"    estimated cost {cost['estimated']:,} x {runs} runs = {cost['cost']:,}"
              f" ({_share_text(cost['share'])} the per-expression limit)")  # fmt: skip
        for line in cost["explanation"]:
            print(f"    - {line}")
    for total in report["totals"]:
        print(f"  total {total['cost']:,} ({_share_text(total['share'])} the per-CRD limit) for {total['schema']}")


def _share_text(share: float) -> str:
    return f"{share}% of" if share < 1000 else f"{share / 100:,.0f} times"


def _files(paths: list[str]) -> list[Path]:
    from kcel.k8s.manifests.files import manifest_files

    try:
        return manifest_files(paths)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None


def _crds_of(path: Path) -> tuple[list[Any], str, bool]:
    """A file's CRDs (decoded once), the problem that keeps them from being read (as load_crds words it), and
    whether it holds anything else for the other checks."""
    from kcel.k8s.crds.crd import CRDLoadError, crds_in, load_manifests

    try:
        documents = load_manifests(path)
    except CRDLoadError as err:
        return [], str(err), False
    others = any(document.error or not _only_crds(document.value) for document in documents)
    try:
        return crds_in(str(path), documents), "", others
    except CRDLoadError as err:
        return [], str(err), others


def _only_crds(value: Any) -> bool:
    if not isinstance(value, dict):
        return value is None
    items = value.get("items")
    if str(value.get("kind", "")).endswith("List") and isinstance(items, list):
        return all(_only_crds(item) for item in items)
    return value.get("kind") == "CustomResourceDefinition"
