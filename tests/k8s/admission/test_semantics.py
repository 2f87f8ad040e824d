"""Table tests of ValidatingAdmissionPolicy semantics, with the texts of k8s.io/apiserver's validating plugin."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kcel.k8s.admission import PolicySet, request_from_objects
from kcel.k8s.authorization.rbac import RBACAuthorizer

from .helpers import admit, binding, deployment, namespace, policies, policy, write

DENIED = "ValidatingAdmissionPolicy 'p.example.com' with binding 'b.example.com' denied request: "


def one(expression: str, **validation: Any) -> list[dict[str, Any]]:
    return [{"expression": expression, **validation}]


# -- validations and messages -------------------------------------------------------------------------------------

VALIDATION_CASES = [
    pytest.param(one("object.spec.replicas <= 5"), 3, None, id="true"),
    pytest.param(one("object.spec.replicas <= 5"), 6, "failed expression: object.spec.replicas <= 5", id="false"),
    pytest.param(one("  object.spec.replicas <= 5\n"), 6, "failed expression: object.spec.replicas <= 5", id="trimmed"),
    pytest.param(one("object.spec.replicas <= 5", message=" too many "), 6, "too many", id="message"),
    pytest.param(one("object.spec.replicas <= 5", message="m", messageExpression="'n=' + string(object.spec.replicas)"),
                 6, "n=6", id="messageExpression"),
    pytest.param(one("object.spec.replicas <= 5", message="m", messageExpression="''"), 6, "m", id="empty-message"),
    pytest.param(one("object.spec.replicas <= 5", message="m", messageExpression="'a\\nb'"), 6, "m", id="multi-line"),
    pytest.param(one("object.spec.replicas <= 5", message="m", messageExpression="'x'.repeat(1)"), 6, "m",
                 id="message-does-not-compile"),
    pytest.param(one("object.spec.replicas <= 5", message="m", messageExpression="string(object.nope)"), 6, "m",
                 id="message-error"),
    pytest.param(one("object.spec.replicas <= 5", messageExpression="'x' * 1"), 6,
                 "failed expression: object.spec.replicas <= 5", id="message-error-no-message"),
    pytest.param(one("object.spec.replicas <= 5", messageExpression="'" + "x" * 5121 + "'", message="m"), 6, "m",
                 id="message-too-long"),
    pytest.param(one("object.spec.replicas <= 5"), None,
                 "expression 'object.spec.replicas <= 5' resulted in error: no such key: replicas", id="runtime-error"),
    pytest.param(one("object.spec.replicas"), 1, "compilation error: must evaluate to bool but got dyn", id="not-bool"),
    pytest.param([{"expression": "true"}, {"expression": "1 == 2"}], 1, "failed expression: 1 == 2", id="second"),
    pytest.param(one("oldObject == null && request.operation == 'CREATE'"), 1, None, id="old-object-null-on-create"),
    pytest.param(one("request.userInfo.username == 'alice' && 'dev' in request.userInfo.groups"), 1, None,
                 id="request-user"),
    pytest.param(one("request.kind.kind == 'Deployment' && request.resource.resource == 'deployments' && "
                     "request.requestResource.group == 'apps' && request.name == 'nginx' && "
                     "request.namespace == 'default' && !request.dryRun && request.options.kind == 'CreateOptions'"),
                 1, None, id="request-fields"),
    pytest.param(one("request.subResource == ''"), 1,
                 "expression 'request.subResource == ''' resulted in error: no such key: subResource",
                 id="omitempty-request-field"),
    pytest.param(one("namespaceObject.metadata.name == 'default' && namespaceObject.metadata.labels.team == 'a'"), 1,
                 None, id="namespace-object"),
]  # fmt: skip


@pytest.mark.parametrize(("validations", "replicas", "message"), VALIDATION_CASES)
def test_validations(tmp_path: Path, validations: list[dict[str, Any]], replicas: Any, message: str | None) -> None:
    loaded = policies(tmp_path, policy(validations=validations), binding(), resources=(namespace("default", team="a"),))
    request = request_from_objects(deployment(replicas), user="alice", groups=["dev"])
    decision = loaded.admit(request)
    assert decision.message == (DENIED + message if message else "")
    assert decision.allowed is (message is None)


@pytest.mark.parametrize(
    ("reason", "code"), [(None, 422), ("Invalid", 422), ("Forbidden", 403), ("Unauthorized", 401),
                         ("RequestEntityTooLarge", 413)],
)  # fmt: skip
def test_reason_and_code(tmp_path: Path, reason: str | None, code: int) -> None:
    validation = {"expression": "false"} | ({"reason": reason} if reason else {})
    decision = admit(tmp_path, [policy(validations=[validation]), binding()], deployment())
    assert (decision.code, decision.reason) == (code, reason or "Invalid")
    if reason == "Forbidden":
        assert decision.kubectl_text() == (
            'Error from server (Forbidden): deployments.apps "nginx" is forbidden: '
            + DENIED
            + "failed expression: false"
        )


def test_error_reason_is_invalid_even_with_a_reason(tmp_path: Path) -> None:
    validations = [{"expression": "object.nope == 1", "reason": "Forbidden"}]
    decision = admit(tmp_path, [policy(validations=validations), binding()], deployment())
    assert (decision.code, decision.reason) == (422, "Invalid")
    assert decision.message == DENIED + "expression 'object.nope == 1' resulted in error: no such key: nope"


@pytest.mark.parametrize(("failure_policy", "allowed"), [("Fail", False), ("Ignore", True)])
def test_failure_policy_on_errors(tmp_path: Path, failure_policy: str, allowed: bool) -> None:
    spec = {"failurePolicy": failure_policy, "validations": one("object.nope == 1")}
    assert admit(tmp_path, [policy(**spec), binding()], deployment()).allowed is allowed


def test_compile_error_text_and_problem(tmp_path: Path) -> None:
    loaded = policies(tmp_path, policy(validations=one("foo == 1")), binding())
    assert loaded.problems == [
        f'{tmp_path / "policies.yaml"}: document 0: spec.validations[0].expression: Invalid value: "foo == 1": '
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"
    ]
    decision = loaded.admit(request_from_objects(deployment()))
    assert decision.message == DENIED + (
        "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
        " | foo == 1\n | ^"
    )


def test_message_expressions_do_not_see_the_authorizer(tmp_path: Path) -> None:
    loaded = policies(tmp_path, policy(validations=one("false", messageExpression="string(authorizer)")), binding())
    assert "undeclared reference to 'authorizer'" in loaded.problems[0]
    assert loaded.admit(request_from_objects(deployment())).message == DENIED + "failed expression: false"


# -- variables ----------------------------------------------------------------------------------------------------


def test_variables_are_typed_and_composed(tmp_path: Path) -> None:
    variables = [{"name": "count", "expression": "object.spec.replicas + 1"},
                 {"name": "names", "expression": "object.spec.template.spec.containers.map(c, c.name)"},
                 {"name": "twice", "expression": "variables.count * 2"}]  # fmt: skip
    validations = one("variables.twice == 8 && variables.names == ['nginx'] && variables.names[0].startsWith('n')")
    assert admit(tmp_path, [policy(variables=variables, validations=validations), binding()], deployment(3)).allowed


def test_a_variable_sees_only_earlier_variables(tmp_path: Path) -> None:
    variables = [{"name": "a", "expression": "variables.b"}, {"name": "b", "expression": "1"}]
    loaded = policies(tmp_path, policy(variables=variables, validations=one("variables.b == 1")), binding())
    assert "undefined field 'b'" in loaded.problems[0]
    assert loaded.admit(request_from_objects(deployment())).allowed  # `a` is never read


def test_variable_errors(tmp_path: Path) -> None:
    variables = [{"name": "broken", "expression": "object.nope"}]
    decision = admit(tmp_path, [policy(variables=variables, validations=one("variables.broken == 1")), binding()],
                     deployment())  # fmt: skip
    assert decision.message == DENIED + (
        "expression 'variables.broken == 1' resulted in error: composited variable \"broken\" fails to evaluate: "
        "no such key: nope"
    )


def test_variable_errors_are_absorbed_like_any_error(tmp_path: Path) -> None:
    variables = [{"name": "broken", "expression": "object.nope"}]
    validations = one("true || variables.broken == 1")
    assert admit(tmp_path, [policy(variables=variables, validations=validations), binding()], deployment()).allowed


def test_a_variable_is_evaluated_once_per_pass(tmp_path: Path) -> None:
    expensive = "object.spec.template.spec.containers.all(c, c.name.size() > 0)"
    once = policy(variables=[{"name": "v", "expression": expensive}], validations=one("variables.v"))
    twice = policy(variables=[{"name": "v", "expression": expensive}], validations=one("variables.v && variables.v"))
    cost_once = admit(tmp_path, [once, binding()], deployment()).cost
    cost_twice = admit(tmp_path, [twice, binding()], deployment()).cost
    assert cost_twice - cost_once == 2  # only `variables.v` is read again (ident + select), not re-evaluated


# -- match conditions ---------------------------------------------------------------------------------------------

CONDITION_CASES = [
    pytest.param([("a", "true")], "Fail", DENIED + "failed expression: false", id="true"),
    pytest.param([("a", "true"), ("b", "false")], "Fail", "", id="false"),
    pytest.param([("a", "object.nope == 1")], "Fail",
                 DENIED + "expression 'object.nope == 1' resulted in error: no such key: nope", id="error"),
    pytest.param([("a", "object.nope == 1"), ("b", "object.nope2 == 1")], "Fail",
                 DENIED + "[expression 'object.nope == 1' resulted in error: no such key: nope, "
                          "expression 'object.nope2 == 1' resulted in error: no such key: nope2]", id="errors-aggregate"),  # noqa: E501
    pytest.param([("a", "object.nope == 1"), ("b", "false")], "Fail", "", id="false-wins-over-error"),
    pytest.param([("a", "object.nope == 1")], "Ignore", "", id="error-ignored"),
    pytest.param([("a", "namespaceObject == null")], "Fail", DENIED + "failed expression: false",
                 id="no-namespace-object"),
]  # fmt: skip


@pytest.mark.parametrize(("conditions", "failure_policy", "message"), CONDITION_CASES)
def test_match_conditions(tmp_path: Path, conditions: list[tuple[str, str]], failure_policy: str, message: str) -> None:
    spec = {"matchConditions": [{"name": n, "expression": e} for n, e in conditions], "failurePolicy": failure_policy,
            "validations": one("false")}  # fmt: skip
    assert admit(tmp_path, [policy(**spec), binding()], deployment()).message == message


# -- audit annotations --------------------------------------------------------------------------------------------


def test_audit_annotation_values(tmp_path: Path) -> None:
    annotations = [{"key": "null", "valueExpression": "null"}, {"key": "blank", "valueExpression": "'  '"},
                   {"key": "value", "valueExpression": "' x '"}]  # fmt: skip
    two = [policy(auditAnnotations=annotations), binding("b1", validationActions=["Audit"]),
           binding("b2", validationActions=["Audit"])]  # fmt: skip
    assert admit(tmp_path, two, deployment()).audit_annotations == {"p.example.com/value": "x"}


def test_audit_annotations_from_several_params_are_joined(tmp_path: Path) -> None:
    annotated = policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                       auditAnnotations=[{"key": "k", "valueExpression": "string(params.data.v)"}])  # fmt: skip
    bound = binding(paramRef={"selector": {}, "parameterNotFoundAction": "Deny"})
    maps = tuple({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "default"},
                  "data": {"v": v}} for n, v in (("a", "one"), ("b", "two"), ("c", "one")))  # fmt: skip
    assert admit(tmp_path, [annotated, bound], deployment(), resources=maps).audit_annotations == {
        "p.example.com/k": "one, two"
    }


@pytest.mark.parametrize(("failure_policy", "message"), [
    ("Fail", DENIED + "expression 'string(object.nope)' resulted in error: no such key: nope"), ("Ignore", "")])  # fmt: skip  # noqa: E501
def test_audit_annotation_errors(tmp_path: Path, failure_policy: str, message: str) -> None:
    annotated = policy(
        failurePolicy=failure_policy, auditAnnotations=[{"key": "k", "valueExpression": "string(object.nope)"}]
    )
    assert admit(tmp_path, [annotated, binding(validationActions=["Audit"])], deployment()).message == message


# -- binding actions ----------------------------------------------------------------------------------------------


def test_deny_and_audit(tmp_path: Path) -> None:
    validations = [{"expression": "true"}, {"expression": "false", "message": "I'm sorry Dave"}]
    decision = admit(tmp_path, [policy(validations=validations), binding(validationActions=["Deny", "Audit"])],
                     deployment())  # fmt: skip
    assert decision.message == DENIED + "I'm sorry Dave"
    failures = json.loads(decision.audit_annotations["validation.policy.admission.k8s.io/validation_failure"])
    assert failures == [{"message": "I'm sorry Dave", "policy": "p.example.com", "binding": "b.example.com",
                         "expressionIndex": 1, "validationActions": ["Deny", "Audit"]}]  # fmt: skip


@pytest.mark.parametrize(("version", "recorded"), [("1.36", 1), ("1.37", 2)])
def test_audited_failures_are_all_recorded_from_1_37(tmp_path: Path, version: str, recorded: int) -> None:
    """apiserver e5e88b808: before 1.37 each failure was published alone and only the first one kept the key."""
    validations = [{"expression": "false", "message": "one"}, {"expression": "false", "message": "two"}]
    files = [write(tmp_path / "policies.yaml", policy(validations=validations), binding(validationActions=["Audit"]))]
    decision = PolicySet.load(files, k8s_version=version).admit(request_from_objects(deployment()))
    failures = json.loads(decision.audit_annotations["validation.policy.admission.k8s.io/validation_failure"])
    assert [f["message"] for f in failures] == ["one", "two"][:recorded]


def test_first_denial_wins_policies_by_name(tmp_path: Path) -> None:
    docs = [policy("b-policy", validations=one("false", message="from b")), binding("bx", "b-policy"),
            policy("a-policy", validations=one("false", message="from a")), binding("by", "a-policy")]  # fmt: skip
    decision = admit(tmp_path, docs, deployment())
    assert decision.message == "ValidatingAdmissionPolicy 'a-policy' with binding 'by' denied request: from a"


def test_policy_without_binding_does_nothing(tmp_path: Path) -> None:
    assert admit(tmp_path, [policy(validations=one("false"))], deployment()).allowed


# -- params -------------------------------------------------------------------------------------------------------

PARAM_KIND = {"apiVersion": "v1", "kind": "ConfigMap"}


def config_map(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {"max": name}}  # fmt: skip


PARAM_CASES = [
    pytest.param({"name": "5", "parameterNotFoundAction": "Deny"}, deployment(3), "", id="by-name"),
    pytest.param({"name": "2", "parameterNotFoundAction": "Deny"}, deployment(3), DENIED + "max 2", id="by-name-deny"),
    pytest.param({"name": "9", "parameterNotFoundAction": "Deny"}, deployment(3), DENIED + "failed to configure binding:"  # noqa: E501
                 " no params found for policy binding with `Deny` parameterNotFoundAction", id="missing-deny"),
    pytest.param({"name": "9", "parameterNotFoundAction": "Allow"}, deployment(3), "", id="missing-allow"),
    pytest.param({"name": "2", "namespace": "other", "parameterNotFoundAction": "Deny"}, deployment(3),
                 DENIED + "max 2", id="other-namespace"),
    pytest.param({"selector": {"matchLabels": {"tier": "blue"}}, "parameterNotFoundAction": "Deny"}, deployment(3),
                 DENIED + "max 2", id="selector-every-param"),
    pytest.param({"selector": {"matchLabels": {"tier": "green"}}, "parameterNotFoundAction": "Deny"}, deployment(3), "",
                 id="selector-one"),
    pytest.param({"name": "5", "parameterNotFoundAction": "Deny"},
                 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"replicas": 1}},
                 DENIED + "failed to configure binding: cannot use namespaced paramRef in policy binding that matches "
                          "cluster-scoped resources", id="cluster-scoped-request"),
]  # fmt: skip


@pytest.mark.parametrize(("ref", "obj", "message"), PARAM_CASES)
def test_params(tmp_path: Path, ref: dict[str, Any], obj: dict[str, Any], message: str) -> None:
    rule = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    limited = policy(paramKind=PARAM_KIND, matchConstraints={"resourceRules": [rule]},
                     validations=one("object.spec.replicas <= int(params.data.max)",
                                     messageExpression="'max ' + params.data.max"))  # fmt: skip
    maps = (config_map("5", tier="blue", other="green"), config_map("2", tier="blue"), config_map("7", tier="green"),
            config_map("2", "other"))  # fmt: skip
    assert admit(tmp_path, [limited, binding(paramRef=ref)], obj, resources=maps).message == message


def test_params_are_null_without_param_ref(tmp_path: Path) -> None:
    checked = policy(paramKind=PARAM_KIND, validations=one("params == null"))
    assert admit(tmp_path, [checked, binding()], deployment()).allowed


def test_cluster_scoped_param_kind_rejects_a_namespace(tmp_path: Path) -> None:
    kind = {"apiVersion": "rules.example.com/v1", "kind": "Limit"}
    limit = {"apiVersion": "rules.example.com/v1", "kind": "Limit", "metadata": {"name": "l"}, "max": 1}
    checked = policy(paramKind=kind, validations=one("object.spec.replicas <= params.max"))
    ref = {"name": "l", "namespace": "default", "parameterNotFoundAction": "Deny"}
    decision = admit(tmp_path, [checked, binding(paramRef=ref)], deployment(), resources=(limit,))
    assert decision.message == DENIED + (
        "failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
    )
    del ref["namespace"]
    assert admit(tmp_path, [checked, binding(paramRef=ref)], deployment(2), resources=(limit,)).message == (
        DENIED + "failed expression: object.spec.replicas <= params.max"
    )


# -- cost ---------------------------------------------------------------------------------------------------------


def test_per_expression_cost_limit(tmp_path: Path) -> None:
    obj = deployment()
    obj["items"] = list(range(2000))
    expression = "object.items.all(x, object.items.all(y, y >= 0))"
    decision = admit(tmp_path, [policy(validations=one(expression)), binding()], obj)
    assert decision.message == DENIED + (
        f"expression '{expression}' resulted in error: operation cancelled: actual cost limit exceeded"
    )


def test_runtime_budget_per_binding(tmp_path: Path) -> None:
    obj = deployment()
    obj["items"] = list(range(440))
    expression = "object.items.all(x, object.items.all(y, y >= 0))"  # 970,643 each
    decision = admit(tmp_path, [policy(validations=one(expression) * 11), binding()], obj)
    assert decision.message == DENIED + (
        "validation failed due to running out of cost budget, no further validation rules will be run"
    )
    assert admit(tmp_path, [policy(validations=one(expression) * 10), binding()], obj).allowed


def test_deadline_interrupts(tmp_path: Path) -> None:
    loaded = policies(tmp_path, policy(validations=one("true")), binding())
    decision = loaded.admit(request_from_objects(deployment()), deadline=time.monotonic() - 1)
    assert decision.message == DENIED + "expression 'true' resulted in error: operation interrupted"


# -- authorizer ---------------------------------------------------------------------------------------------------

RBAC = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scaler}
rules: [{apiGroups: [apps], resources: [deployments], verbs: [update]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: scalers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: scaler}
subjects: [{kind: User, name: alice}]
"""


@pytest.mark.parametrize(("user", "allowed"), [("alice", True), ("bob", False)])
def test_authorizer(tmp_path: Path, user: str, allowed: bool) -> None:
    validations = one("authorizer.requestResource.check('update').allowed() && "
                      "authorizer.group('apps').resource('deployments').namespace('x').check('update').allowed()")  # fmt: skip  # noqa: E501
    loaded = policies(tmp_path, policy(validations=validations), binding())
    decision = loaded.admit(request_from_objects(deployment(), user=user), authorizer=RBACAuthorizer.from_yaml(RBAC))
    assert decision.allowed is allowed


def test_concurrent_admissions_agree(tmp_path: Path) -> None:
    variables = [{"name": "count", "expression": "object.spec.replicas"}]
    loaded = policies(tmp_path, policy(variables=variables, validations=one("variables.count <= 5")), binding())
    requests = [request_from_objects(deployment(n % 10)) for n in range(200)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda r: loaded.admit(r).allowed, requests))
    assert answers == [n % 10 <= 5 for n in range(200)]


@pytest.mark.parametrize(("version", "detail"), [("1.31", "must evaluate to bool"),
                                                 ("1.32", "must evaluate to bool but got dyn")])  # fmt: skip
def test_the_result_type_error_follows_the_version(tmp_path: Path, version: str, detail: str) -> None:
    """apiserver 0e6467b27 (1.32) added the type the expression has."""
    files = [write(tmp_path / "policies.yaml", policy(validations=one("object.spec.replicas")), binding())]
    loaded = PolicySet.load(files, k8s_version=version)
    assert loaded.admit(request_from_objects(deployment(1))).message == DENIED + "compilation error: " + detail
