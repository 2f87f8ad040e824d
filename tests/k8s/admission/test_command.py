"""`kcel admit`, driven through configure()/run() with the shipped examples."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kcel.k8s.admission import command

from .helpers import deployment, write

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "admission"
POLICY_ARGS = ["--policy", str(EXAMPLES / "policies"), "--params", str(EXAMPLES / "params")]


def run(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcel admit")
    command.configure(parser)
    return command.run(parser.parse_args(args))


def test_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*POLICY_ARGS, str(EXAMPLES / "objects" / "deployment-ok.yaml")]) == 0
    out = capsys.readouterr().out
    assert "document 0: Deployment default/web CREATE: allowed" in out
    assert "audit annotation demo-policy.example.com/high-replica-count: Deployment spec.replicas set to 2" in out


def test_denied_with_warning_and_audit(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*POLICY_ARGS, str(EXAMPLES / "objects" / "deployment-too-many.yaml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(
        "deployment-too-many.yaml: document 0: Deployment default/web CREATE: denied (422 Invalid)"
    )
    assert lines[1] == (
        "  Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
        "'demo-binding-test.example.com': failed expression: object.spec.replicas <= 5"
    )
    assert lines[2] == (
        "  The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with "
        "binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3"
    )


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    objects = [str(EXAMPLES / "objects" / f"deployment-{name}.yaml") for name in ("ok", "wrong-image")]
    assert run([*POLICY_ARGS, "-o", "json", *objects]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] == []
    assert [r["allowed"] for r in report["results"]] == [True, False]
    assert report["results"][1]["message"] == (
        "ValidatingAdmissionPolicy 'image-matches-namespace-environment.policy.example.com' with binding "
        "'image-matches-namespace-environment.binding.example.com' denied request: only test images are allowed in "
        "namespace default"
    )


def test_update_with_old_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = write(tmp_path / "p.yaml", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "no-scale-down"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                         "operations": ["UPDATE"], "resources": ["deployments"]}]},
                 "validations": [{"expression": "object.spec.replicas >= oldObject.spec.replicas",
                                  "message": "no scaling down", "reason": "Forbidden"}]},
    }, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "no-scale-down"}, "spec": {"policyName": "no-scale-down", "validationActions": ["Deny"]},
    })  # fmt: skip
    new, old = write(tmp_path / "new.yaml", deployment(2)), write(tmp_path / "old.yaml", deployment(3))
    assert run(["--policy", str(policy), "--old", str(old), str(new)]) == 1
    assert (
        'Error from server (Forbidden): deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy '
        "'no-scale-down' with binding 'no-scale-down' denied request: no scaling down"
    ) in capsys.readouterr().out
    assert run(["--policy", str(policy), "--old", str(new), str(old)]) == 0


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*POLICY_ARGS, str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err == f"kcel admit: {tmp_path / 'missing.yaml'}: no such file or directory\n"
    assert run([str(EXAMPLES / "objects" / "deployment-ok.yaml")]) == 2
    capsys.readouterr()
    for version, problem in (("one", "invalid Kubernetes version 'one'"), ("1.29", "unsupported Kubernetes version")):
        with pytest.raises(SystemExit) as exited:
            run([*POLICY_ARGS, "--k8s-version", version, str(EXAMPLES / "objects" / "deployment-ok.yaml")])
        assert exited.value.code == 2 and problem in capsys.readouterr().err


def test_unusable_policy_documents_fail_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = write(tmp_path / "broken.yaml", {"apiVersion": "admissionregistration.k8s.io/v1",
                                              "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
                                              "spec": {"validationActions": ["Deny"]}})  # fmt: skip
    obj = write(tmp_path / "obj.yaml", deployment())
    assert run(["--policy", str(broken), str(obj)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {broken}: document 0: spec.policyName: Required value",
        "warning: no ValidatingAdmissionPolicy or MutatingAdmissionPolicy was loaded",
        f"warning: {obj}: document 0: no policy applied to Deployment default/nginx (kcel admit -v says why)",
    ]


def test_help_has_a_working_example() -> None:
    parser = argparse.ArgumentParser(prog="kcel admit")
    command.configure(parser)
    assert "kcel admit --policy examples/admission/policies" in parser.format_help()


def test_import_is_cheap() -> None:
    code = "import sys, kcel.k8s.admission.command as c; print('kcel.k8s.admission.policyset' in sys.modules, 'yaml' in sys.modules)"  # noqa: E501
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


MUTATING = ["--policy", str(EXAMPLES / "mutating" / "sidecar.yaml")]


@pytest.mark.skipif(
    importlib.util.find_spec("kubernetes_validate") is None,
    reason="needs pip install 'kcel[schemas]'",
)
def test_mutations_are_shown_as_a_diff_and_as_a_json_patch(capsys: pytest.CaptureFixture[str]) -> None:
    target = str(EXAMPLES / "objects" / "deployment-ok.yaml")
    assert run([*MUTATING, target]) == 0
    out = capsys.readouterr().out
    assert "  mutated (2 patch operations):" in out
    assert "    +  labels:\n    +    example.com/team: payments\n" in out
    assert "    +      - image: mesh/proxy:v1.0.0\n" in out
    assert run([*MUTATING, target, "-o", "json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["results"]
    assert record["allowed"] is True and record["notes"] == []
    assert record["patch"][0] == {"op": "add", "path": "/metadata/labels", "value": {"example.com/team": "payments"}}
    assert record["patched"]["spec"]["template"]["spec"]["initContainers"][0]["name"] == "mesh-proxy"


def test_a_kind_without_its_crd_is_matched_by_a_guessed_plural_and_kcel_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mesh = write(tmp_path / "mesh.yaml", {"apiVersion": "mesh.example.io/v1", "kind": "Mesh",
                                          "metadata": {"name": "m", "namespace": "default"}})  # fmt: skip
    assert run([*MUTATING, str(mesh)]) == 0
    out = capsys.readouterr().out
    assert "kcel: warning: Mesh (mesh.example.io/v1) is matched as resource 'meshs'" in out


def test_a_file_without_policies_is_not_a_silent_allow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`allowed` only because nothing applied is said, and fails the run with --fail-on-unmatched."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("# policies go here\n", encoding="utf-8")
    obj = write(tmp_path / "obj.yaml", deployment())
    assert run(["--policy", str(empty), str(obj)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{obj}: document 0: Deployment default/nginx CREATE: allowed (no policy applied)\n"
    assert "warning: no ValidatingAdmissionPolicy or MutatingAdmissionPolicy was loaded" in err
    assert run(["--fail-on-unmatched", "--policy", str(empty), str(obj)]) == 1
    assert "no policy applied to Deployment default/nginx" in capsys.readouterr().err


def test_verbose_says_why_each_policy_did_not_apply(capsys: pytest.CaptureFixture[str]) -> None:
    without_namespaces = ["--policy", str(EXAMPLES / "policies")]  # `default` has no labels: no selector picks it
    run(["-v", *without_namespaces, str(EXAMPLES / "objects" / "deployment-ok.yaml")])
    lines = capsys.readouterr().out.splitlines()
    assert any(line.endswith(": binding-not-matched (matchResources: namespaceSelector)") for line in lines), lines
    replicas_only = [
        "--policy",
        str(EXAMPLES / "policies" / "replica-limit.yaml"),
        "--params",
        str(EXAMPLES / "params"),
    ]
    assert run(["-v", "--fail-on-unmatched", *replicas_only, str(EXAMPLES / "params" / "cluster.yaml")]) == 1
    out = capsys.readouterr().out
    assert "policy-not-matched (matchConstraints: resourceRules)" in out and "(no policy applied)" in out
