"""MutatingAdmissionPolicy as the API server's plugin runs it: loading, compiling, patching, reinvocation,
failure policy, cost limits, and the validating policies seeing the mutated object."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from kcel.k8s.admission import Decision, PolicySet, request_from_objects

from .helpers import DEPLOYMENT_RULE, binding, deployment, policy, write

HAS_SCHEMAS = importlib.util.find_spec("kubernetes_validate") is not None
needs_schemas = pytest.mark.skipif(not HAS_SCHEMAS, reason="needs the built-in schemas: pip install 'kcel[schemas]'")


def mutating(name: str = "m.example.com", *mutations: dict[str, Any], **spec: Any) -> dict[str, Any]:
    spec.setdefault("matchConstraints", {"resourceRules": [DEPLOYMENT_RULE]})
    spec.setdefault("failurePolicy", "Fail")
    spec.setdefault("reinvocationPolicy", "Never")
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": {"mutations": list(mutations), **spec}}  # fmt: skip


def mutating_binding(name: str = "m.example.com", policy_name: str | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": policy_name or name, **spec}}  # fmt: skip


def json_patch(expression: str) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}


def apply(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


LABEL = json_patch('[JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "a"}}]')


def load(tmp_path: Path, *documents: Any, k8s_version: str | None = None, runtime_config: Any = ()) -> PolicySet:
    path = write(tmp_path / "policies.yaml", *documents)
    return PolicySet.load([path], k8s_version=k8s_version, runtime_config=runtime_config)


def admit(tmp_path: Path, documents: list[Any], obj: Any = None, **request: Any) -> Decision:
    policies = load(tmp_path, *documents)
    assert policies.problems == []
    return policies.admit(request_from_objects(obj if obj is not None else deployment(), **request))


# -- loading and compiling --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (mutating("m", LABEL, reinvocationPolicy=None), "spec.reinvocationPolicy: Required value"),
        (mutating("m"), "spec.mutations: Required value: mutations must contain at least one item"),
        (mutating("m", {"patchType": "Merge"}), 'spec.mutations[0].patchType: Unsupported value: "Merge"'),
        (mutating("m", {"patchType": "JSONPatch"}),
         "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"),
        (mutating("m", {**LABEL, "applyConfiguration": {"expression": "Object{}"}}),
         "spec.mutations[0].applyConfiguration: Invalid value: \"{applyConfiguration}\": must not be specified when "
         "patchType is JSONPatch"),
        (mutating("m", LABEL, matchConstraints={"resourceRules": [{**DEPLOYMENT_RULE, "operations": ["DELETE"]}]}),
         'spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE"'),
        (mutating("m", json_patch("[]"), failurePolicy="Sometimes"), 'spec.failurePolicy: Unsupported value'),
    ],
)  # fmt: skip
def test_bad_policies_are_refused_with_the_api_servers_field_errors(
    tmp_path: Path, document: dict[str, Any], problem: str
) -> None:
    (found,) = load(tmp_path, {k: v for k, v in document.items()}).problems
    assert problem in found


@pytest.mark.parametrize(
    ("mutation", "error"),
    [
        (apply("[JSONPatch{}]"), "must evaluate to Object but got list(JSONPatch)"),
        (json_patch("Object{}"), "must evaluate to list(JSONPatch) but got Object"),
        (json_patch("object"), "must evaluate to list(JSONPatch) but got dyn"),
        (json_patch("[JSONPatch{op: 1}]"), "expected type of field 'op' is 'string' but provided type is 'int'"),
        (json_patch("[JSONPatch{foo: 1}]"), "undefined field 'foo'"),
    ],
)
def test_expressions_of_the_wrong_type_fail_to_compile(tmp_path: Path, mutation: Any, error: str) -> None:
    policies = load(tmp_path, mutating("m", mutation), mutating_binding("m"))
    (problem,) = policies.problems
    assert problem.startswith(f"{tmp_path / 'policies.yaml'}: document 0: spec.mutations[0].")
    assert error in problem
    decision = policies.admit(request_from_objects(deployment()))  # and the policy then fails the request
    assert (decision.allowed, decision.code) == (False, 403)
    assert decision.message.startswith("policy 'm' with binding 'm' denied request: ")


def test_api_versions_follow_the_kubernetes_version(tmp_path: Path) -> None:
    document = mutating("m", LABEL)
    assert load(tmp_path, document, k8s_version="1.36").problems == []
    (problem,) = load(tmp_path, document, k8s_version="1.35").problems
    assert "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy is not served by Kubernetes 1.35" in problem
    beta = {**document, "apiVersion": "admissionregistration.k8s.io/v1beta1"}
    on = ["admissionregistration.k8s.io/v1beta1"]
    assert load(tmp_path, beta, k8s_version="1.34", runtime_config=on).problems == []
    assert load(tmp_path, beta, k8s_version="1.33", runtime_config=on).problems != []


@pytest.mark.parametrize(("version", "api", "switches"), [
    ("1.34", "v1beta1", "--runtime-config=admissionregistration.k8s.io/v1beta1=true "
                        "--feature-gates=MutatingAdmissionPolicy=true"),
    ("1.33", "v1alpha1", "--runtime-config=admissionregistration.k8s.io/v1alpha1=true "
                         "--feature-gates=MutatingAdmissionPolicy=true"),
    ("1.37", "v1beta1", "--runtime-config=admissionregistration.k8s.io/v1beta1=true"),  # GA: the gate is gone
])  # fmt: skip
def test_alpha_and_beta_versions_are_served_only_when_switched_on(
    tmp_path: Path, version: str, api: str, switches: str
) -> None:
    """kube-apiserver serves an alpha or beta policy API only with --runtime-config (and, before 1.36, the feature
    gate): refused by default, naming both switches and the option that assumes them; served when assumed on."""
    pair = (mutating("m", LABEL), mutating_binding("m"))
    documents = [{**d, "apiVersion": f"admissionregistration.k8s.io/{api}"} for d in pair]
    problems = load(tmp_path, *documents, k8s_version=version).problems
    assert len(problems) == 2 and all(f"only when switched on (kube-apiserver {switches})" in p for p in problems)
    assert f"MutatingAdmissionPolicyBinding is served by Kubernetes {version} only" in problems[1]
    assert problems[0].endswith(f"--runtime-config admissionregistration.k8s.io/{api} (runtime_config= in the API) "
                                "assumes it is")  # fmt: skip
    for enabled in (f"admissionregistration.k8s.io/{api}=true", "api/all", f"api/{api[2:-1]}"):
        assert load(tmp_path, *documents, k8s_version=version, runtime_config=[enabled]).problems == []


def test_validating_policies_of_removed_beta_versions_are_not_served(tmp_path: Path) -> None:
    """ValidatingAdmissionPolicy v1beta1 (1.28) is served only when switched on, and not at all from 1.34."""
    valid = policy(validations=[{"expression": "true"}])
    beta = [{**d, "apiVersion": "admissionregistration.k8s.io/v1beta1"} for d in (valid, binding())]
    (problem, _) = PolicySet.load([write(tmp_path / "p.yaml", *beta)], k8s_version="1.33").problems
    assert "ValidatingAdmissionPolicy is served by Kubernetes 1.33 only when switched on" in problem
    on = ["admissionregistration.k8s.io/v1beta1"]
    assert PolicySet.load([tmp_path / "p.yaml"], k8s_version="1.33", runtime_config=on).problems == []
    (problem, _) = PolicySet.load([tmp_path / "p.yaml"], k8s_version="1.34", runtime_config=on).problems
    assert "v1beta1 ValidatingAdmissionPolicy is not served by Kubernetes 1.34 (v1alpha1 1.26-1.31 when switched " \
           "on, v1beta1 1.28-1.33 when switched on, v1 from 1.30)" in problem  # fmt: skip


def test_the_patch_types_are_only_in_mutations(tmp_path: Path) -> None:
    document = mutating("m", LABEL, variables=[{"name": "p", "expression": "JSONPatch{}"}])
    (problem,) = load(tmp_path, document).problems
    assert "spec.variables[0].expression" in problem and "undeclared reference to 'JSONPatch'" in problem


# -- JSON patches --------------------------------------------------------------------------------------------------


def test_a_json_patch_mutates_and_the_webhook_patch_reproduces_it(tmp_path: Path) -> None:
    escaped = json_patch(
        '[JSONPatch{op: "add", path: "/metadata/labels", value: {}},'
        ' JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/env"), value: "test"},'
        ' JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas * 2}]'
    )
    decision = admit(tmp_path, [mutating("m", escaped), mutating_binding("m")])
    assert decision.allowed and decision.patched is not None
    assert decision.patched["metadata"]["labels"] == {"example.com/env": "test"}
    assert decision.patched["spec"]["replicas"] == 6
    from kcel.k8s.patch.jsonpatch import apply_patch

    assert apply_patch(deployment(), [dict(op) for op in decision.patch]) == decision.patched


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('[JSONPatch{op: "remove", path: "/spec/nothing"}]',
         "JSON Patch: error in remove for path: '/spec/nothing': Unable to remove nonexistent key: nothing: missing "
         "value"),
        ('[JSONPatch{op: "add", path: "/a/b/c", value: 1}]',
         'JSON Patch: add operation does not apply: doc is missing path: "/a/b/c": missing value'),
        ('[JSONPatch{op: "jump", path: "/a"}]', "JSON Patch: Unexpected kind: jump"),
        ('[JSONPatch{op: "add", path: "/a", value: {1: 2}}]',
         "JSONPath valueExpression evaluated to a type that could not marshal to JSON"),
        ('[JSONPatch{op: "add", path: "/spec", value: Object.status{}}]',
         'type mismatch: unexpected type name "Object.status", expected "Object.status"'),
    ],
)  # fmt: skip
def test_json_patch_errors(tmp_path: Path, expression: str, message: str) -> None:
    decision = admit(tmp_path, [mutating("m", json_patch(expression)), mutating_binding("m")])
    if "Object.status{}" in expression:  # a value's type names are checked from its own root: this one is fine
        assert decision.allowed
        return
    assert (decision.allowed, decision.code, decision.reason) == (False, 403, "Invalid")
    assert decision.message.startswith("policy 'm' with binding 'm' denied request: ")
    assert message in decision.message


def test_a_failed_test_operation_leaves_the_object_unchanged(tmp_path: Path) -> None:
    expression = '[JSONPatch{op: "test", path: "/spec/replicas", value: 5}, JSONPatch{op: "remove", path: "/spec"}]'
    decision = admit(tmp_path, [mutating("m", json_patch(expression)), mutating_binding("m")])
    assert decision.allowed and decision.patched is None and decision.patch == ()


# -- apply configurations -------------------------------------------------------------------------------------------


@needs_schemas
def test_an_apply_configuration_merges_by_the_schema(tmp_path: Path) -> None:
    sidecar = apply(
        "Object{spec: Object.spec{replicas: 1, template: Object.spec.template{spec: Object.spec.template.spec{"
        'containers: [Object.spec.template.spec.containers{name: "proxy", image: "proxy:1"}]}}}}'
    )
    decision = admit(tmp_path, [mutating("m", sidecar), mutating_binding("m")])
    assert decision.allowed and decision.patched is not None
    containers = decision.patched["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "nginx", "image": "nginx"}, {"name": "proxy", "image": "proxy:1"}]
    assert decision.patched["spec"]["replicas"] == 1


@needs_schemas
@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("Object{spec: Object.spec{nonsense: 1}}",
         "error applying patch: failed to convert patch object to typed object: .spec.nonsense: field not declared "
         "in schema"),
        ("Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{"
         "tolerations: [Object.spec.template.spec.tolerations{key: 'a'}]}}}}",
         "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: "
         ".spec.template.spec.tolerations"),
        ("Object{spec: Object.template{}}",
         'type mismatch: unexpected type name "Object.template", expected "Object.spec", which matches field name '
         "path from root Object type"),
    ],
)  # fmt: skip
def test_apply_configuration_errors(tmp_path: Path, expression: str, message: str) -> None:
    decision = admit(tmp_path, [mutating("m", apply(expression)), mutating_binding("m")])
    assert (decision.allowed, decision.reason) == (False, "Invalid")
    assert decision.message == f"policy 'm' with binding 'm' denied request: {message}"


def test_without_a_schema_the_request_is_refused_and_kcel_says_what_gives_one(tmp_path: Path) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
    rule = {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}
    document = mutating("m", apply("Object{spec: Object.spec{a: 1}}"), matchConstraints={"resourceRules": [rule]})
    decision = admit(tmp_path, [document, mutating_binding("m")], widget)
    assert (decision.allowed, decision.code, decision.reason) == (False, 503, "ServiceUnavailable")
    assert "Widget" in decision.message and "CustomResourceDefinition" in decision.message


def test_a_json_patch_result_is_decoded_strictly_into_a_built_in_kind(tmp_path: Path) -> None:
    """json_patch.go decodes the patched object into the kind's Go type with a strict serializer: a field it lacks
    is an internal error (500) whatever the failure policy; maps take any key."""
    patch = json_patch(
        '[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/portsZ", value: [1]},'
        ' JSONPatch{op: "add", path: "/metadata/labels", value: {"any": "key"}},'
        ' JSONPatch{op: "add", path: "/spec/colour", value: "red"}]'
    )
    for failure_policy in ("Fail", "Ignore"):
        decision = admit(tmp_path, [mutating("m", patch, failurePolicy=failure_policy), mutating_binding("m")])
        assert (decision.allowed, decision.code, decision.reason) == (False, 500, "InternalError")
        assert decision.message == (
            'Internal error occurred: strict decoding error: unknown field "spec.colour", '
            'unknown field "spec.template.spec.containers[0].portsZ"'
        )


# -- order, reinvocation, failure policy, cost -----------------------------------------------------------------


def counter(name: str, reinvocation: str) -> dict[str, Any]:
    """Adds 1 to its own annotation."""
    expression = (
        f'[JSONPatch{{op: "add", path: "/metadata/annotations/{name}",'
        f' value: string(int(object.metadata.annotations[?"{name}"].orValue("0")) + 1)}}]'
    )
    return mutating(name, json_patch(expression), reinvocationPolicy=reinvocation)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("Never", "Never", {"a": "1", "b": "1"}),
        ("IfNeeded", "Never", {"a": "2", "b": "1"}),  # b changed the object after a: a runs once more
        ("Never", "IfNeeded", {"a": "1", "b": "2"}),  # b changed it itself: every IfNeeded policy since is rerun
        ("IfNeeded", "IfNeeded", {"a": "2", "b": "2"}),
    ],
)
def test_reinvocation(tmp_path: Path, first: str, second: str, expected: dict[str, str]) -> None:
    documents = [counter("a", first), mutating_binding("a"), counter("b", second), mutating_binding("b")]
    decision = admit(tmp_path, documents, deployment(annotations={}))
    assert decision.patched is not None and decision.patched["metadata"]["annotations"] == expected


def test_policies_apply_in_name_order_and_each_sees_the_last_result(tmp_path: Path) -> None:
    set_ = json_patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: 10}]')
    double = json_patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas * 2}]')
    documents = [mutating("b", double), mutating_binding("b"), mutating("a", set_), mutating_binding("a")]
    assert admit(tmp_path, documents).patched["spec"]["replicas"] == 20  # type: ignore[index]


@pytest.mark.parametrize(("failure_policy", "allowed"), [("Fail", False), ("Ignore", True)])
def test_failure_policy(tmp_path: Path, failure_policy: str, allowed: bool) -> None:
    broken = json_patch('[JSONPatch{op: "add", path: "/x", value: object.missing}]')
    documents = [mutating("m", broken, LABEL, failurePolicy=failure_policy), mutating_binding("m")]
    decision = admit(tmp_path, documents)
    assert decision.allowed is allowed
    if allowed:  # the failing mutation is skipped, the next one still applies
        assert decision.patched is not None and decision.patched["metadata"]["labels"] == {"team": "a"}
    else:
        assert (
            'expression \'[JSONPatch{op: "add", path: "/x", value: object.missing}]\' resulted in error: no '
            "such key: missing" in decision.message
        )


def test_match_conditions_and_params(tmp_path: Path) -> None:
    param = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"},
             "data": {"replicas": "4"}}  # fmt: skip
    document = mutating(
        "m", json_patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: int(params.data.replicas)}]'),
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        matchConditions=[{"name": "small", "expression": "object.spec.replicas < 4"}],
    )  # fmt: skip
    bound = mutating_binding("m", paramRef={"name": "cfg", "parameterNotFoundAction": "Deny"})
    assert admit(tmp_path, [document, bound, param]).patched["spec"]["replicas"] == 4  # type: ignore[index]
    assert admit(tmp_path, [document, bound, param], deployment(replicas=5)).patched is None
    missing = admit(tmp_path, [document, bound])
    assert not missing.allowed and missing.message == (
        "policy 'm' with binding 'm' denied request: failed to configure binding: no params found for policy "
        "binding with `Deny` parameterNotFoundAction"
    )


def test_the_per_expression_cost_limit(tmp_path: Path) -> None:
    expensive = json_patch(
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(b, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
        ".map(c, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(d, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(e, [1, 2, 3, 4, 5, 6, 7,"
        " 8, 9, 10].map(f, f)))))).size() > 0 ? [] : [JSONPatch{}]"
    )
    decision = admit(tmp_path, [mutating("m", expensive), mutating_binding("m")])
    assert not decision.allowed and "operation cancelled: actual cost limit exceeded" in decision.message


def test_deletes_are_never_mutated(tmp_path: Path) -> None:
    document = mutating("m", LABEL, matchConstraints={"resourceRules": [{**DEPLOYMENT_RULE, "operations": ["*"]}]})
    decision = admit(tmp_path, [document, mutating_binding("m")], operation="DELETE")
    assert decision.allowed and decision.patched is None and decision.evaluations == ()


def test_validating_policies_see_the_mutated_object(tmp_path: Path) -> None:
    limit = policy("v", validations=[{"expression": "object.spec.replicas <= 5", "message": "too many"}])
    grow = json_patch('[JSONPatch{op: "replace", path: "/spec/replicas", value: 9}]')
    decision = admit(tmp_path, [mutating("m", grow), mutating_binding("m"), limit, binding("v", "v")])
    assert not decision.allowed and decision.message.endswith("denied request: too many")


def test_guessed_resources_are_pointed_out() -> None:
    from kcel.k8s.admission.request import guessed_resource_warning

    note = guessed_resource_warning("mesh.example.io/v1", "Mesh")
    assert "'meshs'" in note and "CustomResourceDefinition" in note
    assert guessed_resource_warning("apps/v1", "Deployment") == ""


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "string"},
                "replicas": {"type": "integer", "default": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            }}},
        }}}],
    },
}  # fmt: skip


def test_custom_resources_merge_by_their_crd_and_get_its_defaults(tmp_path: Path) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
              "spec": {"tags": ["a"]}}  # fmt: skip
    rule = {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}
    tag = apply("Object{spec: Object.spec{size: 'large', tags: ['b', 'a']}}")
    documents = [mutating("m", tag, matchConstraints={"resourceRules": [rule]}), mutating_binding("m"), WIDGET_CRD]
    decision = admit(tmp_path, documents, widget)
    assert decision.allowed, decision.message
    assert decision.patched is not None
    assert decision.patched["spec"] == {"size": "large", "tags": ["b", "a"], "replicas": 1}  # SMD's set order
    unknown = apply("Object{spec: Object.spec{colour: 'red'}}")
    documents = [mutating("m", unknown, matchConstraints={"resourceRules": [rule]}), mutating_binding("m"), WIDGET_CRD]
    decision = admit(tmp_path, documents, widget)
    assert "failed to convert patch object to typed object: .spec.colour: field not declared in schema" in (
        decision.message
    )


def test_each_mutation_has_the_runtime_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables and the mutation together are charged to the mutation's budget (10,000,000; lowered here)."""
    from kcel.k8s.admission import mutation

    monkeypatch.setattr(mutation, "RUNTIME_BUDGET", 20)
    annotate = '[JSONPatch{op: "add", path: "/metadata/annotations", value: {"a": "b"}}]'
    costly = json_patch(f"variables.names.size() > 100 ? [] : {annotate}")
    names = {"name": "names", "expression": "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, string(x))"}
    decision = admit(tmp_path, [mutating("m", costly, variables=[names]), mutating_binding("m")])
    assert not decision.allowed
    assert decision.message == (
        "policy 'm' with binding 'm' denied request: validation failed due to running out of cost budget, no further "
        "validation rules will be run"
    )
    monkeypatch.setattr(mutation, "RUNTIME_BUDGET", 10_000_000)
    assert admit(tmp_path, [mutating("m", costly, variables=[names]), mutating_binding("m")]).allowed


@pytest.mark.parametrize(("failure", "allowed"), [("Fail", False), ("Ignore", True)])
def test_a_bug_of_kcels_while_mutating_is_decided_by_the_policys_failure_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str, allowed: bool
) -> None:
    """Not the server's failure policy: a `kcel serve --failure-policy Ignore` must not let a request past a policy
    that says Fail because kcel itself failed while applying its patch (issue 43)."""
    from kcel.k8s.admission import mutation

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(mutation, "patch_json", broken)
    decision = admit(tmp_path, [mutating("m.example.com", LABEL, failurePolicy=failure), mutating_binding()])
    assert decision.allowed is allowed
    if not allowed:
        assert "internal error: RuntimeError: a bug" in decision.message
