"""`kcel audit`: new admission policies and CRDs against what a cluster already stores, from a snapshot."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from kcel.commands import Progress, UsageError, positive

EXAMPLES = """\
examples:
  kubectl get deployments,statefulsets,namespaces,configmaps -A -o yaml > snapshot.yaml
  kcel audit --policy policies/ snapshot.yaml
  kubectl get widgets.example.com,crd -A -o json | kcel audit --crd widget-crd-v2.yaml -
  kcel audit --policy policies/ -o policyreport snapshot/ > reports.yaml

Each object is admitted as an update that changes nothing (old = new) and as a create of the same object; with
--crd, stored objects of its kind are validated against it (create, and update where ratcheting applies) and
the fields it would prune are listed, and the CRD of the same name in the snapshot is compared with it.
Namespaces and param objects come from the snapshot (and --params).

exit status: 0 nothing would be denied, fail or break; 1 something would (or could not be read); 2 bad usage
"""


def configure(parser: argparse.ArgumentParser) -> None:
    from kcel.k8s.admission.command import add_user_options
    from kcel.k8s.admission.served import add_runtime_config_option
    from kcel.k8s.environment import add_version_option

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("snapshot", nargs="+", metavar="SNAPSHOT",
                        help="kubectl get -A -o yaml|json output: files, folders, or - for standard input")  # fmt: skip
    parser.add_argument("--policy", action="append", default=[], metavar="FILE|DIR",
                        help="Validating and MutatingAdmissionPolicies with their bindings")  # fmt: skip
    parser.add_argument("--params", action="append", default=[], metavar="FILE|DIR",
                        help="param objects not in the snapshot")  # fmt: skip
    # kcel serve's former spellings, read everywhere so that one command line moves between the commands.
    parser.add_argument("--policies", action="append", dest="policy", help=argparse.SUPPRESS)
    parser.add_argument("--resources", action="append", dest="params", help=argparse.SUPPRESS)
    parser.add_argument("--crd", action="append", default=[], metavar="FILE|DIR",
                        help="new CRDs (or new versions of installed ones)")  # fmt: skip
    add_user_options(parser)
    add_version_option(parser)
    add_runtime_config_option(parser)
    parser.add_argument("--jobs", "-j", type=positive, default=os.cpu_count() or 1, metavar="N",
                        help="worker processes (default: one per CPU)")  # fmt: skip
    parser.add_argument("--output", "-o", choices=("text", "json", "policyreport"), default="text",
                        help="policyreport: PolicyReports, ClusterPolicyReport (wgpolicyk8s.io/v1alpha2)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kcel.audit import reports
    from kcel.audit.scan import Plan, lookups, scan
    from kcel.k8s.admission.identity import authenticated_groups
    from kcel.k8s.manifests.files import manifest_files

    if not args.policy and not args.crd:
        raise UsageError("nothing to audit with: give --policy or --crd")
    with tempfile.TemporaryDirectory(prefix="kcel-audit-") as spool:
        files: list[Path] = []
        try:
            for given in args.snapshot:
                files += [_spooled(Path(spool))] if given == "-" else manifest_files([given])
        except FileNotFoundError as err:
            raise UsageError(str(err)) from None
        param_kinds, new_crds, problems = _policy_inputs(args)
        resources, installed = lookups(files, param_kinds)
        changes = _changes(new_crds, installed, args.k8s_version)
        plan = Plan(tuple(args.policy), tuple(resources) + tuple(new_crds), tuple(args.params), tuple(new_crds),
                    args.k8s_version, args.user, tuple(authenticated_groups(args.group)),
                    keep=args.output == "policyreport", runtime_config=tuple(args.runtime_config))  # fmt: skip
        with Progress(None, "objects") as progress:
            summary, more = scan(files, plan, args.jobs, progress.advance)
    problems += more
    for problem in [*problems, *summary.problems]:
        print(f"error: {problem}", file=sys.stderr)
    for warning in _assumed_namespaces(summary.namespaces, resources, args.params):
        print(f"warning: {warning}", file=sys.stderr)
    if args.output == "json":
        print(json.dumps(reports.as_json(summary, changes), indent=2))
        print(reports.summary_line(summary), file=sys.stderr)
    elif args.output == "policyreport":
        print(json.dumps(reports.policy_reports(summary), indent=2))
        print(reports.summary_line(summary), file=sys.stderr)
    else:
        reports.print_text(summary, changes)
    totals = summary.totals()
    breaking = any(change.breaking for _, found in changes for change in found)
    return 1 if totals["fail"] or totals["error"] or breaking or problems or summary.problems else 0


def _assumed_namespaces(named: set[str], resources: list[dict[str, Any]], params: list[str]) -> list[str]:
    """A warning for each namespace of an object the policies applied to that has no Namespace in the snapshot or
    --params: the policies saw one with only the label every Namespace gets."""
    from kcel.k8s.admission.loading import load

    given = [*resources, *load([Path(p) for p in params]).objects] if params else resources
    metadata = [o.get("metadata") for o in given if o.get("kind") == "Namespace"]
    known = {str(m.get("name")) for m in metadata if isinstance(m, dict)}
    return [
        f"Namespace {name!r} is not in the snapshot (nor --params): assumed to exist with only the label "
        f"kubernetes.io/metadata.name={name} (add namespaces to the kubectl get for their labels)"
        for name in sorted(named - known)
    ]


def _spooled(folder: Path) -> Path:
    """Standard input, kept in a file: the snapshot is read twice."""
    path = folder / "stdin.yaml"
    with path.open("w", encoding="utf-8") as out:
        for line in sys.stdin:
            out.write(line)
    return path


def _policy_inputs(args: argparse.Namespace) -> tuple[set[tuple[str, str]], list[dict[str, Any]], list[str]]:
    """The param kinds the policies name; the new CRDs' documents; problems reading them."""
    from kcel.k8s.admission.loading import load
    from kcel.k8s.crds.crd import CRDLoadError, load_documents
    from kcel.k8s.manifests.files import manifest_files

    loaded = load(args.policy)
    named = [p.param_kind for p in loaded.policies] + [p.param_kind for p in loaded.mutating_policies]
    kinds = {(kind.api_version, kind.kind) for kind in named if kind is not None}
    documents, unreadable = [], []
    try:
        files = manifest_files(args.crd)
    except FileNotFoundError as err:
        raise UsageError(str(err)) from None
    for path in files:
        try:
            documents += [d for d in load_documents(path) if isinstance(d, dict)
                          and d.get("kind") == "CustomResourceDefinition"]  # fmt: skip
        except CRDLoadError as err:
            unreadable.append(str(err))
    if args.crd and not documents:  # why, when a file could not be read
        raise UsageError("\n".join(unreadable) or f"no CustomResourceDefinition in {', '.join(args.crd)}")
    return kinds, documents, [*loaded.problems, *unreadable]


def _changes(new: list[dict[str, Any]], installed: list[Any], k8s_version: str | None) -> list[tuple[str, list[Any]]]:
    """For each new CRD with an installed one of the same name in the snapshot: what changes."""
    from kcel.k8s.crds.changes import crd_changes
    from kcel.k8s.crds.crd import crds_of

    before = {crd.name: crd for crd in crds_of(installed)}
    return [(crd.name, crd_changes(before[crd.name], crd, k8s_version)) for crd in crds_of(new) if crd.name in before]
