"""Differential fuzzing: generated well-typed expressions (strategies.py) evaluated every way kcel can, and by
cel-expr-python, the C++ engine, wherever its semantics are cel-go's.

For every case:

- kcel's three program variants, `evaluate`, `evaluate_with_cost` and `explain`, give the same value or the same
  error (class and text), and nothing but `kcel.CelError` leaves `compile` nor `kcel.EvalError` an evaluation;
- the metered variant stops with `CostLimitExceeded` one unit below the cost it reports, and not at it;
- cel-expr-python gives the same value (CEL types kept: `true` is not `1`, `1u` is not `1`) or also an error (the
  two engines word errors differently). Where it cannot compile what kcel compiles because it lacks a feature
  (two-variable comprehensions, the lists extension, cross-type numeric comparisons at check time), the case is
  compared among kcel's variants only.

cel-cpp is not cel-go. Where they differ, kcel follows cel-go, and a disagreement is attributed to one of the known
differences in `KNOWN_DIFFERENCES` below when the case used that feature or an engine's error names it; any other
disagreement fails. Each entry states the difference, the cel-go source that decides it (google/cel-go, file:line at
commit 14f6746a) and any further evidence; `test_known_difference_is_still_one` checks each with an example, and
`bench/fuzz.py --show-known` prints the shortest generated case of each.

Not attributed but avoided: cel-cpp stops a comprehension after 10,000 iterations (cel-go has no such budget;
Kubernetes bounds loops by cost), and the generated lists are small; cel-expr-python cannot return an optional
value to Python, so no case has an optional result; it cuts activation strings and bytes at a NUL character, so a
case whose variables hold one is compared among kcel's variants only; it returns map keys as plain ints (a map's
`1` and `1u` keys compare equal here) and times as datetime/timedelta (compared to the microsecond). It lacks
two-variable comprehensions and the lists extension, and its checker has no cross-type numeric comparisons
(`1 < 1u`, which Kubernetes enables: apiserver pkg/cel/environment/base.go `cel.CrossTypeNumericComparisons(true)`),
so those cases are compared among kcel's variants only.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcel
from kcel.errors import CostLimitExceeded
from kcel.temporal import Duration, Timestamp
from kcel.values import Optional, TypeValue, Uint

from .strategies import (
    DECLARATIONS,
    DYN_VALUES,
    EPOCH,
    VARIABLES,
    Case,
    CelType,
    activations,
    cases,
    cpp_value,
    has_optional,
)


@dataclass(frozen=True)
class KnownDifference:
    """Where cel-cpp is not cel-go: what each does, the cel-go source that decides, and how a case shows it (the
    features it used, cel-cpp's error text, kcel's error class)."""

    cel_go: str
    cel_cpp: str
    source: str
    features: frozenset[str] = frozenset()
    cpp_errors: tuple[str, ...] = ()
    kcel_errors: tuple[str, ...] = ()
    shows: Callable[[str, Outcome, Outcome], bool] | None = None  # (expression, kcel's, cel-cpp's): this difference


def _empty_membership(expr: str, ours: Outcome, theirs: Outcome) -> bool:
    """kcel answered false where cel-cpp failed, and the expression tests membership in an empty literal list."""
    return re.search(r"\bin \[\]", expr) is not None and ours.value == ("bool", False) and theirs.failed


KNOWN_DIFFERENCES: dict[str, KnownDifference] = {
    "empty_constant_membership": KnownDifference(
        "`x in []` is false without evaluating x: the planner folds a membership test in an empty constant list",
        "evaluates x first: `l[0] in []` fails on an empty l",
        "interpreter/decorators.go maybeOptimizeSetMembership (`list.Size() == 0` -> NewConstValue(false)), under "
        "OptOptimize",
        shows=_empty_membership,
    ),
    "repeated_map_keys": KnownDifference(
        "{'a': 1, 'a': 2} is {'a': 2}: a later key replaces the entry",
        "raises `duplicate key in map`",
        "interpreter/interpretable.go:697 `entries[keyVal] = valVal`; conformance/celspec_skips.txt: cel-go skips "
        "cel-spec's map_value_repeat_key tests",
        frozenset({"map_literal"}), ("duplicate key in map",),
    ),
    "program_time_errors": KnownDifference(
        "a constant conversion that fails (`int('x')`, `timestamp('bad')`, a bad regex) fails the program when it "
        "is built, even in a branch never taken: kcel's PlanError",
        "evaluates lazily: `false ? int('x') : 1` is 1",
        "interpreter/decorators.go:118,177-179 (maybeOptimizeConstUnary under OptOptimize, which Kubernetes sets: "
        "apiserver pkg/cel/environment/base.go `cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)`)",
        kcel_errors=("PlanError",),
    ),
    "presence_test": KnownDifference(
        "`has(x.f)`, `x.?f` and `x[?k]` on a value that is no map or list are false and optional.none()",
        "errors: `Applying SELECT to non-message type`, no overload `_?._` or `_[?_]`",
        "interpreter/attributes.go:1421 `if presenceTest && !errorOnBadPresenceTest` (Kubernetes leaves the "
        "option off)",
        cpp_errors=(
            "Applying SELECT to non-message type", "No matching overloads found : _?._",
            "No matching overloads found : _[?_]",
        ),
    ),
    "free_type_range": KnownDifference(
        "a comprehension over an expression whose type is still a type parameter (`{}[k].map(v, ...)`) type-checks",
        "refuses it: `expression of type 'dyn' cannot be the range of a comprehension`",
        "checker/checker.go:578 `case types.DynKind, types.ErrorKind, types.TypeParamKind`",
        cpp_errors=("cannot be the range of a comprehension",),
    ),
    "optional_dyn_element": KnownDifference(
        "an optional list element or map entry of type dyn (`[?dyn(l)[?0]]`) type-checks",
        "refuses it: `expected type 'optional_type(dyn)' but found 'dyn'`",
        "checker/checker.go:439 `if !isOptional && !isDyn(elemType)`",
        cpp_errors=("expected type 'optional_type(",),
    ),
    "base64_spaces": KnownDifference(
        "Go's base64.StdEncoding (then RawStdEncoding): only \\r and \\n are skipped, base64.decode('YW Jj') fails",
        "skips any whitespace: b'abc'",
        "ext/encoders.go:99-107 `base64.StdEncoding.DecodeString`", frozenset({"base64_decode"}),
    ),
    "double_text": KnownDifference(
        "string(double('inf')) is `+Inf` and NaN is `NaN` (Go's %g)", "`inf`, `nan`",
        "common/types/double.go:141 `fmt.Sprintf(\"%g\", ...)`", frozenset({"double_text"}),
    ),
    "duration_text": KnownDifference(
        "string(duration('-1.5s')) is `-1.5s`", "`-1.500s` (protobuf JSON)",
        "common/types/duration.go:125 `FormatFloat(d.Seconds(), 'f', -1, 64) + \"s\"`", frozenset({"duration_text"}),
    ),
    "timestamp_text": KnownDifference(
        "string(timestamp('2009-02-13T23:31:30.5+01:00')) keeps the offset it was written with",
        "prints UTC: `2009-02-13T22:31:30.500Z`",
        "common/types/timestamp.go:113 `t.Format(time.RFC3339Nano)` on the parsed time", frozenset({"timestamp_text"}),
    ),
    "duration_parse": KnownDifference(
        "Go's time.ParseDuration: duration('2562048h') fails (int64 nanoseconds, about ±292 years); `1µs` is a "
        "microsecond",
        "accepts protobuf's ±10,000 years; refuses `µs`",
        "common/types/string.go:121 `time.ParseDuration`", frozenset({"duration_parse"}),
    ),
    "timestamp_parse": KnownDifference(
        "Go's time.Parse(time.RFC3339): a four-digit year, two-digit fields, upper-case T and Z; "
        "timestamp('020-01-01T00:00:00Z') fails",
        "absl's parser is laxer: year 20",
        "common/types/string.go:125 `time.Parse(time.RFC3339, ...)`", frozenset({"timestamp_parse"}),
    ),
    "duration_milliseconds": KnownDifference(
        "duration('-1.5s').getMilliseconds() is -1500 (the whole duration)", "-500 (the milliseconds field)",
        "common/types/duration.go:226 `dur.Milliseconds()`; conformance/celspec_skips.txt: cel-go skips cel-spec's "
        "get_milliseconds",
        frozenset({"duration_milliseconds"}),
    ),
    "string_to_number": KnownDifference(
        "Go's strconv: int(' 1') and double(' 1') fail, double('+nan') fails, double('1_000.5') is 1000.5, "
        "double('1e400') fails (out of range)",
        "absl: spaces and `+nan` accepted, underscores refused, `1e400` is inf",
        "common/types/string.go:103,107,111 `strconv.ParseInt/ParseUint/ParseFloat`", frozenset({"string_to_number"}),
    ),
    "index_of_offset": KnownDifference(
        "'abc'.indexOf('b', 5) is -1", "error `index out of range: 5`",
        "ext/strings.go:679 `If the offset exceeds the length, return -1 rather than error`; "
        "conformance/celspec_skips.txt: cel-go skips cel-spec's indexof_out_of_range",
        frozenset({"index_of_offset"}), ("index out of range",),
    ),
    "split": KnownDifference(
        "''.split('') is []", '[""]', "ext/strings.go:766 `strings.Split(str, sep)`", frozenset({"split"})
    ),
    "regex": KnownDifference(
        "Go's regexp syntax: matching `\\C` is an error", "RE2 takes `\\C` (any byte)",
        "common/types/string.go:156 `regexp.MatchString`", frozenset({"regex"}),
    ),
    "format": KnownDifference(
        "the strings extension at Kubernetes' version 2: `%e` prints `1.234568×10⁰⁴`, `%.2f` groups digits "
        "(`1,234,567.00`), `%s` of a list quotes its strings and prints its doubles as `%.6f`",
        "cel-spec's newer formatting: `1.234568e+04`, `1234567.00`, `[a, 1.5]`",
        "ext/strings.go:515 (version 4 brings the new formatter; before it ext/formatting.go:309 "
        "`message.NewPrinter(locale)` and :62-70 for list members)",
        frozenset({"format"}),
    ),
}  # fmt: skip
# Features cel-expr-python does not have: kcel compiles the case, cel-cpp cannot (compared among kcel's variants).
CPP_LACKS = frozenset({"two_var", "lists_ext", "cross_numeric_static"})
COST_LIMIT = 10**12  # far above anything a generated case spends
TOO_DEEP = "value nested too deeply to evaluate"  # a value past Python's recursion limit (a hostile one)


# --- outcomes -------------------------------------------------------------------------------------------------------


def tagged(value: Any, depth: int = 0) -> Any:
    """A comparable form of a kcel value that keeps CEL types apart (Python says True == 1 == 1.0 == 1u).

    Past 100 levels a value (a hostile input handed back, which may contain itself) is compared by identity."""
    if depth > 100:
        return ("deep", id(value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, Uint):
        return ("uint", int(value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("double", repr(value))  # NaN equals NaN here; -0.0 stays apart from 0.0
    if isinstance(value, (str, bytes)):
        return (type(value).__name__, value)
    if value is None:
        return ("null",)
    if isinstance(value, (list, tuple)):  # kcel builds constant lists as tuples
        return ("list", [tagged(v, depth + 1) for v in value])
    if isinstance(value, Mapping):
        return ("map", sorted((repr(_key(k)), tagged(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, Timestamp):
        return ("timestamp", value.nanos)
    if isinstance(value, Duration):
        return ("duration", value.nanos)
    if isinstance(value, Optional):
        return ("optional", tagged(value.value, depth + 1) if value.has_value() else None)
    if isinstance(value, TypeValue):
        return ("type", value.name)
    return ("other", type(value).__name__, repr(value))


def _key(key: Any) -> Any:
    """Map keys as cel-expr-python returns them (plain ints for int and uint keys)."""
    return ("number", int(key)) if isinstance(key, int) and not isinstance(key, bool) else tagged(key)


def microseconds(value: Any) -> Any:
    """cel-expr-python returns datetimes and timedeltas (microseconds): compare kcel's time values at that grain."""
    if isinstance(value, tuple) and value and value[0] in ("timestamp", "duration"):
        kind, nanos = value
        # a time is floored to the microsecond, a duration truncated towards zero
        return (kind, nanos // 1000 if kind == "timestamp" or nanos >= 0 else -(-nanos // 1000))
    if isinstance(value, tuple) and value and value[0] in ("list", "map"):
        if value[0] == "list":
            return ("list", [microseconds(v) for v in value[1]])
        return ("map", [(k, microseconds(v)) for k, v in value[1]])
    return value


@dataclass(frozen=True)
class Outcome:
    """What one evaluation gave: a value (tagged) or an error (its class and text)."""

    value: Any = None
    error: str | None = None
    kind: str = ""  # the error's class name

    @property
    def failed(self) -> bool:
        return self.error is not None

    def __str__(self) -> str:
        return f"error {self.kind}: {self.error}" if self.failed else f"value {self.value!r}"


class ForeignException(AssertionError):
    """kcel let something other than its own errors escape."""


def kcel_call(what: str, call: Any) -> Outcome:
    """The outcome of one kcel evaluation; `ForeignException` if it raised anything but an EvalError."""
    try:
        value = call()
    except kcel.EvalError as err:
        return Outcome(error=str(err), kind=type(err).__name__)
    except Exception as err:  # what this test is about: nothing else may escape
        raise ForeignException(f"{what} raised {type(err).__name__}: {err}") from err
    return Outcome(tagged(value))


# --- cel-expr-python ------------------------------------------------------------------------------------------------


class Cpp:
    """cel-expr-python with the declarations and the extensions that match kcel's libraries."""

    def __init__(self, variables: Mapping[str, CelType]) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

        self.cel = cel
        extensions = [ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_math.ExtMath(),
                      ext_encoders.ExtEncoders(), ext_bindings.ExtBindings()]  # fmt: skip
        self.env = cel.NewEnv(variables={n: self.type(t) for n, t in variables.items()}, extensions=extensions)

    def type(self, t: CelType) -> Any:
        cel = self.cel
        names = {
            "int": cel.Type.INT, "uint": cel.Type.UINT, "double": cel.Type.DOUBLE, "string": cel.Type.STRING,
            "bytes": cel.Type.BYTES, "bool": cel.Type.BOOL, "null_type": cel.Type.NULL, "dyn": cel.Type.DYN,
            "google.protobuf.Duration": cel.Type.DURATION, "google.protobuf.Timestamp": cel.Type.TIMESTAMP,
        }  # fmt: skip
        if isinstance(t, str):
            return names[t]
        if t[0] == "list":
            return cel.Type.List(self.type(t[1]))
        return cel.Type.Map(self.type(t[1]), self.type(t[2]))

    def run(self, expr: str, activation: Mapping[str, Any]) -> tuple[str, Outcome]:
        """("compile", error) when cel-cpp rejects the expression, else ("eval", outcome)."""
        try:
            compiled = self.env.compile(expr)
        except Exception as err:  # cel-expr-python reports every compile failure as some exception
            return "compile", Outcome(error=str(err), kind="compile")
        try:
            result = compiled.eval(data={name: cpp_value(v) for name, v in activation.items()})
        except Exception as err:  # some evaluation errors (a repeated map key) are raised, not returned
            return "eval", Outcome(error=str(err), kind="raised")
        if result.type() == self.cel.Type.ERROR:
            try:
                text = str(result.value())
            except Exception:  # an error text that is not UTF-8 cannot come back to Python
                text = "(unreadable error text)"
            return "eval", Outcome(error=text, kind="error")
        try:
            return "eval", Outcome(self.tagged(result))
        except _Opaque as err:
            return "eval", Outcome(error=f"cannot convert: {err}", kind="opaque")

    def tagged(self, value: Any) -> Any:
        """A cel-cpp value in the form of `tagged` (times in microseconds)."""
        kind = value.type().name()
        try:
            plain = value.value()
        except TypeError:  # a string that is not UTF-8 (cel-cpp lets `%s` of bytes make one) cannot come back
            raise _Opaque(kind) from None
        if kind in ("BOOL", "INT", "UINT", "STRING"):
            return ({"BOOL": "bool", "INT": "int", "UINT": "uint", "STRING": "str"}[kind], plain)
        if kind == "DOUBLE":
            return ("double", repr(plain))
        if kind == "BYTES":
            return ("bytes", bytes(plain))
        if kind == "NULL":
            return ("null",)
        if kind == "TIMESTAMP":
            delta = plain - EPOCH
            return ("timestamp", (delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds)
        if kind == "DURATION":
            return ("duration", (plain.days * 86400 + plain.seconds) * 10**6 + plain.microseconds)
        if kind.startswith("LIST"):
            return ("list", [self.tagged(v) for v in plain])
        if kind.startswith("MAP"):
            return ("map", sorted((repr(_key(k)), self.tagged(v)) for k, v in plain.items()))
        raise _Opaque(kind)


class _Opaque(Exception):
    """A cel-cpp value this test does not convert (optionals, types)."""


def cpp_engine() -> Cpp | None:
    try:
        return Cpp(VARIABLES)
    except ImportError:  # cel-expr-python is only in the test extra on some platforms
        return None


# --- one case -------------------------------------------------------------------------------------------------------


@dataclass
class Result:
    """What checking one case found: how far kcel got with it, how the comparison with cel-cpp went, problems."""

    stage: str = "compile error"  # kcel's checker refused it; "plan error" (a literal argument failed), "compiled"
    kcel: Outcome | None = None
    cpp: str = "not run"  # "agree", "kcel only: <feature>", "known: <key>", "disagree", "not run"
    problems: list[str] = field(default_factory=list)


_ENVS: dict[bool, kcel.Env] = {}


def kcel_env(all_dyn: bool = False) -> kcel.Env:
    if all_dyn not in _ENVS:
        _ENVS[all_dyn] = kcel.Env(variables={n: "dyn" for n in VARIABLES} if all_dyn else DECLARATIONS)
    return _ENVS[all_dyn]


def check(case: Case, activation: Mapping[str, Any], cpp: Cpp | None, all_dyn: bool = False) -> Result:
    """Run one case every way and collect what disagrees; `ForeignException` for anything kcel must not raise."""
    result = Result()
    try:
        program = kcel_env(all_dyn).compile(case.expr)
    except kcel.CompileError:
        return result
    except kcel.CelError as err:  # PlanError: a literal argument failed when the program was built
        result.stage = "plan error"
        result.kcel = Outcome(error=str(err), kind=type(err).__name__)
    except Exception as err:
        raise ForeignException(f"compile raised {type(err).__name__}: {err}") from err
    else:
        result.stage = "compiled"
        result.kcel = variants(program, activation, result.problems)
    if cpp is not None and not all_dyn:
        compare_with_cpp(case, activation, result, cpp)
    return result


TRACKER_PANIC = "internal error: interface conversion: "  # the lists extension's cost trackers (tests/golden/README.md)


def variants(program: kcel.Program, activation: Mapping[str, Any], problems: list[str]) -> Outcome:
    """The three variants agree; the metered one stops exactly past its own cost."""
    plain = kcel_call("evaluate", lambda: program.evaluate(activation))
    metered = kcel_call("evaluate_with_cost", lambda: program.evaluate_with_cost(activation, COST_LIMIT)[0])
    try:
        explained = program.explain(activation)
    except Exception as err:  # explain reports errors in its result, it never raises
        raise ForeignException(f"explain raised {type(err).__name__}: {err}") from err
    if explained.error is not None:
        traced = Outcome(error=str(explained.error), kind=type(explained.error).__name__)
    else:
        traced = Outcome(tagged(explained.value))
    for name, other in (("evaluate_with_cost", metered), ("explain", traced)):
        if other != plain and TOO_DEEP not in (other.error, plain.error):  # the variants recurse to different depths
            if name == "evaluate_with_cost" and plain.failed and (other.error or "").startswith(TRACKER_PANIC):
                continue  # cel-go's list cost trackers panic on what they do not expect, only when cost is tracked
            problems.append(f"evaluate gave {plain}, {name} gave {other}")
    cost = _cost(program, activation)
    if cost is not None and cost > 0:
        at = kcel_call("evaluate_with_cost at its cost", lambda: program.evaluate_with_cost(activation, cost)[0])
        if at != metered:
            problems.append(f"cost limit {cost} (the cost spent) changed the outcome: {at}")
        below = kcel_call("below its cost", lambda: program.evaluate_with_cost(activation, cost - 1)[0])
        if below.kind != CostLimitExceeded.__name__ and below != metered:
            problems.append(f"cost limit {cost - 1} gave {below}, not the cost limit error")
        if below.kind != CostLimitExceeded.__name__ and not metered.failed:
            problems.append(f"cost limit {cost - 1}, one below the cost spent, did not stop the evaluation")
    return plain


def _cost(program: kcel.Program, activation: Mapping[str, Any]) -> int | None:
    try:
        return program.evaluate_with_cost(activation, COST_LIMIT)[1]
    except kcel.EvalError as err:
        return err.cost


def compare_with_cpp(case: Case, activation: Mapping[str, Any], result: Result, cpp: Cpp) -> None:
    lacking = sorted(case.features & CPP_LACKS)
    if has_optional(case.type):
        result.cpp = "kcel only: optional result"
        return
    untaken = _cpp_cannot_take([value for name, value in activation.items() if _mentions(case.expr, name)])
    if untaken:
        result.cpp = f"kcel only: {untaken}"
        return
    stage, theirs = cpp.run(case.expr, activation)
    ours = result.kcel
    assert ours is not None
    if stage == "compile":
        known = attribute(case, theirs, by_features=False)
        if lacking or known:
            result.cpp = f"kcel only: {lacking[0]}" if lacking else f"known: {known}"
        else:
            result.cpp = "disagree"
            result.problems.append(f"kcel compiles it ({ours}), cel-cpp does not: {theirs.error}")
        return
    if ours.failed and theirs.failed:
        result.cpp = "agree"
        return
    if not ours.failed and not theirs.failed and microseconds(ours.value) == theirs.value:
        result.cpp = "agree"
        return
    known = attribute(case, theirs, ours)
    if known is not None:
        result.cpp = f"known: {known}"
        return
    result.cpp = "disagree"
    result.problems.append(f"kcel gave {ours}, cel-cpp gave {theirs}")


def attribute(case: Case, theirs: Outcome, ours: Outcome | None = None, by_features: bool = True) -> str | None:
    """The known difference that explains a disagreement: one whose cel-cpp error text or kcel error class shows,
    in a case that used its features if it names any; else (`by_features`) one whose features the case used."""
    for key, known in KNOWN_DIFFERENCES.items():
        if known.shows is not None and ours is not None and known.shows(case.expr, ours, theirs):
            return key
        used = not known.features or bool(case.features & known.features)
        if used and theirs.error is not None and any(text in theirs.error for text in known.cpp_errors):
            return key
        if used and ours is not None and ours.kind in known.kcel_errors:
            return key
    for key, known in KNOWN_DIFFERENCES.items():
        if by_features and case.features & known.features:
            return key
    return None


def _cpp_cannot_take(value: Any) -> str | None:
    """Why cel-expr-python cannot be given this value as it is: it cuts strings and bytes at a NUL character and
    reads datetime.min and datetime.max as the infinite past and future."""
    if isinstance(value, str) and "\0" in value or isinstance(value, bytes) and b"\0" in value:
        return "NUL in a string"
    if isinstance(value, datetime) and value.replace(tzinfo=None) in (datetime.min, datetime.max):
        return "datetime.min or datetime.max"
    if isinstance(value, (list, tuple)):
        return next((why for why in map(_cpp_cannot_take, value) if why), None)
    if isinstance(value, Mapping):
        return next((why for why in map(_cpp_cannot_take, [*value, *value.values()]) if why), None)
    return None


def describe(case: Case, activation: Mapping[str, Any], result: Result) -> str:
    shown = {name: activation[name] for name in sorted(VARIABLES) if name in activation and _mentions(case.expr, name)}
    return (
        f"{case.expr}\n  type: {case.type}, features: {sorted(case.features)}\n  activation: {_SHORT.repr(shown)}\n  "
        + ("\n  ".join(result.problems))
    )


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict = 6, 60, 60, 8, 8


def _mentions(expr: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![\w.]){re.escape(name)}\b", expr) is not None


# --- hostile activations --------------------------------------------------------------------------------------------
# Values of every wrong type kcel may be handed: containers CEL has no type for, ints past 64 bits, subclasses,
# naive and out-of-range times, kcel's own value classes, lists that contain themselves or nest 20,000 deep. Not
# objects whose own `__eq__` or `__hash__` raise: their exception is the caller's bug surfacing, as it does through
# `json.dumps`, and wrapping it would also hide kcel's own bugs from this test.


class _StrSub(str):
    pass


class _FloatSub(float):
    pass


def _cycle() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


HOSTILE_SCALARS = st.one_of(
    st.sampled_from([
        (1, 2), frozenset({1}), {1, 2}, object(), 2**64, -(2**63) - 1, 2**100, Uint(2**64), Uint(-1),
        1 + 2j, bytearray(b"ab"), memoryview(b"ab"), _StrSub("a"), _FloatSub(1.5), math.nan, math.inf,
        datetime(2020, 1, 1), datetime(1, 1, 1), datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        timedelta(days=10**6), timedelta(0), Optional(1), Optional(),
        TypeValue("int"), Timestamp(0), Duration(1), range(3), print, type, Ellipsis, NotImplemented,
        {(1, 2): 3}, {None: 1}, {1.5: "a"}, [[[]]],
    ]),
    st.builds(_cycle), st.builds(lambda: {"a": {"b": _cycle()}}), st.builds(_deep, st.sampled_from([3000, 20000])),
    DYN_VALUES,
)  # fmt: skip
HOSTILE = st.recursive(
    HOSTILE_SCALARS,
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(["a", "b", 1]), c, max_size=3)),
    max_leaves=4,
)


def hostile_activations() -> st.SearchStrategy[dict[str, Any]]:
    """Any Python value for every variable (declared `dyn`), some missing altogether."""
    return st.dictionaries(st.sampled_from(sorted(VARIABLES)), HOSTILE, max_size=len(VARIABLES))


# --- the tests ------------------------------------------------------------------------------------------------------

CPP = cpp_engine()
CI = settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@CI
@given(cases(), activations())
def test_variants_and_cel_cpp_agree(case: Case, activation: dict[str, Any]) -> None:
    """The property of the module docstring, over well-typed expressions and activations of the declared types."""
    result = check(case, activation, CPP)
    assert not result.problems, describe(case, activation, result)


@settings(CI, max_examples=300)
@given(cases(), hostile_activations())
def test_only_cel_errors_escape_whatever_the_activation(case: Case, activation: dict[str, Any]) -> None:
    """Variables declared `dyn` and bound to anything at all (or to nothing): kcel answers or raises EvalError."""
    result = check(case, activation, None, all_dyn=True)
    assert not result.problems, describe(case, activation, result)


def test_most_generated_cases_compile() -> None:
    """The generator builds well-typed expressions: nearly all must get past kcel's checker."""
    outcomes: list[bool] = []

    @settings(CI, max_examples=200)
    @given(cases())
    def collect(case: Case) -> None:
        try:
            kcel_env().compile(case.expr)
            outcomes.append(True)
        except kcel.CelError as err:
            outcomes.append(not isinstance(err, kcel.CompileError))  # a PlanError got past the checker

    collect()
    assert sum(outcomes) / len(outcomes) > 0.95


# One case of each known difference, with cel-go's answer: kcel must give it, and cel-cpp must still differ (when it
# stops differing, the row of the table can go).
KNOWN_EXAMPLES: dict[str, tuple[str, CelType, set[str], Any]] = {
    "empty_constant_membership": ("[1][5] in []", "bool", set(), False),
    "repeated_map_keys": ("{'a': 1, 'a': 2}['a']", "int", {"map_literal"}, 2),
    "program_time_errors": ("false ? int('x') : 1", "int", set(), kcel.PlanError),
    "presence_test": ("has(dyn(1).a)", "bool", set(), False),
    "free_type_range": ("{}[2u].map(v, v + '')", ("list", "string"), set(), kcel.EvalError),
    "optional_dyn_element": ("[?dyn([1])[?0]]", ("list", "int"), set(), [1]),
    "base64_spaces": ("base64.decode('YW Jj')", "bytes", {"base64_decode"}, kcel.EvalError),
    "double_text": ("string(double('inf'))", "string", {"double_text"}, "+Inf"),
    "duration_text": ("string(duration('-1.5s'))", "string", {"duration_text"}, "-1.5s"),
    "timestamp_text": (
        "string(timestamp('2009-02-13T23:31:30.5+01:00'))", "string", {"timestamp_text"},
        "2009-02-13T23:31:30.5+01:00",
    ),
    "duration_parse": ("duration('1µs') == duration('1us')", "bool", {"duration_parse"}, True),
    "timestamp_parse": (
        "timestamp('020-01-01T00:00:00' + 'Z')", "google.protobuf.Timestamp", {"timestamp_parse"}, kcel.EvalError,
    ),
    "duration_milliseconds": ("duration('-1.5s').getMilliseconds()", "int", {"duration_milliseconds"}, -1500),
    "string_to_number": ("double('1_000.5')", "double", {"string_to_number"}, 1000.5),
    "index_of_offset": ("'abc'.indexOf('b', 5)", "int", {"index_of_offset"}, -1),
    "split": ("''.split('')", ("list", "string"), {"split"}, []),
    "regex": ("'a'.matches('\\\\C' + 'a')", "bool", {"regex"}, kcel.EvalError),
    "format": ("'%e'.format([12345.678])", "string", {"format"}, "1.234568\u00d710\u2070\u2074"),
}  # fmt: skip


def test_every_known_difference_has_an_example() -> None:
    assert sorted(KNOWN_EXAMPLES) == sorted(KNOWN_DIFFERENCES)


@pytest.mark.skipif(CPP is None, reason="cel-expr-python is not installed")
@pytest.mark.parametrize("key", sorted(KNOWN_EXAMPLES))
def test_known_difference_is_still_one(key: str) -> None:
    assert CPP is not None
    expr, t, features, expected = KNOWN_EXAMPLES[key]
    result = check(Case(expr, t, features), {}, CPP)
    assert result.kcel is not None and not result.problems
    if isinstance(expected, type):
        assert result.kcel.kind == expected.__name__
    else:
        assert result.kcel.value == tagged(expected)
    assert result.cpp == f"known: {key}"


@pytest.mark.skipif(CPP is None, reason="cel-expr-python is not installed")
def test_cel_cpp_harness_sees_types() -> None:
    """The comparison keeps CEL types apart: `true` is not `1`, `1u` is not `1`, `1.0` is not `1`."""
    assert CPP is not None
    assert CPP.run("[true, 1, 1u, 1.0, b'a', null]", {})[1].value == tagged([True, 1, Uint(1), 1.0, b"a", None])
    assert CPP.run("1 / 0", {})[1].failed
    assert CPP.run("dyn(1) == 1u", {})[1].value == tagged(True)
