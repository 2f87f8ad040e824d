"""A snapshot read twice: first for what the checks look up (Namespaces, param objects, the CRDs installed), then
object by object through the checks, in chunks spread over worker processes. Chunks in flight are bounded, so
memory does not grow with the snapshot."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcel.audit.checks import CRDCheck, PolicyCheck
from kcel.audit.summary import Summary
from kcel.k8s.manifests.decoding import DecodeError
from kcel.k8s.manifests.streaming import StoredItem, stored_items

CHUNK = 100  # objects per task


@dataclass(frozen=True)
class Plan:
    """What the checks are built from."""

    policies: tuple[str, ...] = ()  # policy files and folders
    resources: tuple[dict[str, Any], ...] = ()  # Namespaces and params from the snapshot, the new CRDs
    resource_paths: tuple[str, ...] = ()  # --params
    crds: tuple[dict[str, Any], ...] = ()  # the new CRDs' documents
    k8s_version: str | None = None
    user: str = ""
    groups: tuple[str, ...] = ()
    keep: bool = False  # keep results for PolicyReports
    runtime_config: tuple[str, ...] = ()  # alpha and beta API versions assumed on


@dataclass
class Checks:
    """The policy and CRD checks of a plan, built once in the main process; forked workers share them."""

    policy: PolicyCheck | None
    crds: list[CRDCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, plan: Plan) -> Checks:
        from kcel.k8s.admission.loading import load, load_documents
        from kcel.k8s.admission.policyset import PolicySet
        from kcel.k8s.crds.crd import crds_of

        policy = None
        problems: list[str] = []
        if plan.policies:
            loaded = load(plan.policies)
            loaded = load(plan.resource_paths, loaded)
            loaded = load_documents(plan.resources, loaded, source="<snapshot>")
            policies = PolicySet(loaded, plan.k8s_version, runtime_config=plan.runtime_config)
            problems += policies.problems
            policy = PolicyCheck(policies, plan.user, plan.groups)
        crds = [CRDCheck(crd, plan.k8s_version) for crd in crds_of(plan.crds)]
        return cls(policy, crds, problems)

    def run(self, items: Sequence[tuple[int, StoredItem]], keep: bool) -> Summary:
        """Each item's results (`order` its position in the snapshot)."""
        summary = Summary(keep=keep)
        for order, item in items:
            try:
                obj = item.decode()
            except DecodeError as err:
                summary.problems.append(str(err))
                continue
            results = self.policy.results(obj, item.where, order) if self.policy is not None else []
            for crd in self.crds:
                if crd.serves(obj):
                    results += crd.results(obj, item.where, order)
            summary.add(results)
        return summary


def read(files: Sequence[Path]) -> Iterator[StoredItem | str]:
    """Every object of the snapshot files, as text, or a problem's text."""
    for path in files:
        try:
            with path.open(encoding="utf-8") as stream:
                yield from stored_items(stream, str(path))
        except (OSError, UnicodeDecodeError) as err:
            yield f"{path}: cannot read: {err}"


def lookups(files: Sequence[Path], param_kinds: set[tuple[str, str]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The first pass: Namespaces and param objects (for the policies), and the CRDs installed. Only the objects
    of those kinds are decoded."""
    wanted = {"Namespace", "CustomResourceDefinition"} | {kind for _, kind in param_kinds}
    resources, installed = [], []
    for found in read(files):
        if isinstance(found, str) or found.kind not in wanted | {None}:
            continue
        try:
            obj = found.decode()
        except DecodeError:
            continue  # said in the second pass
        kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if kind[1] == "Namespace" or kind in param_kinds:
            resources.append(obj)
        elif kind[1] == "CustomResourceDefinition":
            installed.append(obj)
    return resources, installed


_checks: Checks | None = None


def _share(checks: Checks) -> None:
    """In a forked worker: the checks the main process built (compiled once, shared copy-on-write)."""
    global _checks
    _checks = checks


def _run_chunk(chunk: list[tuple[int, StoredItem]], keep: bool) -> Summary:
    assert _checks is not None
    return _checks.run(chunk, keep)


def scan(
    files: Sequence[Path], plan: Plan, jobs: int = 1, progress: Callable[[int], None] | None = None
) -> tuple[Summary, list[str]]:
    """Every object of the snapshot through the checks, on `jobs` forked processes (this one where processes
    cannot be forked); the summary, and the problems of loading the checks."""
    summary = Summary(keep=plan.keep)
    checks = Checks.build(plan)
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for chunk in _chunks(read(files), summary):
            summary.merge(checks.run(chunk, plan.keep))
            if progress:
                progress(summary.objects + len(summary.problems))
        return summary, checks.problems
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, context, initializer=_share, initargs=(checks,)) as pool:
        pending: set[Future[Summary]] = set()
        for chunk in _chunks(read(files), summary):
            if len(pending) >= 2 * jobs:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    summary.merge(future.result())
                    if progress:
                        progress(summary.objects + len(summary.problems))
            pending.add(pool.submit(_run_chunk, chunk, plan.keep))
        for future in pending:
            summary.merge(future.result())
    summary.kept.sort(key=lambda result: result.order)
    return summary, checks.problems


def _chunks(found: Iterator[StoredItem | str], summary: Summary) -> Iterator[list[tuple[int, StoredItem]]]:
    chunk: list[tuple[int, StoredItem]] = []
    for order, item in enumerate(found):
        if isinstance(item, str):
            summary.problems.append(item)
            continue
        chunk.append((order, item))
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
