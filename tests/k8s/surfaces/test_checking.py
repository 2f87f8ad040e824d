"""`kcel check` beyond CRDs (policies, skipped documents, nothing to check) and the named environments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kcel.cli import main
from kcel.k8s.surfaces.environments import environment
from kcel.repl import Session

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def test_a_file_with_nothing_to_check_says_why_and_fails_when_strict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "deployment.yaml")]) == 0  # a pre-commit hook given only samples
    assert "kcel check: nothing to check" in capsys.readouterr().err
    assert main(["check", "--strict", str(EXAMPLES / "deployment.yaml")]) == 1
    err = capsys.readouterr().err
    skipped = f"skipped: {EXAMPLES / 'deployment.yaml'}: document 0: Deployment (apps/v1) holds no CEL that kcel checks"
    assert skipped in err
    assert "kcel check: nothing to check" in err


def test_admission_policies_are_checked_and_other_documents_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "admission" / "mutating" / "sidecar.yaml")]) == 0
    captured = capsys.readouterr()
    assert ": MutatingAdmissionPolicy sidecar.example.com: accepted (2 expressions)" in captured.out
    assert ": MutatingAdmissionPolicy team-label.example.com: accepted (1 expression)" in captured.out
    assert "ConfigMap (v1) holds no CEL that kcel checks" in captured.err


def test_a_policy_that_does_not_compile_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["CREATE"], "resources": ["deployments"]}]},
                 "validations": [{"expression": "object.spec.replicas <"}]},
    }  # fmt: skip
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy))
    assert main(["check", str(path), "-o", "json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert (report["kind"], report["name"], report["valid"], report["expressions"]) == (
        "ValidatingAdmissionPolicy",
        "p",
        False,
        1,
    )
    assert report["errors"][0].startswith('spec.validations[0].expression: Invalid value: "object.spec.replicas <": ')


def test_eval_in_a_named_environment(capsys: pytest.CaptureFixture[str]) -> None:
    expression = '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b"), value: "c"}]'
    assert main(["eval", "--env", "mutating-policy", "--var", "object={}", expression]) == 0
    assert capsys.readouterr().out.endswith(": list(JSONPatch)\n")
    assert main(["eval", "--env", "validating-policy", "--var", "object={}", expression]) == 1
    assert "undeclared reference to 'JSONPatch'" in capsys.readouterr().err


def test_environments_declare_their_variables() -> None:
    policy = environment("validating-policy", "1.34")
    assert {"object", "oldObject", "request", "params", "namespaceObject", "authorizer"} <= set(policy.variables)
    assert set(environment("crd").variables) == {"self", "oldSelf"}
    with pytest.raises(ValueError, match="unknown environment 'nope'"):
        environment("nope")


def test_the_repl_switches_environments() -> None:
    session = Session()
    assert session.handle("%option --env mutating-policy") == "env: mutating-policy"
    assert session.handle('type(JSONPatch{op: "add"})').startswith("JSONPatch")
    assert "unknown environment" in session.handle("%option --env nope")
    assert session.handle('type(JSONPatch{op: "add"})').startswith("JSONPatch")  # the last good one is kept


def test_every_surface_example_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-o", "json", str(EXAMPLES / "surfaces")]) == 0
    reports = [r for r in json.loads(capsys.readouterr().out) if "kind" in r]  # not the skipped documents
    kinds = {(report["kind"], report["valid"]) for report in reports}
    assert kinds >= {
        ("ValidatingWebhookConfiguration", True), ("DeviceClass", True), ("ResourceClaim", True),
        ("AuthenticationConfiguration", True), ("AuthorizationConfiguration", True),
    }  # fmt: skip
    assert all(report["valid"] and report["expressions"] > 0 for report in reports)


@pytest.mark.parametrize(("version", "rejected"), [
    ("1.30", {"AuthenticationConfiguration", "AuthorizationConfiguration", "DeviceClass", "ResourceClaim"}),
    ("1.33", {"AuthenticationConfiguration", "DeviceClass", "ResourceClaim"}),  # v1 of both arrived in 1.34
    ("1.34", set()),
])  # fmt: skip
def test_surfaces_follow_the_kubernetes_version(
    version: str, rejected: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "-o", "json", "--k8s-version", version, str(EXAMPLES / "surfaces")]) == (1 if rejected else 0)
    reports = [r for r in json.loads(capsys.readouterr().out) if "kind" in r]  # not the skipped documents
    assert {report["kind"] for report in reports if not report["valid"]} == rejected


@pytest.mark.parametrize(("name", "expression", "variables", "type_name"), [
    ("webhook-match", "request.userInfo.username", ["--var", 'request={"userInfo": {"username": "a"}}'], "string"),
    ("dra-selector", 'device.driver', ["--var", 'device={"driver": "a"}'], "string"),
    ("authn-claims", "claims.sub", ["--var", 'claims={"sub": "a"}'], "any"),  # map(string, any)
    ("authn-user", "user.username", ["--var", 'user={"username": "a"}'], "string"),
    ("authz-match", "request.user", ["--var", 'request={"user": "a"}'], "string"),
])  # fmt: skip
def test_eval_in_each_surface_environment(
    name: str, expression: str, variables: list[str], type_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--env", name, *variables, expression]) == 0
    assert capsys.readouterr().out == f'"a" : {type_name}\n'
    assert main(["eval", "--env", name, "undeclared_variable"]) == 1
    assert "undeclared reference to 'undeclared_variable'" in capsys.readouterr().err
