"""Runs cel-spec conformance tests (the JSON form described in the suite's README) through kcel."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kcel
from conformance import messages
from conformance.outcome import Outcome, SkipList
from kcel.eval.runtime import make_map_optional
from kcel.parser.macros import ALL_MACROS
from kcel.parser.unparser import unparse
from kcel.values import TypeValue, Uint

STAGES = ("parse", "eval")


@dataclass(frozen=True)
class Case:
    id: str
    file: str
    test: Mapping[str, Any]
    directory: Path | None = None  # the suite directory, whose proto/ holds the message types


def load(directory: Path) -> Iterator[Case]:
    """Every test of every `*.json` file in the directory, in file order."""
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for section in data.get("sections", []):
            for test in section.get("tests", []):
                yield Case(test["id"], path.stem, test, directory)


def run(case: Case, stage: str = "eval", skips: SkipList | None = None) -> Outcome:
    """Run one case up to `stage`; a case the skip list names is skipped with its reason.

    Skips are about evaluation: every case is expected to parse.
    """
    reason = skips.reason(case.id, case.test.get("requires", ())) if skips and stage != "parse" else None
    if reason is None and stage != "parse" and messages.FEATURES.intersection(case.test.get("requires", ())):
        reason = messages.missing(case.directory) if case.directory is not None else "no suite directory"
    if reason is not None:
        return Outcome(case.id, "skipped", reason)
    try:
        return _run(case, stage)
    except Exception as err:  # a crash is a failure to report, not a reason to stop the run
        return Outcome(case.id, "failed", f"crashed: {type(err).__name__}: {err}")


def _run(case: Case, stage: str) -> Outcome:
    test = case.test
    macros = () if test.get("disable_macros") else ALL_MACROS
    try:
        parsed = kcel.parse(test["expr"], macros=macros)
    except kcel.CompileError as err:
        return Outcome(case.id, "failed", f"parse: {err.messages[0]}")
    if stage == "parse":
        again = kcel.parse(unparse(parsed), macros=macros)
        if again.expr != parsed.expr:
            return Outcome(case.id, "failed", "unparse does not round-trip")
        return Outcome(case.id, "passed")
    return _evaluate(case)


def _evaluate(case: Case) -> Outcome:
    test = case.test
    from conformance.environment import conformance_env

    suite = messages.suite_messages(case.directory) if case.directory is not None else None
    env = conformance_env(test, suite.library if suite is not None else None)
    try:
        program = env.compile(test["expr"], check=not test.get("disable_check"))
    except kcel.CompileError as err:  # cel-go's harness fails a case whose check fails, whatever it expects
        return Outcome(case.id, "failed", f"check: {err.messages[0]}")
    except kcel.PlanError as err:  # and one whose program cannot be built (env.Program fails)
        return Outcome(case.id, "failed", f"program: {err}")
    if test.get("check_only"):
        return _check_type(case, program)
    expected = test.get("value", test.get("typed_result", {}).get("result"))
    try:
        bindings = {name: decode(value, suite) for name, value in test.get("bindings", {}).items()}
        want = decode(expected, suite) if expected is not None else None
    except UnsupportedValue as err:  # the runner cannot express the value: skipped, and printed with why
        return Outcome(case.id, "skipped", str(err))
    try:
        actual = program.evaluate(bindings)
    except kcel.EvalError as err:
        if "eval_error" in test or "any_eval_errors" in test:
            return _compare_error_text(case, str(err))
        return Outcome(case.id, "failed", f"eval error: {err}")
    if "eval_error" in test or "any_eval_errors" in test:
        return Outcome(case.id, "failed", f"expected an error, got {actual!r}")
    if expected is None:
        return Outcome(case.id, "passed")
    if same_value(want, actual):
        return _check_type(case, program) if "typed_result" in test else Outcome(case.id, "passed")
    return Outcome(case.id, "failed", f"expected {want!r}, got {actual!r}")


ERROR_TEXTS = SkipList.read(Path(__file__).with_name("celspec_error_texts.txt"))
"""Cases whose expected error text is not cel-go's, with why: kcel answers in cel-go's words."""


def _compare_error_text(case: Case, text: str) -> Outcome:
    """An expected error: its text is compared too, loosely (case, `_` for a space, a part of kcel's message), as
    cel-spec's texts come from several engines; one that differs must be listed in celspec_error_texts.txt, with
    why, and a listed one that agrees fails, so the list only shrinks."""
    expected = case.test.get("eval_error") or [t for group in case.test.get("any_eval_errors", []) for t in group]
    agrees = not expected or any(_loose(want) in _loose(text) for want in expected)
    listed = ERROR_TEXTS.reason(case.id)
    if agrees and listed is not None:
        return Outcome(case.id, "failed", f"error text now agrees ({text!r}): take it off celspec_error_texts.txt")
    if not agrees and listed is None:
        return Outcome(case.id, "failed", f"error text: cel-spec says {expected}, kcel {text!r}")
    return Outcome(case.id, "passed")


def _loose(text: str) -> str:
    return text.lower().replace("_", " ")


def _check_type(case: Case, program: Any) -> Outcome:
    deduced = case.test.get("typed_result", {}).get("deduced_type")
    if deduced is None or str(program.output_type) == deduced:
        return Outcome(case.id, "passed")
    return Outcome(case.id, "failed", f"deduced type {program.output_type}, expected {deduced}")


def decode(value: Mapping[str, Any], suite: messages.SuiteMessages | None = None) -> Any:
    """A suite Value (`{"int64": "1"}`) as the Python value kcel uses for it; messages need the suite's types."""
    tag, payload = next(iter(value.items()))
    if tag == "null":
        return None
    if tag in ("bool", "string"):
        return payload
    if tag == "int64":
        return int(payload)
    if tag == "uint64":
        return Uint(int(payload))
    if tag == "double":
        return float(payload)
    if tag == "bytes":
        return base64.b64decode(payload)
    if tag == "list":
        return [decode(v, suite) for v in payload]
    if tag == "map":  # as a CEL map literal builds it: `true` and `1` are two keys (a CelMap then)
        return make_map_optional([(decode(e["key"], suite), decode(e["value"], suite), False) for e in payload])
    if tag == "type":
        return TypeValue(payload)
    if tag == "enum":  # enums are ints (cel-go's legacy enums; the strong-enum sections are skipped)
        return int(payload["value"])
    if tag == "object":
        return _decode_object(payload, suite)
    raise UnsupportedValue(f"{tag} values are not supported")


class UnsupportedValue(Exception):
    """A suite value kcel has no counterpart for (protobuf messages, enums)."""


def _decode_object(payload: Mapping[str, Any], suite: messages.SuiteMessages | None) -> Any:
    from kcel import temporal

    kind, body = payload["type"], payload["value"]
    if suite is not None:
        return suite.decode(kind, body)
    if kind == "google.protobuf.Timestamp":
        return temporal.Timestamp.parse(body)
    if kind == "google.protobuf.Duration":
        return temporal.Duration.parse(body)
    raise UnsupportedValue(f"protobuf message {kind} is not supported")


def same_value(expected: Any, actual: Any) -> bool:
    """Equal values of the same CEL type; NaN matches NaN and map order does not matter."""
    if type(expected) is not type(actual):
        if isinstance(expected, list) and isinstance(actual, Sequence) and not isinstance(actual, (str, bytes)):
            pass
        elif isinstance(expected, Mapping) and isinstance(actual, Mapping):
            pass
        else:
            return False
    if isinstance(expected, float):
        return (math.isnan(expected) and math.isnan(actual)) or expected == actual
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(map(same_value, expected, actual))
    if isinstance(expected, Mapping):
        if len(expected) != len(actual):
            return False
        keyed = {(type(k), k): v for k, v in actual.items()}
        return all((type(k), k) in keyed and same_value(v, keyed[(type(k), k)]) for k, v in expected.items())
    return bool(expected == actual)
