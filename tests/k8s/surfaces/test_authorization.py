"""Structured authorization configuration: loading and validation (apiserver pkg/apis/apiserver/validation
validation_test.go TestValidateAuthorizationConfiguration / TestValidateAndCompileMatchConditions), the CEL
environment (pkg/authorization/cel compile_test.go) and the chain (plugin/pkg/authorizer/webhook webhook_v1_test.go
TestV1WebhookMatchConditions)."""

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.surfaces import authorization as az

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def webhook(name: str = "default", **fields: Any) -> dict[str, Any]:
    """validation_test.go's "bare minimum configuration with Webhook"; `fields` override (None removes one)."""
    hook: dict[str, Any] = {
        "timeout": "5s", "authorizedTTL": "5m", "unauthorizedTTL": "30s", "failurePolicy": "NoOpinion",
        "subjectAccessReviewVersion": "v1", "matchConditionSubjectAccessReviewVersion": "v1",
        "connectionInfo": {"type": "InClusterConfig"},
    }  # fmt: skip
    hook.update(fields)
    return {"type": "Webhook", "name": name, "webhook": {k: v for k, v in hook.items() if v is not None}}


def configuration(*authorizers: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"apiserver.config.k8s.io/{version}", "kind": "AuthorizationConfiguration",
            "authorizers": list(authorizers)}  # fmt: skip


def errors(document: dict[str, Any], version: str = "1.37") -> tuple[str, ...]:
    return az.check(document, "test", version).errors


# -- TestValidateAuthorizationConfiguration (kube-apiserver passes a nil path: fields sit under authorizers[i]) -----

VALIDATION_CASES = [
    ("at least one authorizer should be defined", [],
     ("authorizers: Required value: at least one authorization mode must be defined",)),
    ("type is required", [{"type": "", "name": ""}], ("authorizers[0].type: Required value",)),
    ("authorizer names should be of non-zero length", [{"type": "RBAC", "name": ""}],
     ("authorizers[0].name: Required value",)),
    ("authorizer names should be unique", [{"type": "RBAC", "name": "foo"}, {"type": "Node", "name": "foo"}],
     ('authorizers[1].name: Duplicate value: "foo"',)),
    ("authorizer names should not be invalid DNS1123 subdomains", [{"type": "RBAC", "name": "FOO.example.domain"}],
     (f'authorizers[0].name: Invalid value: "FOO.example.domain": authorizer name is invalid: {SUBDOMAIN}',)),
    ("bare minimum configuration with Webhook", [webhook()], ()),
    ("bare minimum configuration with Webhook and MatchConditions",
     [webhook(matchConditions=[
         {"expression": "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'"},
         {"expression": "request.user == 'admin'"}])], ()),
    ("bare minimum configuration with multiple webhooks", [webhook(), webhook("second-webhook")], ()),
    ("configuration with unknown types", [{"type": "Foo", "name": "foo"}],
     ('authorizers[0].type: Unsupported value: "Foo": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", '
      '"Node", "RBAC", "Webhook"',)),
    ("configuration with not repeatable types", [{"type": "RBAC", "name": "rbac"}, {"type": "RBAC", "name": "rbac-2"}],
     ('authorizers[1].type: Duplicate value: "RBAC"',)),
    ("when type=Webhook, webhook needs to be defined", [{"type": "Webhook", "name": "default"}],
     ("authorizers[0].webhook: Required value: required when type=Webhook",)),
    ("when type!=Webhook, webhooks needs to be nil", [{"type": "RBAC", "name": "rbac", "webhook": {}}],
     ('authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook',)),
    ("timeout should be specified", [webhook(timeout=None)], ("authorizers[0].timeout: Required value",)),
    ("timeout shouldn't be zero", [webhook(timeout="0s")], ("authorizers[0].timeout: Required value",)),
    ("timeout shouldn't be negative", [webhook(timeout="-30s")],
     ('authorizers[0].timeout: Invalid value: "-30s": must be > 0s and <= 30s',)),
    ("timeout shouldn't be greater than 30seconds", [webhook(timeout="60s")],
     ('authorizers[0].timeout: Invalid value: "1m0s": must be > 0s and <= 30s',)),
    ("authorizedTTL is defaulted when absent", [webhook(authorizedTTL=None, unauthorizedTTL=None)], ()),
    ("authorizedTTL shouldn't be negative", [webhook(authorizedTTL="-30s")],
     ('authorizers[0].authorizedTTL: Invalid value: "-30s": must be > 0s',)),
    ("unauthorizedTTL shouldn't be negative", [webhook(unauthorizedTTL="-30s")],
     ('authorizers[0].unauthorizedTTL: Invalid value: "-30s": must be > 0s',)),
    ("SAR should be defined", [webhook(subjectAccessReviewVersion=None)],
     ("authorizers[0].subjectAccessReviewVersion: Required value",)),
    ("SAR should be one of v1 and v1beta1", [webhook(subjectAccessReviewVersion="v2beta1")],
     ('authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2beta1": supported values: "v1", "v1beta1"',)),
    ("MatchConditionSAR should be defined",
     [webhook(matchConditionSubjectAccessReviewVersion=None, matchConditions=[{"expression": "true"}])],
     ("authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are "
      "specified",)),
    ("MatchConditionSAR must not be anything other than v1",
     [webhook(matchConditionSubjectAccessReviewVersion="v1beta1")],
     ('authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: '
      '"v1"',)),
    ("failurePolicy should be defined", [webhook(failurePolicy=None)],
     ("authorizers[0].failurePolicy: Required value",)),
    ('failurePolicy should be one of "NoOpinion" or "Deny"', [webhook(failurePolicy="AlwaysAllow")],
     ('authorizers[0].failurePolicy: Unsupported value: "AlwaysAllow": supported values: "NoOpinion", "Deny"',)),
    ("connectionInfo should be defined", [webhook(connectionInfo=None)],
     ("authorizers[0].connectionInfo.type: Required value",)),
    ("connectionInfo should be one of InClusterConfig or KubeConfigFile",
     [webhook(connectionInfo={"type": "ExternalClusterConfig"})],
     ('authorizers[0].connectionInfo.type: Unsupported value: {"Type":"ExternalClusterConfig","KubeConfigFile":null}: '
      'supported values: "InClusterConfig", "KubeConfigFile"',)),
    ("if connectionInfo=InClusterConfig, then kubeConfigFile should be nil",
     [webhook(connectionInfo={"type": "InClusterConfig", "kubeConfigFile": ""})],
     ('authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "": can only be set when type=KubeConfigFile',)),
    ("if connectionInfo=KubeConfigFile, then KubeConfigFile should be defined",
     [webhook(connectionInfo={"type": "KubeConfigFile"})],
     ("authorizers[0].connectionInfo.kubeConfigFile: Required value",)),
    ("if connectionInfo=KubeConfigFile, it must be an absolute path",
     [webhook(connectionInfo={"type": "KubeConfigFile", "kubeConfigFile": "../some/relative/path/kubeconfig"})],
     ('authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "../some/relative/path/kubeconfig": must be an '
      "absolute path",)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "authorizers", "expected"), VALIDATION_CASES, ids=[c[0] for c in VALIDATION_CASES])
def test_validate_authorization_configuration(
    name: str, authorizers: list[dict[str, Any]], expected: tuple[str, ...]
) -> None:
    assert errors(configuration(*authorizers)) == expected


def test_struct_bad_value_before_1_34() -> None:
    """connectionInfo's bad value is the Go struct: `%#v` before 1.34, JSON (Go field names) from 1.34."""
    document = configuration(webhook(connectionInfo={"type": "ExternalClusterConfig"}))
    assert errors(document, "1.33") == (
        "authorizers[0].connectionInfo.type: Unsupported value: apiserver.WebhookConnectionInfo"
        '{Type:"ExternalClusterConfig", KubeConfigFile:(*string)(nil)}: supported values: "InClusterConfig", '
        '"KubeConfigFile"',
    )


def test_non_webhook_names_must_be_the_lowercased_type() -> None:
    """config.go LoadAndValidateData, only once the configuration validates."""
    assert errors(configuration({"type": "RBAC", "name": "foo"}, {"type": "Node", "name": "node"})) == (
        "expected name rbac for authorizer RBAC instead of foo",
    )
    assert errors(configuration({"type": "RBAC", "name": "Foo"}))[0].startswith("authorizers[0].name: Invalid value")


# -- TestValidateAndCompileMatchConditions --------------------------------------------------------------------------

COMPILE_CASES = [
    ("match conditions are used", ["has(request.resourceAttributes) && request.resourceAttributes.namespace == "
                                   "'kube-system'", "request.user == 'admin'"], ""),
    ("match conditions with invalid expressions", ["  "], "matchConditions[0].expression: Required value"),
    ("match conditions with duplicate expressions", ["request.user == 'admin'"] * 2,
     "matchConditions[1].expression: Duplicate value: \"request.user == 'admin'\""),
    ("match conditions with undeclared reference", ["test"],
     "matchConditions[0].expression: Invalid value: \"test\": compilation failed: ERROR: <input>:1:1: undeclared "
     "reference to 'test' (in container '')\n | test\n | ^"),
    ("one compilation error", ["request.user == 'alice'", "request.uid == '1'", "('group3' in request.group)"],
     "matchConditions[2].expression: Invalid value: \"('group3' in request.group)\": compilation failed: ERROR: "
     "<input>:1:21: undefined field 'group'\n | ('group3' in request.group)\n | ....................^"),
    ("wrong return type", ["request.user"],
     'matchConditions[0].expression: Invalid value: "request.user": must evaluate to bool but got string'),
    ("type check in nonResourceAttributes", ["request.user == 'bob'", "request.nonResourceAttributes.verb == 2"],
     "matchConditions[1].expression: Invalid value: \"request.nonResourceAttributes.verb == 2\": compilation "
     "failed: ERROR: <input>:1:36: found no matching overload for '_==_' applied to '(string, int)'\n"
     " | request.nonResourceAttributes.verb == 2\n | ...................................^"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "expressions", "expected"), COMPILE_CASES, ids=[c[0] for c in COMPILE_CASES])
def test_compile_match_conditions(name: str, expressions: list[str], expected: str) -> None:
    document = configuration(webhook(matchConditions=[{"expression": e} for e in expressions]))
    assert errors(document) == ((f"authorizers[0].{expected}",) if expected else ())


def test_syntax_error_text_as_upstream() -> None:
    document = configuration(webhook(matchConditions=[{"expression": "request.user = 'test'"}]))
    assert errors(document) == (
        "authorizers[0].matchConditions[0].expression: Invalid value: \"request.user = 'test'\": compilation failed: "
        "ERROR: <input>:1:14: Syntax error: token recognition error at: '= '\n | request.user = 'test'\n"
        " | .............^\nERROR: <input>:1:16: Syntax error: extraneous input ''test'' expecting <EOF>\n"
        " | request.user = 'test'\n | ...............^",
    )


def test_too_many_match_conditions_stops_there() -> None:
    conditions = [{"expression": "request.user == 'x'"}] * 65  # duplicates, which are not reported past the limit
    assert errors(configuration(webhook(matchConditions=conditions))) == (
        "authorizers[0].matchConditions: Too many: 65: must have at most 64 items",
    )


# -- loading: apiVersions, strict decoding, durations ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "k8s_version", "accepted"),
    [("v1alpha1", "1.30", True), ("v1beta1", "1.31", True), ("v1", "1.31", False), ("v1", "1.32", True)],
)
def test_api_versions(api_version: str, k8s_version: str, accepted: bool) -> None:
    found = errors(configuration(webhook(), version=api_version), k8s_version)
    assert found == (() if accepted else (
        'failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for '
        'version "apiserver.config.k8s.io/v1" in scheme "k8s.io/apiserver/pkg/apis/apiserver/load/load.go:32"',
    ))  # fmt: skip


@pytest.mark.parametrize(("k8s_version", "accepted"), [("1.33", False), ("1.34", True)])
def test_strict_decoding(k8s_version: str, accepted: bool) -> None:
    """Unknown fields fail the load; cacheAuthorizedRequests arrived in 1.34."""
    document = configuration(webhook(cacheAuthorizedRequests=False))
    expected = 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field ' \
               '"authorizers[0].webhook.cacheAuthorizedRequests"'  # fmt: skip
    assert errors(document, k8s_version) == (() if accepted else (expected,))
    document = configuration(
        {"type": "RBAC", "name": "rbac", "x": 1}, webhook(matchConditions=[{"expression": "true", "y": 2}])
    )
    assert errors(document) == (
        'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].x", '
        'unknown field "authorizers[1].webhook.matchConditions[0].y"',
    )


def test_malformed_fields() -> None:
    assert errors(configuration(webhook(timeout="soon"))) == (
        'failed to load AuthorizationConfiguration from file: time: invalid duration "soon"',
    )
    assert errors(configuration({"type": 3, "name": "x"})) == (
        "failed to load AuthorizationConfiguration from file: authorizers[0].type: must be a string",
    )
    assert az.check({**configuration(), "authorizers": 7}, "", "1.37").errors == (
        "failed to load AuthorizationConfiguration from file: authorizers: must be an array",
    )


@pytest.mark.parametrize(
    ("nanos", "text"),
    [(0, "0s"), (1, "1ns"), (1_000, "1µs"), (1_500_000, "1.5ms"), (10**9, "1s"), (1_500_000_000, "1.5s"),
     (90 * 10**9, "1m30s"), (3600 * 10**9, "1h0m0s"), (-30 * 10**9, "-30s")],
)  # fmt: skip
def test_go_duration(nanos: int, text: str) -> None:
    assert az.go_duration(nanos) == text


# -- the environment (compile_test.go TestCompileCELExpression) ---------------------------------------------------

ENV_CASES = [
    ("SubjectAccessReviewSpec user comparison", "request.user == 'bob'", ""),
    ("undefined fields", "request.time == 'now'", "undefined field"),
    ("Syntax errors", "request++'", "Syntax error"),
    ("bad return type", "request.user", "must evaluate to bool"),
    ("undeclared reference", "x.user", "undeclared reference"),
    ("fieldSelector rawSelector", "request.resourceAttributes.fieldSelector.rawSelector == 'foo'", ""),
    ("fieldSelector requirement", "request.resourceAttributes.fieldSelector.requirements.exists(r, r.key == 'foo' && "
                                  "r.operator == 'In' && ('bar' in r.values))", ""),
    ("labelSelector rawSelector", "request.resourceAttributes.labelSelector.rawSelector == 'foo'", ""),
    ("labelSelector requirement", "request.resourceAttributes.labelSelector.requirements.exists(r, r.key == 'foo' && "
                                  "r.operator == 'In' && ('bar' in r.values))", ""),
    ("no authorizer", "authorizer.path('/').check('get').allowed()", "undeclared reference to 'authorizer'"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "expression", "problem"), ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_environment(name: str, expression: str, problem: str) -> None:
    found = errors(configuration(webhook(matchConditions=[{"expression": expression}])))
    assert (problem in found[0]) if problem else found == ()


def test_selectors_arrive_with_authorize_with_selectors() -> None:
    """AuthorizeWithSelectors is off by default in 1.31, on from 1.32."""
    expression = "request.resourceAttributes.labelSelector.rawSelector == 'foo'"
    document = configuration(webhook(matchConditions=[{"expression": expression}]), version="v1beta1")
    assert "undefined field 'labelSelector'" in errors(document, "1.31")[0]
    assert errors(document, "1.32") == ()
    assert az.ENVIRONMENTS["authz-match"]("1.37").is_variable("request")
    assert not az.ENVIRONMENTS["authz-match"]("1.37").is_variable("authorizer")


@pytest.mark.parametrize(("version", "cost"), [("1.30", 4), ("1.31", 103)])
def test_runtime_library_costs(version: str, cost: int) -> None:
    """1.30's base environment had no StrictCostOpt: lowerAscii cost 1 whatever its argument (100 from 1.31)."""
    program = az.authz_environment(version).compile("request.user.lowerAscii() == 'x'")
    assert program.evaluate_with_cost({"request": {"user": "A" * 1000}}) == (False, cost)


# -- TestV1WebhookMatchConditions: what the webhook does with a request ---------------------------------------------

ALICE = {"user": "alice", "uid": "1", "groups": ["group1", "group2"], "extra": {"key1": ["a", "b", "c"]},
         "resourceAttributes": {"namespace": "kittensandponies", "verb": "get"}}  # fmt: skip
BOB = {"user": "bob", "nonResourceAttributes": {"verb": "get"}}
ALICE2 = {"user": "alice2", "nonResourceAttributes": {}}
MATCH_CASES = [  # (name, spec, expressions, outcome, detail); NoOpinion on error, as newWithBackoff sets it
    ("match all with no expressions", ALICE, [], "ask", ""),
    ("match all against all expressions", ALICE,
     ["request.user == 'alice'", "request.uid == '1'", "('group1' in request.groups)", "('key1' in request.extra)",
      "!('key2' in request.extra)", "('a' in request.extra['key1'])", "!('z' in request.extra['key1'])",
      "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kittensandponies'"], "ask", ""),
    ("match all except group", ALICE, ["request.user == 'alice'", "('group3' in request.groups)"], "skip",
     "('group3' in request.groups)"),
    ("match all except uid", ALICE, ["request.user == 'alice'", "request.uid == '2'"], "skip", "request.uid == '2'"),
    ("mismatch on user name", BOB, ["request.user == 'alice'"], "skip", "request.user == 'alice'"),
    ("match on user name but not resourceAttributes", BOB,
     ["request.user == 'bob'", "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'x'"],
     "skip", "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'x'"),
    ("eval failed due to errors, no successful fail", ALICE2,
     ["request.user == 'alice2'", "request.resourceAttributes.namespace == 'kittensandponies'"], "skip",
     "cel evaluation error: expression 'request.resourceAttributes.namespace == 'kittensandponies'' resulted in "
     "error: no such key: resourceAttributes"),
    ("at least one matchCondition successfully evaluates to FALSE, error ignored", ALICE2,
     ["request.user != 'alice2'", "request.resourceAttributes.namespace == 'kittensandponies'"], "skip",
     "request.user != 'alice2'"),
    ("match on user name and nonresourceAttributes", BOB,
     ["request.user == 'bob'", "has(request.nonResourceAttributes) && request.nonResourceAttributes.verb == 'get'"],
     "ask", ""),
    ("match eval failed with bad SubjectAccessReviewSpec", {"nonResourceAttributes": {}},
     ["request.resourceAttributes.verb == 'get'"], "skip",
     "cel evaluation error: expression 'request.resourceAttributes.verb == 'get'' resulted in error: no such key: "
     "resourceAttributes"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "spec", "expressions", "outcome", "detail"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES]
)
def test_webhook_match_conditions(
    name: str, spec: dict[str, Any], expressions: list[str], outcome: str, detail: str
) -> None:
    document = configuration(webhook(matchConditions=[{"expression": e} for e in expressions]))
    result = az.authorize(
        document, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
    )
    assert result.steps == (az.Step("default", "Webhook", outcome, detail),)
    assert result.error == (detail if detail.startswith("cel evaluation error") else "")
    assert result.decision == ("undecided" if outcome == "ask" else "no-opinion")


def test_errors_under_failure_policy_deny_stop_the_chain() -> None:
    failing = ["request.resourceAttributes.verb == 'get'", "request.resourceAttributes.name == 'x'"]
    document = configuration(
        {"type": "Node", "name": "node"},
        webhook("skipping", matchConditions=[{"expression": "request.user == 'nobody'"}]),
        webhook("denying", failurePolicy="Deny", matchConditions=[{"expression": e} for e in failing]),
        {"type": "RBAC", "name": "rbac"},
    )
    result = az.authorize(document, {"user": "bob", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}})
    error = ("[cel evaluation error: expression 'request.resourceAttributes.verb == 'get'' resulted in error: no such "
             "key: resourceAttributes, cel evaluation error: expression 'request.resourceAttributes.name == 'x'' "
             "resulted in error: no such key: resourceAttributes]")  # fmt: skip
    assert [(s.authorizer, s.outcome) for s in result.steps] == [
        ("node", "ask"),
        ("skipping", "skip"),
        ("denying", "deny"),
    ]
    assert (result.decision, result.error) == ("deny", error)


def test_chain_outcomes() -> None:
    erring = webhook(
        failurePolicy="NoOpinion", matchConditions=[{"expression": "request.resourceAttributes.verb == 'x'"}]
    )
    allow, rbac = {"type": "AlwaysAllow", "name": "alwaysallow"}, {"type": "RBAC", "name": "rbac"}
    document = configuration({"type": "AlwaysDeny", "name": "alwaysdeny"}, erring, allow, rbac)
    result = az.authorize(document, {"user": "bob", "nonResourceAttributes": {}})
    assert [(s.type, s.outcome) for s in result.steps] == [("AlwaysDeny", "no-opinion"), ("Webhook", "skip"),
                                                           ("AlwaysAllow", "allow")]  # fmt: skip
    assert (result.decision, result.error) == ("allow", "")
    without_allow = configuration(*document["authorizers"][:2])
    denied = az.authorize(without_allow, {"user": "bob", "nonResourceAttributes": {}})
    assert (denied.decision, denied.reason) == ("no-opinion", "Everything is forbidden.")
    assert denied.error.startswith("cel evaluation error: expression 'request.resourceAttributes.verb == 'x''")
    masters = az.authorize(document, {"user": "root", "groups": ["system:masters"]})
    assert (masters.decision, masters.steps) == ("allow", (az.Step("system:masters", "PrivilegedGroups", "allow"),))


def test_review_request() -> None:
    """convertObjectToUnstructured: every string attribute present, a rawSelector replacing requirements."""
    selector = {"requirements": [{"key": "a", "operator": "In", "values": ["b"]}], "rawSelector": "a=b"}
    attributes = {
        "verb": "list",
        "labelSelector": selector,
        "fieldSelector": {"requirements": selector["requirements"]},
    }
    review = {"spec": {"user": "u", "resourceAttributes": attributes}}
    request = az.review_request(review, True)
    assert request == {
        "user": "u", "groups": [], "uid": "", "extra": {},
        "resourceAttributes": {"namespace": "", "verb": "list", "group": "", "version": "", "resource": "",
                               "subresource": "", "name": "", "labelSelector": {"rawSelector": "a=b"},
                               "fieldSelector": {"requirements": [{"key": "a", "operator": "In", "values": ["b"]}]}},
    }  # fmt: skip
    assert "labelSelector" not in az.review_request(review, False)["resourceAttributes"]
    beta = {"apiVersion": "authorization.k8s.io/v1beta1", "kind": "SubjectAccessReview", "spec": {"group": ["g"]}}
    assert az.review_request(beta, True)["groups"] == ["g"]
    with pytest.raises(ValueError, match="spec: must be an object"):
        az.review_request({"spec": "x"}, True)


def test_invalid_configuration_is_not_evaluated() -> None:
    with pytest.raises(az.ConfigurationError) as raised:
        az.authorize(configuration(), {"user": "x"})
    assert raised.value.checked.errors == (
        "authorizers: Required value: at least one authorization mode must be defined",
    )


def test_union_error_flattens_the_webhooks_errors() -> None:
    """union.New's NewAggregate visits nested aggregates: one flat, de-duplicated list."""
    both = ["request.resourceAttributes.verb == 'a'", "request.resourceAttributes.name == 'b'"]
    document = configuration(
        webhook("first", matchConditions=[{"expression": e} for e in both]),
        webhook("second", matchConditions=[{"expression": both[0]}]),
    )
    result = az.authorize(document, {"user": "bob", "nonResourceAttributes": {}})
    messages = [
        f"cel evaluation error: expression '{e}' resulted in error: no such key: resourceAttributes" for e in both
    ]
    assert result.steps[0].detail == f"[{messages[0]}, {messages[1]}]"
    assert (result.decision, result.error) == ("no-opinion", f"[{messages[0]}, {messages[1]}]")
