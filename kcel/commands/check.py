"""`kcel check`: CRDs, admission policies and the other objects that hold CEL, checked as the API server checks
them on create: every expression compiles, every estimated cost fits its limit."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import itertools
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
    from kcel.k8s.kustomize.tree import Tree
    from kcel.k8s.manifests.decoding import Document
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
    files, tree = _kustomized(_files(args.crds))
    problems += tree.problems
    go_crds, go_findings = _go_crds(args.crds, args.strict)
    crds += go_crds
    problems += [f"{f.file}:{f.line}:{f.column}: {f.message}" for f in go_findings if f.level == "error"]
    for path in files:
        found, problem, more = _crds_of(path)
        crds += found
        problems += [problem] if problem else []
        others_files += [path] if more else []
    answers = {}
    checks: list[dict[str, Any]] = [{} for _ in crds]  # each CRD's check at each version
    for version in versions:
        answers[version], found_problems = _outcomes(crds, others_files, version, checks, args.runtime_config)
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
    crds: list[Any], files: list[Any], version: str, checks: list[dict[str, Any]], runtime_config: list[str]
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
    others = check_files(files, version, report_unreadable=False, documents=_patched_documents,
                         runtime_config=runtime_config)  # fmt: skip
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
    all_files = _files(args.crds)
    files, tree = _kustomized(all_files)
    for problem in tree.problems:
        problems.append(problem)
        print(f"error: {problem}", file=sys.stderr)
        emit([Finding("error", problem, problem.partition(": ")[0])])
    go_crds, go_findings = _go_crds(args.crds, args.strict)
    for finding in go_findings:
        where = f"{finding.file}:{finding.line}:{finding.column}"
        print(f"{finding.level}: {where}: {finding.message}", file=sys.stderr)
        if finding.level == "error":
            problems.append(f"{where}: {finding.message}")
    emit(go_findings)
    go_check = (Path("."), _check_crds(go_crds, args))  # the Go packages' CRDs first, then each file's
    for path, file_check in itertools.chain([go_check], _checked_files(files, args)):
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
    others = check_files(others_files, args.k8s_version or NEWEST, report_unreadable=False,
                         documents=_patched_documents, runtime_config=args.runtime_config)  # fmt: skip
    others.skipped += _kustomize_skipped(all_files, tree)
    problems += others.problems
    for problem in others.problems:
        print(f"error: {problem}", file=sys.stderr)
    emit(Finding("error", problem, problem.partition(": ")[0]) for problem in others.problems)
    for where, checked in others.checked:
        reports.append(checked_report(where, checked))
        if args.output == "text":
            _print_checked(where, checked, _origins_at(where))
        else:
            emit(annotations.checked_findings(where, checked, _origins_at(where)))
    for skipped in others.skipped:
        print(f"skipped: {skipped}", file=sys.stderr)
    if args.output == "json":
        print(json.dumps(reports + [{"skipped": s} for s in others.skipped], indent=2))
    elif args.output == "junit":
        print(annotations.check_junit(cases, others, _origins_at), end="")
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
    print(f"{summary}: {sum(not r['valid'] for r in reports)} rejected{skipped}{lints}{_patches_counted(tree)}",
          file=sys.stderr)  # fmt: skip
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


def _go_crds(paths: list[str], strict: bool = False) -> tuple[list[Any], list[Any]]:
    """The CRDs controller-gen would derive from the Go packages among the paths (`.go` files, folders holding Go
    files, `./...`), as CRDs the checks read, with the findings met deriving them (errors and warnings at the
    Go file, line and column)."""
    from dataclasses import replace

    from kcel.findings import Finding
    from kcel.k8s.crds.crd import crds_of

    given = [p for p in paths if p != "-" and (_is_go_input(p) or Path(p).is_dir())]
    if not given:
        return [], []
    from kcel.commands.crdlints import go_marker_lints
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
            crds.append(replace(crd, file=derived.file, line=derived.line, rule_origins=derived.origins,
                                source=f"{derived.file}:{derived.line}"))  # fmt: skip
    findings = [Finding(p.severity, p.message, p.file, p.line, p.column,
                        rule="go-marker-invalid" if p.severity == "error" else "go-type-not-found")
                for p in derivation.problems]  # fmt: skip
    return crds, findings + go_marker_lints(go_package_folders(given), strict)


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
        emit(annotations.crd_findings(crd, check.errors, report["warnings"], _leads(crd, check, args.k8s_version)))
        emit(lint.finding() for lint in lints)
    return report


def _leads(crd: Any, check: Any, version: str | None) -> Any:
    """What each error's annotation leads with: its cause, `did you mean` among the CRD's fields and functions, the
    versions that have a function, the bound that brings a rule under the cost limit (kcel.k8s.surfaces.hints)."""
    from kcel.k8s.rules.explain import bound_fix
    from kcel.k8s.surfaces.hints import lead, schema_fields

    schemas = [crd.validation, *(v.schema for v in crd.versions)]
    fields = [name for schema in schemas for name in schema_fields(schema)]
    costs = {str(cost.path): cost for cost in check.costs}

    def first(error: Any) -> str | None:
        message = error.cause()["message"]
        cost = costs.get(str(error.field)) if "exceeds budget" in message else None
        return lead(message, "crd", version, fields, bound_fix(cost) if cost is not None else None)

    return first


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


def _print_checked(where: str, checked: Any, origins: Any = None) -> None:
    """An object's verdict, errors and warnings; for one kustomize patches made, where each error's field was
    written (`at file:line`)."""
    from kcel import annotations

    verdict = "accepted" if checked.valid else "rejected"
    named = f"{checked.kind} {checked.name}" if checked.name else checked.kind
    print(f"{where}: {named}: {verdict} ({plural(checked.expressions, 'expression')})")
    for error in checked.errors:
        print(f"  {error}")
    if origins is not None:
        file, line = annotations.document_place(where)
        for at_file, at_line, error in annotations.patched_error_places(checked.errors, origins, file, line):
            print(f"  at {at_file}:{at_line}: {error.partition(': ')[0]}")
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
        return manifest_files([p for p in paths if not _is_go_input(p)])
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None


def _crds_of(path: Path) -> tuple[list[Any], str, bool]:
    """A file's CRDs (decoded once), the problem that keeps them from being read (as load_crds words it), and
    whether it holds anything else for the other checks."""
    from dataclasses import replace

    from kcel.k8s.crds.crd import CRDLoadError, crds_in, load_manifests

    patched = _TREE.documents(path) if _TREE is not None else None
    try:
        documents = load_manifests(path) if patched is None else [document for document, _ in patched]
    except CRDLoadError as err:
        return [], str(err), False
    others = any(document.error or not _only_crds(document.value) for document in documents)
    try:
        if patched is None:
            return crds_in(str(path), documents), "", others
        return [replace(crd, origins=origins) for document, origins in patched
                for crd in crds_in(str(path), [document])], "", others  # fmt: skip
    except CRDLoadError as err:
        return [], str(err), others


def _only_crds(value: Any) -> bool:
    if not isinstance(value, dict):
        return value is None
    items = value.get("items")
    if str(value.get("kind", "")).endswith("List") and isinstance(items, list):
        return all(_only_crds(item) for item in items)
    return value.get("kind") == "CustomResourceDefinition"


# -- kustomize trees -------------------------------------------------------------------------------------------

_TREE: Tree | None = None  # the kustomizations of this run's files, set before any worker is forked


def _kustomized(files: list[Path]) -> tuple[list[Path], Tree]:
    """The files to check, their kustomizations built: a patch file is not an object of its own (it is applied to
    its target, which is checked patched, or counted), nor a kustomization file (skipped, with its reason)."""
    global _TREE
    from kcel.k8s.kustomize.tree import read_tree

    _TREE = read_tree([f for f in files if f.as_posix() != "-"], _holds_cel)
    return [f for f in files if not _TREE.role(f)], _TREE


def _kustomize_skipped(files: list[Path], tree: Tree) -> list[str]:
    """What `skipped:` says of the kustomizations among the files, of the patches not applied and of the remote
    resources."""
    kustomizations = [f"{f}: a kustomization: its resources and patches are read" for f in files
                      if tree.role(f) == "kustomization"]  # fmt: skip
    return kustomizations + tree.not_applied + tree.remote


def _holds_cel(obj: Any) -> bool:
    """Whether kcel check checks an object of this kind (a patch that fails on another is not this run's error)."""
    from kcel.k8s.surfaces.checking import ADMISSION_GROUP, CRD, POLICY_KINDS, checker_for

    group, kind = str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))
    return (group, kind) == CRD or (group == ADMISSION_GROUP and kind in POLICY_KINDS) or checker_for(obj) is not None


def _origins_at(where: str) -> Any:
    """Where the fields of the object at `file: document N` were written, when kustomize patches made it."""
    file, _, rest = where.partition(": document ")
    patched = _TREE.documents(Path(file)) if _TREE is not None and rest.isdigit() else None
    return next((origins for document, origins in patched or () if document.index == int(rest)), None)


def _patched_documents(path: Path) -> list[Document] | None:
    patched = _TREE.documents(path) if _TREE is not None else None
    return None if patched is None else [document for document, _ in patched]


def _patches_counted(tree: Tree) -> str:
    """`, 3 patches applied, 1 patch not applied (no target in the tree)` for the summary ("" without any)."""

    def patches(count: int) -> str:
        return f"{count} patch" if count == 1 else f"{count} patches"

    applied = f", {patches(tree.applied)} applied" if tree.applied else ""
    if tree.not_applied:
        applied += f", {patches(len(tree.not_applied))} not applied (no target in the tree)"
    return applied
