"""Runners for the CRD validation kinds of k8s-cases: `crd_validation` and `crd_compile`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from conformance.outcome import Case, Outcome, Unsupported
from kcel.checker.types import STRING
from kcel.k8s import field as fe
from kcel.k8s.rules.validation import CompiledRule, RuleEnvironments, Validator, compile_rules
from kcel.k8s.schemas.decltypes import schema_decl_type
from kcel.k8s.schemas.schema import Schema
from kcel.libs import Library, Overload


def crd_validation(case: Case) -> Outcome:
    data, env, expect = case.data["inputs"], case.data["env"], case.data["expect"]
    if "context" in env:
        raise Unsupported("cancelling evaluation through a Go context has no Python counterpart")
    schema = Schema.from_json(data["schema"])
    decl = schema_decl_type(schema, env.get("decl_type_is_resource_root", False))
    validator = Validator(
        schema, is_resource_root=env.get("is_resource_root", False), per_call_limit=env["per_call_limit"], decl=decl,
        rules_in_all_of_only=env.get("validator") == "validator",
    )  # fmt: skip
    budget = env["cost_budget"]
    root = fe.Path.new(env["field_path_root"]) if env.get("field_path_root") else fe.Path()
    result = validator.validate(
        data["object"], data.get("old_object"), path=root, budget=budget, ratcheting=bool(env.get("ratcheting"))
    )
    problems = _check_errors(expect["errors"], result.errors)
    if "warnings" in expect:
        wanted = expect["warnings"]
        if len(result.warnings) != wanted["exact_count"] or sorted(result.warnings) != sorted(wanted["values"]):
            problems.append(f"warnings {result.warnings}, expected {wanted['values']}")
    if "runtime_cost" in expect and budget - result.remaining_budget != expect["runtime_cost"]:
        problems.append(f"runtime cost {budget - result.remaining_budget}, expected {expect['runtime_cost']}")
    if "remaining_budget" in expect and result.remaining_budget != expect["remaining_budget"]:
        problems.append(f"remaining budget {result.remaining_budget}, expected {expect['remaining_budget']}")
    if "log_contains" in expect and not any(expect["log_contains"] in line for line in result.log):
        problems.append(f"log {result.log} lacks {expect['log_contains']!r}")
    if expect.get("log_empty") and result.log:
        problems.append(f"log not empty: {result.log}")
    return Outcome(case.id, "failed", "; ".join(problems)) if problems else Outcome(case.id, "passed")


def _check_errors(expect: Any, errors: list[fe.FieldError]) -> list[str]:
    texts = [str(e) for e in errors]
    if isinstance(expect, list):
        return [] if not errors and not expect else [f"errors {texts}, expected {expect}"]
    match = expect["match"]
    wrong_type = [t for e, t in zip(errors, texts, strict=True) if "type" in expect and e.type.reason != expect["type"]]
    if match in ("every_error_contains", "each_error_matches_distinct_substring", "some_error_contains") and wrong_type:
        return [f"errors of another type than {expect['type']}: {wrong_type}"]
    if match == "every_error_contains":
        ok = len(errors) >= expect.get("min_count", 1) and all(expect["substring"] in t for t in texts)
    elif match == "some_error_contains":
        ok = any(expect["substring"] in t for t in texts)
    elif match == "each_error_matches_distinct_substring":
        ok = _pair_up(texts, list(expect["substrings"]))
    elif match == "exact_count":
        ok = len(errors) == expect["exact_count"] and (
            "first_error_contains" not in expect or expect["first_error_contains"] in texts[0]
        )
    elif match == "elements_match":
        wanted = Counter((e["type"], e["field"]) for e in expect["errors"])
        ok = Counter((e.type.reason, str(e.field)) for e in errors) == wanted
    elif match == "count_and_each_expected_contained":
        ok = len(errors) == expect["exact_count"] and all(any(s in t for t in texts) for s in expect["substrings"])
    else:
        raise Unsupported(f"error expectation {match!r}")
    return [] if ok else [f"errors {texts} do not satisfy {match} {expect}"]


def _pair_up(texts: list[str], substrings: list[str]) -> bool:
    """Greedy one-to-one matching of errors to expected substrings, as the Go test does."""
    for text in texts:
        found = next((s for s in substrings if s in text), None)
        if found is None:
            return False
        substrings.remove(found)
    return not substrings


_FAKE_LIBRARY = Library(
    "fake", overloads=(Overload("fake_function_string", "fakeFunction", (STRING,), STRING, str.upper),)
)


def _compile(case: Case) -> list[CompiledRule]:
    """`Compile(schema, SchemaDeclType(schema, is_resource_root), ...)` in the environment the case names."""
    data, env = case.data["inputs"], case.data["env"]
    schema = Schema.from_json(data["schema"])
    loader = env.get("env_loader") or ("Stored" if "StoredExpressions" in env.get("function", "") else "New")
    environment = "stored" if loader.startswith("Stored") else "new"
    # The test extends the environment at version 1.999 with fakeFunction: only stored expressions see it.
    extra = [_FAKE_LIBRARY] if "fakeFunction" in env.get("env_set", "") and environment == "stored" else []
    decl = schema_decl_type(schema, env.get("is_resource_root", False))
    return compile_rules(schema, decl, RuleEnvironments(environment=environment, extra=extra))


def crd_estimated_cost(case: Case) -> Outcome:
    """compilation_test.go TestCostEstimation and celcoststability_test.go: the rule's estimated max cost."""
    expect = case.data["expect"]
    results = _compile(case)
    result = next(r for r in results if r.rule.rule == case.data["rule"])
    if result.error is not None:
        return Outcome(case.id, "failed", f"unexpected error: {result.error}")
    cost, problems = result.max_cost, []
    if "max_cost" in expect and cost != expect["max_cost"]:
        problems.append(f"max cost {cost}, expected {expect['max_cost']}")
    if "max_cost_at_least" in expect and cost < expect["max_cost_at_least"]:
        problems.append(f"max cost {cost}, expected at least {expect['max_cost_at_least']}")
    if "max_cost_at_most" in expect and cost > expect["max_cost_at_most"]:
        problems.append(f"max cost {cost}, expected at most {expect['max_cost_at_most']}")
    if "max_cost_greater_than" in expect and cost <= expect["max_cost_greater_than"]:
        problems.append(f"max cost {cost}, expected more than {expect['max_cost_greater_than']}")
    return Outcome(case.id, "failed", "; ".join(problems)) if problems else Outcome(case.id, "passed")


def crd_compile(case: Case) -> Outcome:
    expect = case.data["expect"]
    result = _compile(case)[case.data["rule_index"]]
    problems = []
    error = expect.get("error")
    if error is None and result.error is not None:
        problems.append(f"unexpected error: {result.error}")
    if error is not None and (result.error is None or error.get("contains", "") not in str(result.error)):
        problems.append(f"error {result.error}, expected {error}")
    message_error = expect.get("message_expression_error")
    if message_error is not None and (
        result.message_error is None or message_error.get("contains", "") not in str(result.message_error)
    ):
        problems.append(f"messageExpression error {result.message_error}, expected {message_error}")
    if "uses_old_self" in expect and result.uses_old_self != expect["uses_old_self"]:
        problems.append(f"uses_old_self={result.uses_old_self}")
    if "program_is_nil" in expect and (result.program is None) != expect["program_is_nil"]:
        problems.append(f"program is {'nil' if result.program is None else 'set'}")
    return Outcome(case.id, "failed", "; ".join(problems)) if problems else Outcome(case.id, "passed")


RUNNERS: dict[str, Callable[[Case], Outcome]] = {
    "crd_validation": crd_validation, "crd_compile": crd_compile, "crd_estimated_cost": crd_estimated_cost,
}  # fmt: skip
