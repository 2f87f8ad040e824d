"""A compiled expression: its generated Python function(s) and how to call them."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcel.checker.checker import Checked
from kcel.checker.types import DYN, CelType
from kcel.errors import CelError, CostLimitExceeded, EvalError, RecoveredPanic
from kcel.eval.codegen import CodeGen, Declarations, Plan
from kcel.eval.dispatch import Meter
from kcel.eval.inputs import UnboundVariable
from kcel.eval.runtime import CEL_ERRORS, OperandTypeError, as_eval_error
from kcel.eval.sourcelines import compile_function
from kcel.parser import Parsed

if TYPE_CHECKING:
    from kcel.eval.trace import Explanation


@dataclass(frozen=True, slots=True)
class CompiledFunction:
    """A plan and the Python function compiled from its source."""

    plan: Plan
    function: Callable[..., Any]


def _compile(plan: Plan, tag: str, **bound: Any) -> CompiledFunction:
    """The function of a plan; raises `SyntaxError` (or `RecursionError`) when its source is nested past what Python
    compiles (`_NO_EXACT_PLAN`)."""
    digest = hashlib.sha1(plan.source.encode()).hexdigest()[:10]
    namespace = dict(plan.namespace, **bound)
    function = compile_function(plan.source, f"<kcel:{tag}:{digest}>", namespace, plan.function_name)
    return CompiledFunction(plan, function)


def _compile_to_evaluate(plan: Plan, tag: str, **bound: Any) -> CompiledFunction:
    """The function of a plan an evaluation needs: one nested past what Python compiles (20 blocks, 100 levels of
    indentation; cel-go allows 250 levels of CEL) fails the evaluation with a CEL error, decided by the policy's
    failure policy, rather than a Python exception that would look like a crash of the server."""
    try:
        return _compile(plan, tag, **bound)
    except _NO_EXACT_PLAN:
        raise EvalError("expression nested too deeply to evaluate") from None


def _as_entry(plan: Plan) -> Plan:
    """The fast variant written as `Program.evaluate` itself, one Python call less: anything but an activation goes
    to `_general` (the method), any error but one that stops the evaluation to `_fallback` (the exact variant, or
    an internal error for an exception that stands for no CEL error).
    Generated lines hold no newline of their own (user text enters through `repr`), so the body indents line by
    line."""
    definition, body = plan.source.split("\n", 1)
    source = "\n".join([
        definition.replace("(_act, _m):", "(activation=None, cost_limit=None):"),
        "    if cost_limit is not None or activation is None:", "        return _general(activation, cost_limit)",
        "    _act, _m = activation, None", "    try:",
        textwrap.indent(body, "    "), "    except _EvaluationStopped:", "        raise",
        "    except Exception as _e:", "        return _fallback(_act, _e)",
    ])  # fmt: skip
    return dataclasses.replace(plan, source=source)


@dataclass(frozen=True)
class Program:
    """An expression ready to evaluate many times, from many threads.

    >>> import kcel
    >>> kcel.Env(variables={"x": "int"}).compile("x * 2 + 1").evaluate({"x": 20})
    41
    """

    parsed: Parsed
    declarations: Declarations
    checked: Checked | None = None
    optimize: bool = True
    _plan: Plan = field(init=False, repr=False)
    _fast: Callable[..., Any] | None = field(init=False, repr=False, default=None)
    _metered: list[CompiledFunction] = field(init=False, repr=False, default_factory=list)
    _traced: list[CompiledFunction] = field(init=False, repr=False, default_factory=list)
    _exact: dict[bool, CompiledFunction] = field(init=False, repr=False, default_factory=dict)
    _failing: list[CompiledFunction] = field(init=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        # Planning happens now, so that a program that cannot be built fails here (PlanError); turning the
        # generated source into a Python function waits for the first evaluation: it is half the compile
        # time, and a CRD validator, which only runs the metered variant, never needs it.
        plan = CodeGen(self.parsed, self.declarations, False, self.checked, self.optimize).plan()
        object.__setattr__(self, "_plan", plan)

    def _fast_function(self) -> Callable[..., Any]:
        function = self._fast
        if function is None:  # a race only compiles it twice
            general = types.MethodType(Program.evaluate, self)
            entry = _as_entry(self._plan)
            compiled = _compile_to_evaluate(entry, "fast", _general=general, _fallback=self._after_fast)
            function = compiled.function
            function.__doc__ = Program.evaluate.__doc__
            object.__setattr__(self, "_fast", function)
            object.__setattr__(self, "evaluate", function)  # from now on, calls go straight to it
        return function

    @property
    def output_type(self) -> CelType:
        """The CEL type of the result (`dyn` when the expression was not type-checked)."""
        return self.checked.output_type if self.checked else DYN

    @property
    def python_source(self) -> str:
        """The generated Python function (the unmetered variant)."""
        return self._plan.source

    @property
    def metered_source(self) -> str:
        return self._metered_function().plan.source

    def _metered_function(self) -> CompiledFunction:
        if not self._metered:  # built on first use; a race only compiles it twice
            plan = CodeGen(self.parsed, self.declarations, True, self.checked, self.optimize).plan("_kcel_eval_metered")
            self._metered.append(_compile_to_evaluate(plan, "metered"))
        return self._metered[0]

    def _exact_function(self, metered: bool) -> Callable[..., Any]:
        """The program without inlined field reads, run again when the fast one met a Python TypeError."""
        if metered not in self._exact:  # built on first use; a race only compiles it twice
            codegen = CodeGen(self.parsed, self.declarations, metered, self.checked, self.optimize, inline=False)
            self._exact[metered] = _compile_to_evaluate(codegen.plan("_kcel_eval_exact"), "exact")
        return self._exact[metered].function

    def evaluate(self, activation: Mapping[str, Any] | None = None, cost_limit: int | None = None) -> Any:
        """Evaluate with the given variables; raises `EvalError` (`CostLimitExceeded` past the limit)."""
        if cost_limit is not None:
            return self.evaluate_with_cost(activation, cost_limit)[0]
        return (self._fast or self._fast_function())(activation or _EMPTY)

    def _after_fast(self, activation: Mapping[str, Any], error: BaseException) -> Any:
        """The fast variant met an error: a Python one, whose words in cel-go depend on the operand (a missing key's
        on the field's name), or a CEL one, which it does not absorb; the exact variant answers."""
        if not isinstance(error, _FALLBACK):
            raise internal_error(error) from error
        if isinstance(error, RecursionError):
            raise _too_deep() from None
        try:
            return self._exact_function(False)(activation, None)
        except (KeyError, TypeError, AttributeError, OperandTypeError) as err:
            raise _final_error(err) from None
        except RecursionError:
            raise _too_deep() from None
        except EvalError:
            raise
        except Exception as err:
            raise internal_error(err) from err

    def evaluate_with_cost(
        self, activation: Mapping[str, Any] | None = None, cost_limit: int | None = None
    ) -> tuple[Any, int]:
        """The value and its runtime cost in cel-go's units."""
        meter = Meter(math.inf if cost_limit is None else cost_limit)
        try:
            try:
                value = self._metered_function().function(activation or _EMPTY, meter)
            except (TypeError, AttributeError, OperandTypeError, UnboundVariable):  # as in `evaluate`
                meter = Meter(meter.limit)
                value = self._exact_function(True)(activation or _EMPTY, meter)
        except (KeyError, TypeError, AttributeError, OperandTypeError, RecursionError) as err:
            raise self._cost_of_failure(_spent(err, meter), activation or _EMPTY, meter.limit) from None
        except CostLimitExceeded as exceeded:
            if math.isinf(meter.limit):
                raise
            # The metered plan charges a block's cost before running it, so it may stop where cel-go's evaluation
            # fails first (or on another branch of the failure) without reaching the limit: ask the exact plan.
            try:
                return self._exactly(activation or _EMPTY, meter.limit)
            except _NO_EXACT_PLAN:
                raise exceeded from None
        except EvalError as err:
            raise self._cost_of_failure(_spent(err, meter), activation or _EMPTY, meter.limit) from None
        except Exception as err:
            raise _spent(internal_error(err), meter) from err
        if meter.absorbed:  # the metered plan charges a block up front, though an error cut it short
            try:
                return self._exactly(activation or _EMPTY, meter.limit)
            except _NO_EXACT_PLAN:
                pass
        return value, meter.cost

    def _cost_of_failure(self, error: EvalError, activation: Mapping[str, Any], limit: float) -> EvalError:
        """The error with what cel-go spent before it (Kubernetes charges that to the budget), or the cost limit
        cel-go reached first."""
        try:
            self._exactly(activation, limit)
        except _NO_EXACT_PLAN:  # nested past what Python compiles: the metered plan's approximation stands
            pass
        except CostLimitExceeded as exceeded:
            return exceeded
        except EvalError as exact:
            error.cost = exact.cost
        return error

    def _exactly(self, activation: Mapping[str, Any], limit: float) -> tuple[Any, int]:
        """Evaluate with the plan that charges every step when cel-go's tracker does: just before it runs (not a
        block's sum up front), every operand of a unary or binary call before the call fails, and a literal whose
        element failed. Slower; for evaluations that fail or reach the limit, whose cost the metered plan only
        approximates. Errors carry their cost."""
        if not self._failing:  # built on first use; a race only compiles it twice
            codegen = CodeGen(
                self.parsed, self.declarations, True, self.checked, self.optimize, inline=False, exact_failures=True
            )
            self._failing.append(_compile(codegen.plan("_kcel_eval_failing"), "failing"))
        meter = Meter(limit)
        try:
            return self._failing[0].function(activation, meter), meter.cost
        except CostLimitExceeded:
            raise
        except (KeyError, TypeError, AttributeError, OperandTypeError, RecursionError, EvalError) as err:
            raise _spent(err, meter) from None
        except Exception as err:
            raise _spent(internal_error(err), meter) from err

    def explain(self, activation: Mapping[str, Any] | None = None) -> Explanation:
        """Evaluate once more, recording what every subexpression gave and what decided `&&`, `||`, `?:` and
        macros: `explain(...).text()` shows why a rule failed. Slow, for people; an evaluation that runs more
        than `kcel.eval.trace.MAX_EVENTS` steps is stopped."""
        from kcel.eval.trace import Tracer, TraceTooLong, explain  # the tracer only for an explanation

        tracer = Tracer()
        value: Any = None
        error: CelError | None = None
        try:
            if not self._traced:  # built on first use; a race only compiles it twice
                plan = CodeGen(self.parsed, self.declarations, False, self.checked, self.optimize, traced=True)
                self._traced.append(_compile_to_evaluate(plan.plan("_kcel_eval_traced"), "traced"))
            value = self._traced[0].function(activation or _EMPTY, tracer)
        except TraceTooLong as err:
            error = err
        except CEL_ERRORS as err:
            error = _final_error(err)
        except RecursionError:
            error = _too_deep()
        except Exception as err:
            error = internal_error(err)
        return explain(self.parsed, tracer, value, error)

    @property
    def variables(self) -> frozenset[str]:
        """The declared variables the expression reads (its references, as cel-go's checked AST has them)."""
        return self._plan.variables


_EMPTY: Mapping[str, Any] = {}
# What ends the fast variant and has the exact one answer: a Python error standing for a CEL one, and CEL errors
# (the fast variant absorbs none, as `&&`, `||` and `all()` would: the exact one does, as cel-go).
_FALLBACK = (EvalError, KeyError, TypeError, AttributeError, UnboundVariable, RecursionError)
_NO_EXACT_PLAN = (SyntaxError, RecursionError)  # a plan Python cannot compile (too many nested blocks)


def _spent(err: BaseException, meter: Meter) -> EvalError:
    """The error a metered evaluation ends with, carrying what was spent before it (Kubernetes charges that)."""
    error = _too_deep() if isinstance(err, RecursionError) else _final_error(err)
    error.cost = meter.cost
    return error


def _final_error(err: BaseException) -> EvalError:
    """The error an evaluation ends with: an `OperandTypeError` (the signal to run the exact plan) is reported as
    the plain EvalError it stands for, so every variant raises the same class."""
    error = as_eval_error(err)
    return EvalError(error.message, error.expr_id) if type(error) is OperandTypeError else error


def internal_error(err: BaseException) -> EvalError:
    """A Python exception no library turned into a CEL error (a bug, or a resource exhausted): an error of the
    evaluation, worded as cel-go words a panic it recovers, so the caller's failure policy decides, never the
    exception itself (raised `from` it: its traceback shows the generated lines)."""
    return RecoveredPanic(f"internal error: {err or type(err).__name__}")


def _too_deep() -> EvalError:
    """A value nested deeper than Python can recurse (or one that contains itself): an error, not a crash."""
    return EvalError("value nested too deeply to evaluate")
