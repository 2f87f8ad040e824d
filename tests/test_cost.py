"""Cost: golden tables for the static estimator (kcel.cost) and the runtime meter on error paths."""

from __future__ import annotations

import pytest

import kcel
from kcel.cost import StringSizes
from kcel.k8s.rules.cost import SchemaSizes, cost_error_message, max_cardinality
from kcel.k8s.schemas.decltypes import schema_decl_type
from kcel.k8s.schemas.schema import Schema

ENV = kcel.Env(
    variables={"s": "string", "b": "bytes", "i": "int", "l": "list(int)", "ls": "list(string)",
               "m": "map(string, string)", "d": "dyn"},
    compatibility_version="1.34",
)  # fmt: skip
MAX = 2**64 - 1

# (expression, (min, max)) with strings and bytes of unknown size at most 12 long (Kubernetes' cost tests)
ESTIMATES = [
    ("true", (0, 0)),
    ("i", (1, 1)),
    ("i + 1 > 2", (3, 3)),
    ("s == 'abc'", (2, 2)),  # s, plus ceil(min(12, 3) * 0.1) for the equality
    ("s.contains('abc')", (1, 3)),  # s + ceil({0, 12} * 0.1) * ceil(3 * 0.1)
    ("s.startsWith('abcdefghijk')", (3, 3)),  # the prefix's size counts (cel-go v0.29)
    ("s.matches('[a-z]+')", (3, 5)),  # 1 + ceil((1 + s) * 0.1) * ceil(6 * 0.25)
    ("s + s", (2, 5)),
    ("size(s + 'abc') > 1", (4, 5)),
    ("l.all(x, x > 0)", (2, MAX)),  # the list's size is unknown
    ("[1, 2, 3].all(x, x > 0)", (20, 26)),  # list 10 + result 1 + 3 * (condition 2 + step 1..3)
    ("[1, 2].map(x, x * 2)", (49, 49)),  # 10 + [] 10 + result 1 + 2 * (@result 1 + [x * 2] 12 + `+` 1)
    ("i in [1, 2, 3]", (14, 14)),  # in_list: the list's size, plus the literal (10) and i
    ("true && s == 'x'", (0, 2)),  # && costs its left side at least, both at most
    ("i > 0 ? s : 'abc'", (2, 3)),
    ("dyn(s) == 'a'", (3, 3)),
    ("ls.join(',') == 'a'", (2, 1844674407370955266)),  # unknown list size: the result's size saturates
    ("has(m.x)", (1, 1)),  # Kubernetes: presence tests cost nothing beyond their operand
    ("m.x == 'a'", (3, 3)),  # selecting from a map costs 1
    ("[1, 2, 3].sort()[0] == 1", (41, 41)),  # list 10 + sort 3² * 2 + 11 + index 1 + == 1
]


@pytest.mark.parametrize(("expr", "expected"), ESTIMATES, ids=[e for e, _ in ESTIMATES])
def test_estimates(expr: str, expected: tuple[int, int]) -> None:
    estimate = ENV.estimate_cost(ENV.compile(expr), StringSizes(12))
    assert (estimate.min, estimate.max) == expected


def test_estimate_without_sizes_is_unbounded_for_strings() -> None:
    assert ENV.estimate_cost(ENV.compile("s.contains('a')")).max == 1844674407370955264 * 1 + 1


def test_estimate_needs_a_checked_program() -> None:
    with pytest.raises(ValueError, match="type-checked"):
        ENV.estimate_cost(ENV.compile("1 + 1", check=False))


# -- sizes from a schema ----------------------------------------------------------------------------------

SCHEMA = Schema.from_json({
    "type": "object",
    "properties": {
        "names": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        "count": {"type": "integer"},
        "mode": {"type": "string", "enum": ["Fast", "Safe"]},
    },
})  # fmt: skip

SCHEMA_SIZES = [
    (("self", "names"), (0, 10)),
    (("self", "names", "@items"), (0, 20)),  # maxLength 5 code points: up to 20 bytes
    (("self", "tags", "@values"), (0, 3145726)),
    (("self", "tags", "@keys"), (0, 0)),
    (("self", "count"), (0, 0)),  # a scalar field: no elements
    (("self", "mode"), (0, 4)),  # the longest enum value
    (("self", "missing"), None),
    ((), None),
]


@pytest.mark.parametrize(("path", "expected"), SCHEMA_SIZES)
def test_schema_sizes(path: tuple[str, ...], expected: tuple[int, int] | None) -> None:
    decl = schema_decl_type(SCHEMA)
    assert decl is not None
    found = SchemaSizes(decl).estimate_size(path, decl.cel)
    assert (None if found is None else (found.min, found.max)) == expected


def test_cardinality_and_messages() -> None:
    assert max_cardinality(1) == 1572864
    assert cost_error_message("estimated rule cost", 10_000_001, 10_000_000).startswith(
        "estimated rule cost exceeds budget by factor of 1.000000x (try simplifying"
    )
    assert "factor of 2.5x" in cost_error_message("c", 25_000_000, 10_000_000)
    assert "factor of more than 100x" in cost_error_message("c", 10**12, 10_000_000)


# -- runtime cost on error paths --------------------------------------------------------------------------

# cel-go evaluates both operands of a unary or binary call and charges the call even when one failed.
ERROR_COSTS = [
    ("m.v2 == 'z'", {"m": {}}, 3),  # m.v2 (2) + the equality, charged with the error as a size-1 operand
    ("m.v2 == ''", {"m": {}}, 2),  # min(1, 0) * 0.1 rounds to 0
    ("l[3] + 1 == 2", {"l": []}, 4),
    ("i / 0 == 1", {"i": 1}, 3),  # the division is charged although it fails
]


@pytest.mark.parametrize(("expr", "variables", "cost"), ERROR_COSTS, ids=[e for e, _, _ in ERROR_COSTS])
def test_cost_of_failed_evaluations(expr: str, variables: dict[str, object], cost: int) -> None:
    with pytest.raises(kcel.EvalError) as raised:
        ENV.compile(expr).evaluate_with_cost(variables)
    assert raised.value.cost == cost


def test_cost_limit_is_never_absorbed() -> None:
    """`||` absorbs errors, but not the cancellation of a runaway evaluation."""
    program = ENV.compile("l.all(x, x > 0) || true")
    with pytest.raises(kcel.CostLimitExceeded):
        program.evaluate_with_cost({"l": list(range(1, 1000))}, cost_limit=100)
    assert program.evaluate_with_cost({"l": list(range(1, 10))})[0] is True
