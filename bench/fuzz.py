"""The long differential fuzzing run: tests/fuzz's checks over many more generated cases than CI runs.

    .venv/bin/python bench/fuzz.py --examples 20000 [--hostile 5000] [--seed 1] [--show 10] [--show-known]

Each case is a generated well-typed expression (tests/fuzz/strategies.py) with a matching activation, checked as
tests/fuzz/test_differential.py checks it: kcel's `evaluate`, `evaluate_with_cost` and `explain` agree (and stop
exactly past their cost), nothing but kcel's errors escapes, and cel-expr-python agrees wherever cel-go and
cel-cpp do. `--hostile N` adds N cases with every variable declared `dyn` and bound to arbitrary Python values.

Unlike the CI test it does not stop at the first finding: it counts every outcome and groups the findings, showing
the shortest expression of each group (hypothesis does not shrink here; rerun a finding under pytest for that).
It prints the compile fraction, how the comparison with cel-cpp went (agreed, kcel only, each known difference),
and exits 1 when anything was found. 20,000 cases take about six minutes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests.fuzz import test_differential as fuzz  # noqa: E402
from tests.fuzz.strategies import Case, activations, cases  # noqa: E402


@dataclass
class Tally:
    """What a run saw: outcome counts, and the shortest example of each finding and known difference."""

    counts: Counter[str] = field(default_factory=Counter)
    findings: dict[str, tuple[int, str]] = field(default_factory=dict)  # group -> (occurrences, shortest report)
    known: dict[str, str] = field(default_factory=dict)  # key -> shortest example

    def finding(self, group: str, report: str) -> None:
        seen, shortest = self.findings.get(group, (0, report))
        self.findings[group] = (seen + 1, report if len(report) < len(shortest) else shortest)


def group_of(problem: str) -> str:
    """A finding without its values, so that one bug met many times is one group."""
    problem = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "…", problem)
    return re.sub(r"-?\d[\d.e+-]*", "N", problem)[:160]


def run(tally: Tally, case: Case, activation: dict[str, Any], hostile: bool) -> None:
    prefix = "hostile " if hostile else ""
    tally.counts[prefix + "cases"] += 1
    try:
        result = fuzz.check(case, activation, None if hostile else fuzz.CPP, all_dyn=hostile)
    except fuzz.ForeignException as err:
        tally.counts[prefix + "foreign exceptions"] += 1
        tally.finding(
            group_of(f"{prefix}foreign: {err}"), f"{case.expr}\n  {err}\n  activation: {fuzz._SHORT.repr(activation)}"
        )
        return
    tally.counts[f"{prefix}{result.stage}"] += 1
    if not hostile:
        tally.counts[f"cel-cpp {result.cpp.split(':')[0]}"] += 1
        if result.cpp.startswith(("known", "kcel only")):
            tally.counts[f"  {result.cpp}"] += 1
        if result.cpp.startswith("known") and len(case.expr) < len(tally.known.get(result.cpp, case.expr + "x")):
            tally.known[result.cpp] = fuzz.describe(case, activation, result) + f"\n  kcel: {result.kcel}"
    for problem in result.problems:
        tally.finding(group_of(prefix + problem), fuzz.describe(case, activation, result))


def sweep(examples: int, strategy: Any, body: Callable[[Case, dict[str, Any]], None], at: int) -> None:
    """Run `body` over `examples` generated cases (no shrinking, no example database)."""
    config = settings(
        max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )  # fmt: skip
    seed(at)(config(given(cases(), strategy)(body)))()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20_000, help="generated cases, well-typed activations")
    parser.add_argument("--hostile", type=int, default=0, help="more cases, `dyn` variables bound to anything")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=10, help="findings shown in full")
    parser.add_argument("--show-known", action="store_true", help="the shortest case of each known difference")
    args = parser.parse_args(argv)
    tally = Tally()
    start = time.perf_counter()
    if fuzz.CPP is None:
        print("cel-expr-python is not installed: kcel's variants only")
    sweep(args.examples, activations(), lambda case, act: run(tally, case, act, False), args.seed)
    if args.hostile:
        sweep(args.hostile, fuzz.hostile_activations(), lambda case, act: run(tally, case, act, True), args.seed)
    elapsed = time.perf_counter() - start
    counts = tally.counts
    checked = 1 - counts["compile error"] / max(counts["cases"], 1)
    print(f"{counts['cases'] + counts['hostile cases']:,} cases ({counts['hostile cases']:,} of them hostile) in "
          f"{elapsed:.0f} s; {checked:.1%} of the well-typed ones passed kcel's checker")  # fmt: skip
    for key, count in sorted(counts.items()):
        print(f"  {key}: {count:,}")
    if args.show_known:
        for key, example in sorted(tally.known.items()):
            known = fuzz.KNOWN_DIFFERENCES[key.removeprefix("known: ")]
            print(f"\n{key}\n  cel-go: {known.cel_go}\n  cel-cpp: {known.cel_cpp}\n  source: {known.source}")
            print(f"  shortest case: {example}")
    total = sum(seen for seen, _ in tally.findings.values())
    print(f"\n{total:,} findings in {len(tally.findings)} groups")
    for group, (seen, report) in sorted(tally.findings.items(), key=lambda item: -item[1][0])[: args.show]:
        print(f"\n[{seen}x] {group}\n  {report}")
    return 1 if tally.findings else 0


if __name__ == "__main__":
    sys.exit(main())
