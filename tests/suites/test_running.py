"""Running cases: CRD creates, updates, status updates, field validation and defaulting; admission requests with
params, namespaces, users and RBAC; Kubernetes versions, skips and selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kcel.suites.fields import Where
from kcel.suites.model import CRD, Case, Mismatch, ObjectInput, Suite
from kcel.suites.runner import ERROR, Plan, run_case

from .helpers import GADGET, WIDGET, run, widget_folder, write


def results(capsys: pytest.CaptureFixture[str], suite: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run a suite with -o json: the exit status and {case id: result}."""
    status, out, _ = run(capsys, "-o", "json", *args, str(suite))
    return status, {r["id"].split("::")[1]: r for r in json.loads(out)["results"]}


STORED_META = {"name": "g1", "namespace": "default"}


def crd_suite(tmp_path: Path, *cases: dict[str, Any], **extra: Any) -> Path:
    document = {"crds": ["widget-crd.yaml", "gadget-crd.yaml"], **extra, "cases": list(cases)}
    return write(widget_folder(tmp_path) / "s.kcel-test.yaml", document)


def test_create_update_and_status_update(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "old.yaml", {**WIDGET, "spec": {**WIDGET["spec"], "mode": "Fast"}})  # type: ignore[dict-item]
    suite = crd_suite(
        tmp_path,
        {"name": "update from a file", "object": WIDGET, "old": "old.yaml", "expect": {"errors": "mode is immutable"}},
        {"name": "defaulted", "object": GADGET, "expect": {"stored": {**GADGET, "metadata": STORED_META}}},
        {"name": "defaults applied", "object": {**GADGET, "spec": {}},
         "expect": {"stored": {**GADGET, "spec": {"size": 1}, "metadata": STORED_META}}},
        {"name": "status", "object": {**GADGET, "status": {"ready": 1}}, "update": {"status": {"ready": -1}},
         "subresource": "status", "expect": {"errors": "status: Invalid value: ready is never negative"}},
        {"name": "status ignores spec", "object": {**GADGET, "status": {"ready": 1}},
         "update": {"spec": {"size": 9}, "status": {"ready": 2}}, "subresource": "status",
         "expect": {"stored": {**GADGET, "metadata": {"name": "g1", "namespace": "default", "resourceVersion": "1"},
                               "status": {"ready": 2}}}},
        {"name": "namespace", "object": GADGET, "namespace": "team-a",
         "expect": {"stored": {**GADGET, "metadata": {"name": "g1", "namespace": "team-a"}}}},
    )  # fmt: skip
    status, found = results(capsys, suite)
    assert {name: r["status"] for name, r in found.items()} == dict.fromkeys(found, "passed")
    assert status == 0
    assert found["defaulted"]["actual"] == "valid"  # nothing to default: size was given
    assert found["update from a file"]["actual"] == {"errors": ["spec: Invalid value: mode is immutable"]}


def test_field_validation_and_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = {"patch": {"spec": {"extra": 1}}}
    suite = crd_suite(
        tmp_path,
        {"name": "strict", **extra, "expect": {"errors": 'unknown field "spec.extra"', "reason": "BadRequest"}},
        {"name": "warn", **extra, "fieldValidation": "Warn", "expect": {"valid": True, "warnings": ["spec.extra"]}},
        {"name": "no warnings expected", **extra, "fieldValidation": "Warn", "expect": {"valid": True, "warnings": []}},
        {"name": "ignore", **extra, "fieldValidation": "Ignore", "expect": {"valid": True, "warnings": []}},
        base=WIDGET,
    )  # fmt: skip
    status, found = results(capsys, suite)
    assert status == 1
    assert [r["status"] for r in found.values()] == ["passed", "passed", "failed", "passed"]
    assert found["no warnings expected"]["mismatches"] == [
        {"field": "warnings", "expected": "no warnings", "actual": 'unknown field "spec.extra"'}
    ]
    assert found["warn"]["actual"]["warnings"] == ['unknown field "spec.extra"']
    assert "extra" not in found["warn"]["actual"]["stored"]["spec"]  # pruned


def test_duplicate_fields_in_an_object_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "dup.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec:\n"
          "  replicas: 1\n  replicas: 2\n  maxReplicas: 3\n  mode: Safe\n")  # fmt: skip
    suite = crd_suite(
        tmp_path,
        {"name": "dup", "object": "dup.yaml", "expect": "invalid"},
        {"name": "dup ignored", "object": "dup.yaml", "fieldValidation": "Ignore", "expect": "valid"},
    )
    status, found = results(capsys, suite)
    assert status == 0
    assert found["dup"]["actual"] == {
        "errors": ['Widget in version "v1" cannot be handled as a Widget: strict decoding error: yaml: unmarshal '
                   'errors:\n  line 6: key "replicas" already set in map'],
        "reason": "BadRequest",
    }  # fmt: skip


def test_versions_per_suite_per_case_and_overridden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latest = {"patch": {"spec": {"containers": [{"name": "a", "image": "r/a:latest"}]}}}
    suite = crd_suite(
        tmp_path,
        {"name": "suite versions", **latest, "expect": {"errors": 'spec.containers[0].image: Invalid value: "object"'}},
        {"name": "case version", **latest, "k8sVersion": "1.35", "expect": {"errors": "image: Invalid value: images"}},
        base=WIDGET, k8sVersion=["1.30", "1.34"],
    )  # fmt: skip
    status, found = results(capsys, suite)
    assert status == 0
    assert list(found) == ["suite versions [1.30]", "suite versions [1.34]", "case version"]
    assert [r["k8sVersion"] for r in found.values()] == ["1.30", "1.34", "1.35"]
    status, found = results(capsys, suite, "--k8s-version", "1.37")
    assert status == 1
    assert list(found) == ["suite versions", "case version"]
    assert [r["status"] for r in found.values()] == ["failed", "passed"]


def test_skip_select_and_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = crd_suite(
        tmp_path,
        {"name": "first", "expect": "valid"},
        {"name": "second", "skip": "waiting for v2", "object": {**WIDGET, "apiVersion": "example.com/v2"}},
        {"name": "Third", "patch": {"spec": {"replicas": 9}}, "expect": "invalid"},
        base=WIDGET,
    )  # fmt: skip
    status, out, _ = run(capsys, "-v", str(suite))
    assert status == 0
    assert out.splitlines() == [f"PASS {suite}::first", f"SKIP {suite}::second: waiting for v2",
                                f"PASS {suite}::Third", "2 passed, 0 failed, 1 skipped"]  # fmt: skip
    status, out, _ = run(capsys, "-k", "THIRD", str(suite))
    assert (status, out) == (0, "1 passed, 0 failed, 2 deselected\n")


def test_a_request_that_cannot_be_sent_is_an_error() -> None:
    class Refusing:
        def answer(self, case: Case, version: str) -> Any:
            raise ValueError("no such version")

        def check(self, expect: Any, answer: Any) -> list[Mismatch]:
            return []

        def record(self, case: Case, answer: Any) -> Any:
            return None

    case = Case("c", 0, ObjectInput(WIDGET))
    result = run_case(Plan(Suite(Where(Path("s.kcel-test.yaml")), CRD, (case,)), Refusing(), (case,)), case, "1.37")
    assert (result.status, result.detail, result.id) == (ERROR, "no such version", "s.kcel-test.yaml::c")


# -- admission --------------------------------------------------------------------------------------------------

RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team-a"},
              "spec": {"replicas": 2}}  # fmt: skip


def policy(name: str, validations: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [RULE]}, "validations": validations, **spec}}  # fmt: skip


def binding(name: str, **spec: Any) -> dict[str, Any]:
    spec = {"policyName": name, "validationActions": ["Deny"], **spec}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def admission_suite(tmp_path: Path, *cases: dict[str, Any], **extra: Any) -> Path:
    write(
        tmp_path / "policies.yaml",
        policy("limit", [{"expression": "object.spec.replicas <= params.max", "messageExpression":
                          "'at most ' + string(params.max)"}],
               paramKind={"apiVersion": "example.com/v1", "kind": "Limit"}),
        binding("limit", paramRef={"name": "limit", "namespace": "team-a", "parameterNotFoundAction": "Deny"},
                matchResources={"namespaceSelector": {"matchLabels": {"env": "test"}}}),
        policy("owner", [{"expression": "request.userInfo.username != 'mallory'", "message": "not you",
                          "reason": "Forbidden"},
                         {"expression": "request.operation != 'UPDATE' || object.spec.replicas >= "
                          "oldObject.spec.replicas", "message": "no scaling down"},
                         {"expression": "authorizer.group('apps').resource('deployments').namespace('team-a')"
                          ".check('scale').allowed() || object.spec.replicas < 4", "message": "may not scale"}]),
        binding("owner"),
    )  # fmt: skip
    document = {
        "policies": "policies.yaml",
        "params": [{"apiVersion": "example.com/v1", "kind": "Limit", "metadata": {"name": "limit", "namespace":
                                                                                  "team-a"}, "max": 5}],
        "namespaces": {"team-a": {"env": "test"}, "team-b": None},
        "rbac": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "s"},
                  "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["scale"]}]},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                  "metadata": {"name": "s"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                         "kind": "ClusterRole", "name": "s"},
                  "subjects": [{"kind": "Group", "name": "scalers", "apiGroup": "rbac.authorization.k8s.io"}]}],
        "base": DEPLOYMENT, **extra, "cases": list(cases),
    }  # fmt: skip
    return write(tmp_path / "a.kcel-test.yaml", document)


def test_admission_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = admission_suite(
        tmp_path,
        {"name": "allowed", "user": "alice", "expect": {"allowed": True, "warnings": [], "auditAnnotations": {}}},
        {"name": "over the param", "patch": {"spec": {"replicas": 6}}, "user": "alice", "groups": ["scalers"],
         "expect": {"message": "at most 5", "reason": "Invalid", "code": 422}},
        {"name": "other namespace", "patch": {"metadata": {"namespace": "team-b"}, "spec": {"replicas": 6}},
         "user": "alice", "groups": ["scalers"], "expect": "allowed"},
        {"name": "user", "user": "mallory", "expect": {"message": "not you", "reason": "Forbidden", "code": 403}},
        {"name": "update", "update": {"spec": {"replicas": 1}}, "user": "alice",
         "expect": {"message": "no scaling down"}},
        {"name": "rbac", "patch": {"spec": {"replicas": 4}}, "user": "alice", "expect": {"message": "may not scale"}},
        {"name": "rbac group", "patch": {"spec": {"replicas": 4}}, "user": "alice", "groups": ["scalers"],
         "expect": "allowed"},
        {"name": "delete", "operation": "DELETE", "user": "mallory", "expect": "allowed"},
        {"name": "wrong code", "user": "mallory", "expect": {"code": 422}},
    )  # fmt: skip
    status, found = results(capsys, suite)
    assert status == 1
    assert {n: r["status"] for n, r in found.items() if r["status"] != "passed"} == {"wrong code": "failed"}
    assert found["wrong code"]["mismatches"] == [{"field": "code", "expected": "422", "actual": "403"}]
    assert found["user"]["actual"] == {
        "allowed": False, "reason": "Forbidden",
        "message": "ValidatingAdmissionPolicy 'owner' with binding 'owner' denied request: not you",
    }  # fmt: skip


def test_admission_mismatches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = admission_suite(
        tmp_path,
        {"name": "a", "user": "alice", "expect": "denied"},
        {"name": "b", "user": "mallory", "expect": {"message": "not him", "warnings": ["w"],
                                                    "auditAnnotations": {"k": "v"}}},
    )  # fmt: skip
    status, out, _ = run(capsys, str(suite))
    assert status == 1
    lines = suite.read_text().splitlines()
    a, b = (next(i for i, t in enumerate(lines, 1) if f"name: {name}" in t) for name in "ab")
    assert out.splitlines() == [
        f"FAIL {suite}::a", "  allowed", "    expected: denied", "    got:      allowed", f"  at {suite}:{a}",
        f"FAIL {suite}::b", "  message", '    expected: a message containing "not him"',
        "    got:      ValidatingAdmissionPolicy 'owner' with binding 'owner' denied request: not you",
        "  warnings", '    expected: a warning containing "w"', "    got:      no warnings",
        "  auditAnnotations", "    expected: k: v", "    got:      no auditAnnotations", f"  at {suite}:{b}",
        "0 passed, 2 failed",
    ]  # fmt: skip


def test_policies_are_compiled_for_each_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`isSemver` came with the semver library in 1.33 (compatibility version 1.34's environment has it)."""
    write(tmp_path / "p.yaml", policy("semver", [{"expression": "isSemver(object.metadata.name)"}]),
          binding("semver"))  # fmt: skip
    document = {"policies": "p.yaml", "k8sVersion": ["1.30", "1.37"], "base": DEPLOYMENT,
                "cases": [{"name": "a", "expect": "denied"}]}  # fmt: skip
    suite = write(tmp_path / "v.kcel-test.yaml", document)
    status, _, err = run(capsys, str(suite))
    assert status == 2
    assert f"{suite}:1: document 0: policies: {tmp_path}/p.yaml: document 0: spec.validations[0].expression: " in err
    assert "(Kubernetes 1.30)" in err
    status, out, _ = run(capsys, "--k8s-version", "1.37", str(suite))
    assert (status, out) == (0, "1 passed, 0 failed\n")
