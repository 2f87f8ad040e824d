"""Parse every cel-spec conformance expression with kcel and with cel-python, side by side in one run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from celpy.celparser import CELParser
from harness import arguments, measure, table, write_json

import kcel

SUITE = Path("/work/shared/conformance/cel-spec")


class Case(NamedTuple):
    id: str
    expr: str
    disable_macros: bool


def load(suite: Path) -> list[Case]:
    """Every test of every file, in file and upstream order (the suite's README gives the format)."""
    cases = []
    for path in sorted(suite.glob("*.json")):
        for section in json.loads(path.read_text(encoding="utf-8"))["sections"]:
            cases += [Case(t["id"], t["expr"], bool(t.get("disable_macros"))) for t in section["tests"]]
    return cases


def kcel_parse(case: Case) -> object:
    return kcel.parse(case.expr, macros=()) if case.disable_macros else kcel.parse(case.expr)


def celpy_parse(parser: CELParser) -> Callable[[Case], object]:
    # celpy's Environment.compile() is only CELParser.parse(); it expands macros at evaluation, never at parse.
    return lambda case: parser.parse(case.expr)


def failures(parse: Callable[[Case], object], cases: list[Case]) -> dict[str, str]:
    """Which cases raise (any exception: a RecursionError counts as "cannot parse" too), with the error type."""
    failed = {}
    for case in cases:
        try:
            parse(case)
        except Exception as err:  # classify only: whatever escapes is a failure to parse
            failed[case.id] = type(err).__name__
    return failed


def one_pass(parse: Callable[[Case], object], cases: list[Case]) -> Callable[[], None]:
    def run() -> None:
        for case in cases:
            parse(case)

    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--suite", type=Path, default=SUITE, help=f"cel-spec JSON directory (default {SUITE})")
    parser.add_argument("--list-excluded", action="store_true", help="print the id of every excluded expression")
    args = parser.parse_args()

    cases = load(args.suite)
    engines = {"kcel": kcel_parse, "cel-python": celpy_parse(CELParser())}
    failed = {name: failures(parse, cases) for name, parse in engines.items()}
    excluded = set().union(*failed.values())
    kept = [case for case in cases if case.id not in excluded]

    print(f"{len(cases)} expressions in {args.suite}; {sum(c.disable_macros for c in cases)} with disable_macros")
    for name, ids in failed.items():
        print(f"  {name} cannot parse {len(ids)}")
    print(f"  excluded from both sides: {len(excluded)}; timed: {len(kept)}")
    if args.list_excluded:
        for case_id in sorted(excluded):
            print("   ", case_id, {name: ids[case_id] for name, ids in failed.items() if case_id in ids})

    timings = measure({name: one_pass(parse, kept) for name, parse in engines.items()}, args.repeat, args.warmup)
    print(f"\nOne pass over {len(kept)} expressions, {args.repeat} rounds:")
    print(table(timings, reference="cel-python", unit="ms"))
    print("\nPer expression (pass median / expressions):")
    print(table(timings, reference="cel-python", unit="us", per=len(kept)))
    if args.json:
        meta = {"expressions": len(kept), "excluded": sorted(excluded), "failed": failed}
        write_json(args.json, "parse", timings, **meta)


if __name__ == "__main__":
    main()
