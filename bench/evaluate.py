"""Evaluate compiled expressions with kcel, its peers and hand-written Python, side by side in one run."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from eval_workload import SIZES, WORKLOAD, Activation, Rule, comprehension_rules
from harness import Timing, arguments, calibrate, loop, measure, write_json

import kcel

Call = Callable[[Activation], object]

REFERENCE = "kcel"
HAND = "hand-written"


class Engine(NamedTuple):
    """How a user of one engine runs a rule: `prepare` compiles once (untimed) and returns the timed call."""

    name: str
    prepare: Callable[[str, Sequence[str]], Call]
    plain: Callable[[object], object]  # result -> plain Python, for the correctness gate only (untimed)


class Outcome(NamedTuple):
    """The untimed first evaluation: a timed call, or why a cell is n/a."""

    call: Call | None
    value: object = None
    failure: str = ""
    elapsed_ns: int = 0  # of the first call, to skip slow cells in --quick without calling them again


# --- the engines -------------------------------------------------------------------------------------------------


def kcel_prepare(expr: str, names: Sequence[str]) -> Call:
    return kcel.Env(variables={name: "dyn" for name in names}).compile(expr).evaluate


def hand_prepare(rule: Rule) -> Callable[[str, Sequence[str]], Call]:
    return lambda expr, names: rule.hand


def celpy_engine() -> Engine:
    import celpy
    from celpy import celtypes

    def prepare(expr: str, names: Sequence[str]) -> Call:
        env = celpy.Environment()
        program = env.program(env.compile(expr))
        to_cel = celpy.json_to_cel

        def call(activation: Activation) -> object:  # celpy wants celtypes values: convert on every evaluation
            return program.evaluate({name: to_cel(value) for name, value in activation.items()})

        return call

    return Engine("cel-python", prepare, lambda value: untyped(value, celtypes))


def untyped(value: object, celtypes: Any) -> object:
    """celpy's celtypes subclass int/float/str/list/dict; strip them so results compare by CEL type."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    for base in (int, float, str, bytes):
        if isinstance(value, base):
            return base(value)
    if isinstance(value, list):
        return [untyped(v, celtypes) for v in value]
    if isinstance(value, dict):
        return {untyped(k, celtypes): untyped(v, celtypes) for k, v in value.items()}
    return value


def rust_engine() -> Engine:
    import cel

    def prepare(expr: str, names: Sequence[str]) -> Call:
        return cel.compile(expr).execute  # takes and returns plain Python values

    return Engine("cel (Rust)", prepare, lambda value: value)


def cpp_engine() -> Engine:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_strings

    def prepare(expr: str, names: Sequence[str]) -> Call:
        env = cel.NewEnv(variables={name: cel.Type.DYN for name in names}, extensions=[ext_strings.ExtStrings()])
        compiled = env.compile(expr)

        def call(activation: Activation) -> object:  # .value() is how a caller gets a Python value back
            result = compiled.eval(data=activation)
            if result.type() == cel.Type.ERROR:  # errors come back as values, not exceptions
                raise RuntimeError(str(result))
            return result.value()

        return call

    return Engine("cel-expr-python (C++)", prepare, lambda value: value)


def peers() -> tuple[list[Engine], dict[str, str]]:
    """The peers that import here; the others are reported as not installed."""
    engines, missing = [], {}
    for name, factory in (
        ("cel-python", celpy_engine),
        ("cel (Rust)", rust_engine),
        ("cel-expr-python (C++)", cpp_engine),
    ):
        try:
            engines.append(factory())
        except ImportError as err:
            missing[name] = f"not installed ({err.name})"
    return engines, missing


# --- correctness gate --------------------------------------------------------------------------------------------


def tagged(value: object) -> object:
    """A comparable form that keeps CEL's types apart (Python says True == 1 == 1.0)."""
    if isinstance(value, list):
        return ("list", [tagged(v) for v in value])
    if isinstance(value, dict):
        return ("map", sorted((repr(tagged(k)), tagged(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def first_run(engine: Engine, rule: Rule) -> Outcome:
    """Compile, evaluate once, and classify; every failure becomes an n/a reason."""
    try:
        call = engine.prepare(rule.expr, tuple(rule.activation))
    except Exception as err:  # classify only: a peer that rejects the expression is n/a, whatever it raises
        return Outcome(None, failure=f"compile: {type(err).__name__}: {first_line(err)}")
    try:
        start = time.perf_counter_ns()
        value = call(rule.activation)
        elapsed = time.perf_counter_ns() - start
        return Outcome(call, engine.plain(value), elapsed_ns=elapsed)
    except Exception as err:  # classify only, as above
        return Outcome(None, failure=f"evaluate: {type(err).__name__}: {first_line(err)}")


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:100] if text else ""


def gate(rule: Rule, engines: Sequence[Engine]) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Which engines may be timed on `rule`: those that agree with kcel. The rest get an n/a reason."""
    outcomes = {engine.name: first_run(engine, rule) for engine in engines}
    reference = outcomes[REFERENCE]
    passed, reasons = {}, {}
    for name, outcome in outcomes.items():
        if outcome.call is None:
            reasons[name] = outcome.failure
        elif reference.call is None:
            reasons[name] = "not compared: kcel cannot evaluate it"
        elif tagged(outcome.value) != tagged(reference.value):
            reasons[name] = f"mismatch: {outcome.value!r} (kcel: {reference.value!r})"
        else:
            passed[name] = outcome
    return passed, reasons


# --- timing --------------------------------------------------------------------------------------------------------


class Cell(NamedTuple):
    """The per-call timing of one engine on one rule."""

    timing: Timing  # raw samples: each is `loops` calls
    loops: int

    @property
    def median(self) -> float:
        return self.timing.median / self.loops

    @property
    def iqr(self) -> float:
        return self.timing.iqr / self.loops


class Row(NamedTuple):
    rule: Rule
    cells: dict[str, Cell]
    na: dict[str, str]
    values: dict[str, object]


def time_group(rules: Sequence[Rule], peer_engines: Sequence[Engine], args: argparse.Namespace) -> list[Row]:
    """Gate each rule, then time every passing (rule, engine) cell of the group in one round-robin."""
    cases, loops, rows = {}, {}, []
    for rule in rules:
        engines = [Engine(REFERENCE, kcel_prepare, same), Engine(HAND, hand_prepare(rule), same), *peer_engines]
        passed, na = gate(rule, engines)
        for name, outcome in passed.items():
            if args.max_call_ns and outcome.elapsed_ns > args.max_call_ns:
                na[name] = (
                    f"skipped: one call takes {outcome.elapsed_ns / 1e6:.0f} ms (> --max-call-ms {args.max_call_ms:g})"
                )
                continue
            assert outcome.call is not None
            key = (rule.id, name)
            loops[key] = calibrate(outcome.call, rule.activation, args.target_ns)
            cases[key] = loop(outcome.call, rule.activation, loops[key])
        rows.append(Row(rule, {}, na, {name: outcome.value for name, outcome in passed.items()}))
    timings = measure({f"{rule} / {name}": case for (rule, name), case in cases.items()}, args.repeat, args.warmup)
    for (rule_id, name), timing in zip(cases, timings, strict=True):
        next(row for row in rows if row.rule.id == rule_id).cells[name] = Cell(timing, loops[rule_id, name])
    return rows


def same(value: object) -> object:
    return value


# --- reporting -----------------------------------------------------------------------------------------------------


def fmt(ns: float, unit: str) -> str:
    scale = {"ns": 1, "us": 1_000}[unit]
    value = ns / scale
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def ratio(cell: Cell | None, reference: Cell | None) -> float:
    if cell is None or reference is None or not reference.median:
        return math.nan
    return cell.median / reference.median


def render(rows: Sequence[Row], columns: Sequence[str], unit: str = "us", per: int | Callable[[Row], int] = 1) -> str:
    """A matrix: one line per rule; per engine `median (IQR)` and its ratio to kcel (hand-written: kcel / hand)."""
    header = ["expression", f"kcel {unit} (IQR)"]
    for name in columns:
        if name == REFERENCE:
            continue
        header += [f"{name} {unit} (IQR)", "kcel/hand" if name == HAND else "x kcel"]
    lines = [header]
    for row in rows:
        count = per(row) if callable(per) else per
        line = [row.rule.id]
        for name in columns:
            cell = row.cells.get(name)
            line.append(f"{fmt(cell.median / count, unit)} ({fmt(cell.iqr / count, unit)})" if cell else "n/a")
            if name == HAND:
                line.append(f"{1 / ratio(cell, row.cells.get(REFERENCE)):.2f}x" if cell else "n/a")
            elif name != REFERENCE:
                line.append(f"{ratio(cell, row.cells.get(REFERENCE)):.1f}x" if cell else "n/a")
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
        for line in lines
    ]
    return "\n".join(text)


def notes(rows: Sequence[Row]) -> list[str]:
    return [f"  n/a {name} on {row.rule.id!r}: {reason}" for row in rows for name, reason in row.na.items()]


def growth(small: Sequence[Row], large: Sequence[Row], columns: Sequence[str]) -> str:
    """Time per element at the large size over time per element at the small size: 1.00 is exactly linear."""
    width = max(len(row.rule.id.split(" @")[0]) for row in small)
    lines = [f"{'expression':<{width}}  " + "  ".join(f"{name:>{max(len(name), 6)}}" for name in columns)]
    for a, b in zip(small, large, strict=True):
        cells = []
        for name in columns:
            ca, cb = a.cells.get(name), b.cells.get(name)
            value = f"{(cb.median / SIZES[1]) / (ca.median / SIZES[0]):.2f}" if ca and cb else "n/a"
            cells.append(f"{value:>{max(len(name), 6)}}")
        lines.append(f"{a.rule.id.split(' @')[0]:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)


# --- the aims ------------------------------------------------------------------------------------------------------


def peer_ratios(workload: Sequence[Row], peer_names: Sequence[str]) -> list[tuple[str, str, float]]:
    """(rule, peer, peer median / kcel median) for every timed cell."""
    return [
        (row.rule.id, name, ratio(row.cells.get(name), row.cells.get(REFERENCE)))
        for row in workload
        for name in peer_names
        if name in row.cells and REFERENCE in row.cells
    ]


def aim_fastest(ratios: Sequence[tuple[str, str, float]]) -> list[str]:
    if not ratios:
        return ["faster than every peer: no peer timed"]
    losses = [r for r in ratios if r[2] <= 1]
    rule, name, closest = min(ratios, key=lambda r: r[2])
    verdict = "MET" if not losses else f"MISSED on {len(losses)} of {len(ratios)} cells"
    lines = [f"faster than every peer on every rule: {verdict} (closest: {name} on {rule!r}, peer/kcel {closest:.2f}x)"]
    return lines + [f"    kcel slower than {name} on {rule!r}: peer/kcel {r:.2f}x" for rule, name, r in losses]


def aim_celpy(ratios: Sequence[tuple[str, str, float]]) -> list[str]:
    celpy = [(rule, r) for rule, name, r in ratios if name == "cel-python"]
    if not celpy:
        return [">= 50x faster than cel-python: cel-python not timed"]
    below = sorted((c for c in celpy if c[1] < 50), key=lambda c: c[1])
    rule, low = min(celpy, key=lambda c: c[1])
    verdict = "MET" if not below else f"MISSED on {len(below)} of {len(celpy)} rules"
    lines = [f">= 50x faster than cel-python: {verdict} (lowest cel-python/kcel {low:.1f}x on {rule!r})"]
    return lines + [f"    cel-python/kcel {r:.1f}x on {rule!r}" for rule, r in below]


def aim_linear(small: Sequence[Row], large: Sequence[Row]) -> list[str]:
    growths = [
        (a.rule.id.split(" @")[0], (b.cells[REFERENCE].median / SIZES[1]) / (a.cells[REFERENCE].median / SIZES[0]))
        for a, b in zip(small, large, strict=True)
        if REFERENCE in a.cells and REFERENCE in b.cells
    ]
    rule, far = max(growths, key=lambda g: abs(math.log(g[1])))
    verdict = "MET" if all(0.8 <= g <= 1.25 for _, g in growths) else "MISSED"
    return [f"linear growth (kcel ns/element at {SIZES[1]} over at {SIZES[0]} within 0.80-1.25): {verdict}"
            f" (furthest from 1: {rule!r} {far:.2f})"]  # fmt: skip


def aim_hand(rows: Sequence[Row]) -> list[str]:
    hand = [
        (row.rule.id, row.cells[REFERENCE].median / row.cells[HAND].median)
        for row in rows
        if HAND in row.cells and REFERENCE in row.cells
    ]
    over = sorted((h for h in hand if h[1] > 2), key=lambda h: -h[1])
    best = min(h[1] for h in hand)
    verdict = "MET" if not over else f"MISSED on {len(over)} of {len(hand)}"
    lines = [f"within 2x of hand-written: {verdict} (kcel/hand from {best:.2f}x to {max(h[1] for h in hand):.2f}x)"]
    return lines + [f"    kcel/hand {r:.2f}x on {rule!r}" for rule, r in over]


def verdicts(workload: Sequence[Row], small: Sequence[Row], large: Sequence[Row], peer_names: Sequence[str]) -> str:
    """Check the four aims against this run's ratios and name every case that misses."""
    ratios = peer_ratios(workload, peer_names)
    lines = aim_fastest(ratios) + aim_celpy(ratios) + aim_linear(small, large) + aim_hand([*workload, *small, *large])
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------------------------


def options() -> argparse.Namespace:
    parser = arguments(__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="5 rounds of ~2 ms samples; skip cells whose one call takes over 500 ms",
    )
    parser.add_argument("--target-ms", type=float, default=5.0, help="length of one sample (default 5 ms)")
    parser.add_argument("--max-call-ms", type=float, default=0, help="skip cells whose one call takes longer")
    parser.set_defaults(repeat=11)  # short samples, more rounds: the median shrugs off a busy neighbour
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.target_ms = min(args.repeat, 5), min(args.target_ms, 2.0)
        args.max_call_ms = args.max_call_ms or 500.0
    args.target_ns = int(args.target_ms * 1_000_000)
    args.max_call_ns = int(args.max_call_ms * 1_000_000)
    return args


def to_json(args: argparse.Namespace, parts: dict[str, list[Row]], missing: dict[str, str]) -> None:
    timings, meta = [], {}
    for part, rows in parts.items():
        for row in rows:
            for name, cell in row.cells.items():
                key = f"{part}/{row.rule.id}/{name}"
                timings.append(Timing(key, cell.timing.samples_ns))
                meta[key] = {
                    "loops": cell.loops,
                    "per_call_median_ns": cell.median,
                    "per_call_iqr_ns": cell.iqr,
                    "result": repr(row.values.get(name)),
                }
            for name, reason in row.na.items():
                meta[f"{part}/{row.rule.id}/{name}"] = {"n/a": reason}
    write_json(
        args.json,
        "evaluate",
        timings,
        samples="each sample is `loops` calls; divide by loops for one call",
        repeat=args.repeat,
        warmup=args.warmup,
        target_ms=args.target_ms,
        missing=missing,
        expressions={row.rule.id: row.rule.expr for rows in parts.values() for row in rows},
        cells=meta,
    )


def main() -> None:
    args = options()
    peer_engines, missing = peers()
    columns = [REFERENCE, HAND, *(e.name for e in peer_engines)]
    print(
        f"{args.repeat} rounds, round-robin per expression, ~{args.target_ms:g} ms per sample; "
        f"every timed call includes the engine's own input conversion from plain dicts"
    )
    for name, reason in missing.items():
        print(f"  {name}: {reason}")

    workload = [row for rule in WORKLOAD for row in time_group([rule], peer_engines, args)]
    print("\nPart 1+2: Kubernetes validation rules, per evaluation (x kcel = engine / kcel; kcel/hand = kcel / hand)")
    print(render(workload, columns))
    print("\n".join(notes(workload)))

    # Both sizes of one expression share a round-robin, so the growth ratio is measured side by side.
    pairs = [time_group(rules, peer_engines, args) for rules in zip(*map(comprehension_rules, SIZES), strict=True)]
    small, large = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    print("\nPart 3: comprehensions over int lists, ns per element (median per call / list size)")
    print(render([*small, *large], columns, unit="ns", per=lambda row: int(row.rule.id.rsplit("@", 1)[1])))
    print("\n".join(notes([*small, *large])))
    print(f"\nGrowth: ns per element at {SIZES[1]} / ns per element at {SIZES[0]} (1.00 = linear)")
    print(growth(small, large, columns))

    print("\nAims:")
    print(verdicts(workload, small, large, [e.name for e in peer_engines]))
    if args.json:
        to_json(args, {"workload": workload, "comprehensions": [*small, *large]}, missing)


if __name__ == "__main__":
    main()
