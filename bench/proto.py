"""Field access on a protobuf message: kcel against cel-expr-python (C++), and kcel on the same data as a plain dict.

Every case is an expression over `msg`, declared as `cel.expr.conformance.proto3.TestAllTypes` (the cel-spec
conformance message; its descriptors come from `../shared/conformance/cel-spec/proto/messages.descriptors.json`,
a FileDescriptorSet in protobuf's JSON mapping; without that file the script prints why and stops). Both engines
evaluate the same message object: the set's files are added to protobuf's default descriptor pool, which is the pool
cel-expr-python resolves message types in, and the message is built from that pool's class. kcel gets the set as
`kcel.Env(messages=[...])`. Where the expression reads only JSON-shaped data, kcel also evaluates it over the
equivalent plain dict declared `dyn` (the `kcel dict` column), so the table shows what the message costs kcel.

One timed call is `program.evaluate({"msg": message})` for kcel and `expr.eval(data={"msg": message}).value()` for
cel-expr-python (the `C++` column), which copies the message into C++ on every call; compiling is untimed. The
`C++ bound` column is cel-expr-python evaluating against one `env.Activation({"msg": message})` built beforehand, so
the copy is paid once, as when many expressions run over one message (its arena keeps every result until the
Activation goes, a few KB per call for the message literal).

Before timing, every engine evaluates every case once and must return the same value as kcel, with the CEL type
kept (a mismatch stops the script; a peer that fails is n/a, with the reason).
All cells run round-robin in one `harness.measure`; one sample is a loop of calls lasting about `--target-ms`.

    cd /work/main && PYTHONPATH=. /tmp/w/benchvenv/bin/python bench/proto.py --quick

Needs `protobuf` (`pip install 'protobuf>=5.26'`) and, for the peer column, `cel-expr-python`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from harness import Timing, arguments, calibrate, loop, measure, write_json

DESCRIPTORS = Path(__file__).resolve().parents[2] / "shared/conformance/cel-spec/proto/messages.descriptors.json"
MESSAGE = "cel.expr.conformance.proto3.TestAllTypes"

KCEL, CPP, CPP_BOUND, DICT = "kcel", "cel-expr-python", "cel-expr-python, Activation reused", "kcel dict"

# The message's content, in protobuf's JSON mapping with proto field names. The plain-dict twin is the same values
# as `json.loads` would give them; cases that read a timestamp or build a message have no dict twin.
FIELDS: dict[str, Any] = {
    "single_int64": 5,
    "single_int32": 6,
    "single_string": "abc",
    "single_nested_message": {"bb": 7},
    "repeated_int64": list(range(100)),
    "map_string_string": {f"k{i}": f"v{i}" for i in range(100)},
    "single_timestamp": "2020-01-01T00:00:00Z",
}

Activation = Mapping[str, object]
Call = Callable[[Activation], object]


class Case(NamedTuple):
    id: str
    expr: str
    on_dict: bool  # also time kcel over the plain dict declared `dyn`


CASES = (
    Case("int64 field", "msg.single_int64", True),
    Case("two fields, add, compare", "msg.single_int64 + msg.single_int32 > 10", True),
    Case("string startsWith", "msg.single_string.startsWith('a')", True),
    Case("nested message field", "msg.single_nested_message.bb == 7", True),
    Case("has(nested message)", "has(msg.single_nested_message)", True),
    Case("exists over 100 int64", "msg.repeated_int64.exists(x, x > 99)", True),
    Case("map[string] of 100", "msg.map_string_string['k50']", True),
    Case("unset wrapper == null", "msg.single_int64_wrapper == null", False),
    Case("timestamp compare", "msg.single_timestamp < timestamp('2030-01-01T00:00:00Z')", False),
    Case("build message, read field", f"{MESSAGE}{{single_int64: msg.single_int64}}.single_int64", False),
)


# --- the inputs ------------------------------------------------------------------------------------------------------


def load_message(descriptor_set: dict[str, Any]) -> Any:
    """The message, of a class from protobuf's default pool after the set's files were added to it."""
    from google.protobuf import (  # the well-known files the set imports must be in the pool first
        any_pb2,  # noqa: F401
        descriptor_pb2,
        descriptor_pool,
        duration_pb2,  # noqa: F401
        empty_pb2,  # noqa: F401
        field_mask_pb2,  # noqa: F401
        json_format,
        message_factory,
        struct_pb2,  # noqa: F401
        timestamp_pb2,  # noqa: F401
        wrappers_pb2,  # noqa: F401
    )

    pool = descriptor_pool.Default()
    files = json_format.ParseDict(descriptor_set, descriptor_pb2.FileDescriptorSet())
    for file in files.file:
        try:
            pool.FindFileByName(file.name)
        except KeyError:
            pool.Add(file)
    message_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(MESSAGE))
    return json_format.ParseDict(FIELDS, message_class())


def plain_twin() -> dict[str, Any]:
    """The message's content as `json.loads` returns it, for the cases that only read JSON-shaped fields."""
    return {name: value for name, value in FIELDS.items() if name != "single_timestamp"}


# --- the engines -----------------------------------------------------------------------------------------------------


def kcel_calls(descriptor_set: dict[str, Any]) -> tuple[Callable[[str], Call], Callable[[str], Call]]:
    """Compilers for kcel with `msg` a message (one Env, reused) and with `msg` declared `dyn`."""
    import kcel

    typed = kcel.Env(variables={"msg": MESSAGE}, messages=[descriptor_set])
    dyn = kcel.Env(variables={"msg": "dyn"})
    return (lambda expr: typed.compile(expr).evaluate), (lambda expr: dyn.compile(expr).evaluate)


def cpp_calls(on_message: Activation) -> tuple[Callable[[str], Call], Callable[[str], Call]]:
    """Compilers for cel-expr-python with `msg` a message type of the default pool (ImportError if not installed).

    The first passes the activation dict on every call (`eval(data=...)`); the second evaluates against one
    `env.Activation(on_message)` built here and ignores its argument (the `C++ bound` column)."""
    from cel_expr_python import cel
    from google.protobuf import descriptor_pool

    env = cel.NewEnv(descriptor_pool=descriptor_pool.Default(), variables={"msg": cel.Type(MESSAGE)})
    bound = env.Activation(dict(on_message))

    def value(result: Any) -> object:
        if result.type() == cel.Type.ERROR:  # errors come back as values, not exceptions
            raise RuntimeError(str(result.value()))
        return result.value()

    def per_call(expr: str) -> Call:
        compiled = env.compile(expr)
        return lambda activation: value(compiled.eval(data=activation))

    def reused(expr: str) -> Call:
        compiled = env.compile(expr)
        return lambda activation: value(compiled.eval(bound))

    return per_call, reused


# --- gate and timing -------------------------------------------------------------------------------------------------


def tagged(value: object) -> tuple[str, object]:
    """The value with its Python type name, so `True` and `1` differ (results here are scalars)."""
    return type(value).__name__, value


def first_call(compile_expr: Callable[[str], Call], case: Case, activation: Activation) -> tuple[Call, object]:
    call = compile_expr(case.expr)
    return call, call(activation)


class Cell(NamedTuple):
    timing: Timing  # raw samples, each of `loops` calls
    loops: int
    result: object

    @property
    def median_us(self) -> float:
        return self.timing.median / self.loops / 1_000

    @property
    def iqr_us(self) -> float:
        return self.timing.iqr / self.loops / 1_000


def plan(
    compilers: Mapping[str, tuple[Callable[[str], Call], Activation]],
    kcel_typed: Callable[[str], Call],
    on_message: Activation,
    target_ns: int,
) -> tuple[dict[tuple[str, str], Callable[[], None]], dict[tuple[str, str], tuple[int, object]], list[str]]:
    """The gate: every engine once per case, untimed; a peer is timed only if it agrees with kcel.

    Returns the timed samples by (case, engine), their loop counts and results, and the n/a reasons."""
    cases: dict[tuple[str, str], Callable[[], None]] = {}
    planned: dict[tuple[str, str], tuple[int, object]] = {}
    na: list[str] = []
    for case in CASES:
        kcel_call, expected = first_call(kcel_typed, case, on_message)  # kcel failing here is a bug: let it raise
        for name, (compile_expr, activation) in compilers.items():
            if name == DICT and not case.on_dict:
                continue
            if name == KCEL:
                call, value = kcel_call, expected
            else:
                try:
                    call, value = first_call(compile_expr, case, activation)
                except Exception as err:  # a peer that cannot do the case is n/a, whatever it raises
                    na.append(f"  n/a {name} on {case.id!r}: {type(err).__name__}: {str(err).strip()[:120]}")
                    continue
                if tagged(value) != tagged(expected):
                    raise AssertionError(f"{name} on {case.expr!r} returned {value!r}, kcel {expected!r}")
            loops = calibrate(call, activation, target_ns)
            cases[case.id, name] = loop(call, activation, loops)
            planned[case.id, name] = (loops, value)
    return cases, planned, na


# --- reporting -------------------------------------------------------------------------------------------------------


def us(cell: Cell | None) -> str:
    if cell is None:
        return "n/a"
    return f"{cell.median_us:.3f} ({cell.iqr_us:.3f})"


def ratio(numerator: Cell | None, denominator: Cell | None) -> str:
    if numerator is None or denominator is None:
        return "n/a"
    return f"{numerator.median_us / denominator.median_us:.2f}x"


def render(cells: Mapping[str, Mapping[str, Cell]]) -> str:
    header = [
        "case",
        "kcel us (IQR)",
        "C++ us (IQR)",
        "C++/kcel",
        "C++ bound us (IQR)",
        "bound/kcel",
        "kcel dict us (IQR)",
        "msg/dict",
    ]
    lines = [header]
    for case in CASES:
        row = cells[case.id]
        kcel_cell, cpp_cell, bound_cell, dict_cell = row.get(KCEL), row.get(CPP), row.get(CPP_BOUND), row.get(DICT)
        lines.append(
            [
                case.id,
                us(kcel_cell),
                us(cpp_cell),
                ratio(cpp_cell, kcel_cell),
                us(bound_cell),
                ratio(bound_cell, kcel_cell),
                us(dict_cell) if case.on_dict else "-",
                ratio(kcel_cell, dict_cell) if case.on_dict else "-",
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            text.ljust(width) if i == 0 else text.rjust(width)
            for i, (text, width) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    )


# --- main ------------------------------------------------------------------------------------------------------------


def options() -> argparse.Namespace:
    parser = arguments(__doc__)
    parser.add_argument("--quick", action="store_true", help="5 rounds of ~2 ms samples")
    parser.add_argument("--target-ms", type=float, default=5.0, help="length of one sample (default 5 ms)")
    parser.set_defaults(repeat=11)
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.target_ms = min(args.repeat, 5), min(args.target_ms, 2.0)
    return args


def main() -> None:
    args = options()
    if not DESCRIPTORS.is_file():
        print(f"skipped: no descriptor set at {DESCRIPTORS} (the cel-spec conformance checkout)")
        return
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        print("skipped: the protobuf package is not installed (pip install 'protobuf>=5.26')")
        return
    descriptor_set = json.loads(DESCRIPTORS.read_text(encoding="utf-8"))
    message = load_message(descriptor_set)
    on_message: Activation = {"msg": message}
    on_dict: Activation = {"msg": plain_twin()}

    kcel_typed, kcel_dyn = kcel_calls(descriptor_set)
    compilers: dict[str, tuple[Callable[[str], Call], Activation]] = {KCEL: (kcel_typed, on_message)}
    try:
        per_call, reused = cpp_calls(on_message)
        compilers[CPP] = (per_call, on_message)
        compilers[CPP_BOUND] = (reused, on_message)
    except ImportError as err:
        print(f"{CPP}: not installed ({err.name}); timing kcel alone")
    compilers[DICT] = (kcel_dyn, on_dict)

    cases, planned, na = plan(compilers, kcel_typed, on_message, int(args.target_ms * 1_000_000))
    timings = measure({f"{case_id} / {name}": run for (case_id, name), run in cases.items()}, args.repeat, args.warmup)
    cells: dict[str, dict[str, Cell]] = {case.id: {} for case in CASES}
    for (case_id, name), timing in zip(cases, timings, strict=True):
        loops, value = planned[case_id, name]
        cells[case_id][name] = Cell(timing, loops, value)

    print(f"{args.repeat} rounds, all cells round-robin, ~{args.target_ms:g} ms per sample; per call: median (IQR)")
    print(
        f"msg: {MESSAGE}. C++ = cel-expr-python, eval(data={{'msg': message}}): copies the message in on every call;"
        "\nC++ bound = cel-expr-python on one env.Activation built once; kcel dict = kcel on the plain dict, `dyn`."
        "\nC++/kcel and bound/kcel > 1: kcel faster; msg/dict > 1: kcel is slower on the message than on the dict.\n"
    )
    for case in CASES:
        print(f"  {case.id:<26} {case.expr}")
    print()
    print(render(cells))
    if na:
        print("\n".join(na))
    if args.json:
        write_json(
            args.json,
            "proto",
            timings,
            samples="each sample is `loops` calls; divide by loops for one call",
            repeat=args.repeat,
            warmup=args.warmup,
            target_ms=args.target_ms,
            expressions={case.id: case.expr for case in CASES},
            cells={
                f"{case_id} / {name}": {"loops": cell.loops, "median_us": cell.median_us, "result": repr(cell.result)}
                for case_id, row in cells.items()
                for name, cell in row.items()
            },
            na=na,
        )


if __name__ == "__main__":
    main()
