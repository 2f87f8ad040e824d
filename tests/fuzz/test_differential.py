"""Differential fuzzing: generated well-typed expressions (strategies.py) evaluated every way kcel can, and by
cel-expr-python, the C++ engine, wherever its semantics are cel-go's.

For every case:

- kcel's three program variants, `evaluate`, `evaluate_with_cost` and `explain`, give the same value or the same
  error (class and text), and nothing but `kcel.CelError` leaves `compile` nor `kcel.EvalError` an evaluation;
- the metered variant stops with `CostLimitExceeded` one unit below the cost it reports, and not at it;
- cel-expr-python gives the same value (CEL types kept: `true` is not `1`, `1u` is not `1`) or an error that says the
  same (the two engines word errors differently: `SAME_ERRORS` pairs their texts). Where it cannot
  compile what kcel compiles because it lacks a feature
  (two-variable comprehensions, the lists extension, cross-type numeric comparisons at check time), the case is
  compared among kcel's variants only.

cel-cpp is not cel-go. Where they differ, kcel follows cel-go, and a disagreement is put down to one of the known
differences in `KNOWN_DIFFERENCES` only when that difference's predicate recognises it: its error texts, the values
it produces, or the case agreeing once the differing construct is rewritten away; never because the case merely
used a feature. Any other disagreement fails. Each entry states the difference and the cel-go source that decides
it (google/cel-go, file:line at commit 14f6746a); `test_known_difference_is_still_one` checks each with an example
and its control without the construct, `test_planted_bugs_are_findings` plants wrong answers in kcel and expects
findings, and `bench/fuzz.py --show-known` prints the shortest generated case of each.

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
from decimal import Decimal
from types import SimpleNamespace
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


# --- known differences ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One disagreement with cel-cpp, as a known difference's predicate sees it."""

    case: Case
    activation: Mapping[str, Any]
    stage: str  # where cel-cpp stopped: "compile" or "eval"
    ours: Outcome
    theirs: Outcome
    cpp: Cpp

    @property
    def expr(self) -> str:
        return self.case.expr

    def cpp_error(self, *texts: str) -> bool:
        """cel-cpp failed with one of these texts."""
        return self.theirs.error is not None and any(text in self.theirs.error for text in texts)


@dataclass(frozen=True)
class KnownDifference:
    """Where cel-cpp is not cel-go: what each does, the cel-go source that decides, and `shows`, the predicate that
    recognises exactly this difference in a disagreement (its error texts, or the values it produces, or the case
    agreeing once the differing construct is taken out), never a feature merely being present."""

    cel_go: str
    cel_cpp: str
    source: str
    shows: Callable[[Seen], bool]


_STRING = r"(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"  # a CEL string literal as strategies.cel_string writes it
_NUMBER = r"(?:\(-?[\w.+-]+\)|-?[\w.+-]+)"  # an int, uint or double literal, parenthesised when negative
_CONVERSION = re.compile(rf"(?<![\w.])(int|uint|double|duration|timestamp|bytes|string|bool)\(({_STRING}|{_NUMBER})\)")
_PATTERN = re.compile(rf"matches\((?:[^()]*, )?({_STRING})\)")
_PRESENCE = {
    "Applying SELECT to non-message type": ("has(", ".?"),
    "No matching overloads found : _?._": (".?",),
    "No matching overloads found : _[?_]": ("[?",),
}


def _probes(expr: str) -> list[str]:
    """The constant conversions (`int('x')`) and literal regexes of an expression, as expressions of their own."""
    return [m.group(0) for m in _CONVERSION.finditer(expr)] + [
        f"''.matches({m.group(1)})" for m in _PATTERN.finditer(expr)
    ]


def _kcel_alone(expr: str) -> Outcome:
    """kcel's outcome for a closed expression (a probe), a compile-time failure included."""
    try:
        program = kcel_env().compile(expr)
    except kcel.CelError as err:
        return Outcome(error=str(err), kind=type(err).__name__)
    return kcel_call("probe", lambda: program.evaluate({}))


def _agrees_without(seen: Seen, rewritten: str, *, ours: bool) -> bool:
    """The case with the differing construct rewritten (for kcel when `ours`, else for cel-cpp) agrees."""
    if rewritten == seen.expr:
        return False
    if ours:
        try:
            program = kcel_env().compile(rewritten)
        except kcel.CelError:
            return False
        return same(kcel_call("rewritten", lambda: program.evaluate(seen.activation)), seen.theirs)
    stage, theirs = seen.cpp.run(rewritten, seen.activation)
    return stage == "eval" and same(seen.ours, theirs)


def _receiver_start(expr: str, dot: int) -> int:
    """Where the receiver of the member call whose `.` is at `dot` starts (identifiers, dots, bracketed groups)."""
    i = dot
    while i > 0:
        ch = expr[i - 1]
        if ch in ")]":
            depth, j = 0, i - 1
            while j >= 0:
                depth += expr[j] in ")]"
                depth -= expr[j] in "(["
                if depth == 0:
                    break
                j -= 1
            i = j
        elif ch.isalnum() or ch in "_.":
            i -= 1
        else:
            break
    return i


def _wrap_calls(expr: str, call: str, wrap: Callable[[str], str]) -> str:
    """Every `<receiver>.<call>` of the expression replaced by `wrap(<receiver>.<call>)`, right to left."""
    at = expr.rfind(call)
    while at >= 0:
        start = _receiver_start(expr, at)
        expr = expr[:start] + wrap(expr[start : at + len(call)]) + expr[at + len(call) :]
        at = expr.rfind(call, 0, start)
    return expr


def _empty_membership(seen: Seen) -> bool:
    """cel-cpp agrees once `(x in [])` is written `(x in [] && false)`: false even when x fails, as cel-go folds it."""
    return seen.stage == "eval" and _agrees_without(
        seen, re.sub(r" in \[\](?=\)|$)", " in [] && false", seen.expr), ours=False
    )


def _repeated_keys(seen: Seen) -> bool:
    """cel-cpp refused a map literal (of two or more entries) that repeats a key; or the literal repeats a key as an
    optional entry `?k: optional.none()`, which in cel-go deletes the earlier entry (kcel: no such key), while
    cel-cpp keeps it."""
    if seen.cpp_error("duplicate key in map"):
        return re.search(r"\{[^}]*: .*, .*: ", seen.expr) is not None
    deleted = any(
        re.search(rf"(?:\{{|, ){re.escape(m.group(1))}: ", seen.expr[: m.start()])
        for m in re.finditer(r"\?([\w.]+): optional\.none\(\)", seen.expr)
    )
    return deleted and (seen.ours.error or "").startswith("no such key") and not seen.theirs.failed


def _program_time(seen: Seen) -> bool:
    """kcel failed to build the program with the error of a constant conversion or regex of the case, which
    cel-cpp also refuses when that constant is evaluated alone."""
    if seen.ours.kind != "PlanError":
        return False
    for probe in _probes(seen.expr):
        alone = _kcel_alone(probe)
        if alone.kind == "PlanError" and alone.error == seen.ours.error and seen.cpp.run(probe, {})[1].failed:
            return True
    return False


def _presence(seen: Seen) -> bool:
    """cel-cpp refused a presence test (`has`, `.?`, `[?`) the case makes on something that is no map."""
    return any(
        seen.cpp_error(text) and any(c in seen.expr for c in constructs) for text, constructs in _PRESENCE.items()
    )


def _free_range(seen: Seen) -> bool:
    return seen.stage == "compile" and seen.cpp_error("cannot be the range of a comprehension")


def _optional_dyn(seen: Seen) -> bool:
    return (
        seen.stage == "compile"
        and seen.cpp_error("expected type 'optional_type(")
        and ("[?" in seen.expr or "{?" in seen.expr)
    )


def _base64(seen: Seen) -> bool:
    """kcel refused base64 text with a space that cel-cpp skipped."""
    return (
        "base64.decode(" in seen.expr
        and (seen.ours.error or "").startswith("illegal base64 data")
        and not seen.theirs.failed
    )


def _values_agree(seen: Seen, normalise: Callable[[str], str]) -> bool:
    """Both gave values that are equal once their strings are normalised (the difference's text taken out)."""

    def norm(value: Any) -> Any:
        if isinstance(value, tuple) and value[:1] == ("str",):
            return ("str", normalise(value[1]))
        if isinstance(value, tuple) and value[:1] == ("list",):
            return ("list", [norm(v) for v in value[1]])
        if isinstance(value, tuple) and value[:1] == ("map",):
            return ("map", [(k, norm(v)) for k, v in value[1]])
        return value

    ours, theirs = seen.ours, seen.theirs
    if ours.failed or theirs.failed or microseconds(ours.value) == theirs.value:
        return False
    return norm(microseconds(ours.value)) == norm(theirs.value)


def _double_text(seen: Seen) -> bool:
    return "string(" in seen.expr and _values_agree(
        seen, lambda s: s.replace("+Inf", "inf").replace("-Inf", "-inf").replace("NaN", "nan")
    )


def _seconds(match: re.Match[str]) -> str:
    return f"{Decimal(match.group(1)).normalize():f}s"


def _duration_text(seen: Seen) -> bool:
    return "string(" in seen.expr and _values_agree(seen, lambda s: re.sub(r"(-?\d+(?:\.\d+)?)s\b", _seconds, s))


def _utc(match: re.Match[str]) -> str:
    text = re.sub(r"(\.\d{6})\d+", r"\1", match.group(0)).replace("Z", "+00:00")
    return datetime.fromisoformat(text).astimezone(timezone.utc).isoformat()


def _timestamp_text(seen: Seen) -> bool:
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"
    return "string(" in seen.expr and _values_agree(seen, lambda s: re.sub(stamp, _utc, s))


def _parse(function: str) -> Callable[[Seen], bool]:
    """A literal of the case (`duration('1µs')`) that one engine parses and the other refuses, alone."""

    def shows(seen: Seen) -> bool:
        for probe in _probes(seen.expr):
            if probe.startswith(function + "("):
                ours, (_, theirs) = _kcel_alone(probe), seen.cpp.run(probe, {})
                if ours.failed != theirs.failed or not ours.failed and microseconds(ours.value) != theirs.value:
                    return True
        return False

    return shows


def _string_to_number(seen: Seen) -> bool:
    return any(_parse(f)(seen) for f in ("int", "uint", "double"))


def _milliseconds(seen: Seen) -> bool:
    """cel-cpp agrees once each `d.getMilliseconds()` of a duration is written as cel-go's whole milliseconds,
    `d.getSeconds() * 1000 + d.getMilliseconds()` (a timestamp's stays the field, as in both engines)."""

    def total(call: str) -> str:
        receiver = call.removesuffix(".getMilliseconds()")
        ms = "zms"
        return (
            f"cel.bind({ms}, {receiver}, type({ms}) == google.protobuf.Duration ? "
            f"{ms}.getSeconds() * 1000 + {ms}.getMilliseconds() : {ms}.getMilliseconds())"
        )

    return seen.stage == "eval" and _agrees_without(
        seen, _wrap_calls(seen.expr, ".getMilliseconds()", total), ours=False
    )


def _index_of(seen: Seen) -> bool:
    """cel-cpp refused an offset past the string's end that kcel (cel-go) answers with -1."""
    return "ndexOf(" in seen.expr and seen.cpp_error("index out of range") and not seen.ours.failed


def _split(seen: Seen) -> bool:
    """The values agree once cel-cpp's `[""]` (from `''.split('')`) is read as cel-go's `[]`."""

    def norm(value: Any) -> Any:
        if isinstance(value, tuple) and value[:1] == ("list",):
            return ("list", []) if value[1] == [("str", "")] else ("list", [norm(v) for v in value[1]])
        return value

    ours, theirs = seen.ours, seen.theirs
    return ".split(" in seen.expr and not ours.failed and not theirs.failed and norm(ours.value) == norm(theirs.value)


def _regex(seen: Seen) -> bool:
    """kcel (Go's regexp) refused `\\C`, which RE2 takes."""
    return "\\\\C" in seen.expr and "invalid escape sequence: `\\C`" in (seen.ours.error or "")


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _format_text(text: str) -> str:
    text = re.sub(r"×10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", lambda m: "e" + f"{int(m.group(1).translate(_SUPERSCRIPT)):+03d}", text)
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)


def _format(seen: Seen) -> bool:
    return ".format(" in seen.expr and _values_agree(seen, _format_text)


KNOWN_DIFFERENCES: dict[str, KnownDifference] = {
    "empty_constant_membership": KnownDifference(
        "`x in []` is false without evaluating x: the planner folds a membership test in an empty constant list",
        "evaluates x first: `l[0] in []` fails on an empty l",
        "interpreter/decorators.go maybeOptimizeSetMembership (`list.Size() == 0` -> NewConstValue(false)), under "
        "OptOptimize",
        _empty_membership,
    ),
    "repeated_map_keys": KnownDifference(
        "{'a': 1, 'a': 2} is {'a': 2}: a later key replaces the entry, and `{k: 1, ?k: optional.none()}` is {}",
        "raises `duplicate key in map`",
        "interpreter/interpretable.go:697 `entries[keyVal] = valVal` (`delete(entries, keyVal)` for a none); "
        "conformance/celspec_skips.txt: cel-go skips "
        "cel-spec's map_value_repeat_key tests",
        _repeated_keys,
    ),
    "program_time_errors": KnownDifference(
        "a constant conversion that fails (`int('x')`, `timestamp('bad')`, a bad regex) fails the program when it "
        "is built, even in a branch never taken: kcel's PlanError",
        "evaluates lazily: `false ? int('x') : 1` is 1",
        "interpreter/decorators.go:118,177-179 (maybeOptimizeConstUnary under OptOptimize, which Kubernetes sets: "
        "apiserver pkg/cel/environment/base.go `cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost)`)",
        _program_time,
    ),
    "presence_test": KnownDifference(
        "`has(x.f)`, `x.?f` and `x[?k]` on a value that is no map or list are false and optional.none()",
        "errors: `Applying SELECT to non-message type`, no overload `_?._` or `_[?_]`",
        "interpreter/attributes.go:1421 `if presenceTest && !errorOnBadPresenceTest` (Kubernetes leaves the "
        "option off)",
        _presence,
    ),
    "free_type_range": KnownDifference(
        "a comprehension over an expression whose type is still a type parameter (`{}[k].map(v, ...)`) type-checks",
        "refuses it: `expression of type 'dyn' cannot be the range of a comprehension`",
        "checker/checker.go:578 `case types.DynKind, types.ErrorKind, types.TypeParamKind`",
        _free_range,
    ),
    "optional_dyn_element": KnownDifference(
        "an optional list element or map entry of type dyn (`[?dyn(l)[?0]]`) type-checks",
        "refuses it: `expected type 'optional_type(dyn)' but found 'dyn'`",
        "checker/checker.go:439 `if !isOptional && !isDyn(elemType)`",
        _optional_dyn,
    ),
    "base64_spaces": KnownDifference(
        "Go's base64.StdEncoding (then RawStdEncoding): only \\r and \\n are skipped, base64.decode('YW Jj') fails",
        "skips any whitespace: b'abc'",
        "ext/encoders.go:99-107 `base64.StdEncoding.DecodeString`",
        _base64,
    ),
    "double_text": KnownDifference(
        "string(double('inf')) is `+Inf` and NaN is `NaN` (Go's %g)", "`inf`, `nan`",
        "common/types/double.go:141 `fmt.Sprintf(\"%g\", ...)`", _double_text,
    ),
    "duration_text": KnownDifference(
        "string(duration('-1.5s')) is `-1.5s`", "`-1.500s` (protobuf JSON)",
        "common/types/duration.go:125 `FormatFloat(d.Seconds(), 'f', -1, 64) + \"s\"`", _duration_text,
    ),
    "timestamp_text": KnownDifference(
        "string(timestamp('2009-02-13T23:31:30.5+01:00')) keeps the offset it was written with",
        "prints UTC: `2009-02-13T22:31:30.500Z`",
        "common/types/timestamp.go:113 `t.Format(time.RFC3339Nano)` on the parsed time", _timestamp_text,
    ),
    "duration_parse": KnownDifference(
        "Go's time.ParseDuration: duration('2562048h') fails (int64 nanoseconds, about ±292 years); `1µs` is a "
        "microsecond",
        "accepts protobuf's ±10,000 years; refuses `µs`",
        "common/types/string.go:121 `time.ParseDuration`", _parse("duration"),
    ),
    "timestamp_parse": KnownDifference(
        "Go's time.Parse(time.RFC3339): a four-digit year, two-digit fields, upper-case T and Z; "
        "timestamp('020-01-01T00:00:00Z') fails",
        "absl's parser is laxer: year 20",
        "common/types/string.go:125 `time.Parse(time.RFC3339, ...)`", _parse("timestamp"),
    ),
    "duration_milliseconds": KnownDifference(
        "duration('-1.5s').getMilliseconds() is -1500 (the whole duration)", "-500 (the milliseconds field)",
        "common/types/duration.go:226 `dur.Milliseconds()`; conformance/celspec_skips.txt: cel-go skips cel-spec's "
        "get_milliseconds",
        _milliseconds,
    ),
    "string_to_number": KnownDifference(
        "Go's strconv: int(' 1') and double(' 1') fail, double('+nan') fails, double('1_000.5') is 1000.5, "
        "double('1e400') fails (out of range)",
        "absl: spaces and `+nan` accepted, underscores refused, `1e400` is inf",
        "common/types/string.go:103,107,111 `strconv.ParseInt/ParseUint/ParseFloat`", _string_to_number,
    ),
    "index_of_offset": KnownDifference(
        "'abc'.indexOf('b', 5) is -1", "error `index out of range: 5`",
        "ext/strings.go:679 `If the offset exceeds the length, return -1 rather than error`; "
        "conformance/celspec_skips.txt: cel-go skips cel-spec's indexof_out_of_range",
        _index_of,
    ),
    "split": KnownDifference("''.split('') is []", '[""]', "ext/strings.go:766 `strings.Split(str, sep)`", _split),
    "regex": KnownDifference(
        "Go's regexp syntax: matching `\\C` is an error", "RE2 takes `\\C` (any byte)",
        "common/types/string.go:156 `regexp.MatchString`", _regex,
    ),
    "format": KnownDifference(
        "the strings extension at Kubernetes' version 2: `%e` prints `1.234568×10⁰⁴`, `%.2f` groups digits "
        "(`1,234,567.00`), `%s` of a list quotes its strings and prints its doubles as `%.6f`",
        "cel-spec's newer formatting: `1.234568e+04`, `1234567.00`, `[a, 1.5]`",
        "ext/strings.go:515 (version 4 brings the new formatter; before it ext/formatting.go:309 "
        "`message.NewPrinter(locale)` and :62-70 for list members)",
        _format,
    ),
}  # fmt: skip

# When both engines fail, their errors must say the same thing. The engines word errors differently: each row is a
# kcel error text and the cel-cpp texts that say the same (the reason in the comment); any other pair is a finding
# unless a known difference explains it.
SAME_ERRORS: tuple[tuple[str, str], ...] = (
    (r"^index out of bounds: (-?\d+)$", r"Index error: index=(-?\d+) size="),
    (r"^no such key: ", r"Key not found in map : "),
    (r"^no such key: ", r"Invalid container type: "),  # indexing a scalar: cel-go's missing-key error
    (r"^no such key: ", r"Applying SELECT to non-message type"),  # `dyn(1).a`: cel-go looks the field up as a key
    (r"^unsupported index (type|value) ", r"Index error: expected integer type|Applying SELECT to non-message"),
    (r"^integer overflow$", r"integer overflow|uint64 out of int64 range|out of int64 range"),
    (r"^unsigned integer overflow$", r"unsigned integer overflow|int64 out of uint64 range|out of uint64 range"),
    (r"^type conversion error from 'string' to 'google.protobuf.Duration'$", r"String to Duration conversion failed"),
    (r"^type conversion error from 'string' to 'google.protobuf.Timestamp'$", r"String to Timestamp conversion"),
    (r"^type conversion error from 'string' to '(int|uint|double)'$", r"cannot convert string to"),
    (r"^optional.none\(\) dereference$", r"optional.none\(\) dereference"),
    (r"^illegal base64 data at input byte", r"invalid base64 data"),
    (
        r"^index out of range: -?\d+$",
        r"<start> is less than|<pos> is greater than|<start> or <end> is greater than|index out of range",
    ),
    (r"^invalid substring range", r"<end> is less than <start>|<end> is greater than|<start> is greater than"),
    (r"^no such overload", r"No matching overloads found"),
    (r"^got '[\w.]+', expected iterable type$", r"No matching overloads found : <iter_range>"),  # a macro over dyn
    (r"^math.bitShift\w+\(\) negative offset", r"math.bitShift\w+\(\) invalid negative shift"),
    (r"^division by zero$", r"divide by zero|division by zero"),
    (r"^modulus by zero$", r"modulus by zero|modulo by zero"),
)


def same_failure(ours: Outcome, theirs: Outcome) -> bool:
    """Both failed, and their error texts say the same (`SAME_ERRORS`)."""
    if ours.error is None or theirs.error is None:
        return False
    for kcel_text, cpp_text in SAME_ERRORS:
        mine = re.search(kcel_text, ours.error)
        if mine and re.search(cpp_text, theirs.error):
            return True
    return False


def same(ours: Outcome, theirs: Outcome) -> bool:
    """The same value (kcel's times at cel-cpp's microsecond grain) or failures that say the same."""
    if ours.failed or theirs.failed:
        return same_failure(ours, theirs)
    return microseconds(ours.value) == theirs.value


def attribute(seen: Seen) -> str | None:
    """The known difference whose predicate recognises this disagreement, if any."""
    return next((key for key, known in KNOWN_DIFFERENCES.items() if known.shows(seen)), None)


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
    if stage == "compile" and lacking:
        result.cpp = f"kcel only: {lacking[0]}"
        return
    result.cpp, problem = compare(Seen(case, activation, stage, ours, theirs, cpp))
    if problem is not None:
        result.problems.append(problem)


def compare(seen: Seen) -> tuple[str, str | None]:
    """How kcel's outcome compares with cel-cpp's: ("agree" | "known: <key>" | "disagree", the finding if any).

    The same value, or two failures whose texts say the same, agree; anything else must be recognised by a known
    difference's predicate, or it is a finding."""
    if seen.stage == "eval" and same(seen.ours, seen.theirs):
        return "agree", None
    known = attribute(seen)
    if known is not None:
        return f"known: {known}", None
    if seen.stage == "compile":
        return "disagree", f"kcel compiles it ({seen.ours}), cel-cpp does not: {seen.theirs.error}"
    return "disagree", f"kcel gave {seen.ours}, cel-cpp gave {seen.theirs}"


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
        {(1, 2): 3}, {None: 1}, {1.5: "a"}, [[[]]], [], {},
    ]),
    st.builds(_cycle), st.builds(lambda: {"a": {"b": _cycle()}}), st.builds(_deep, st.sampled_from([3000, 20000])),
    DYN_VALUES,
)  # fmt: skip
HOSTILE = st.recursive(
    HOSTILE_SCALARS,
    # never empty, so that Hypothesis always sees the extension draw from its argument (its check for an `extend`
    # that ignores it warns, an error under -W error, when a run happens to draw only empty containers)
    lambda c: st.one_of(st.lists(c, min_size=1, max_size=3),
                        st.dictionaries(st.sampled_from(["a", "b", 1]), c, min_size=1, max_size=3)),
    max_leaves=4,
)  # fmt: skip


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


# One case of each known difference, with cel-go's answer (kcel must give it, and cel-cpp must still differ: when it
# stops differing, the row of the table can go), and the same case without the differing construct, which agrees.
KNOWN_EXAMPLES: dict[str, tuple[str, CelType, Any, str]] = {
    "empty_constant_membership": ("[1][5] in []", "bool", False, "[1][5] in [2]"),
    "repeated_map_keys": ("{'a': 1, 'a': 2}['a']", "int", 2, "{'a': 1, 'b': 2}['a']"),
    "program_time_errors": ("false ? int('x') : 1", "int", kcel.PlanError, "false ? int(s) : 1"),
    "presence_test": ("has(dyn(1).a)", "bool", False, "has(dyn({'b': 1}).a)"),
    "free_type_range": ("{}[2u].map(v, v + '')", ("list", "string"), kcel.EvalError, "{2u: ['a']}[2u].map(v, v + '')"),
    "optional_dyn_element": ("[?dyn([1])[?0]]", ("list", "int"), [1], "[?[1][?0]]"),
    "base64_spaces": ("base64.decode('YW Jj')", "bytes", kcel.EvalError, "base64.decode('YWJj')"),
    "double_text": ("string(double('inf'))", "string", "+Inf", "string(double('1.5'))"),
    "duration_text": ("string(duration('-1.5s'))", "string", "-1.5s", "string(duration('-1s'))"),
    "timestamp_text": (
        "string(timestamp('2009-02-13T23:31:30.5+01:00'))", "string", "2009-02-13T23:31:30.5+01:00",
        "string(timestamp('2009-02-13T23:31:30Z'))",
    ),
    "duration_parse": ("duration('1µs') == duration('1us')", "bool", True, "duration('1us') == duration('1us')"),
    "timestamp_parse": (
        "timestamp('020-01-01T00:00:00Z')", "google.protobuf.Timestamp", kcel.PlanError,
        "timestamp('2020-01-01T00:00:00Z')",
    ),
    "duration_milliseconds": ("duration('-1.5s').getMilliseconds()", "int", -1500, "duration('-1.5s').getSeconds()"),
    "string_to_number": ("double('1_000.5')", "double", 1000.5, "double('1000.5')"),
    "index_of_offset": ("'abc'.indexOf('b', 5)", "int", -1, "'abc'.indexOf('b', 1)"),
    "split": ("''.split('')", ("list", "string"), [], "'a'.split('')"),
    "regex": ("'a'.matches('\\\\C' + 'a')", "bool", kcel.EvalError, "'a'.matches('\\\\d' + 'a')"),
    "format": ("'%e'.format([12345.678])", "string", "1.234568\u00d710\u2070\u2074", "'%d'.format([12345])"),
}  # fmt: skip


def test_every_known_difference_has_an_example() -> None:
    assert sorted(KNOWN_EXAMPLES) == sorted(KNOWN_DIFFERENCES)


@pytest.mark.skipif(CPP is None, reason="cel-expr-python is not installed")
@pytest.mark.parametrize("key", sorted(KNOWN_EXAMPLES))
def test_known_difference_is_still_one(key: str) -> None:
    """The example disagrees and is recognised as this difference, by this difference alone; without the differing
    construct the same case agrees."""
    assert CPP is not None
    expr, t, expected, without = KNOWN_EXAMPLES[key]
    result = check(Case(expr, t), {}, CPP)
    assert result.kcel is not None and not result.problems
    if isinstance(expected, type):
        assert result.kcel.kind == expected.__name__
    else:
        assert result.kcel.value == tagged(expected)
    assert result.cpp == f"known: {key}"
    stage, theirs = CPP.run(expr, {})
    seen = Seen(Case(expr, t), {}, stage, result.kcel, theirs, CPP)
    assert [k for k, known in KNOWN_DIFFERENCES.items() if known.shows(seen)] == [key]
    control = check(Case(without, t), {}, CPP)
    assert control.cpp == "agree" and not control.problems, control.problems


class _Planted:
    """A kcel program with a wrong answer planted: `wrong` (a value, or an EvalError to raise) from every variant."""

    def __init__(self, program: kcel.Program, wrong: Any) -> None:
        self.program, self.wrong = program, wrong

    def _answer(self) -> Any:
        if isinstance(self.wrong, kcel.EvalError):
            raise self.wrong
        return self.wrong

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        return self._answer()

    def evaluate_with_cost(self, activation: Mapping[str, Any], limit: int) -> tuple[Any, int]:
        """The real cost, so that the harness's cost-limit checks still hold."""
        try:
            _, cost = self.program.evaluate_with_cost(activation, limit)
        except kcel.EvalError as err:
            if isinstance(err, CostLimitExceeded):
                raise
            cost = err.cost or 0
        return self._answer(), cost

    def explain(self, activation: Mapping[str, Any]) -> Any:
        try:
            return SimpleNamespace(value=self._answer(), error=None)
        except kcel.EvalError as err:
            return SimpleNamespace(value=None, error=err)


# Wrong answers planted in kcel, each in a case that uses a feature some known difference is about (and so was
# explained away by the old comparison), or where both engines fail for different reasons.
PLANTED: list[tuple[str, CelType, set[str], Any]] = [
    ("{'a': 1, 'b': 2}.size()", "int", {"map_literal"}, 3),
    ("{'a': 1, 'b': 2}", ("map", "string", "int"), {"map_literal"}, {"a": 1}),
    ("[].size() + 1", "int", {"free_type"}, 2),
    ("'abc'.matches('b')", "bool", {"regex"}, False),
    ("string(1.5) + 'a'", "string", {"double_text"}, "1.5b"),
    ("'%d'.format([1])", "string", {"format"}, "2"),
    ("'a,b'.split(',').size()", "int", {"split"}, 3),
    ("duration('1s').getMilliseconds()", "int", {"duration_milliseconds"}, 7),
    ("[1][5]", "int", set(), kcel.EvalError("division by zero")),
]  # fmt: skip


def planted_findings(run: Callable[[Case, Mapping[str, Any], Any], Any], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The planted cases `run` (a harness's `check`) passes: each should have been a finding."""
    real = kcel.Env.compile
    missed = []
    for expr, t, features, wrong in PLANTED:

        def compile_planted(env: kcel.Env, text: str, *args: Any, _e: str = expr, _w: Any = wrong, **kw: Any) -> Any:
            program = real(env, text, *args, **kw)
            return _Planted(program, _w) if text == _e else program

        monkeypatch.setattr(kcel.Env, "compile", compile_planted)
        result = run(Case(expr, t, set(features)), {}, CPP)
        monkeypatch.setattr(kcel.Env, "compile", real)
        if not result.problems:
            missed.append(f"{expr}: {result.cpp}")
    return missed


@pytest.mark.skipif(CPP is None, reason="cel-expr-python is not installed")
def test_planted_bugs_are_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison reports a wrong kcel answer as a finding, even where a known difference's feature is used."""
    assert planted_findings(check, monkeypatch) == []


@pytest.mark.skipif(CPP is None, reason="cel-expr-python is not installed")
def test_cel_cpp_harness_sees_types() -> None:
    """The comparison keeps CEL types apart: `true` is not `1`, `1u` is not `1`, `1.0` is not `1`."""
    assert CPP is not None
    assert CPP.run("[true, 1, 1u, 1.0, b'a', null]", {})[1].value == tagged([True, 1, Uint(1), 1.0, b"a", None])
    assert CPP.run("1 / 0", {})[1].failed
    assert CPP.run("dyn(1) == 1u", {})[1].value == tagged(True)
