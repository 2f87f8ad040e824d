"""Evaluating one policy for one binding and one param, as k8s.io/apiserver's validator.Validate does.

The order and the budgets follow upstream: match conditions (their own 2,500,000 budget; namespaceObject is
null there), then every validation, then every message expression with what the validations left, then the
audit annotations with a fresh budget. Each of those passes gets its own lazy `variables`, so a variable is
evaluated at most once per pass and its cost is charged to the expression that first read it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.errors import EvalError
from kcel.k8s.admission.compilation import Compiled, CompiledPolicy
from kcel.k8s.admission.model import DENY, FAIL
from kcel.libs.k8s_selectors import aggregate_errors
from kcel.temporal import go_quote

PER_CALL_LIMIT = 1_000_000  # celconfig.PerCallLimit
RUNTIME_BUDGET = 10_000_000  # celconfig.RuntimeCELCostBudget, per binding and param
MATCH_CONDITIONS_BUDGET = 2_500_000  # celconfig.RuntimeCELCostBudgetMatchConditions
MAX_MESSAGE_BYTES = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # noqa: E501


class OutOfBudget(Exception):
    """A pass ran past its budget: upstream stops the pass and reports it as one error."""


@dataclass
class Meter:
    """Cost spent by one admission; the deadline (a time.monotonic() instant) interrupts what is left."""

    deadline: float | None = None
    spent: int = 0

    def interrupted(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline


@dataclass(frozen=True)
class Result:
    """One expression's outcome: a value, or the error text upstream puts in EvaluationResult.Error."""

    value: Any = None
    error: str | None = None


# -- activation ---------------------------------------------------------------------------------------------------


class LazyVariables:
    """The runtime `variables` (apiserver pkg/cel/lazy.MapValue): each evaluated on first read, then remembered."""

    def __init__(self, compiled: Mapping[str, Compiled], activation: dict[str, Any], meter: Meter) -> None:
        self.compiled = compiled
        self.activation = activation
        self.meter = meter
        self.values: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        self.pending_cost = 0  # charged to the expression that read the variable, after it ran

    def resolve(self, name: str) -> Any:
        if name not in self.values and name not in self.errors:
            self.evaluate(name)
        if name in self.errors:
            raise EvalError(self.errors[name])
        return self.values[name]

    def evaluate(self, name: str) -> None:
        compiled = self.compiled[name]
        if compiled.program is None:
            self.errors[name] = f"composited variable {go_quote(name)} fails to compile: {compiled.error}"
            return
        try:
            self.values[name], cost = compiled.program.evaluate_with_cost(self.activation, PER_CALL_LIMIT)
        except EvalError as err:
            self.pending_cost += err.cost or 0
            self.errors[name] = f"composited variable {go_quote(name)} fails to evaluate: {err}"
            return
        self.pending_cost += cost

    def take_cost(self) -> int:
        cost, self.pending_cost = self.pending_cost, 0
        return cost


@dataclass(frozen=True)
class Inputs:
    """What the expressions see for one binding and param (values as CEL reads them)."""

    object: Any
    old_object: Any
    request: Mapping[str, Any]  # for validations and audit annotations: the matched kind and resource
    condition_request: Mapping[str, Any]  # for match conditions: the request's own resource
    namespace: Any
    params: Any
    authorizer: Any  # an AuthorizerValue, or None
    request_resource_check: Any


class Composed(Protocol):
    """A compiled policy of either kind: its variables and match conditions, each a name and its program."""

    @property
    def variables(self) -> tuple[tuple[str, Compiled], ...]: ...
    @property
    def match_conditions(self) -> tuple[tuple[str, Compiled], ...]: ...


def activation(
    inputs: Inputs, compiled: Composed, meter: Meter, *, request: Mapping[str, Any], namespace: Any,
    authorizer: bool,
) -> tuple[dict[str, Any], LazyVariables]:  # fmt: skip
    """activation.go newActivation: the variables bound for one pass, with fresh lazy `variables`."""
    bound: dict[str, Any] = {
        "object": inputs.object, "oldObject": inputs.old_object, "request": request, "namespaceObject": namespace,
        "params": inputs.params,
    }  # fmt: skip
    if authorizer and inputs.authorizer is not None:
        bound["authorizer"] = inputs.authorizer
        bound["authorizer.requestResource"] = inputs.request_resource_check
    variables = LazyVariables(dict(compiled.variables), bound, meter)
    bound["variables"] = variables
    return bound, variables


def run_pass(
    expressions: Sequence[Compiled | None], bound: dict[str, Any], variables: LazyVariables, meter: Meter, budget: int
) -> tuple[list[Result | None], int]:
    """condition.go ForInput: evaluate in order, each charged (with the variables it read) to the budget.

    Raises OutOfBudget when the budget runs out; returns the results and the budget left.
    """
    results: list[Result | None] = []
    for compiled in expressions:
        if compiled is None:
            results.append(None)
            continue
        result, cost = _evaluate(compiled, bound, meter)
        for spent in (variables.take_cost(), cost):
            meter.spent += spent
            if spent > budget:
                raise OutOfBudget()
            budget -= spent
        results.append(result)
    return results, budget


def _evaluate(compiled: Compiled, bound: dict[str, Any], meter: Meter) -> tuple[Result, int]:
    if compiled.program is None:
        return Result(error=f"compilation error: {compiled.error}"), 0
    if meter.interrupted():
        return Result(error=f"expression '{compiled.text}' resulted in error: operation interrupted"), 0
    try:
        value, cost = compiled.program.evaluate_with_cost(bound, PER_CALL_LIMIT)
    except EvalError as err:
        return Result(error=f"expression '{compiled.text}' resulted in error: {err}"), err.cost or 0
    return Result(value), cost


# -- one policy, binding and param ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyDecision:
    """policy_decision.go PolicyDecision: `action` is "admit" or "deny", `evaluation` "admit", "deny" or "error"."""

    action: str
    evaluation: str
    message: str = ""
    reason: str = ""


@dataclass(frozen=True)
class AuditAnnotationResult:
    """`action`: "publish" (with `value`), "exclude" or "error" (with `error`)."""

    key: str
    action: str
    value: str = ""
    error: str = ""


@dataclass(frozen=True)
class ValidateResult:
    """validator.go ValidateResult: a decision per validation, the audit annotations (none if not matched)."""

    decisions: tuple[PolicyDecision, ...] = ()
    audit_annotations: tuple[AuditAnnotationResult, ...] = ()
    matched: bool = True  # False when a match condition was false (or failed under Ignore)
    failed_condition: str = ""


@dataclass
class _Run:
    """What the steps of one `validate` call share: the compiled policy, its inputs and the cost meter."""

    compiled: CompiledPolicy
    inputs: Inputs
    meter: Meter

    @property
    def failure_policy(self) -> str:
        return self.compiled.policy.failure_policy

    def error(self, message: str) -> ValidateResult:
        action = DENY.lower() if self.failure_policy == FAIL else "admit"
        return ValidateResult((PolicyDecision(action, "error", message),))


def validate(compiled: CompiledPolicy, inputs: Inputs, meter: Meter) -> ValidateResult:
    """validator.go Validate for one param (or none)."""
    run = _Run(compiled, inputs, meter)
    if compiled.match_conditions:
        matched = _match(run)
        if matched is not None:
            return matched
    bound, variables = activation(
        inputs, compiled, meter, request=inputs.request, namespace=inputs.namespace, authorizer=True
    )
    try:
        results, remaining = run_pass(compiled.validations, bound, variables, meter, RUNTIME_BUDGET)
    except OutOfBudget:
        return run.error(OUT_OF_BUDGET)
    messages, message_error = _messages(run, remaining)
    decisions = tuple(
        _decision(run, i, result, messages[i] if i < len(messages) else None, message_error)
        for i, result in enumerate(results)
    )
    try:
        annotations = _audit_annotations(run)
    except OutOfBudget:
        return run.error(OUT_OF_BUDGET)
    return ValidateResult(decisions, annotations)


def _match(run: _Run) -> ValidateResult | None:
    """None when every match condition holds, else the result to return."""
    matched, failed, error = match_conditions(run.compiled, run.failure_policy, run.inputs, run.meter)
    if error:
        return run.error(error)
    return None if matched else ValidateResult(matched=False, failed_condition=failed)


def match_conditions(compiled: Composed, failure_policy: str, inputs: Inputs, meter: Meter) -> tuple[bool, str, str]:
    """matchconditions.Matcher.Match: (matches, the condition that was false, the error under `Fail`)."""
    names = [name for name, _ in compiled.match_conditions]
    bound, variables = activation(
        inputs, compiled, meter, request=inputs.condition_request, namespace=None, authorizer=True
    )
    expressions = [expression for _, expression in compiled.match_conditions]
    try:
        results, _ = run_pass(expressions, bound, variables, meter, MATCH_CONDITIONS_BUDGET)
    except OutOfBudget:
        return False, "", OUT_OF_BUDGET if failure_policy == FAIL else ""
    errors = []
    for name, result in zip(names, results, strict=True):
        assert result is not None
        if result.error is not None:
            errors.append(result.error)
        elif result.value is False:
            return False, name, ""
    if errors:
        return False, "", aggregate_errors(errors) if failure_policy == FAIL else ""
    return True, "", ""


def _messages(run: _Run, remaining: int) -> tuple[list[Result | None], str]:
    """Every message expression, with the budget the validations left (no authorizer there)."""
    if not any(run.compiled.messages):
        return [], ""
    bound, variables = activation(
        run.inputs, run.compiled, run.meter, request=run.inputs.request, namespace=run.inputs.namespace,
        authorizer=False,
    )  # fmt: skip
    try:
        return run_pass(run.compiled.messages, bound, variables, run.meter, remaining)[0], ""
    except OutOfBudget:
        return [], f"failed messageExpression: {OUT_OF_BUDGET}"


def _decision(run: _Run, index: int, result: Result | None, message: Result | None, message_error: str) -> Any:
    assert result is not None
    if result.error is not None:
        return _error_decision(run, result.error)
    if message_error:
        return _error_decision(run, message_error)
    if result.value is True:
        return PolicyDecision("admit", "admit")
    validation = run.compiled.policy.validations[index]
    text = _message_text(message)
    if not text:
        text = validation.message.strip(GO_SPACE)
    if not text:
        text = f"failed expression: {validation.expression.strip(GO_SPACE)}"
    return PolicyDecision(DENY.lower(), "deny", text, validation.reason or "Invalid")


def _error_decision(run: _Run, message: str) -> PolicyDecision:
    return PolicyDecision(DENY.lower() if run.failure_policy == FAIL else "admit", "error", message)


def _message_text(message: Result | None) -> str:
    """A usable messageExpression result: a string, trimmed, short enough and on one line; else ""."""
    if message is None or message.error is not None or not isinstance(message.value, str):
        return ""
    text = message.value.strip(GO_SPACE)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MESSAGE_BYTES or "\n" in text:
        return ""
    return text


def _audit_annotations(run: _Run) -> tuple[AuditAnnotationResult, ...]:
    """Audit annotations get a fresh budget and no authorizer binding, as upstream passes them."""
    if not run.compiled.audit_annotations:
        return ()
    bound, variables = activation(
        run.inputs, run.compiled, run.meter, request=run.inputs.request, namespace=run.inputs.namespace,
        authorizer=False,
    )  # fmt: skip
    expressions = [compiled for _, compiled in run.compiled.audit_annotations]
    results, _ = run_pass(expressions, bound, variables, run.meter, RUNTIME_BUDGET)
    return tuple(
        _annotation(run, key, result) for (key, _), result in zip(run.compiled.audit_annotations, results, strict=True)
    )


def _annotation(run: _Run, key: str, result: Result | None) -> AuditAnnotationResult:
    assert result is not None
    if result.error is not None:
        return AuditAnnotationResult(key, "error" if run.failure_policy == FAIL else "exclude", error=result.error)
    if result.value is None:
        return AuditAnnotationResult(key, "exclude")
    if isinstance(result.value, str):
        value = result.value.strip(GO_SPACE)
        return AuditAnnotationResult(key, "publish", value) if value else AuditAnnotationResult(key, "exclude")
    expression = dict(run.compiled.audit_annotations)[key].text
    error = (
        f"valueExpression '{expression}' resulted in unsupported return type: {type(result.value).__name__}. "
        "Return type must be either string or null."
    )
    return AuditAnnotationResult(key, "error", error=error)
