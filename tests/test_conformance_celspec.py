"""The cel-spec conformance suite as pytest cases: every test parses, and evaluation is tracked.

Cases the checked-in skip list names run anyway and are marked expected-to-fail (strictly when
named by id, so a case that starts passing must leave the list).
"""

from __future__ import annotations

import pytest

from conformance import celspec
from conformance.__main__ import SUITES
from conformance.outcome import SkipList

DIRECTORY, SKIP_FILE = SUITES["cel-spec"]
SKIPS = SkipList.read(SKIP_FILE)
CASES = list(celspec.load(DIRECTORY)) if DIRECTORY.is_dir() else []
MISSING = pytest.mark.skipif(not CASES, reason=f"cel-spec suite not found at {DIRECTORY} (../shared is absent)")


def _param(case: celspec.Case) -> object:
    """Cases skipped by id must fail (strict); cases skipped for a whole feature may pass by chance."""
    named = SKIPS.reason(case.id)
    reason = named or SKIPS.reason(case.id, case.test.get("requires", ()))
    marks = [pytest.mark.xfail(reason=reason, strict=named is not None)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


@MISSING
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES] or [None])
def test_parses_and_round_trips(case: celspec.Case) -> None:
    outcome = celspec.run(case, "parse")
    assert outcome.status == "passed", outcome.reason


@MISSING
@pytest.mark.parametrize("case", [_param(c) for c in CASES] or [None])
def test_evaluates(case: celspec.Case) -> None:
    outcome = celspec.run(case, "eval")
    if outcome.status == "skipped":
        pytest.skip(outcome.reason)
    assert outcome.status == "passed", outcome.reason
