"""The evaluation workload with `self` typed by a structural schema, as CRD rules are, beside `dyn` and hand-written.

A CRD rule's variables have the types of its schema, so the planner can emit plain Python where the checker pins
a type. Each rule of `eval_workload.WORKLOAD` runs three ways side by side: variables declared `dyn` (what
`evaluate.py` times), variables typed by a schema inferred from the rule's own input (objects with their
properties, lists of their first item, strings, integers, booleans, numbers), and the hand-written Python twin.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from eval_workload import WORKLOAD, Activation, Rule
from harness import arguments, measure, table, write_json

import kcel
from kcel.k8s.schemas.decltypes import schema_decl_type
from kcel.k8s.schemas.schema import Schema


def schema_of(value: Any) -> dict[str, Any]:
    """The structural schema a CRD author would write for `value` (a map of strings for labels and annotations)."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array", "items": schema_of(value[0]) if value else {"type": "string"}}
    if (
        isinstance(value, Mapping)
        and value
        and all(isinstance(v, str) for v in value.values())
        and any("/" in key or "." in key for key in value)
    ):  # labels, annotations
        return {"type": "object", "additionalProperties": {"type": "string"}}
    return {"type": "object", "properties": {key: schema_of(item) for key, item in value.items()}}


def typed(rule: Rule) -> Callable[[Activation], object]:
    declared = {name: schema_decl_type(Schema.from_json(schema_of(value))) for name, value in rule.activation.items()}
    variables = {name: decl.cel if decl is not None else "dyn" for name, decl in declared.items()}
    return kcel.Env(variables=variables, k8s_version="1.37").compile(rule.expr).evaluate


def dyn(rule: Rule) -> Callable[[Activation], object]:
    return kcel.Env(variables={name: "dyn" for name in rule.activation}, k8s_version="1.37").compile(rule.expr).evaluate


def main() -> None:
    parser = arguments(__doc__)
    parser.set_defaults(repeat=11, warmup=2)
    args = parser.parse_args()
    everything = []
    for rule in WORKLOAD:
        calls = {"kcel typed": typed(rule), "kcel dyn": dyn(rule), "hand-written": rule.hand}
        answers = {name: call(rule.activation) for name, call in calls.items()}
        assert len(set(map(repr, answers.values()))) == 1, answers
        loops = _loops_for(calls["kcel dyn"], rule.activation)
        cases = {name: _loop(call, rule.activation, loops) for name, call in calls.items()}
        timings = measure(cases, repeat=args.repeat, warmup=args.warmup)
        print(f"\n{rule.id}: {rule.expr}")
        print(table(timings, reference="hand-written", unit="us", per=loops))
        everything += [dataclasses.replace(t, name=f"{rule.id}/{t.name}") for t in timings]
    if args.json:
        write_json(args.json, "typed", everything)


def _loops_for(call: Callable[[Activation], object], activation: Activation, target_ns: int = 3_000_000) -> int:
    """How many calls make a sample of about `target_ns`."""
    start = time.perf_counter_ns()
    for _ in range(10):
        call(activation)
    return max(1, target_ns * 10 // max(1, time.perf_counter_ns() - start))


def _loop(call: Callable[[Activation], object], activation: Activation, loops: int) -> Callable[[], None]:
    rounds = range(loops)

    def run() -> None:
        for _ in rounds:
            call(activation)

    return run


if __name__ == "__main__":
    main()
