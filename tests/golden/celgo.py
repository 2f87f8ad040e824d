"""kcel compared with recorded answers of cel-go and the Kubernetes API server's CEL environment.

A golden case is one JSON object: the expression, the environment it was compiled in (`"cel"`, plain cel-go with
its extensions, or `"k8s"`, the API server's base environment at `version`, `"new"` or `"stored"` expressions),
declarations as CEL type strings, an activation, and what the reference answered: the compile error text or the
output type, the estimated cost range, and the evaluation's value or error with its runtime cost. Values are
tagged so that no two CEL types compare equal by accident: `{"int": "1"}` is not `{"uint": "1"}` nor
`{"double": "1"}`.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import kcel
from kcel.eval.runtime import type_name
from kcel.temporal import Duration, Timestamp
from kcel.values import Optional, TypeValue, Uint

UINT64_MAX = 2**64 - 1


def to_kcel(tagged: Mapping[str, Any]) -> Any:
    """A tagged value as kcel takes it in an activation."""
    ((tag, body),) = tagged.items()
    match tag:
        case "int":
            return int(body)
        case "uint":
            return Uint(int(body))
        case "double":
            return float(body.replace("+Inf", "inf"))
        case "string" | "bool":
            return body
        case "bytes":
            return base64.b64decode(body)
        case "null":
            return None
        case "list":
            return [to_kcel(item) for item in body]
        case "map":
            return {to_kcel(k): to_kcel(v) for k, v in body}
        case "duration":
            return Duration(int(body))
        case "timestamp":
            return Timestamp(int(body))
    raise ValueError(f"unknown value tag {tag!r}")


def _double_text(value: float) -> str:
    """Go's strconv.FormatFloat(f, 'g', -1, 64) for the values that matter to equality: NaN, infinities and a
    shortest round-trip digit string (compared as a float, so the exponent's spelling does not matter)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def to_tagged(value: Any) -> Any:
    """A kcel result as a tagged value."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, Uint):
        return {"uint": str(int(value))}
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"double": _double_text(value)}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if value is None:
        return {"null": None}
    if isinstance(value, Duration):
        return {"duration": str(value.nanos)}
    if isinstance(value, Timestamp):
        return {"timestamp": str(value.nanos)}
    if isinstance(value, TypeValue):
        return {"type": value.name}
    if isinstance(value, Optional):
        return {"optional": to_tagged(value.value) if value.has_value() else None}
    if isinstance(value, Mapping):
        entries = [[to_tagged(k), to_tagged(v)] for k, v in value.items()]
        return {"map": sorted(entries, key=lambda e: json.dumps(e[0], separators=(",", ":"), ensure_ascii=False))}
    if isinstance(value, (list, tuple)) or hasattr(value, "__getitem__") and hasattr(value, "__len__"):
        return {"list": [to_tagged(v) for v in value]}
    return {"opaque": [type_name(value), str(value)]}


def same_value(theirs: Any, ours: Any) -> bool:
    """Tagged values equal tag for tag; doubles by value (NaN equal to NaN), since Go and Python spell exponents
    differently."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        if theirs.keys() != ours.keys():
            return False
        ((tag, a),) = theirs.items()
        b = ours[tag]
        if tag == "double":
            x, y = float(a.replace("+Inf", "inf")), float(b.replace("+Inf", "inf"))
            return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))
        if tag in ("list", "map"):
            return len(a) == len(b) and all(same_value(p, q) for p, q in zip(a, b, strict=True))
        return same_value(a, b)
    if isinstance(theirs, list) and isinstance(ours, list):
        return len(theirs) == len(ours) and all(same_value(p, q) for p, q in zip(theirs, ours, strict=True))
    return bool(theirs == ours)


@dataclass(frozen=True)
class Answer:
    """What one engine answered, in the reference's vocabulary."""

    compile_error: str | None = None
    type: str | None = None
    plan_error: str | None = None
    estimate: tuple[int | str, int | str] | None = None
    value: Any = None
    eval_error: str | None = None
    cost: int | None = None


# cel-go before v0.22 (Kubernetes 1.30, 1.31) checks optMap's target twice and rejects a type variable in it with
# an internal dump of the expression (1.31's holds a Go pointer): kcel rejects the same rules at the same place.
_INTERNAL_DUMP = re.compile(r"(incompatible type already exists for expression): [^\n]*")


def comparable_compile_error(text: str | None) -> str | None:
    """A compile error without what no other engine could reproduce: cel-go's Go-internal dumps, and after the first
    error of that bug the others it reports (one for each node it re-checks, its own macro nodes included)."""
    if text is None or not _INTERNAL_DUMP.search(text):
        return text
    first = _INTERNAL_DUMP.sub(r"\1", text).split("\nERROR: ")[0]
    return first


def reference(case: Mapping[str, Any]) -> Answer:
    """The recorded answer."""
    celgo = case["celgo"]
    estimate = celgo.get("estimate")
    return Answer(
        compile_error=comparable_compile_error(celgo.get("compileError")),
        type=celgo.get("type"),
        plan_error=celgo.get("planError"),
        estimate=tuple(estimate) if estimate else None,  # type: ignore[arg-type]
        value=celgo.get("value"),
        eval_error=celgo.get("evalError"),
        cost=celgo.get("cost"),
    )


def environment(case: Mapping[str, Any]) -> kcel.Env:
    """The case's environment; cases that declare the same variables in the same environment share one."""
    decls = case.get("decls") or {}
    version = case.get("version") if case["env"] == "k8s" else None
    return _environment(version, case.get("mode", "new"), json.dumps(decls, sort_keys=True))


@cache
def _environment(k8s_version: str | None, mode: str, decls: str) -> kcel.Env:
    variables = json.loads(decls)
    if k8s_version is None:
        return kcel.Env(variables=variables)
    return kcel.Env(variables=variables, k8s_version=k8s_version, environment=mode)


def _bound(n: int) -> int | str:
    return "max" if n >= UINT64_MAX else n


def kcel_answer(case: Mapping[str, Any], env: kcel.Env | None = None) -> Answer:
    """What kcel answers for the case."""
    env = env or environment(case)
    try:
        program = env.compile(case["expr"])
    except kcel.CompileError as err:
        return Answer(compile_error=comparable_compile_error(str(err)))
    except kcel.PlanError as err:  # checked, but the program could not be built
        return Answer(plan_error=str(err))
    estimate = env.estimate_cost(program)
    activation = {name: to_kcel(value) for name, value in (case.get("vars") or {}).items()}
    common = {"type": str(program.output_type), "estimate": (_bound(estimate.min), _bound(estimate.max))}
    try:
        value, cost = program.evaluate_with_cost(activation)
    except kcel.EvalError as err:
        return Answer(**common, eval_error=str(err), cost=getattr(err, "cost", None))
    return Answer(**common, value=to_tagged(value), cost=cost)


def differences(case: Mapping[str, Any], ours: Answer | None = None) -> Iterator[str]:
    """Where kcel's answer differs from the recorded one, aspect by aspect."""
    theirs = reference(case)
    ours = ours or kcel_answer(case)
    if theirs.compile_error != ours.compile_error:
        yield f"compile error: cel-go {theirs.compile_error!r}, kcel {ours.compile_error!r}"
        return
    if theirs.compile_error is not None:
        return
    if theirs.plan_error or ours.plan_error:
        if theirs.plan_error != ours.plan_error:
            yield f"plan error: cel-go {theirs.plan_error!r}, kcel {ours.plan_error!r}"
        return
    if theirs.type != ours.type:
        yield f"type: cel-go {theirs.type}, kcel {ours.type}"
    if theirs.estimate is not None and theirs.estimate != ours.estimate:
        yield f"estimate: cel-go {theirs.estimate}, kcel {ours.estimate}"
    if theirs.eval_error != ours.eval_error:
        yield f"evaluation error: cel-go {theirs.eval_error!r}, kcel {ours.eval_error!r}"
    elif theirs.eval_error is None and not same_value(theirs.value, ours.value):
        yield f"value: cel-go {json.dumps(theirs.value)}, kcel {json.dumps(ours.value)}"
    if theirs.cost is not None and ours.cost is not None and theirs.cost != ours.cost:
        yield f"cost: cel-go {theirs.cost}, kcel {ours.cost}"
