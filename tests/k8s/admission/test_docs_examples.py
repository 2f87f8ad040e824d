"""The examples of the Kubernetes documentation page "Validating Admission Policy", with the API server's texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import DEPLOYMENT_RULE, admit, binding, deployment, namespace, policy

DEMO = policy(
    "demo-policy.example.com", failurePolicy="Fail", validations=[{"expression": "object.spec.replicas <= 5"}]
)
DEMO_BINDING = binding(
    "demo-binding-test.example.com", "demo-policy.example.com", validationActions=["Deny"],
    matchResources={"namespaceSelector": {"matchLabels": {"environment": "test"}}},
)  # fmt: skip
TEST_NS = namespace("default", environment="test")


def test_demo_policy_denies_too_many_replicas(tmp_path: Path) -> None:
    decision = admit(tmp_path, [DEMO, DEMO_BINDING], deployment(7), resources=(TEST_NS,))
    message = (
        "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' "
        "denied request: failed expression: object.spec.replicas <= 5"
    )
    assert (decision.allowed, decision.code, decision.reason, decision.message) == (False, 422, "Invalid", message)
    assert decision.kubectl_text() == f'The deployments "nginx" is invalid: : {message}'
    assert decision.status_message == f'deployments.apps "nginx" is forbidden: {message}'
    assert decision.status()["details"] == {"name": "nginx", "group": "apps", "kind": "deployments",
                                            "causes": [{"message": message}]}  # fmt: skip


@pytest.mark.parametrize(
    ("replicas", "labels", "allowed"),
    [(5, {"environment": "test"}, True), (6, {"environment": "test"}, False), (6, {"environment": "prod"}, True)],
)
def test_demo_binding_scopes_by_namespace_labels(tmp_path: Path, replicas: int, labels: dict, allowed: bool) -> None:
    decision = admit(tmp_path, [DEMO, DEMO_BINDING], deployment(replicas), resources=(namespace("default", **labels),))
    assert decision.allowed is allowed


REPLICA_LIMIT = policy(
    "replicalimit-policy.example.com", failurePolicy="Fail",
    paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"},
    validations=[{"expression": "object.spec.replicas <= params.maxReplicas", "reason": "Invalid"}],
)  # fmt: skip
REPLICA_LIMIT_BINDING = binding(
    "replicalimit-binding-test.example.com", "replicalimit-policy.example.com", validationActions=["Deny"],
    paramRef={"name": "replica-limit-test.example.com", "namespace": "default", "parameterNotFoundAction": "Deny"},
    matchResources={"namespaceSelector": {"matchLabels": {"environment": "test"}}},
)  # fmt: skip
REPLICA_LIMIT_PARAM = {"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
                       "metadata": {"name": "replica-limit-test.example.com", "namespace": "default"},
                       "maxReplicas": 3}  # fmt: skip


def test_replica_limit_with_params(tmp_path: Path) -> None:
    docs, resources = [REPLICA_LIMIT, REPLICA_LIMIT_BINDING], (REPLICA_LIMIT_PARAM, TEST_NS)
    assert admit(tmp_path, docs, deployment(3), resources=resources).allowed
    decision = admit(tmp_path, docs, deployment(4), resources=resources)
    assert decision.message == (
        "ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding "
        "'replicalimit-binding-test.example.com' denied request: failed expression: "
        "object.spec.replicas <= params.maxReplicas"
    )


def test_message_expression(tmp_path: Path) -> None:
    validation = {"expression": "object.spec.replicas <= params.maxReplicas",
                  "messageExpression": "'object.spec.replicas must be no greater than ' + string(params.maxReplicas)",
                  "reason": "Invalid"}  # fmt: skip
    deploy = policy("deploy-replica-policy.example.com", paramKind=REPLICA_LIMIT["spec"]["paramKind"],
                    validations=[validation])  # fmt: skip
    bound = binding("demo-binding-test.example.com", "deploy-replica-policy.example.com",
                    paramRef={"name": "replica-limit-test.example.com", "namespace": "default",
                              "parameterNotFoundAction": "Deny"})  # fmt: skip
    decision = admit(tmp_path, [deploy, bound], deployment(5), resources=(REPLICA_LIMIT_PARAM,))
    assert decision.kubectl_text() == (
        "The deployments \"nginx\" is invalid: : ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' "
        "with binding 'demo-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3"
    )


def test_audit_annotations(tmp_path: Path) -> None:
    annotated = policy(
        "demo-policy.example.com",
        validations=[{"expression": "object.spec.replicas > 50",
                      "messageExpression": "'Deployment spec.replicas set to ' + string(object.spec.replicas)"}],
        auditAnnotations=[{"key": "high-replica-count",
                           "valueExpression": "'Deployment spec.replicas set to ' + string(object.spec.replicas)"}],
    )  # fmt: skip
    decision = admit(tmp_path, [annotated, binding(policy_name="demo-policy.example.com", validationActions=["Audit"])],
                     deployment(128))  # fmt: skip
    assert decision.allowed
    assert decision.audit_annotations == {
        "demo-policy.example.com/high-replica-count": "Deployment spec.replicas set to 128"
    }


def test_variables_foo(tmp_path: Path) -> None:
    foo = policy(
        variables=[{"name": "foo",
                    "expression": "'foo' in object.spec.metadata.labels ? object.spec.metadata.labels['foo'] : 'default'"}],  # noqa: E501
        validations=[{"expression": "variables.foo == 'bar'"}],
    )  # fmt: skip
    obj = deployment(1)
    obj["spec"]["metadata"] = {"labels": {"foo": "bar"}}
    assert admit(tmp_path, [foo, binding()], obj).allowed
    obj["spec"]["metadata"] = {"labels": {}}
    assert admit(tmp_path, [foo, binding()], obj).message.endswith("failed expression: variables.foo == 'bar'")


IMAGE_POLICY = policy(
    "image-matches-namespace-environment.policy.example.com", failurePolicy="Fail",
    variables=[
        {"name": "environment", "expression": "'environment' in namespaceObject.metadata.labels ? "
                                              "namespaceObject.metadata.labels['environment'] : 'prod'"},
        {"name": "exempt", "expression": "'exempt' in namespaceObject.metadata.labels && "
                                         "namespaceObject.metadata.labels['exempt'] == 'true'"},
        {"name": "containers", "expression": "object.spec.template.spec.containers"},
        {"name": "containersToCheck", "expression": "variables.containers.filter(c, c.image.contains('example.com/'))"},
    ],
    validations=[{
        "expression": "variables.exempt || variables.containersToCheck.all(c, c.image.startsWith(variables.environment + '.'))",  # noqa: E501
        "messageExpression": "'only ' + variables.environment + ' images are allowed in namespace ' + namespaceObject.metadata.name",  # noqa: E501
    }],
)  # fmt: skip


@pytest.mark.parametrize(
    ("labels", "image", "message"),
    [
        ({"environment": "staging"}, "staging.example.com/app", None),
        ({"environment": "staging"}, "prod.example.com/app", "only staging images are allowed in namespace default"),
        ({}, "prod.example.com/app", None),
        ({}, "staging.example.com/app", "only prod images are allowed in namespace default"),
        ({"exempt": "true"}, "staging.example.com/app", None),
        ({}, "docker.io/nginx", None),
    ],
)
def test_variables_image_environment(tmp_path: Path, labels: dict, image: str, message: str | None) -> None:
    obj = deployment(1)
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
    decision = admit(tmp_path, [IMAGE_POLICY, binding(policy_name=IMAGE_POLICY["metadata"]["name"])], obj,
                     resources=(namespace("default", **labels),))  # fmt: skip
    assert decision.allowed is (message is None)
    if message is not None:
        assert decision.message == (
            "ValidatingAdmissionPolicy 'image-matches-namespace-environment.policy.example.com' with binding "
            f"'b.example.com' denied request: {message}"
        )


MATCH_CONDITIONS = policy(
    "demo-policy.example.com",
    matchConstraints={"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                                         "resources": ["*"]}]},
    matchConditions=[
        {"name": "exclude-leases",
         "expression": '!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")'},
        {"name": "exclude-kubelet-requests", "expression": '!("system:nodes" in request.userInfo.groups)'},
        {"name": "rbac", "expression": 'request.resource.group != "rbac.authorization.k8s.io"'},
    ],
    validations=[{"expression": "!object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'"}],
)  # fmt: skip
LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "demo-lease", "namespace": "x"}}
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "demo", "namespace": "x"}}


@pytest.mark.parametrize(
    ("obj", "groups", "allowed"),
    [
        (deployment(1, name="demo-app", namespace="x"), ["system:authenticated"], False),
        (deployment(1, name="demo-app", namespace="demo"), ["system:authenticated"], True),
        (deployment(1, name="app", namespace="x"), ["system:authenticated"], True),
        (LEASE, ["system:authenticated"], True),
        (ROLE, ["system:authenticated"], True),
        (deployment(1, name="demo-app", namespace="x"), ["system:nodes", "system:authenticated"], True),
    ],
)
def test_match_conditions(tmp_path: Path, obj: dict, groups: list[str], allowed: bool) -> None:
    decision = admit(tmp_path, [MATCH_CONDITIONS, binding(policy_name="demo-policy.example.com")], obj, groups=groups)
    assert decision.allowed is allowed
    if not allowed:
        assert decision.message.endswith(
            "denied request: failed expression: !object.metadata.name.contains('demo') || "
            "object.metadata.namespace == 'demo'"
        )


def test_warn_and_audit_binding(tmp_path: Path) -> None:
    warn = binding("demo-binding-test.example.com", "demo-policy.example.com", validationActions=["Warn", "Audit"])
    decision = admit(tmp_path, [DEMO, warn], deployment(6))
    assert decision.allowed
    assert decision.warnings == (
        "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
        "'demo-binding-test.example.com': failed expression: object.spec.replicas <= 5",
    )
    assert decision.audit_annotations == {
        "validation.policy.admission.k8s.io/validation_failure": (
            '[{"message":"failed expression: object.spec.replicas \\u003c= 5","policy":"demo-policy.example.com",'
            '"binding":"demo-binding-test.example.com","expressionIndex":0,"validationActions":["Warn","Audit"]}]'
        )
    }


def test_deny_rule_in_docs_uses_apps_group(tmp_path: Path) -> None:
    assert DEPLOYMENT_RULE["apiGroups"] == ["apps"]
    other = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {}}
    assert admit(tmp_path, [DEMO, DEMO_BINDING], other, resources=(TEST_NS,)).allowed
