"""What `kcel audit` prints: a text summary, JSON, or PolicyReports.

PolicyReports follow the Kubernetes Policy WG's format (`wgpolicyk8s.io/v1alpha2`, which Kyverno and Policy
Reporter read): a PolicyReport per namespace and a ClusterPolicyReport for cluster-scoped objects, with every result
that is not a pass, and the summary counts of all.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from kcel.audit.checks import AUDIT, ERROR, FAIL, PASS, WARN, Result

if TYPE_CHECKING:
    from kcel.audit.summary import Summary
    from kcel.k8s.crds.changes import Change

OUTCOMES = (FAIL, WARN, AUDIT, ERROR, PASS)
REPORT_API_VERSION = "wgpolicyk8s.io/v1alpha2"
SOURCE = "kcel audit"


def print_text(summary: Summary, changes: Sequence[tuple[str, Sequence[Change]]], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for crd, found in changes:
        print(f"CustomResourceDefinition {crd}: changes from the installed one", file=out)
        for change in found or ():
            print(f"  {'breaking' if change.breaking else 'loosens '}  {change.line()}", file=out)
        if not found:
            print("  none", file=out)
    for (policy, rule, operation), tally in sorted(summary.tallies.items()):
        counts = ", ".join(f"{tally.counts[o]} {o}" for o in OUTCOMES if tally.counts[o])
        checked = f"(binding {rule})" if "AdmissionPolicy/" in policy else f"({rule})"
        print(f"{policy} {checked} {operation}: {counts}", file=out)
        for outcome in OUTCOMES:
            for example in tally.examples.get(outcome, []):
                print(f"  {outcome}: {example.subject.text()} ({example.where}): {example.message}", file=out)
    out.flush()
    print(summary_line(summary), file=sys.stderr)


def summary_line(summary: Summary) -> str:
    totals = summary.totals()
    counted = ", ".join(f"{totals[o]} {o}" for o in OUTCOMES if o != PASS)
    unread = f", {len(summary.problems)} not readable" if summary.problems else ""
    objects = f"{summary.objects} object{'' if summary.objects == 1 else 's'}"
    return f"kcel audit: {objects}, {summary.checked} checked{unread}: {counted} (results)"


def as_json(summary: Summary, changes: Sequence[tuple[str, Sequence[Change]]]) -> dict[str, Any]:
    return {
        "objects": summary.objects, "checked": summary.checked, "problems": summary.problems,
        "crdChanges": [{"crd": crd, "changes": [{"version": c.version, "path": c.path, "what": c.what,
                        "text": c.text, "breaking": c.breaking} for c in found]} for crd, found in changes],
        "results": [
            {"policy": policy, "rule": rule, "operation": operation, "counts": dict(tally.counts),
             "examples": [_result_json(e) for o in OUTCOMES for e in tally.examples.get(o, [])]}
            for (policy, rule, operation), tally in sorted(summary.tallies.items())
        ],
    }  # fmt: skip


def _result_json(result: Result) -> dict[str, Any]:
    subject = result.subject
    return {"result": result.result, "message": result.message, "where": result.where,
            "object": {"apiVersion": subject.api_version, "kind": subject.kind, "namespace": subject.namespace,
                       "name": subject.name}}  # fmt: skip


def policy_reports(summary: Summary, now: float | None = None) -> dict[str, Any]:
    """A v1 List of PolicyReports (one per namespace with results) and a ClusterPolicyReport."""
    seconds = int(now if now is not None else time.time())
    by_namespace: dict[str, list[Result]] = {}
    for result in summary.kept:
        by_namespace.setdefault(result.subject.namespace, []).append(result)
    namespaces = sorted(set(by_namespace) | {namespace for namespace, _ in summary.passes})
    reports = []
    for namespace in namespaces:
        results = by_namespace.get(namespace, [])
        counts = Counter(_report_outcome(r) for r in results)
        counts[PASS] += sum(n for (ns, _), n in summary.passes.items() if ns == namespace)
        metadata = {"name": "kcel-audit", **({"namespace": namespace} if namespace else {})}
        reports.append({
            "apiVersion": REPORT_API_VERSION, "kind": "PolicyReport" if namespace else "ClusterPolicyReport",
            "metadata": metadata, "summary": {o: counts[o] for o in (PASS, FAIL, WARN, ERROR, "skip")},
            "results": [_report_result(r, seconds) for r in results],
        })  # fmt: skip
    return {"apiVersion": "v1", "kind": "List", "items": reports}


def _report_result(result: Result, seconds: int) -> dict[str, Any]:
    subject = result.subject
    reference = {"apiVersion": subject.api_version, "kind": subject.kind, "name": subject.name}
    if subject.namespace:
        reference["namespace"] = subject.namespace
    if subject.uid:
        reference["uid"] = subject.uid
    properties = {"operation": result.operation, **dict(result.properties)}
    entry: dict[str, Any] = {
        "source": SOURCE, "policy": result.policy, "result": _report_outcome(result), "scored": True,
        "timestamp": {"seconds": seconds, "nanos": 0}, "resources": [reference], "properties": properties,
    }  # fmt: skip
    if result.rule:
        entry["rule"] = result.rule
    if result.message:
        entry["message"] = result.message
    if "category" in properties:
        entry["category"] = properties.pop("category")
    return entry


def _report_outcome(result: Result) -> str:
    """PolicyReport's result: a failure only audited is a fail there, as policy engines report audit mode."""
    return FAIL if result.result == AUDIT else result.result
