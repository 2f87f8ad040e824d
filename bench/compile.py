"""Compile (parse + type-check + plan) time per CRD/admission rule: kcel vs cel-python and the native peers.

Each engine compiles the same rules of the evaluation workload, side by side, round-robin;
medians and ratios to kcel are printed. kcel's figure is split into parse, check and the
whole `Env.compile` (which also plans and compiles the generated Python function).

`--against DIR` also times the kcel of another checkout (an older commit's worktree) in a worker process, each of its
samples taken in turn with this one's, the same way (a collection first): before and after a change in one run.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from eval_workload import WORKLOAD, Rule
from harness import Timing, arguments, measure, table, write_json

import kcel
from kcel.checker.checker import check


def kcel_env(rule: Rule) -> kcel.Env:
    """The environment a rule compiles in: its variables, all `dyn`."""
    return kcel.Env(variables={name: "dyn" for name in sorted(rule.activation)})


def engines(rule: Rule) -> dict[str, Callable[[str], object]]:
    env, names = kcel_env(rule), sorted(rule.activation)
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


def serve_samples() -> None:
    """The worker of `--against`: for each rule index read, one sample of that rule's `Env.compile`, in ns."""
    compilers = [kcel_env(rule).compile for rule in WORKLOAD]
    for compile_rule, rule in zip(compilers, WORKLOAD, strict=True):
        compile_rule(rule.expr)
    print("ready", flush=True)
    for line in sys.stdin:
        index = int(line)
        gc.collect()
        start = time.perf_counter_ns()
        compilers[index](WORKLOAD[index].expr)
        print(time.perf_counter_ns() - start, flush=True)


def against(tree: Path, repeat: int) -> list[Timing]:
    """This kcel's `Env.compile` and the one of `tree`, sample by sample in turn, rule by rule."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    worker = subprocess.Popen([sys.executable, __file__, "--serve-samples"], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert worker.stdin is not None and worker.stdout is not None
    assert worker.stdout.readline().strip() == "ready", "the worker did not start"
    timings = []
    for index, rule in enumerate(WORKLOAD):
        compile_rule = kcel_env(rule).compile
        compile_rule(rule.expr)
        mine, theirs = [], []
        for _ in range(repeat):
            gc.collect()
            start = time.perf_counter_ns()
            compile_rule(rule.expr)
            mine.append(time.perf_counter_ns() - start)
            worker.stdin.write(f"{index}\n")
            worker.stdin.flush()
            theirs.append(int(worker.stdout.readline()))
        timings += [Timing(f"{rule.id}/kcel compile", tuple(mine)), Timing(f"{rule.id}/against", tuple(theirs))]
        print(f"\n{rule.id}: {rule.expr}")
        print(table(timings[-2:], unit="us"))
    worker.stdin.close()
    worker.wait()
    return timings


def main() -> None:
    if sys.argv[1:] == ["--serve-samples"]:
        return serve_samples()
    parser = arguments(__doc__)
    parser.add_argument("--against", type=Path, metavar="DIR", help="another checkout whose kcel to time beside")
    parser.set_defaults(repeat=51, warmup=3)
    args = parser.parse_args()
    if args.against:
        timings = against(args.against, args.repeat)
        if args.json:
            write_json(args.json, "compile-against", timings, against=str(args.against))
        return None
    everything = []
    for rule in WORKLOAD:
        candidates = engines(rule)
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
