"""Kubernetes' own CEL test tables (../shared/k8s-cases) as pytest cases.

Kinds that later issues bring are skipped with the issue named; cases in the checked-in skip
list are expected to fail (strictly, so a case that starts passing must leave the list).
"""

from __future__ import annotations

import pytest

from conformance import k8scases
from conformance.__main__ import SUITES
from conformance.outcome import SkipList

DIRECTORY, SKIP_FILE = SUITES["k8s-cases"]
SKIPS = SkipList.read(SKIP_FILE)
CASES = list(k8scases.load(DIRECTORY)) if DIRECTORY.is_dir() else []
MISSING = pytest.mark.skipif(not CASES, reason=f"k8s-cases not found at {DIRECTORY} (../shared is absent)")


def _param(case: k8scases.Case) -> object:
    reason = SKIPS.reason(case.id)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


@MISSING
@pytest.mark.parametrize("case", [_param(c) for c in CASES] or [None])
def test_case(case: k8scases.Case) -> None:
    outcome = k8scases.run(case)
    if outcome.status == "skipped":
        pytest.skip(outcome.reason)
    assert outcome.status == "passed", outcome.reason
