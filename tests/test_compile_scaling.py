"""Compiling stays linear in the size of an expression (issue 43): a policy of 1,000 `||` terms once took 17 s.

The work is counted, not timed (a slow machine cannot fail it): every Python call each stage makes (parse, check,
cost estimate, and the planning of each variant of the generated function) for an expression and for one twice
as long. Linear work doubles; the quadratic planning of `&&`/`||` chains this guards against quadrupled it.
"""

from __future__ import annotations

import cProfile
from collections.abc import Callable

import pytest

import kcel
from kcel.checker.checker import check
from kcel.eval.codegen import CodeGen
from kcel.parser import parse

ENV = kcel.Env(k8s_version="1.37", variables={"object": "dyn"})
TERM = "object.spec.paused"
# Each variant of the generated function: (metered, inline, exact_failures, traced) of `CodeGen`.
VARIANTS = [(False, True, False, False), (False, False, False, False), (True, True, False, False),
            (True, False, False, False), (True, False, True, False), (False, True, False, True)]  # fmt: skip


def chain(operators: Callable[[int], str], terms: int) -> str:
    return TERM + "".join(f" {operators(i)} {TERM}" for i in range(1, terms))


def nested_conditional(terms: int) -> str:
    return "".join(f"object.spec.a{i} ? {i} : " for i in range(terms)) + "0"


def calls(work: Callable[[], object]) -> int:
    """Every Python function call `work` makes (C functions included): its work, whatever the machine's speed."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        work()
    finally:
        profile.disable()
    return sum(entry.callcount for entry in profile.getstats())


def compile_every_variant(text: str) -> None:
    parsed = parse(text, macros=ENV.macros)
    checked = check(parsed, ENV)
    ENV.estimate_cost(ENV.compile(text))
    for metered, inline, exact_failures, traced in VARIANTS:
        CodeGen(parsed, ENV, metered, checked, inline=inline, exact_failures=exact_failures, traced=traced).plan()


# (name, expression of n terms, n): chains are balanced into a tree by the parser, as cel-go's does, so 1,000
# terms parse; `+` chains and `?:` nests are not, and cel-go refuses them past 250 levels, so they are measured
# below that.
EXPRESSIONS = [
    ("or", lambda n: chain(lambda i: "||", n), 500),
    ("and", lambda n: chain(lambda i: "&&", n), 500),
    ("mixed", lambda n: chain(lambda i: "&&" if i % 2 else "||", n), 500),
    ("comparisons", lambda n: " || ".join(f"object.spec.n == {i}" for i in range(n)), 500),
    ("strings", lambda n: " + ".join(["object.metadata.name"] * n) + " == ''", 60),
    ("lists", lambda n: "size(" + " + ".join(["object.spec.items"] * n) + ") > 0", 60),
    ("conditionals", nested_conditional, 60),
]


@pytest.mark.parametrize(("name", "expression", "terms"), EXPRESSIONS, ids=[e[0] for e in EXPRESSIONS])
def test_compile_work_is_linear_in_the_number_of_terms(name: str, expression: Callable[[int], str], terms: int) -> None:
    small = calls(lambda: compile_every_variant(expression(terms)))
    large = calls(lambda: compile_every_variant(expression(2 * terms)))
    assert large < 2.3 * small, f"{name}: {small} calls for {terms} terms, {large} for {2 * terms}"


def test_a_long_chain_still_answers_as_before() -> None:
    """The planning of a chain whose sides need statements changed: every outcome of each side, in each variant."""
    text = chain(lambda i: "&&" if i % 3 else "||", 40)
    program = ENV.compile(text)
    for paused in (True, False, None, 1):
        spec = {} if paused is None else {"paused": paused}
        activation = {"object": {"spec": spec}}
        try:
            expected: object = program.evaluate_with_cost(activation)[0]
        except kcel.EvalError as err:
            expected = err.message
        try:
            fast: object = program.evaluate(activation)
        except kcel.EvalError as err:
            fast = err.message
        assert fast == expected
    assert program.evaluate({"object": {"spec": {"paused": True}}}) is True
    assert program.evaluate({"object": {"spec": {"paused": False}}}) is False
