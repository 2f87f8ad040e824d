"""`kcel validate`: custom resources validated as the API server validates them on create or update (decoding,
pruning, defaulting, schema, CEL rules), many files in parallel."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from kcel.commands import Progress, UsageError, plural, read_documents, requested_versions

if TYPE_CHECKING:
    from pathlib import Path

    from kcel.k8s.crds.validate import Catalog, Options, Report
    from kcel.k8s.manifests.files import OldObjects


def run(args: argparse.Namespace) -> int:
    """Every object of every file against its CRD; exit 1 if any is invalid or unreadable, 2 on bad paths. At
    several versions, what differs between them."""
    versions = requested_versions(args.k8s_version)
    if len(versions) > 1:
        return _at_each(args, versions)
    args.k8s_version = versions[0] if versions else None
    return _validate(args)


def _inputs(args: argparse.Namespace) -> tuple[Catalog, list[Path], OldObjects, Options]:
    from kcel.k8s.crds.validate import Catalog, Options
    from kcel.k8s.manifests.files import OldObjects, manifest_files

    try:
        catalog = Catalog.load(args.crd)
        files = _without_patches(manifest_files(args.files), args.verbose)
        old = OldObjects(_old_objects(args.old), args.namespace)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    skip_kinds = frozenset(k.strip() for kinds in args.skip_kind for k in kinds.split(",") if k.strip())
    options = Options(args.field_validation.capitalize(), args.namespace, args.subresource, args.k8s_version,
                      strict=args.strict, skip_kinds=skip_kinds)  # fmt: skip
    return catalog, files, old, options


def _at_each(args: argparse.Namespace, versions: tuple[str, ...]) -> int:
    from dataclasses import replace

    from kcel.k8s.crds.validate import validate_files_in_parallel
    from kcel.matrix import Matrix, Outcome, report

    catalog, files, old, options = _inputs(args)
    answers = {}
    for version in versions:
        found = validate_files_in_parallel(files, catalog, replace(options, k8s_version=version), old, args.jobs)
        answers[version] = [
            Outcome(f"{r.where}: {r.kind} {r.name}".rstrip(": "), r.status, r.status in ("invalid", "error"),
                    "; ".join([r.message, *(f"Warning: {w}" for w in r.warnings)]).strip("; "), r.file, r.line)
            for reports in found for r in reports
        ]  # fmt: skip
    return report(Matrix.of(answers), args.output, "kcel validate", "objects", "object-invalid", catalog.problems)


def _validate(args: argparse.Namespace) -> int:
    from kcel import annotations
    from kcel.findings import Emitter, Finding
    from kcel.k8s.crds.validate import validate_files_in_parallel

    catalog, files, old, options = _inputs(args)
    for problem in catalog.problems:
        print(f"error: {problem}", file=sys.stderr)
    emit = Emitter(args.output, "kcel validate")
    emit(Finding("error", problem, problem.partition(": ")[0]) for problem in catalog.problems)
    reports: list[Report] = []
    with Progress(len(files)) as progress:
        for found in validate_files_in_parallel(files, catalog, options, old, args.jobs):
            for report in found:
                reports.append(report)
                if args.output == "text":
                    progress.clear()
                    _print_report(report, args.verbose)
                else:
                    progress.clear()
                    emit(annotations.report_findings(report))
            progress.advance()
    if args.output == "json":
        print(json.dumps([r.as_json() for r in reports], indent=2))
    elif args.output == "junit":
        from kcel.findings import TestCase, junit_xml

        statuses = {"valid": "passed", "invalid": "failure", "error": "error", "skipped": "skipped"}
        cases = [TestCase(f"{r.where}: {r.kind} {r.name}".rstrip(": "), r.file, r.line, statuses[r.status], r.message)
                 for r in reports]  # fmt: skip
        print(junit_xml("kcel validate", cases), end="")
    emit.close()
    counts = {status: sum(r.status == status for r in reports) for status in ("valid", "invalid", "error", "skipped")}
    summary = f"{plural(len(reports), 'object')} in {plural(len(files), 'file')}"
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    print(f"{summary}: {counts['valid']} valid, {counts['invalid']} invalid, {counts['error']} not validated{skipped}",
          file=sys.stderr)  # fmt: skip
    return 1 if counts["invalid"] or counts["error"] or catalog.problems else 0


def _print_report(report: Report, verbose: bool) -> None:
    from kcel import annotations

    decoding = dict(zip((p["message"] for p in report.decoding), annotations.decoding_places(report), strict=True))
    if report.status == "error":
        print(f"{report.where}: error: {report.message}", file=sys.stderr)
    elif report.status == "invalid":
        print(f"{report.where}: {report.message}")
        places = [decoding[p] for p in decoding if p not in report.warnings] + annotations.field_places(report)
        for place in places:
            print(f"  at {place}")
        if report.after_decoding:  # what strict decoding kept the API server from saying
            print(f"  once those fields are fixed: {report.after_decoding}")
            for place in annotations.field_places(report, report.after_decoding_errors):
                print(f"  at {place}")
    elif verbose and report.status == "skipped":
        print(f"{report.where}: skipped: {report.message}")
    elif verbose:
        print(f"{report.where}: {report.kind} {json.dumps(report.name)} is valid")
    for warning in report.warnings:
        print(f"{report.where}: warning: {warning}")
        if warning in decoding:
            print(f"  at {decoding[warning]}")


def _old_objects(paths: list[str]) -> list[Any]:
    """The objects of the --old files (Lists expanded)."""
    from kcel.k8s.manifests.files import manifest_files

    objects: list[Any] = []
    for path in manifest_files(paths):
        for document in read_documents(str(path)):
            if isinstance(document, dict) and document.get("kind") == "List":
                objects += [item for item in document.get("items") or [] if isinstance(item, dict)]
            elif isinstance(document, dict):
                objects.append(document)
    return objects


def _without_patches(files: list[Path], verbose: bool) -> list[Path]:
    """The files less the kustomize patches among them (kcel.k8s.kustomize): a patch is part of an object, not one
    to validate; each is named with --verbose."""
    from kcel.k8s.kustomize.tree import read_tree

    tree = read_tree([f for f in files if f.as_posix() != "-"])
    patches = [f for f in files if tree.role(f) == "patch"]
    for patch in patches if verbose else ():
        print(f"{patch}: skipped: a kustomize patch, not an object")
    return [f for f in files if f not in patches]
