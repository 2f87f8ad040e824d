"""The cel-spec conformance suite as pytest cases: every test parses, and evaluation is tracked.

Cases the checked-in skip list names run anyway and are marked expected-to-fail (strictly when
named by id, so a case that starts passing must leave the list).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import celspec
from conformance.__main__ import SUITES, main
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


def _case(**test: object) -> celspec.Case:
    return celspec.Case("file/section/name", "file", {"id": "file/section/name", **test})


@pytest.mark.parametrize(
    ("test", "status"),
    [
        # as in cel-go's harness (conformance_test.go): a check or plan error fails the case even when an
        # evaluation error is expected
        ({"expr": "1 + 'a'", "eval_error": ["no matching overload"]}, "failed"),
        ({"expr": "{null: 1}[null]", "eval_error": ["no such key"]}, "failed"),
        # the harness plans without OptOptimize: a bad literal conversion fails when evaluated
        ({"expr": "int('x')", "eval_error": ["conversion"]}, "passed"),
        # and turns on EnableErrorOnBadPresenceTest
        ({"expr": "has(dyn(1).a)", "eval_error": ["no such key"]}, "passed"),
        ({"expr": "{'k': dyn(1)}.?k.f.hasValue()", "eval_error": ["no such key"]}, "passed"),
        ({"expr": "1 + 1", "eval_error": ["x"]}, "failed"),
        ({"expr": "'%s'.format([{1: 'a', true: 'b'}])", "value": {"string": "{1: a, true: b}"}}, "passed"),
    ],
)
def test_runner_is_as_strict_as_cel_gos_harness(test: dict[str, object], status: str) -> None:
    assert celspec.run(_case(**test)).status == status


def test_runner_prints_every_skip_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tests = [{"name": "proto", "expr": "true", "value": {"bool": True}, "id": "suite/s/proto", "requires": ["proto3"]},
             {"name": "enum", "expr": "x", "bindings": {"x": {"enum": {"type": "E", "value": 1}}}, "id": "suite/s/enum",
              "value": {"int64": "1"}},
             {"name": "unknown", "expr": "x", "bindings": {"x": {"unknown": [1]}}, "id": "suite/s/unknown",
              "value": {"bool": True}}]  # fmt: skip
    (tmp_path / "suite.json").write_text(json.dumps({"sections": [{"name": "s", "tests": tests}]}), encoding="utf-8")
    assert main(["cel-spec", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # a suite without message types: its message tests are the runner's own skips
    assert "  SKIPPED suite/s/proto: protobuf messages: no proto/messages.descriptors.json in the suite directory" in (
        lines
    )
    assert "  SKIPPED suite/s/unknown: unknown values are not supported" in lines
    assert lines[-1] == "1 passed, 0 failed, 2 skipped"  # the enum, a legacy enum: an int


@pytest.mark.parametrize(("expected", "status"), [
    (["division by zero"], "passed"),
    (["DIVISION_BY_ZERO"], "passed"),  # compared loosely: case, `_` for a space
    (["divide by zero"], "failed"),  # not cel-go's words, and not listed as such
])  # fmt: skip
def test_error_texts_are_compared(expected: list[str], status: str) -> None:
    test = {"id": "made/up/case", "expr": "1 / 0", "eval_error": expected, "requires": []}
    assert celspec.run(celspec.Case("made/up/case", "made", test)).status == status


def test_a_listed_error_text_that_agrees_fails() -> None:
    test = {"id": "integer_math/int64_math/divide_zero", "expr": "1 / 0", "eval_error": ["division"], "requires": []}
    outcome = celspec.run(celspec.Case(test["id"], "integer_math", test))
    assert outcome.status == "failed" and "take it off" in outcome.reason


def test_the_command_exits_1_when_a_case_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tests = [
        {"name": "wrong", "expr": "1 + 1", "value": {"int64": "3"}, "id": "suite/s/wrong", "requires": []},
        {"name": "right", "expr": "1 + 1", "value": {"int64": "2"}, "id": "suite/s/right", "requires": []},
    ]
    (tmp_path / "suite.json").write_text(json.dumps({"sections": [{"name": "s", "tests": tests}]}), encoding="utf-8")
    assert main(["cel-spec", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 1 failed, 0 skipped"
    assert main(["cel-spec", str(tmp_path / "nowhere")]) == 2
