"""Preparing suites (loading their CRDs, compiling their policies or configurations) and running every case, one
`Result` per version.

Preparation comes first and for every suite, so that the problems of a suite whose CRD is missing or whose policy
does not load are all known before any case runs (that suite is left out, the others run); then each selected case
runs at each Kubernetes version it names (`--k8s-version` overrides them all) and its answer is checked against the
expectation and recorded as the expectation it meets (what `--update` writes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.k8s.environment import NEWEST
from kcel.suites import admission_cases, crd_cases, surface_cases
from kcel.suites.fields import SuiteError, located
from kcel.suites.model import ADMISSION, CRD, Case, Mismatch, Suite

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
NEW, RECORDED = "new", "recorded"  # no expectation yet; expectation written by --update


class Target(Protocol):
    """What a kind of suite provides: the API server's answer to a case, its check and its record."""

    def answer(self, case: Case, version: str) -> Any: ...

    def check(self, expect: Any, answer: Any) -> list[Mismatch]: ...

    def record(self, case: Case, answer: Any) -> Any: ...


@dataclass(frozen=True)
class Plan:
    """A suite made ready to run, and the cases selected."""

    suite: Suite
    target: Target
    cases: tuple[Case, ...]
    override: tuple[str, ...] = ()  # `--k8s-version`'s, in place of the suite's and cases'

    def versions(self, case: Case) -> tuple[str, ...]:
        return self.override or case.versions or self.suite.versions or (NEWEST,)


@dataclass(frozen=True)
class Result:
    """One case at one version: passed, failed, error (the request could not be sent), skipped, new (no
    expectation yet) or recorded (`--update` wrote its expectation); `actual` is the answer as an expectation."""

    suite: Suite
    case: Case
    version: str
    status: str
    several: bool = False  # the case runs at several versions, so its id names this one
    mismatches: tuple[Mismatch, ...] = ()
    actual: Any = None
    detail: str = ""  # the reason for a skip, the error
    seconds: float = 0.0

    @property
    def id(self) -> str:
        base = self.suite.case_id(self.case)
        return f"{base} [{self.version}]" if self.several else base


def prepare(
    suites: Iterable[Suite], selected: Callable[[Suite, Case], bool], override: tuple[str, ...] = ()
) -> tuple[list[Plan], list[str], int]:
    """A plan for every suite that can run, every problem of the others (a line each), and how many cases were left
    out."""
    plans, problems, deselected = [], [], 0
    for suite in suites:
        cases = tuple(case for case in suite.cases if selected(suite, case))
        deselected += len(suite.cases) - len(cases)
        try:
            plans.append(Plan(suite, _target(suite, _all_versions(suite, override)), cases, override))
        except SuiteError as err:
            problems += located(err.every())
    return plans, problems, deselected


def _target(suite: Suite, versions: tuple[str, ...]) -> Target:
    if suite.kind == CRD:
        return crd_cases.prepare(suite, versions)
    if suite.kind == ADMISSION:
        return admission_cases.prepare(suite, versions)
    return surface_cases.prepare(suite, versions)


def _all_versions(suite: Suite, override: tuple[str, ...]) -> tuple[str, ...]:
    if override:
        return override
    found = [v for case in suite.cases for v in case.versions or suite.versions or (NEWEST,)]
    return tuple(dict.fromkeys(found))


def run(plans: Iterable[Plan]) -> Iterator[Result]:
    """Every selected case of every plan at each of its versions, in suite and case order."""
    for plan in plans:
        for case in plan.cases:
            versions = plan.versions(case)
            for version in versions:
                yield run_case(plan, case, version, len(versions) > 1)


def run_case(plan: Plan, case: Case, version: str, several: bool = False) -> Result:
    if case.skip:
        return Result(plan.suite, case, version, SKIPPED, several, detail=case.skip)
    start = time.perf_counter()
    try:
        answer = plan.target.answer(case, version)
    except ValueError as err:
        return Result(plan.suite, case, version, ERROR, several, detail=str(err), seconds=time.perf_counter() - start)
    except Exception as err:  # a bug in kcel must fail this case, not hide the others' results
        detail = f"internal error: {type(err).__name__}: {err}"
        return Result(plan.suite, case, version, ERROR, several, detail=detail, seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    actual = plan.target.record(case, answer)
    if case.expect is None:
        return Result(plan.suite, case, version, NEW, several, actual=actual, seconds=seconds)
    mismatches = tuple(plan.target.check(case.expect, answer))
    status = FAILED if mismatches else PASSED
    return Result(plan.suite, case, version, status, several, mismatches, actual, seconds=seconds)
