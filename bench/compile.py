"""Compile (parse + type-check + plan) time per CRD/admission rule: kcel vs cel-python and the native peers.

Each engine compiles the same rules of the evaluation workload, side by side, round-robin;
medians and ratios to kcel are printed. kcel's figure is split into parse, check and the
whole `Env.compile` (which also plans and compiles the generated Python function).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from eval_workload import WORKLOAD
from harness import arguments, measure, table, write_json

import kcel
from kcel.checker.checker import check


def engines(names: list[str]) -> dict[str, Callable[[str], object]]:
    env = kcel.Env(variables={name: "dyn" for name in names})
    found: dict[str, Callable[[str], object]] = {
        "kcel compile": env.compile,
        "kcel parse": lambda text: kcel.parse(text, macros=env.macros),
        "kcel parse+check": lambda text: check(kcel.parse(text, macros=env.macros), env),
    }
    try:
        import celpy

        found["cel-python"] = celpy.Environment().compile
    except ImportError:
        pass
    try:
        import cel

        found["cel (Rust)"] = cel.compile
    except ImportError:
        pass
    try:
        from cel_expr_python import cel as cpp

        cpp_env = cpp.NewEnv(variables={name: cpp.Type.DYN for name in names})
        found["cel-expr-python (C++)"] = cpp_env.compile
    except ImportError:
        pass
    return found


def main() -> None:
    parser = arguments(__doc__)
    parser.set_defaults(repeat=51, warmup=3)
    args = parser.parse_args()
    everything = []
    for rule in WORKLOAD:
        candidates = engines(sorted(rule.activation))
        cases = {}
        for name, compile_rule in candidates.items():
            try:
                compile_rule(rule.expr)
            except Exception as err:  # a peer that cannot compile the rule is reported, not timed
                print(f"  n/a {name} on {rule.id!r}: {type(err).__name__}: {err}")
                continue
            cases[name] = lambda fn=compile_rule, text=rule.expr: fn(text)
        timings = measure(cases, repeat=args.repeat, warmup=args.warmup)
        print(f"\n{rule.id}: {rule.expr}")
        print(table(timings, reference="kcel compile", unit="us"))
        everything += [dataclasses.replace(t, name=f"{rule.id}/{t.name}") for t in timings]
    if args.json:
        write_json(args.json, "compile", everything)


if __name__ == "__main__":
    main()
