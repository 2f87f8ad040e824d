"""Suites for the other places Kubernetes runs CEL: webhook match conditions, DRA device selectors, structured
authentication and authorization. For each: a suite that passes, a wrong expectation shown readably, `--update`
recording a new case, a bad field named by file and path, and cases whose answer depends on the version."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.suites import SCHEMA

from .helpers import EXAMPLES, run, write

SURFACES = EXAMPLES / "surfaces"
ISSUER = "https://issuer.example.com"
CLAIMS = {"iss": ISSUER, "aud": "kubernetes", "email": "alice@example.com", "email_verified": True, "roles": ["dev"]}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "team-a", "labels": {"example.com/team": "a"}}}  # fmt: skip
POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"}}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the surface examples (configurations, DeviceClass and claim, ResourceSlices)."""
    shutil.copytree(SURFACES, tmp_path / "surfaces")
    return tmp_path / "surfaces"


def suite(folder: Path, *cases: dict[str, Any], **document: Any) -> Path:
    return write(folder / "s.kcel-test.yaml", {**document, "cases": list(cases)})


def results(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run a suite with -o json: the exit status and {case id without the file: result}."""
    status, out, _ = run(capsys, "-o", "json", *args, str(path))
    return status, {r["id"].split("::")[1]: r for r in json.loads(out)["results"]}


def statuses(found: dict[str, Any]) -> dict[str, str]:
    return {name: result["status"] for name, result in found.items()}


def failure_lines(capsys: pytest.CaptureFixture[str], path: Path, name: str) -> list[str]:
    """The text report's lines for one failing case: its FAIL line and what follows, up to the next case."""
    status, out, _ = run(capsys, str(path))
    assert status == 1
    lines = out.splitlines()
    at = lines.index(f"FAIL {path}::{name}")
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    assert re.fullmatch(rf"  at {re.escape(str(path))}:\d+", lines[end - 1])  # where the case is, last
    return lines[at + 1 : end - 1]


def problem(capsys: pytest.CaptureFixture[str], path: Path, tmp_path: Path) -> str:
    """The first problem line of a suite that cannot be read or prepared (nothing runs)."""
    status, out, err = run(capsys, str(path))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    count = len(lines) - 1
    assert lines[-1] == f"kcel test: {count} suite problem{'s' if count > 1 else ''}; no case was run", err
    return lines[0].removeprefix("error: ").replace(str(tmp_path), "T")


def recorded(capsys: pytest.CaptureFixture[str], path: Path) -> Any:
    """`--update` a suite whose last case has no expectation: the expectation written for it (and the suite passes)."""
    status, out, err = run(capsys, "--update", str(path))
    assert (status, err) == (0, ""), out
    assert out.endswith(" recorded\n")
    assert run(capsys, str(path))[0] == 0
    return yaml.safe_load(path.read_text())["cases"][-1]["expect"]


# -- webhook match conditions ---------------------------------------------------------------------------------------

OPEN_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
GADGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Gadget", "plural": "gizmos"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": OPEN_SCHEMA}]},
}  # fmt: skip


def webhook(name: str, rule: dict[str, Any], *conditions: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "clientConfig": {"url": "https://hooks.example.com/"}, "rules": [rule],
        "matchConditions": [{"name": f"c{i}", "expression": e} for i, e in enumerate(conditions)], **fields,
    }  # fmt: skip


def configuration(name: str, *hooks: dict[str, Any], kind: str = "ValidatingWebhookConfiguration") -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(hooks)}  # fmt: skip


def rule(group: str, resource: str, operations: tuple[str, ...] = ("*",)) -> dict[str, Any]:
    return {"apiGroups": [group], "apiVersions": ["*"], "operations": list(operations), "resources": [resource]}


APPROVER = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "approver"},
            "rules": [{"apiGroups": ["example.com"], "resources": ["gizmos"], "verbs": ["approve"]}]}  # fmt: skip
APPROVERS = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "a"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approver"},
             "subjects": [{"kind": "User", "name": "alice"}]}  # fmt: skip


def webhook_suite(folder: Path, *cases: dict[str, Any], **document: Any) -> Path:
    """The examples' webhooks, plus one for gizmos (a CRD's plural) asked only of approvers (RBAC)."""
    approve = "authorizer.group('example.com').resource('gizmos').check('approve').allowed()"
    write(folder / "gizmos.yaml", configuration("gizmos", webhook("gizmos.example.com", rule("example.com", "gizmos"),
                                                                  approve)), GADGET_CRD)  # fmt: skip
    files = ["webhook-configuration.yaml", "sidecar-webhook-configuration.yaml", "gizmos.yaml"]
    return suite(folder, *cases, webhooks=files, namespaces={"team-a": {"sidecars.example.com/inject": "enabled"}},
                 rbac=[APPROVER, APPROVERS], **document)  # fmt: skip


def test_webhook_cases_pass(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "team-a"}}
    annotated = {**POD, "metadata": {**POD["metadata"], "annotations": {"sidecars.example.com/inject": "true"}}}
    path = webhook_suite(
        folder,
        {"name": "labelled", "object": DEPLOYMENT, "expect": {"called": ["team-policies.example.com"]}},
        {"name": "kubelet", "object": DEPLOYMENT, "groups": ["system:nodes"],
         "expect": {"called": [], "skipped": {"team-policies.example.com": "matchCondition: not-a-node"}}},
        {"name": "deleted", "object": DEPLOYMENT, "operation": "DELETE",
         "expect": {"called": [], "skipped": {"team-policies.example.com": "rules"}}},
        {"name": "mutating first", "object": annotated,
         "expect": {"called": ["inject.sidecars.example.com"], "skipped": {"gizmos.example.com": "rules"}}},
        {"name": "rejected", "object": POD, "expect": {"called": [], "rejected": 'pods "p" is forbidden: expression'}},
        {"name": "other namespace", "object": {**POD, "metadata": {"name": "p", "namespace": "default"}},
         "expect": {"called": [], "skipped": {"inject.sidecars.example.com": "namespaceSelector"}}},
        {"name": "approver", "object": gadget, "user": "alice", "expect": {"called": ["gizmos.example.com"]}},
        {"name": "not an approver", "object": gadget, "user": "bob",
         "expect": {"called": [], "skipped": {"gizmos.example.com": "matchCondition: c0"}}},
    )  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == dict.fromkeys(found, "passed") and status == 0
    assert found["rejected"]["actual"] == {
        "called": [],
        "rejected": "pods \"p\" is forbidden: expression 'object.metadata.annotations['sidecars.example.com/inject'] "
        "== 'true'' resulted in error: no such key: annotations",
    }


def test_a_wrong_webhook_expectation_fails_readably(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = webhook_suite(folder, {"name": "wrong", "object": POD,
                                  "expect": {"called": ["inject.sidecars.example.com"], "skipped": {}}})  # fmt: skip
    assert failure_lines(capsys, path, "wrong") == [
        "  rejected",
        "    expected: not rejected",
        "    got:      pods \"p\" is forbidden: expression 'object.metadata.annotations['sidecars.example.com/inject'] "
        "== 'true'' resulted in error: no such key: annotations",
        "  called",
        "    expected: inject.sidecars.example.com",
        "    got:      none",
    ]


def test_update_records_a_webhook_case(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = webhook_suite(folder, {"name": "new", "object": {**DEPLOYMENT, "metadata": {"name": "web"}}})
    assert recorded(capsys, path) == {
        "called": [],
        "skipped": {"gizmos.example.com": "rules", "team-policies.example.com": "matchCondition: has-a-team",
                    "inject.sidecars.example.com": "namespaceSelector"},
    }  # fmt: skip


def test_webhook_versions(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MutatingAdmissionPolicies are never sent to webhooks from 1.32 on (IsExemptAdmissionConfigurationResource)."""
    write(folder / "everything.yaml", configuration("all", webhook("all.example.com", rule("*", "*"))))
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
              "metadata": {"name": "p"}}  # fmt: skip
    path = suite(folder, {"name": "policy", "object": policy, "k8sVersion": ["1.31", "1.32"],
                          "expect": {"called": ["all.example.com"]}}, webhooks="everything.yaml")  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == {"policy [1.31]": "passed", "policy [1.32]": "failed"}
    assert found["policy [1.32]"]["actual"] == {"called": [], "skipped": {"all.example.com": "exempt"}}


@pytest.mark.parametrize(("document", "message"), [
    ({"webhooks": "resource-slice.yaml"}, "webhooks: T/surfaces/resource-slice.yaml: document 0: ResourceSlice "
     "(resource.k8s.io/v1) does not belong here: webhooks files hold Validating/MutatingWebhookConfigurations, and the "
     "Namespaces and CRDs their requests need"),
    ({"webhooks": "webhook-configuration.yaml", "cases": [{"object": POD, "expect": {"calld": []}}]},
     "cases[0].expect.calld: unknown field (did you mean called? known here: called, rejected, skipped)"),
    ({"webhooks": "webhook-configuration.yaml", "cases": [{"object": POD, "expect": {"rejected": ""}}]},
     "cases[0].expect.rejected: give a text the message contains"),
    ({"webhooks": "webhook-configuration.yaml", "cases": [{"object": POD, "fieldValidation": "Strict"}]},
     "cases[0].fieldValidation: unknown field"),
])  # fmt: skip
def test_bad_webhook_suites(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], document: dict[str, Any], message: str
) -> None:
    path = write(folder / "s.kcel-test.yaml", {"cases": [{"object": POD, "expect": {"called": []}}], **document})
    assert f": document 0: {message}" in problem(capsys, path, tmp_path)


def test_a_webhook_configuration_that_never_loads(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder / "broken.yaml", configuration("broken", webhook("broken.example.com", rule("", "pods"), "1 + ")))
    path = suite(folder, {"object": POD, "expect": {"called": []}}, webhooks="broken.yaml")
    assert problem(capsys, path, tmp_path).startswith(
        "T/surfaces/s.kcel-test.yaml:1: document 0: webhooks: T/surfaces/broken.yaml: document 0: broken: "
        'webhooks[0].matchConditions[0].expression: Invalid value: "1 +": compilation failed: ERROR: <input>:1:4: '
        "Syntax error: "
    )


# -- DRA device selectors -------------------------------------------------------------------------------------------


def claim(*selectors: str, kind: str = "ResourceClaim", **request: Any) -> dict[str, Any]:
    exactly = {"deviceClassName": "large-gpu.example.com",
               "selectors": [{"cel": {"expression": s}} for s in selectors]}  # fmt: skip
    spec = {"devices": {"requests": [{"name": "gpu", **(request or {"exactly": exactly})}]}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec}  # fmt: skip


SHARED: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "shared"},
          "spec": {"driver": "gpu.example.com", "pool": {"name": "node-2"},
                   "devices": [{"name": "shared-0", "allowMultipleAllocations": True,
                                "attributes": {"model": {"string": "h100"}, "driverVersion": {"version": "1.0.0"}},
                                "capacity": {"memory": {"value": "64Gi"}}}]}}  # fmt: skip
GPU0, GPU2 = "gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-2"


def device_suite(folder: Path, *cases: dict[str, Any], **document: Any) -> Path:
    write(folder / "shared.yaml", SHARED)
    return suite(folder, *cases, devices=["device-class.yaml", "resource-slice.yaml", "shared.yaml"], **document)


def test_device_cases_pass(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options: dict[str, Any] = {"firstAvailable": [
        {"name": "small", "deviceClassName": "large-gpu.example.com", "selectors": [
            {"cel": {"expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) < 0'}}]},
        {"name": "any", "deviceClassName": "large-gpu.example.com"},
    ]}  # fmt: skip
    path = device_suite(
        folder,
        {"name": "the base claim", "expect": {"selected": {"gpu": [GPU0]}}},
        {"name": "a claim file", "claim": "device-class.yaml", "expect": {"selected": {"gpu": [GPU0]}}},
        {"name": "inline, in any order", "claim": claim("true"),
         "expect": {"selected": {"gpu": [GPU2, "gpu.example.com/node-2/shared-0", GPU0]}}},
        {"name": "a template", "claim": claim('device.attributes["gpu.example.com"].model == "a100"',
                                              kind="ResourceClaimTemplate"),
         "expect": {"selected": {"gpu": [GPU0, GPU2]}}},
        {"name": "options", "claim": claim(**options),
         "expect": {"selected": {"gpu/small": [GPU2], "gpu/any": [GPU0, GPU2, "gpu.example.com/node-2/shared-0"]}}},
        {"name": "a failure", "patch": {"metadata": {"name": "other"}, "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "nope"}}]}}},
         "expect": {"failure": 'claim default/other, request gpu: could not retrieve device class nope'}},
        base="device-class.yaml",
    )  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == dict.fromkeys(found, "passed") and status == 0


def test_a_wrong_device_expectation_fails_readably(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = device_suite(folder, {"name": "wrong", "claim": "device-class.yaml",
                                 "expect": {"selected": {"gpu": [GPU2], "nic": []}}})  # fmt: skip
    assert failure_lines(capsys, path, "wrong") == [
        "  selected[gpu]",
        f"    expected: {GPU2}",
        f"    got:      {GPU0}",
        "  selected[nic]",
        "    expected: none",
        "    got:      the claim has no request nic (it has: gpu)",
    ]


def test_update_records_a_device_case(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = device_suite(folder, {"name": "new", "claim": claim('device.attributes["gpu.example.com"].ecc')})
    path.write_text(path.read_text().replace("devices:\n", "k8sVersion: '1.36'\ndevices:\n", 1))
    assert recorded(capsys, path) == {
        "selected": {"gpu": []},
        "failure": "claim ns/c: selector #0: CEL runtime error: no such key: ecc",
    }


def test_device_versions_and_feature_gates(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`device.allowMultipleAllocations`: from 1.34 with DRAConsumableCapacity, on by default from 1.36; no device
    selectors at all before 1.31."""
    shared = {"claim": claim("device.allowMultipleAllocations"),
              "expect": {"selected": {"gpu": ["gpu.example.com/node-2/shared-0"]}}}  # fmt: skip
    path = device_suite(
        folder,
        {"name": "by default", **shared, "k8sVersion": ["1.35", "1.36"]},
        {"name": "gated", **shared, "k8sVersion": "1.34", "featureGates": {"DRAConsumableCapacity": True}},
        {"name": "too old", "claim": "device-class.yaml", "k8sVersion": "1.30", "expect": {"selected": {"gpu": []}}},
    )  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == {"by default [1.35]": "error", "by default [1.36]": "passed", "gated": "passed",
                               "too old": "error"}  # fmt: skip
    assert found["by default [1.35]"]["detail"].startswith(
        "Kubernetes 1.35 would refuse the ResourceClaim c (cases[0].claim): spec.devices.requests[0].exactly."
        'selectors[0].cel.expression: Invalid value: "device.allowMultipleAllocations": compilation failed: '
    )
    assert "undefined field 'allowMultipleAllocations'" in found["by default [1.35]"]["detail"]
    assert found["too old"]["detail"] == "Kubernetes 1.30 has no device selectors: DeviceClass arrived in 1.31"


@pytest.mark.parametrize(("case", "message"), [
    ({"claim": "resource-slice.yaml"}, "cases[0].claim: T/surfaces/resource-slice.yaml holds 0 ResourceClaims or "
     "ResourceClaimTemplates; name a file that holds one"),
    ({"claim": DEPLOYMENT}, "cases[0].claim: must be a ResourceClaim or ResourceClaimTemplate (resource.k8s.io), not a "
     "Deployment (apps/v1)"),
    ({"claim": claim("true"), "featureGates": {"DRANope": True}}, "cases[0].featureGates[DRANope]: unknown feature "
     "gate 'DRANope': kcel models DRAConsumableCapacity, DRAListTypeAttributes, DRAPrioritizedList"),
    ({"claim": claim("true"), "featureGates": {"DRAPrioritizedList": "on"}},
     "cases[0].featureGates[DRAPrioritizedList]: must be true or false, not a string"),
    ({"patch": {}}, "cases[0].patch: the suite has no base claim to patch"),
    ({}, "cases[0]: no claim: give claim (or patch, with the suite's base)"),
    ({"claim": claim("true"), "object": POD}, "cases[0].object: unknown field (known here: name, claim, patch, "
     "featureGates, expect, skip, k8sVersion)"),
])  # fmt: skip
def test_bad_device_cases(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any], message: str
) -> None:
    path = device_suite(folder, {**case, "expect": {"selected": {}}})
    assert f": document 0: {message}" in problem(capsys, path, tmp_path)


def test_a_malformed_slice_is_an_error_naming_its_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    device = {"name": "b", "attributes": {"count": {"int": "seven"}}}
    broken = {**SHARED, "spec": {**SHARED["spec"], "devices": [device]}}
    write(folder / "broken.yaml", broken)
    path = suite(folder, {"name": "c", "claim": claim("true"), "expect": {"selected": {}}},
                 devices=["device-class.yaml", "broken.yaml"])  # fmt: skip
    status, found = results(capsys, path)
    assert status == 1
    assert found["c"]["detail"] == (
        f"Kubernetes 1.37 would refuse these ResourceSlices: {folder / 'broken.yaml'}: document 0: "
        "spec.devices[0].attributes[count].int: Invalid value: expected int values"
    )


def test_devices_files_hold_classes_and_slices(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = suite(folder, {"claim": claim("true"), "expect": {"failure": "x"}}, devices="device-class.yaml")
    assert problem(capsys, path, tmp_path).endswith(": devices: no ResourceSlice in these files: no device to select")


# -- structured authentication --------------------------------------------------------------------------------------

V1BETA1 = {"apiVersion": "apiserver.config.k8s.io/v1beta1", "kind": "AuthenticationConfiguration",
           "jwt": [{"issuer": {"url": ISSUER, "audiences": ["kubernetes"]},
                    "claimMappings": {"username": {"claim": "sub", "prefix": "oidc:"},
                                      "uid": {"expression": "'uid-' + claims.sub"}}}]}  # fmt: skip


def test_authentication_cases_pass(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite(
        folder,
        {"name": "claims", "claims": {**CLAIMS, "tenant": "blue"},
         "expect": {"user": {"username": "alice@example.com", "groups": ["oidc:dev"],
                             "extra": {"example.com/tenant": ["blue"]}}}},
        {"name": "valid now", "claims": {**CLAIMS, "exp": 1750000000}, "now": 1740000000,
         "expect": {"user": {"username": "alice@example.com"}}},
        {"name": "not yet valid", "claims": {**CLAIMS, "exp": 1750000000, "nbf": 1745000000},
         "now": "2025-02-19T22:40:00+01:00", "expect": {"rejected": "before the nbf (not before) time"}},
        {"name": "another issuer", "claims": {**CLAIMS, "iss": "https://other.example.com"},
         "expect": {"rejected": 'no JWT authenticator has issuer "https://other.example.com"'}},
        {"name": "not a JWT", "token": "abc", "expect": {"rejected": "malformed token"}},
    )  # fmt: skip
    path.write_text("authentication: authentication-configuration.yaml\n" + path.read_text())
    status, found = results(capsys, path)
    assert statuses(found) == dict.fromkeys(found, "passed") and status == 0


def test_a_wrong_authentication_expectation_fails_readably(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite(folder, {"name": "wrong", "claims": {**CLAIMS, "sub": "a1"},
                          "expect": {"user": {"username": "oidc:a2", "uid": "uid-a1", "groups": ["x"]}}},
                 {"name": "refused", "claims": {**CLAIMS, "aud": "x"}, "expect": {"user": {"username": "oidc:a1"}}},
                 authentication=V1BETA1)  # fmt: skip
    assert failure_lines(capsys, path, "wrong") == [
        "  user.username", '    expected: "oidc:a2"', '    got:      "oidc:a1"',
        "  user.groups", '    expected: ["x"]', "    got:      []",
    ]  # fmt: skip
    assert failure_lines(capsys, path, "refused") == [
        "  user", "    expected: an authenticated user",
        '    got:      rejected: oidc: verify token: oidc: expected audience "kubernetes" got ["x"]',
    ]  # fmt: skip


def test_update_records_an_authentication_case(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite(folder, {"name": "new", "claims": {**CLAIMS, "sub": "a1", "jti": "t-1"}}, authentication=V1BETA1)
    assert recorded(capsys, path) == {"user": {
        "username": "oidc:a1", "uid": "uid-a1", "extra": {"authentication.kubernetes.io/credential-id": ["JTI=t-1"]},
    }}  # fmt: skip


def test_authentication_versions(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The credential id (the jti claim) is in `extra` from 1.32; the v1 configuration is read from 1.34 on."""
    jti = {"name": "jti", "claims": {**CLAIMS, "sub": "a1", "jti": "t-1"}, "expect": {"user": {"extra": {}}}}
    path = suite(folder, jti, authentication=V1BETA1, k8sVersion=["1.31", "1.32"])
    status, found = results(capsys, path)
    assert statuses(found) == {"jti [1.31]": "passed", "jti [1.32]": "failed"}
    assert found["jti [1.32]"]["mismatches"] == [{
        "field": "user.extra", "expected": "{}",
        "actual": '{"authentication.kubernetes.io/credential-id": ["JTI=t-1"]}',
    }]  # fmt: skip
    v1 = {**V1BETA1, "apiVersion": "apiserver.config.k8s.io/v1"}
    path = suite(folder, {**jti, "k8sVersion": ["1.33", "1.34"]}, authentication=v1)
    status, found = results(capsys, path)
    assert statuses(found) == {"jti [1.33]": "error", "jti [1.34]": "failed"}
    assert found["jti [1.33]"]["detail"] == (
        'the AuthenticationConfiguration does not load at Kubernetes 1.33: no kind "AuthenticationConfiguration" is '
        'registered for version "apiserver.config.k8s.io/v1": Kubernetes 1.33 reads AuthenticationConfiguration of '
        "apiserver.config.k8s.io/v1alpha1, apiserver.config.k8s.io/v1beta1"
    )


@pytest.mark.parametrize(("case", "message"), [
    ({"claims": CLAIMS, "token": "a.b.c"}, "cases[0].token: give either claims or token, not both"),
    ({}, "cases[0]: no token: give claims (the token's claims) or token (a JWT)"),
    ({"claims": CLAIMS, "now": "yesterday"}, "cases[0].now: must be a time in RFC 3339 (2025-06-01T12:00:00Z) or Unix "
     "seconds, not a string 'yesterday'"),
    ({"claims": CLAIMS, "now": "2025-06-01T12:00:00"}, "cases[0].now: '2025-06-01T12:00:00' has no time zone"),
    ({"claims": CLAIMS, "expect": {"user": {"name": "a"}}}, "cases[0].expect.user.name: unknown field (did you mean "
     "username? known here: username, uid, groups, extra)"),
    ({"claims": CLAIMS, "expect": {"user": {"username": "a"}, "rejected": "b"}},
     "cases[0].expect.rejected: a token authenticates a user or is rejected, not both"),
])  # fmt: skip
def test_bad_authentication_cases(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any], message: str
) -> None:
    path = suite(folder, {"expect": {"rejected": "x"}, **case}, authentication=V1BETA1)
    assert f": document 0: {message}" in problem(capsys, path, tmp_path)


def test_a_configuration_no_version_loads(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = json.loads(json.dumps(V1BETA1))
    broken["jwt"][0]["claimMappings"]["uid"]["expression"] = "claims.sub +"
    path = suite(folder, {"claims": CLAIMS, "expect": {"rejected": "x"}}, authentication=broken, k8sVersion="1.33")
    assert problem(capsys, path, tmp_path).startswith(
        "T/surfaces/s.kcel-test.yaml:1: document 0: authentication: jwt[0].claimMappings.uid.expression: Invalid "
        'value: "claims.sub +": compilation failed: '
    )


# -- structured authorization ---------------------------------------------------------------------------------------


def authorization_config(*conditions: str, policy: str = "NoOpinion", api: str = "v1") -> dict[str, Any]:
    hook = {"timeout": "3s", "subjectAccessReviewVersion": "v1", "matchConditionSubjectAccessReviewVersion": "v1",
            "failurePolicy": policy, "connectionInfo": {"type": "InClusterConfig"},
            "matchConditions": [{"expression": e} for e in conditions]}  # fmt: skip
    return {"apiVersion": f"apiserver.config.k8s.io/{api}", "kind": "AuthorizationConfiguration",
            "authorizers": [{"type": "Webhook", "name": "hook.example.com", "webhook": hook},
                            {"type": "AlwaysDeny", "name": "alwaysdeny"}]}  # fmt: skip


SECRETS = {"user": "alice", "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "secrets"}}


def test_authorization_cases_pass(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(folder / "review.yaml", {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                                   "spec": {**SECRETS, "user": "bob"}})  # fmt: skip
    config = authorization_config("request.user != 'bob'", "request.extra['team'][0] == 'a'")
    path = suite(
        folder,
        {"name": "errors skip under NoOpinion", "request": SECRETS,
         "expect": {"decision": "no-opinion", "authorizers": ["hook.example.com", "alwaysdeny"],
                    "error": "no such key: team"}},
        {"name": "a false condition skips it", "request": "review.yaml",
         "expect": {"decision": "no-opinion", "authorizers": {"hook.example.com": "skip", "alwaysdeny": "no-opinion"}}},
        authorization=config,
    )  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == dict.fromkeys(found, "passed") and status == 0
    assert found["errors skip under NoOpinion"]["actual"] == {
        "decision": "no-opinion", "authorizers": {"hook.example.com": "skip", "alwaysdeny": "no-opinion"},
        "error": "cel evaluation error: expression 'request.extra['team'][0] == 'a'' resulted in error: no such "
                 "key: team",
    }  # fmt: skip


def test_a_wrong_authorization_expectation_fails_readably(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite(folder, {"name": "wrong", "request": SECRETS,
                          "expect": {"decision": "allow", "authorizers": {"hook.example.com": "skip"}}},
                 authorization=authorization_config("true", policy="Deny"))  # fmt: skip
    assert failure_lines(capsys, path, "wrong") == [
        "  decision", "    expected: allow", "    got:      undecided",
        "  authorizers", "    expected: hook.example.com: skip", "    got:      hook.example.com: ask",
        "              alwaysdeny: no-opinion",
    ]  # fmt: skip


def test_update_records_an_authorization_case(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite(folder, {"name": "new", "request": SECRETS},
                 authorization=authorization_config("request.extra['team'][0] == 'a'", policy="Deny"))  # fmt: skip
    assert recorded(capsys, path) == {
        "decision": "deny", "authorizers": {"hook.example.com": "deny"},
        "error": "cel evaluation error: expression 'request.extra['team'][0] == 'a'' resulted in error: no such "
                 "key: team",
    }  # fmt: skip


def test_authorization_versions(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Label and field selectors reach the conditions from 1.32 (AuthorizeWithSelectors): before, the condition
    does not compile, and the configuration does not load."""
    selector = "has(request.resourceAttributes.labelSelector)"
    path = suite(folder, {"name": "selectors", "request": SECRETS, "k8sVersion": ["1.31", "1.32"],
                          "expect": {"authorizers": {"hook.example.com": "skip"}}},
                 authorization=authorization_config(selector, api="v1beta1"))  # fmt: skip
    status, found = results(capsys, path)
    assert statuses(found) == {"selectors [1.31]": "error", "selectors [1.32]": "passed"}
    assert found["selectors [1.31]"]["detail"].startswith(
        "the AuthorizationConfiguration does not load at Kubernetes 1.31: authorizers[0].matchConditions[0]"
        '.expression: Invalid value: "has(request.resourceAttributes.labelSelector)": compilation failed: '
    )


@pytest.mark.parametrize(("case", "message"), [
    ({}, "cases[0]: no request: give request (a SubjectAccessReview or its spec)"),
    ({"request": 7}, "cases[0].request: must be an object or a file holding one, not a number"),
    ({"request": SECRETS, "expect": {"authorizers": {"hook.example.com": "maybe"}}},
     "cases[0].expect.authorizers[hook.example.com]: must be one of allow, deny, no-opinion, skip, ask, not 'maybe'"),
    ({"request": SECRETS, "expect": {"decision": "allowed"}},
     "cases[0].expect.decision: must be one of allow, deny, no-opinion, undecided, not 'allowed'"),
    ({"request": SECRETS, "expect": {}}, "cases[0].expect: say what must come back: decision, authorizers or error"),
])  # fmt: skip
def test_bad_authorization_cases(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any], message: str
) -> None:
    path = suite(folder, {"expect": {"decision": "allow"}, **case}, authorization=authorization_config("true"))
    assert f": document 0: {message}" in problem(capsys, path, tmp_path)


# -- what a suite tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("document", "message"), [
    ({"crds": "x.yaml", "webhooks": "webhook-configuration.yaml"},
     "webhooks: a suite tests either CRDs (crds), admission policies (policies), webhooks, devices, authentication or "
     "authorization, not both crds and webhooks: give webhooks a suite of its own"),
    ({"devices": "resource-slice.yaml", "authentication": "authentication-configuration.yaml"},
     "authentication: a suite tests either CRDs (crds), admission policies (policies), webhooks, devices, "
     "authentication or authorization, not both devices and authentication"),
    ({}, "a suite needs crds (files of CRDs) or policies (admission policies), or else webhooks (webhook "
     "configurations), devices (DeviceClasses and ResourceSlices), authentication (an AuthenticationConfiguration) or "
     "authorization (an AuthorizationConfiguration)"),
    ({"devices": "resource-slice.yaml", "namespaces": {}},
     "namespaces: unknown field (known here: devices, runtimeConfig, k8sVersion, base, cases)"),
    ({"authorization": "nope.yaml"}, "authorization: T/surfaces/nope.yaml: no such file"),
])  # fmt: skip
def test_a_suite_tests_one_thing(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], document: dict[str, Any], message: str
) -> None:
    path = write(folder / "s.kcel-test.yaml", {**document, "cases": [{"name": "a"}]})
    assert f": document 0: {message}" in problem(capsys, path, tmp_path)


# -- the example ----------------------------------------------------------------------------------------------------


def test_the_examples_pass_with_the_surface_suite(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, str(EXAMPLES))
    assert (status, err) == (0, "")
    status, found = results(capsys, SURFACES / "surfaces.kcel-test.yaml")
    assert status == 0 and len(found) == 20 and set(statuses(found).values()) == {"passed"}


def test_the_schema_knows_the_surface_suites() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    authentication = {"authentication": "a.yaml", "cases": [{"claims": CLAIMS, "expect": {"rejected": "x"}}]}
    assert list(validator.iter_errors(authentication)) == []
    assert list(validator.iter_errors({**authentication, "webhooks": "w.yaml"}))  # one thing per suite
    device_case = {"claim": "c.yaml", "patch": {}, "expect": {"selected": {"gpu": []}}}
    assert list(validator.iter_errors({"devices": "d.yaml", "cases": [device_case]}))  # claim or patch
    review_case = {"request": SECRETS, "expect": {"authorizers": {"a": "maybe"}}}
    assert list(validator.iter_errors({"authorization": "a.yaml", "cases": [review_case]}))
