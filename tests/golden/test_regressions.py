"""Regressions for disagreements with cel-go found by the reference engine (issue: exactly cel-go), each with the
answer cel-go itself gave."""

from __future__ import annotations

import pytest

import kcel


@pytest.mark.parametrize(("version", "accepted"), [("1.30", False), ("1.32", False), ("1.33", True), ("1.37", True)])
@pytest.mark.parametrize("expr", ["[1, 2].first()", "[1, 2].last()", "optional.unwrap([optional.of(1)])"])
def test_optional_library_functions_arrive_with_cel_go_v0_23(version: str, accepted: bool, expr: str) -> None:
    """cel-go v0.23 (Kubernetes 1.33) brought them; older API servers answer `undeclared reference`, stored
    expressions included."""
    for environment in ("new", "stored"):
        env = kcel.Env(k8s_version=version, environment=environment)
        if accepted:
            env.compile(expr)
        else:
            with pytest.raises(kcel.CompileError, match="undeclared reference to '(first|last|optional)'"):
                env.compile(expr)


@pytest.mark.parametrize(
    ("expr", "cost"), [("ls.join(t)", 3), ("t.substring(4, x)", 3), ("t.lowerAscii()", 2), ("t.split(',')", 2)]
)
def test_plain_environment_costs_as_cel_go_without_kubernetes_estimator(expr: str, cost: int) -> None:
    """cel-go prices the strings extension at its default, 1 a call; Kubernetes' estimator prices it by size."""
    variables = {"ls": "list(string)", "t": "string", "x": "int"}
    activation = {"ls": ["a", "b"], "t": "abcdefghijklmnopqrstuvwxyz" * 4, "x": 5}
    plain = kcel.Env(variables=variables)
    program = plain.compile(expr)
    assert program.evaluate_with_cost(activation)[1] == cost
    assert plain.estimate_cost(program) == kcel.CostEstimate(cost, cost)
    kubernetes = kcel.Env(variables=variables, k8s_version="1.37")
    assert kubernetes.compile(expr).evaluate_with_cost(activation)[1] > cost
