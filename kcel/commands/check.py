"""`kcel check`: CRDs, admission policies and the other objects that hold CEL, checked as the API server checks
them on create: every expression compiles, every estimated cost fits its limit."""

from __future__ import annotations

import argparse
import contextlib
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
    versions = requested_versions(args.k8s_version)
    if len(versions) > 1:
        return _at_each(args, versions)
    args.k8s_version = versions[0] if versions else None
    return _check(args)


def _at_each(args: argparse.Namespace, versions: tuple[str, ...]) -> int:
    from kcel.matrix import Matrix, report

    crds, problems, others_files = [], [], []
    go_crds, go_findings = _go_crds(args.crds)
    crds += go_crds
    problems += [f"{f.file}:{f.line}:{f.column}: {f.message}" for f in go_findings if f.level == "error"]
    for path in _files(args.crds):
        found, problem, more = _crds_of(path)
        crds += found
        problems += [problem] if problem else []
        others_files += [path] if more else []
    answers = {}
    for version in versions:
        answers[version], found_problems = _outcomes(crds, others_files, version)
        problems += [problem for problem in found_problems if problem not in problems]
    return report(Matrix.of(answers), args.output, "kcel check", "CRDs and objects", "crd-rejected", problems)


def _outcomes(crds: list[Any], files: list[Any], version: str) -> tuple[list[Outcome], list[str]]:
    """Every CRD's and other object's verdict at one version, and the documents that could not be read."""
    from kcel.k8s import field
    from kcel.k8s.crds.crd import check_crd
    from kcel.k8s.surfaces.checking import check_files
    from kcel.matrix import Outcome

    outcomes = []
    for crd in crds:
        check = check_crd(crd, k8s_version=version)
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
    go_crds, go_findings = _go_crds(args.crds)
    for finding in go_findings:
        where = f"{finding.file}:{finding.line}:{finding.column}"
        print(f"{finding.level}: {where}: {finding.message}", file=sys.stderr)
        if finding.level == "error":
            problems.append(f"{where}: {finding.message}")
    emit(go_findings)
    go_check = _check_crds(go_crds, args)
    sys.stdout.write(go_check.text)
    emit(go_check.findings)
    cases += go_check.cases
    reports += go_check.reports
    crds, rules = len(go_check.reports), sum(report["rules"] for report in go_check.reports)
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
    print(f"{summary}: {sum(not r['valid'] for r in reports)} rejected{skipped}", file=sys.stderr)
    return 0 if all(r["valid"] for r in reports) and not problems else 1


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
    checked = _check_crds(found, args)
    return _FileCheck(problem, more, checked.reports, checked.text, checked.findings, checked.cases)


def _check_crds(found: list[Any], args: argparse.Namespace) -> _FileCheck:
    """CRDs checked; what they print is kept, to be written in order."""
    findings: list[Any] = []
    cases: list[Any] = []
    with contextlib.redirect_stdout(io.StringIO()) as text:
        reports = [_check_one(crd, args, findings.extend, cases) for crd in found]
    return _FileCheck("", False, reports, text.getvalue(), findings, cases)


# -- Go API packages ---------------------------------------------------------------------------------------


def _is_go_input(given: str) -> bool:
    """A path naming Go packages: a `.go` file, or Go's `dir/...` pattern."""
    return given.endswith(".go") or given == "..." or given.endswith("/...")


def _go_crds(paths: list[str]) -> tuple[list[Any], list[Any]]:
    """The CRDs controller-gen would derive from the Go packages among the paths (`.go` files, folders holding Go
    files, `./...`), as CRDs the checks read, with the findings met deriving them (errors and warnings at the
    Go file, line and column)."""
    from dataclasses import replace

    from kcel.findings import Finding
    from kcel.k8s.crds.crd import crds_of

    given = [p for p in paths if p != "-" and (_is_go_input(p) or Path(p).is_dir())]
    if not given:
        return [], []
    from kcel.k8s.gotypes.derive import derive_crds, go_package_folders
    from kcel.k8s.gotypes.syntax import GO_EXTRA_HINT, go_available

    if not go_package_folders(given):
        missing = [p for p in given if _is_go_input(p) and not Path(p.removesuffix("...") or ".").exists()]
        if missing:
            raise UsageError(f"{missing[0]}: no such file or directory")
        return [], []
    if not go_available():
        return [], [Finding("error", GO_EXTRA_HINT, given[0])]
    derivation = derive_crds(given)
    crds = []
    for derived in derivation.crds:
        for crd in crds_of([derived.manifest]):
            crds.append(replace(crd, file=derived.file, line=derived.line, origins=derived.origins,
                                source=f"{derived.file}:{derived.line}"))  # fmt: skip
    findings = [Finding(p.severity, p.message, p.file, p.line, p.column,
                        rule="go-marker-invalid" if p.severity == "error" else "go-type-not-found")
                for p in derivation.problems]  # fmt: skip
    return crds, findings


def _check_one(crd: Any, args: argparse.Namespace, emit: Any, cases: list[Any]) -> dict[str, Any]:
    """One CRD checked and reported (text, or findings); its report for -o json and the summary."""
    from kcel import annotations
    from kcel.k8s import field
    from kcel.k8s.crds.crd import check_crd, count_rules
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_CRD_COST_LIMIT

    check = check_crd(crd, k8s_version=args.k8s_version)
    if args.output == "junit":
        cases.append(annotations.crd_test_case(crd, check))
    totals = [{"schema": str(path), "cost": total, "share": _share(total, STATIC_ESTIMATED_CRD_COST_LIMIT)}
              for path, total in check.totals]  # fmt: skip
    report = {"crd": crd.name, "rules": sum(count_rules(crd.schema_of(version)) for version in crd.versions),
              "valid": not check.errors, "errors": [e.cause() for e in check.errors], "warnings": check.warnings,
              "costs": [_cost_report(cost, args.explain_above) for cost in check.costs], "totals": totals}  # fmt: skip
    if args.output == "text":
        message = field.invalid_status_message(CRD_KIND, crd.name, check.errors) if check.errors else ""
        _print_check(report, message, annotations.error_places(crd, check.errors))
    else:
        emit(annotations.crd_findings(crd, check.errors, report["warnings"]))
    return report


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


def _print_check(report: dict[str, Any], message: str, places: list[str]) -> None:
    verdict = "accepted" if report["valid"] else "rejected"
    print(f"{report['crd']}: {verdict} ({plural(report['rules'], 'rule')})")
    if message:
        print(f"  {message}")
    for place in places:
        print(f"  at {place}")
    for warning in report["warnings"]:
        print(f"  Warning: {warning}")
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
        return manifest_files([p for p in paths if not _is_go_input(p)])
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
