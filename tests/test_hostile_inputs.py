"""Inputs an attacker or a careless caller sends: every one ends in a CEL error with cel-go's text (decided by the
policy's failure policy, never the server's), a clear command-line error, or a refusal to build a value no request
could hold — never a Python exception out of the engine, a traceback or an exhausted process (issue 43)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

import kcel
from kcel.checker.decls import Library, Overload
from kcel.checker.types import BOOL, STRING
from kcel.env import plain_cel_go_libraries
from kcel.eval.sizes import MAX_BUILT_SIZE
from kcel.k8s.admission import PolicySet

HUGE = "9" * 5000  # past Python's int-string limit (4,300 digits): int() of it is a ValueError
LONG = "9" * 25  # past every 64-bit range, well within Python's limit: kcel's answer here is cel-go's (golden tests)
K8S = kcel.Env(k8s_version="1.37")


def _outcome(expr: str, env: kcel.Env = K8S, activation: dict[str, Any] | None = None) -> str:
    """What compiling and evaluating (fast and metered) gives, as text; a Python exception fails the test."""
    try:
        program = env.compile(expr)
    except kcel.CelError as err:  # the message without its column and snippet, which the digits' length moves
        return "compile: " + re.sub(r":1:\d+:", ":", str(err).splitlines()[0]).replace(HUGE, "#").replace(LONG, "#")
    answers = []
    for evaluate in (program.evaluate, lambda a: program.evaluate_with_cost(a)[0]):
        try:
            answers.append(f"value: {evaluate(activation or {})!r}")
        except kcel.EvalError as err:
            answers.append(f"error: {err}")
    assert answers[0] == answers[1]
    return answers[0].replace(HUGE, "#").replace(LONG, "#")


@pytest.mark.parametrize("template", [
    "int('{}')", "int('-{}')", "uint('{}')", "{}", "-{}", "{}u",
    "semver('{}.0.0')", "semver('1.2.{}')", "isSemver('{}.0.0')",
    "quantity('1e{}')", "isQuantity('1e{}')", "cidr('10.0.0.0/{}')", "isCIDR('10.0.0.0/{}')",
    "'%.{}f'.format([1.0])",
])  # fmt: skip
def test_a_number_of_5000_digits_fails_as_cel_go_fails_one_of_25(template: str) -> None:
    """Go's strconv has no digit limit: 5,000 digits fail exactly as 25 do (out of range), never as Python's int()."""
    assert _outcome(template.format(HUGE)) == _outcome(template.format(LONG))


def test_leading_zeros_do_not_count_as_digits() -> None:
    assert _outcome(f"int('{'0' * 5000}42')") == "value: 42"


def test_a_failing_conversion_is_absorbed_like_any_cel_error() -> None:
    """A CEL error, not an escape: `||` absorbs it as cel-go does."""
    env = kcel.Env(variables={"s": "string"})
    assert env.compile("int(s) == 1 || true").evaluate({"s": HUGE}) is True
    with pytest.raises(kcel.EvalError, match="type conversion error from 'string' to 'int'"):
        env.compile("int(s) == 1").evaluate({"s": HUGE})


def _boom(text: str) -> bool:
    raise ValueError(f"boom: {text}")


BOOM = Library("boom", overloads=(Overload("boom_string", "boom", (STRING,), BOOL, _boom),))


def test_a_python_exception_in_a_function_is_an_internal_error_that_nothing_absorbs() -> None:
    """As cel-go recovers a panic in a function: `internal error: ...`, not absorbed by `||`, in every variant."""
    env = kcel.Env(libraries=[*plain_cel_go_libraries(), BOOM])
    program = env.compile("boom('x') || true")
    for run in (program.evaluate, program.evaluate_with_cost):
        with pytest.raises(kcel.EvalError, match=r"^internal error: boom: x$"):
            run({})
    assert str(program.explain({}).error) == "internal error: boom: x"


# -- values that do not fit their declared types ------------------------------------------------------------------


@pytest.mark.parametrize(("decl", "expr", "value"), [
    ("int", "x + 1", 1.5), ("int", "x < 2", True), ("string", "x.size()", 3), ("bool", "!x", "yes"),
    ("double", "x * 2.0", "2"), ("uint", "x + 1u", -1), ("timestamp", "x.getFullYear()", "2024-01-01T00:00:00Z"),
])  # fmt: skip
def test_a_value_of_another_type_than_declared_is_no_such_overload(decl: str, expr: str, value: Any) -> None:
    program = kcel.Env(variables={"x": decl}).compile(expr)
    for run in (program.evaluate, program.evaluate_with_cost):
        with pytest.raises(kcel.EvalError, match="^no such overload$"):
            run({"x": value})


@pytest.mark.parametrize(("decl", "expr", "value", "expected"), [
    ("int", "x + 1", 41, 42), ("uint", "x + 1u", 41, 42), ("double", "x * 2.0", 2, 4.0),
    ("timestamp", "x.getFullYear()", datetime(2024, 5, 1, tzinfo=timezone.utc), 2024), ("string", "x", "s", "s"),
])  # fmt: skip
def test_values_of_the_declared_type_and_whole_numbers_for_uint_and_double_are_taken(
    decl: str, expr: str, value: Any, expected: Any
) -> None:
    program = kcel.Env(variables={"x": decl}).compile(expr)
    assert program.evaluate({"x": value}) == expected
    assert program.evaluate_with_cost({"x": value})[0] == expected


def test_a_mistyped_value_fails_where_it_is_used_and_is_absorbed_as_cel_go_absorbs_it() -> None:
    program = kcel.Env(variables={"x": "int"}).compile("x + 1 > 0 || true")
    assert program.evaluate({"x": 1.5}) is True
    assert program.evaluate_with_cost({"x": 1.5}) == (True, program.evaluate_with_cost({"x": 1})[1])


def test_a_missing_variable_is_still_cel_gos_missing_attribute() -> None:
    program = kcel.Env(variables={"x": "int"}).compile("x + 1")
    with pytest.raises(kcel.EvalError, match=r"no such attribute\(s\): x"):
        program.evaluate({})


# -- memory: results whose size outgrows their cost --------------------------------------------------------------


BOMBS = [
    ("x.replace('', x).replace('', x)", "replace"),  # 1,000 characters -> 1,001,000 -> ~10^9 at cost ~200,000
    ("x.replace('y', x, 1000).replace('y', x)", "replace"),  # with a count
    ("lists.range(4000).map(i, x).join(',')", "join"),  # 4,000 references to one string
    ("lists.range(2000).map(i, lists.range(2000)).flatten()", "flatten"),
]


@pytest.mark.parametrize(("expr", "function"), BOMBS)
def test_a_result_no_request_could_hold_is_refused_before_it_is_built(expr: str, function: str) -> None:
    program = kcel.Env(k8s_version="1.37", variables={"x": "string"}).compile(expr)
    for run in (program.evaluate, lambda a: program.evaluate_with_cost(a, cost_limit=10_000_000)):
        with pytest.raises(kcel.EvalError, match=rf"^{function}: the result would have [\d,]+ \w+, more than kcel"):
            run({"x": "y" * 1000})


def test_format_of_a_list_sharing_its_sublists_is_refused_by_the_size_of_its_text() -> None:
    """Seven levels of ten references each: 10^7 strings in the text, built from a few dozen list elements."""
    levels = "x"
    expr = ""
    for n in range(7):
        expr += f"cel.bind(v{n}, [{', '.join([levels] * 10)}], "
        levels = f"v{n}"
    expr += f"'%s'.format([{levels}])" + ")" * 7
    with pytest.raises(kcel.EvalError, match=r"^format: the result would have [\d,]+ characters"):
        kcel.Env(variables={"x": "string"}).compile(expr).evaluate_with_cost({"x": "y"})


def test_results_up_to_the_limit_are_built_and_cost_what_the_api_server_charges() -> None:
    env = kcel.Env(k8s_version="1.37", variables={"x": "string"})
    value, cost = env.compile("x.replace('', x).size()").evaluate_with_cost({"x": "y" * 1000})
    assert value == 1000 + 1001 * 1000 < MAX_BUILT_SIZE
    assert cost == 203  # unchanged: what the limit adds is a refusal, never a charge
    assert env.compile("[x].join(',') == x").evaluate({"x": "y" * MAX_BUILT_SIZE}) is True


# -- the admission path: the policy's failure policy decides -------------------------------------------------------


POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: size}}
spec:
  failurePolicy: {failure}
  matchConstraints:
    resourceRules: [{{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}]
  validations:
  - expression: "int(object.metadata.annotations['size']) < 10"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: size}}
spec: {{policyName: size, validationActions: [Deny]}}
"""


def _request(size: str) -> dict[str, Any]:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "annotations": {"size": size}},
    }
    return {
        "uid": "b9f6a1c2-0000-4000-8000-000000000043", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "operation": "CREATE",
        "namespace": "default", "name": "c", "object": config_map, "userInfo": {"username": "u"},
    }  # fmt: skip


@pytest.mark.parametrize(("failure", "allowed"), [("Fail", False), ("Ignore", True)])
def test_an_expression_failing_on_a_huge_annotation_is_decided_by_the_policys_failure_policy(
    tmp_path: Path, failure: str, allowed: bool
) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY.format(failure=failure))
    decision = PolicySet.load([tmp_path]).validate(_request(HUGE))
    assert decision.allowed is allowed
    if not allowed:
        assert "type conversion error from 'string' to 'int'" in decision.message


@pytest.mark.parametrize(("failure", "allowed"), [("Fail", False), ("Ignore", True)])
def test_a_bug_of_kcels_while_validating_is_decided_by_the_policys_failure_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str, allowed: bool
) -> None:
    from kcel.k8s.admission import dispatch

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    (tmp_path / "policy.yaml").write_text(POLICY.format(failure=failure))
    policies = PolicySet.load([tmp_path])
    monkeypatch.setattr(dispatch, "validate", broken)
    decision = policies.validate(_request("1"))
    assert decision.allowed is allowed
    if not allowed:
        assert "internal error: RuntimeError: a bug" in decision.message


async def test_the_webhook_with_failure_policy_ignore_still_denies_for_a_fail_policy(tmp_path: Path) -> None:
    """The bypass: `kcel serve --failure-policy Ignore` used to allow this request (the ValueError was the server's
    own failure). The policy's `failurePolicy: Fail` decides."""
    from kcel.webhook.app import Settings, Webhook
    from kcel.webhook.policies import PolicyStore

    (tmp_path / "policy.yaml").write_text(POLICY.format(failure="Fail"))
    store = PolicyStore([tmp_path])
    store.poll()
    webhook = Webhook(store, Settings(fail_closed=False, threads=0))
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": _request(HUGE)}
    transport = httpx.ASGITransport(app=webhook.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://webhook") as client:
        answer = (await client.post("/validate", json=body)).json()["response"]
    assert answer["allowed"] is False
    assert "type conversion error from 'string' to 'int'" in answer["status"]["message"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


pytestmark = pytest.mark.anyio


# -- the command line -----------------------------------------------------------------------------------------------


def _kcel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kcel.cli", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("args", "status", "message"), [
    ((HUGE,), 1, "invalid int literal"),
    (("--var", f"x={HUGE}", "x"), 2, "--var x: json: cannot unmarshal number"),
    (("--var", "x=[1e400]", "x"), 2, "--var x: json: cannot unmarshal number 1e400 into Go value of type float64"),
    (("--decl", "x:int", "--var", "x=1.5", "x + 1"), 1, "no such overload"),
    (("--decl", "x:int", "--var", "x=true", "x < 2"), 1, "no such overload"),
])  # fmt: skip
def test_kcel_eval_answers_bad_numbers_and_mistyped_values_without_a_traceback(
    args: tuple[str, ...], status: int, message: str
) -> None:
    result = _kcel("eval", *args)
    assert (result.returncode, "Traceback" in result.stderr) == (status, False), result.stderr[-2000:]
    assert message in result.stdout + result.stderr


def test_a_whole_number_past_int64_in_a_var_is_a_double_as_the_api_server_decodes_it() -> None:
    result = _kcel("eval", "--var", "x=99999999999999999999", "x")
    assert result.stdout.strip() == "1e+20 : double"


def _kcel_bytes(*args: bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    command: list[str | bytes] = [sys.executable, "-m", "kcel.cli", *args]
    return subprocess.run(command, capture_output=True, timeout=60, env=env)


def test_an_expression_that_is_not_utf8_is_read_as_go_reads_it() -> None:
    """Each byte that is not UTF-8 is U+FFFD, as in a Go string cel-go parses: cel-go's error, not a traceback."""
    bad = _kcel_bytes(b"eval", b"\xff")
    assert (bad.returncode, b"Traceback" in bad.stderr) == (1, False), bad.stderr
    assert "Syntax error: token recognition error at: '\ufffd'" in (bad.stdout + bad.stderr).decode()
    literal = _kcel_bytes(b"eval", b'"\xff"')
    assert literal.stdout.decode().strip() == '"\ufffd" : string'


def test_output_the_terminal_cannot_encode_is_escaped_not_a_traceback() -> None:
    import os

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = _kcel_bytes(b"eval", "'é'".encode(), env=env)
    assert (result.returncode, result.stdout.decode("ascii").strip()) == (0, '"\\xe9" : string'), result.stderr
    error = _kcel_bytes(b"eval", "'é' + 1".encode(), env=env)
    assert error.returncode == 1 and b"Traceback" not in error.stderr and b"no matching overload" in error.stderr


def test_a_file_name_that_is_not_utf8_is_named_in_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("a: 1\n")
    named = tmp_path.as_posix().encode() + b"/ok\xff.yaml"
    result = _kcel_bytes(b"eval", b"--input", b"self=" + named, b"self.a")
    assert (result.returncode, b"Traceback" in result.stderr) == (2, False), result.stderr
    assert b"no such file" in result.stderr
