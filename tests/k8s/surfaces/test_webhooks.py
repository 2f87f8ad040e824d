"""Admission webhook matchConditions: create-time validation (kubernetes pkg/apis/admissionregistration/validation
validation_test.go), the CEL environment (apiserver plugin/cel compile.go), and dispatch (webhook/generic
webhook.go ShouldCallHook, matchconditions/matcher_test.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import kcel
from kcel.k8s.admission.request import request_from_objects
from kcel.k8s.surfaces import webhooks as w
from kcel.libs.k8s_authz import AlwaysAllow, authorizer_value

NAME_MESSAGE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
)
RULE = {"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": ["a"]}


def hook(name: str = "webhook.k8s.io", **fields: Any) -> dict[str, Any]:
    """A webhook that is valid on create; `fields` override (None removes a field)."""
    base: dict[str, Any] = {"name": name, "clientConfig": {"url": "https://example.com"}, "sideEffects": "None",
                            "admissionReviewVersions": ["v1beta1"]}  # fmt: skip
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def config(*hooks: dict[str, Any], kind: str = w.VALIDATING, name: str = "config") -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(hooks)}  # fmt: skip


def errors(document: dict[str, Any], version: str = "1.37") -> tuple[str, ...]:
    return w.check(document, "test", version).errors


# -- create-time validation: validation_test.go TestValidate{Validating,Mutating}WebhookConfiguration -------------

CREATE_CASES = [
    ("AdmissionReviewVersions are required", [hook(admissionReviewVersions=None)],
     ("webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",)),
    ("bad AdmissionReviewVersion value", [hook(admissionReviewVersions=["0v"])],
     (f'webhooks[0].admissionReviewVersions[0]: Invalid value: "0v": {DNS1035}',
      'webhooks[0].admissionReviewVersions: Invalid value: ["0v"]: must include at least one of v1, v1beta1')),
    ("valid AdmissionReviewVersion", [hook()], ()),
    ("mix of accepted and unaccepted AdmissionReviewVersion",
     [hook(admissionReviewVersions=["v1beta1", "invalid-version"])], ()),
    ("duplicate AdmissionReviewVersion", [hook(admissionReviewVersions=["v1beta1", "v1beta1"])],
     ('webhooks[0].admissionReviewVersions[1]: Invalid value: "v1beta1": duplicate version',)),
    ("all webhooks must have a fully qualified name", [hook(), hook("k8s.io"), hook("")],
     ('webhooks[1].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots',
      "webhooks[2].name: Required value")),
    ("webhooks must have unique names when created", [hook(), hook()],
     ('webhooks[1].name: Duplicate value: "webhook.k8s.io"',)),
    ("operations must not be empty or nil", [hook(rules=[{**RULE, "operations": []}, {**RULE, "operations": None}])],
     ("webhooks[0].rules[0].operations: Required value", "webhooks[0].rules[1].operations: Required value")),
    ('"" is NOT a valid operation', [hook(rules=[{**RULE, "operations": ["CREATE", ""]}])],
     ('webhooks[0].rules[0].operations[1]: Unsupported value: "": supported values: "*", "CONNECT", "CREATE", '
      '"DELETE", "UPDATE"',)),
    ("operation must be create/update/delete/connect", [hook(rules=[{**RULE, "operations": ["PATCH"]}])],
     ('webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", '
      '"DELETE", "UPDATE"',)),
    ("wildcard operation cannot be mixed with other strings", [hook(rules=[{**RULE, "operations": ["CREATE", "*"]}])],
     ("webhooks[0].rules[0].operations: Invalid value: [\"CREATE\",\"*\"]: if '*' is present, must not specify other "
      "operations",)),
    ('resource "*" can co-exist with resources that have subresources',
     [hook(rules=[{**RULE, "resources": ["*", "a/b", "a/*", "*/b"]}])], ()),
    ('resource "*" cannot mix with resources that don\'t have subresources',
     [hook(rules=[{**RULE, "resources": ["*", "a"]}])],
     ("webhooks[0].rules[0].resources: Invalid value: [\"*\",\"a\"]: if '*' is present, must not specify other "
      "resources without subresources",)),
    ("resource a/* cannot mix with a/x", [hook(rules=[{**RULE, "resources": ["a/*", "a/x"]}])],
     ("webhooks[0].rules[0].resources[1]: Invalid value: \"a/x\": if 'a/*' is present, must not specify a/x",)),
    ("resource a/* can mix with a", [hook(rules=[{**RULE, "resources": ["a/*", "a"]}])], ()),
    ("resource */a cannot mix with x/a", [hook(rules=[{**RULE, "resources": ["*/a", "x/a"]}])],
     ("webhooks[0].rules[0].resources[1]: Invalid value: \"x/a\": if '*/a' is present, must not specify x/a",)),
    ("resource */* cannot mix with other resources", [hook(rules=[{**RULE, "resources": ["*/*", "a"]}])],
     ("webhooks[0].rules[0].resources: Invalid value: [\"*/*\",\"a\"]: if '*/*' is present, must not specify other "
      "resources",)),
    ("FailurePolicy can only be Ignore or Fail", [hook(failurePolicy="other")],
     ('webhooks[0].failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"',)),
    ("SideEffects are required", [hook(sideEffects=None)],
     ("webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",)),
    ("SideEffects can only be None or NoneOnDryRun when created", [hook(sideEffects="other")],
     ('webhooks[0].sideEffects: Unsupported value: "other": supported values: "None", "NoneOnDryRun"',)),
    ("both service and URL missing", [hook(clientConfig={})],
     ("webhooks[0].clientConfig: Required value: exactly one of url or service is required",)),
    ("both service and URL provided",
     [hook(clientConfig={"url": "example.com/k8s/webhook", "service": {"namespace": "ns", "name": "n", "port": 443}})],
     ("webhooks[0].clientConfig: Required value: exactly one of url or service is required",)),
    ("timeout seconds cannot be greater than 30", [hook(timeoutSeconds=31)],
     ("webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",)),
    ("timeout seconds cannot be smaller than 1", [hook(timeoutSeconds=0)],
     ("webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds",)),
    ("timeout seconds must be positive", [hook(timeoutSeconds=-1)],
     ("webhooks[0].timeoutSeconds: Invalid value: -1: the timeout value must be between 1 and 30 seconds",)),
    ("valid timeout seconds", [hook(timeoutSeconds=1), hook("webhook2.k8s.io", timeoutSeconds=15),
                               hook("webhook3.k8s.io", timeoutSeconds=30)], ()),
    ("single match condition must have a name", [hook(matchConditions=[{"expression": "true"}])],
     ("webhooks[0].matchConditions[0].name: Required value",)),
    ("all match conditions must have a name",
     [hook(matchConditions=[{"expression": "true"}, {"expression": "true"}]),
      hook("webhook2.k8s.io", matchConditions=[{"name": "", "expression": "true"}])],
     ("webhooks[0].matchConditions[0].name: Required value", "webhooks[0].matchConditions[1].name: Required value",
      "webhooks[1].matchConditions[0].name: Required value")),
    ("single match condition must have a qualified name",
     [hook(matchConditions=[{"name": "-hello", "expression": "true"}])],
     (f'webhooks[0].matchConditions[0].name: Invalid value: "-hello": {NAME_MESSAGE}',)),
    ("all match conditions must have qualified names",
     [hook(matchConditions=[{"name": ".io", "expression": "true"}, {"name": "thing.test.com", "expression": "true"}]),
      hook("webhook2.k8s.io", matchConditions=[{"name": "some name", "expression": "true"}])],
     (f'webhooks[0].matchConditions[0].name: Invalid value: ".io": {NAME_MESSAGE}',
      f'webhooks[1].matchConditions[0].name: Invalid value: "some name": {NAME_MESSAGE}')),
    ("expression is required", [hook(matchConditions=[{"name": "webhook.k8s.io"}])],
     ("webhooks[0].matchConditions[0].expression: Required value",)),
    ("expression is required to have some value",
     [hook(matchConditions=[{"name": "webhook.k8s.io", "expression": ""}])],
     ("webhooks[0].matchConditions[0].expression: Required value",)),
    ("unique names same hook", [hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "true"}] * 2)],
     ('webhooks[0].matchConditions[1].name: Duplicate value: "webhook.k8s.io"',)),
    ("repeat names allowed across different hooks",
     [hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "true"}]),
      hook("webhook2.k8s.io", matchConditions=[{"name": "webhook.k8s.io", "expression": "true"}])], ()),
    ("must evaluate to bool", [hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "6"}])],
     ('webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool but got int',)),
    ("max of 64 match conditions", [hook(matchConditions=[{"name": f"c{i}", "expression": "true"} for i in range(65)])],
     ("webhooks[0].matchConditions: Too many: 65: must have at most 64 items",)),
]  # fmt: skip


@pytest.mark.parametrize("kind", [w.VALIDATING, w.MUTATING])
@pytest.mark.parametrize(("name", "hooks", "expected"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_create_validation(kind: str, name: str, hooks: list[dict[str, Any]], expected: tuple[str, ...]) -> None:
    assert errors(config(*copy.deepcopy(hooks), kind=kind)) == expected


@pytest.mark.xfail(strict=True, reason="kcel's parser words this ANTLR error differently (mismatched input)")
def test_invalid_expression_text_as_upstream() -> None:
    document = config(hook(matchConditions=[{"name": "webhook.k8s.io", "expression": "object.x in [1, 2, "}]))
    assert errors(document) == (
        'webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: '
        "ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'",
    )


def test_invalid_expression_is_compiled_trimmed() -> None:
    """validateMatchCondition compiles strings.TrimSpace(expression) and shows it as the bad value."""
    (error,) = errors(config(hook(matchConditions=[{"name": "a", "expression": "  object.x in [1, 2, "}])))
    assert error.startswith('webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": '
                            "compilation failed: ERROR: <input>:1:19: Syntax error:")  # fmt: skip


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.31", 'Invalid value: "6": must evaluate to bool'),  # "but got" arrived in 1.32
        ("1.32", 'Invalid value: "6": must evaluate to bool but got int'),
    ],
)
def test_return_type_text_by_version(version: str, expected: str) -> None:
    document = config(hook(matchConditions=[{"name": "a", "expression": "6"}]))
    assert errors(document, version) == (f"webhooks[0].matchConditions[0].expression: {expected}",)


@pytest.mark.parametrize(
    ("version", "rendered"), [("1.33", '[]string{"invalidVersion"}'), ("1.34", '["invalidVersion"]')]
)
def test_invalid_review_versions_render_by_version(version: str, rendered: str) -> None:
    """validation_test.go `Invalid value: []string{"invalidVersion"}`, which 1.34 prints as JSON."""
    document = config(hook(admissionReviewVersions=["invalidVersion"]))
    assert errors(document, version)[-1] == (
        f"webhooks[0].admissionReviewVersions: Invalid value: {rendered}: must include at least one of v1, v1beta1"
    )


def test_mutating_only_fields_and_selectors() -> None:
    selector = {"matchLabels": {"-x": "y"}, "matchExpressions": [{"key": "a", "operator": "In"},
                                                                 {"key": "b", "operator": "Exists", "values": ["c"]},
                                                                 {"key": "c", "operator": "Near"}]}  # fmt: skip
    document = config(hook(reinvocationPolicy="Sometimes", namespaceSelector=selector), kind=w.MUTATING)
    assert errors(document) == (
        f'webhooks[0].namespaceSelector.matchLabels: Invalid value: "-x": {NAME_MESSAGE}',
        "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` "
        "is 'In' or 'NotIn'",
        "webhooks[0].namespaceSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is "
        "'Exists' or 'DoesNotExist'",
        'webhooks[0].namespaceSelector.matchExpressions[2].operator: Invalid value: "Near": not a valid selector '
        "operator",
        'webhooks[0].reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"',
    )
    assert errors({**document, "kind": w.VALIDATING})[-1].startswith("webhooks[0].namespaceSelector")  # no such field


def test_metadata_and_malformed_documents() -> None:
    assert errors(config(hook(), name="Bad_Name"))[0].startswith(
        'metadata.name: Invalid value: "Bad_Name": a lowercase'
    )
    assert errors({**config(), "metadata": {}}) == ("metadata.name: Required value: name or generateName is required",)
    assert errors({**config(hook()), "metadata": {"generateName": "cfg-", "namespace": "ignored"}}) == ()
    assert errors({**config(), "webhooks": "x"}) == ("webhooks: must be an array",)
    assert errors(config(hook(timeoutSeconds="10"))) == ("webhooks[0].timeoutSeconds: must be an integer",)
    assert errors(config(hook(rules=[{"operations": "CREATE"}]))) == (
        "webhooks[0].rules[0].operations: must be an array",
    )
    beta = {**config(hook()), "apiVersion": "admissionregistration.k8s.io/v1beta1"}
    assert errors(beta) == (
        'no matches for kind "ValidatingWebhookConfiguration" in version "admissionregistration.k8s.io/v1beta1"',
    )
    checked = w.check(
        config(hook(matchConditions=[{"name": "a", "expression": "true"}] * 2), hook("b.k8s.io")), "", "1.37"
    )
    assert (checked.kind, checked.name, checked.expressions) == (w.VALIDATING, "config", 2)


# -- the environment ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("object.spec.replicas > 1 && oldObject == null", ""),
        ("namespaceObject == null", ""),  # declared by createEnvForOpts, null for webhooks
        ("request.userInfo.username == 'a' && request.resource.group == 'apps' && request.dryRun", ""),
        ("authorizer.group('apps').resource('deployments').check('get').allowed()", ""),
        ("authorizer.requestResource.check('get').allowed()", ""),
        ("params.x == 1", "undeclared reference to 'params'"),
        ("variables.x == 1", "undeclared reference to 'variables'"),
        ("request.nope == 1", "undefined field 'nope'"),
    ],
)
def test_environment(expression: str, problem: str) -> None:
    env = w.webhook_environment("1.37")
    if not problem:
        assert env.compile(expression).output_type == kcel.Env().compile("true").output_type
        return
    with pytest.raises(kcel.CompileError, match=problem):
        env.compile(expression)


def test_environment_is_registered() -> None:
    assert w.ENVIRONMENTS["webhook-match"]("1.30").is_variable("authorizer.requestResource")
    assert w.KINDS == (("admissionregistration.k8s.io", w.VALIDATING), ("admissionregistration.k8s.io", w.MUTATING))


@pytest.mark.parametrize(("version", "cost"), [("1.30", 5), ("1.31", 5), ("1.32", 350_004), ("1.37", 350_004)])
def test_strict_cost_enforcement_by_version(version: str, cost: int) -> None:
    """Before StrictCostEnforcementForWebhooks, library.CostEstimator was not in the program: each call costs 1."""
    program = w.webhook_environment(version, "stored").compile(
        "authorizer.group('').resource('pods').check('get').allowed()"
    )
    value = authorizer_value(AlwaysAllow())
    assert program.evaluate_with_cost({"authorizer": value}) == (True, cost)


# -- dispatch: ShouldCallHook and matchconditions.Matcher.Match ---------------------------------------------------

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}}, "spec": {"replicas": 3},
}  # fmt: skip
DEPLOYMENT_RULE = {"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}
ERROR = "expression 'object.spec.nope == 1' resulted in error: no such key: nope"


def conditions(*expressions: str) -> list[dict[str, str]]:
    return [{"name": f"c{i}", "expression": e} for i, e in enumerate(expressions)]


def one(*expressions: str, policy: str | None = None, version: str = "1.37") -> w.Dispatch:
    """One webhook with these match conditions, for the Deployment's CREATE."""
    target = hook(
        "w.example.com", rules=[DEPLOYMENT_RULE], matchConditions=conditions(*expressions), failurePolicy=policy
    )
    return w.dispatch([config(target)], request_from_objects(DEPLOYMENT, user="alice"), k8s_version=version)


# matcher_test.go TestMatch with real expressions: (name, expressions, failurePolicy, matched, reason, detail)
MATCH_CASES = [
    ("single matches", ["true"], None, True, "", ""),
    ("multiple match", ["true", "true"], None, True, "", ""),
    ("single no match", ["false"], None, False, "matchCondition", "c0"),
    ("multiple no match", ["false", "false"], None, False, "matchCondition", "c0"),
    ("mixed with no match first", ["false", "true"], None, False, "matchCondition", "c0"),
    ("mixed with no match last", ["true", "false"], None, False, "matchCondition", "c1"),
    ("mixed with no match middle", ["true", "false", "true"], None, False, "matchCondition", "c1"),
    ("mix of true, errors and false", ["true", "object.spec.nope == 1", "false", "true", "object.spec.nope == 1"],
     "Fail", False, "matchCondition", "c2"),
    ("mix of true, errors and fail policy ignore", ["true", "object.spec.nope == 1", "true"], "Ignore", False,
     "matchConditionError", ERROR),
]  # fmt: skip


@pytest.mark.parametrize(("name", "expressions", "policy", "matched", "reason", "detail"), MATCH_CASES,
                         ids=[c[0] for c in MATCH_CASES])  # fmt: skip
def test_match(name: str, expressions: list[str], policy: str | None, matched: bool, reason: str, detail: str) -> None:
    result = one(*expressions, policy=policy)
    assert result.allowed
    assert result.hooks == (w.HookOutcome("config", "w.example.com", matched, reason, detail),)
    assert result.called == (("w.example.com",) if matched else ())


@pytest.mark.parametrize("policy", [None, "Fail"])  # an unset failurePolicy is Fail
def test_errors_under_fail_reject_the_request(policy: str | None) -> None:
    """`mix of true, errors and fail policy fail`: the aggregate of the errors, as NewForbidden words it."""
    result = one("true", "object.spec.nope == 1", "true", "object.metadata.nope == 'x'", policy=policy)
    error = f"[{ERROR}, expression 'object.metadata.nope == 'x'' resulted in error: no such key: nope]"
    assert (result.allowed, result.code, result.called) == (False, 403, ())
    assert result.message == f'deployments.apps "web" is forbidden: {error}'
    assert result.hooks[-1] == w.HookOutcome("config", "w.example.com", False, "rejected", error)


def test_forbidden_message() -> None:
    """webhook_test.go: `deployments.apps "name" is forbidden: test error`; no name, no resource."""
    apps = w.GVR("apps", "v1", "deployments")
    assert w.forbidden(apps, "name", "test error") == 'deployments.apps "name" is forbidden: test error'
    assert w.forbidden(apps, "", "e") == "deployments.apps is forbidden: e"
    assert w.forbidden(w.GVR("", "v1", "pods"), "p", "e") == 'pods "p" is forbidden: e'
    assert w.forbidden(w.GVR("", "", ""), "p", "e") == "forbidden: e"


@pytest.mark.parametrize(("version", "allowed"), [("1.31", True), ("1.37", False)])
def test_match_conditions_budget(version: str, allowed: bool) -> None:
    """RuntimeCELCostBudgetMatchConditions is 2,500,000: eight strict authorization checks exceed it."""
    result = one(*["authorizer.group('').resource('pods').check('get').allowed() || true"] * 8, version=version)
    assert result.allowed is allowed
    if not allowed:
        assert result.message == (
            'deployments.apps "web" is forbidden: validation failed due to running out of cost budget, no further '
            "validation rules will be run"
        )


def test_what_the_conditions_see() -> None:
    """CreateAdmissionRequest: the matched (equivalent) kind, the request's own resource; namespaceObject is null."""
    rule = {**DEPLOYMENT_RULE, "apiVersions": ["v1beta1"]}
    expression = ("request.kind.version == 'v1beta1' && request.resource.version == 'v1' && namespaceObject == null "
                  "&& request.userInfo.username == 'alice' && request.namespace == 'prod'")  # fmt: skip
    target = hook("w.example.com", rules=[rule], matchConditions=conditions(expression))
    result = w.dispatch([config(target)], request_from_objects(DEPLOYMENT, user="alice"))
    assert result.called == ("w.example.com",)
    exact = hook("w.example.com", rules=[rule], matchPolicy="Exact")
    assert w.dispatch([config(exact)], request_from_objects(DEPLOYMENT)).hooks[0].reason == "rules"


def test_order_selectors_and_rules() -> None:
    """Configurations by name, webhooks as listed; namespace selector, object selector, then rules."""
    b = config(hook("b1.example.com", rules=[DEPLOYMENT_RULE], objectSelector={"matchLabels": {"app": "db"}}),
               hook("b2.example.com", rules=[DEPLOYMENT_RULE]), name="b")  # fmt: skip
    a = config(hook("a1.example.com", rules=[DEPLOYMENT_RULE], namespaceSelector={"matchLabels": {"env": "prod"}}),
               hook("a2.example.com", rules=[{**DEPLOYMENT_RULE, "resources": ["pods"]}]), name="a")  # fmt: skip
    request = request_from_objects(DEPLOYMENT)
    result = w.dispatch([b, a], request)
    assert [(h.configuration, h.webhook, h.reason) for h in result.hooks] == [
        ("a", "a1.example.com", "namespaceSelector"), ("a", "a2.example.com", "rules"),
        ("b", "b1.example.com", "objectSelector"), ("b", "b2.example.com", ""),
    ]  # fmt: skip
    prod = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}
    assert w.dispatch([b, a], request, namespaces=[prod]).called == ("a1.example.com", "b2.example.com")


def test_mutating_webhooks_before_a_rejection_are_called() -> None:
    first = hook("a.example.com", rules=[DEPLOYMENT_RULE])
    failing = hook("b.example.com", rules=[DEPLOYMENT_RULE], matchConditions=conditions("object.spec.nope == 1"))
    request = request_from_objects(DEPLOYMENT)
    mutating = w.dispatch([config(first, failing, kind=w.MUTATING)], request)
    validating = w.dispatch([config(first, failing)], request)
    assert (mutating.allowed, mutating.called) == (False, ("a.example.com",))
    assert (validating.allowed, validating.called) == (False, ())
    with pytest.raises(ValueError, match="dispatched separately"):
        w.dispatch([config(first, kind=w.MUTATING), config(failing)], request)


@pytest.mark.parametrize(("version", "exempt"), [("1.31", False), ("1.32", True)])
def test_admission_configuration_requests_are_exempt(version: str, exempt: bool) -> None:
    """IsExemptAdmissionConfigurationResource (MutatingAdmissionPolicy from 1.32)."""
    rule = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "p"},
    }
    result = w.dispatch([config(hook(rules=[rule]))], request_from_objects(policy), k8s_version=version)
    assert result.hooks[0].reason == ("exempt" if exempt else "")
    webhook_config = request_from_objects(config(hook()))
    assert w.dispatch([config(hook(rules=[rule]))], webhook_config).hooks[0].reason == "exempt"


def test_invalid_configuration_is_not_dispatched() -> None:
    with pytest.raises(w.ConfigurationError) as raised:
        w.dispatch([config(hook(sideEffects=None))], request_from_objects(DEPLOYMENT))
    assert raised.value.checked.errors == (
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
    )


def test_namespace_requests_read_the_namespace_labels() -> None:
    """GetNamespaceLabels: a namespace being created has its own labels; one being deleted is looked up by name."""
    selector = {"matchLabels": {"team": "a"}}
    rule = {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}
    target = config(hook(rules=[rule], namespaceSelector=selector))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}}
    assert w.dispatch([target], request_from_objects(namespace)).called == ("webhook.k8s.io",)
    deleted = {**request_from_objects(namespace, operation="DELETE"), "name": "ns1", "namespace": "ns1"}
    assert w.dispatch([target], deleted).hooks[0].reason == "namespaceSelector"  # not given: only its name label
    assert w.dispatch([target], deleted, namespaces=[namespace]).called == ("webhook.k8s.io",)


def test_non_string_keys_are_malformed() -> None:
    document = config(hook(namespaceSelector={"matchLabels": {1: "a"}}))
    assert errors(document) == ("webhooks: object keys must be strings",)  # YAML may have them, JSON cannot
