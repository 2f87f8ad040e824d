"""Options the commands share: one spelling for the same input in every command (the others still read), one
default user, versions as people write them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import kcel
from kcel.cli import build_parser, main
from kcel.completion import script
from kcel.k8s.environment import server_versions
from kcel.settings import read_settings


def _parse(argv: list[str]) -> argparse.Namespace:
    return build_parser(argv[0]).parse_args(argv)


def _help(command: str) -> str:
    parser = build_parser(command)
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return str(sub.choices[command].format_help())


@pytest.mark.parametrize("command", ["admit", "audit", "serve"])
def test_policies_and_params_are_spelt_one_way(command: str) -> None:
    """`--policy` and `--params` in admit, audit and serve; serve's `--policies`/`--resources` read as aliases that
    the help and the shell completion do not offer."""
    text = _help(command)
    assert "--policy FILE|DIR" in text and "--params FILE|DIR" in text
    assert "--policies" not in text and "--resources" not in text
    completion = script(build_parser(), "bash")
    assert " --policy " in completion and " --policies " not in completion and " --resources " not in completion
    last = ["OBJECT.yaml"] if command != "serve" else []
    both = _parse([command, "--policy", "a", "--policies", "b", "--params", "c", "--resources", "d", *last])
    assert (both.policy, both.params) == (["a", "b"], ["c", "d"])


@pytest.mark.parametrize(("given", "answered"), [("v1.31", "1.31"), ("1.31.4", "1.31"), ("v1.30.0", "1.30")])
def test_versions_as_kubectl_and_patch_releases_write_them(given: str, answered: str) -> None:
    """`v1.31` (kubectl version's) and a patch release, `1.31.4`, answer as their minor."""
    assert _parse(["eval", "--k8s-version", given, "1"]).k8s_version == answered
    assert server_versions(f"{given}-1.32") == tuple(f"1.{m}" for m in range(int(answered[2:]), 33))
    assert kcel.Env(k8s_version=given).compile("[1, 2].all(x, x > 0)").evaluate() is True


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


def test_bad_and_unsupported_versions_say_what_would_do(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["eval", "--k8s-version", "1.31.x", "1"], capsys)
    assert "invalid Kubernetes version '1.31.x': expected MAJOR.MINOR, e.g. 1.30" in err  # once read as 1.31
    err = _usage_error(["eval", "--k8s-version", "1.29", "1"], capsys)
    assert "unsupported Kubernetes version 1.29: kcel answers as Kubernetes 1.30 to 1.37" in err


def test_an_unknown_setting_is_an_error_with_the_known_one(tmp_path: Path) -> None:
    (tmp_path / ".kcel.yaml").write_text('k8sversion: "1.31"\n')
    with pytest.raises(ValueError, match=r"unknown setting 'k8sversion' \(did you mean 'k8sVersion'\?\)"):
        read_settings(tmp_path / ".kcel.yaml")
    (tmp_path / ".kcel.yaml").write_text("colour: yes\nk8sVersion: '1.31'\n")
    with pytest.raises(ValueError, match="unknown setting 'colour'; kcel reads k8sVersion, runtimeConfig$"):
        read_settings(tmp_path / ".kcel.yaml")


BETA_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: label}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  reinvocationPolicy: Never
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: '[JSONPatch{op: "add", path: "/metadata/labels", value: {"team": "a"}}]'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {name: label}
spec: {policyName: label}
"""


def test_admit_refuses_a_beta_api_unless_assumed_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MutatingAdmissionPolicy v1beta1 at 1.34 needs the API server's feature gate and runtime-config: said, with
    the option that assumes them; with it, the policy mutates."""
    (tmp_path / "policy.yaml").write_text(BETA_POLICY)
    (tmp_path / "deployment.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    argv = [
        "admit",
        "--k8s-version",
        "1.34",
        "--policy",
        str(tmp_path / "policy.yaml"),
        str(tmp_path / "deployment.yaml"),
    ]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert ("v1beta1 MutatingAdmissionPolicy is served by Kubernetes 1.34 only when switched on (kube-apiserver "
            "--runtime-config=admissionregistration.k8s.io/v1beta1=true --feature-gates=MutatingAdmissionPolicy=true); "
            "--runtime-config admissionregistration.k8s.io/v1beta1") in err  # fmt: skip
    assert main([*argv, "--runtime-config", "admissionregistration.k8s.io/v1beta1=true"]) == 0
    assert "+    team: a" in capsys.readouterr().out  # the diff of the mutated object
    assert "invalid --runtime-config entry 'v1beta1'" in _usage_error([*argv, "--runtime-config", "v1beta1"], capsys)


def _policy(expression: str) -> str:
    """A ValidatingAdmissionPolicy on Deployments denying what fails `expression`, and its binding."""
    return f"""\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: who}}
spec:
  matchConstraints:
    resourceRules: [{{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}}]
  validations: [{{expression: {json.dumps(expression)}, messageExpression: "'sent by ' + request.userInfo.username"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: who}}
spec: {{policyName: who, validationActions: [Deny]}}
"""


DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team-a}\n"
TEAM_A = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n"


def test_every_command_sends_the_same_default_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kcel admit sent no username (a match on `request.userInfo.username` failed with `no such key`), kcel audit
    `kcel-audit`: both send kcel-user, in system:authenticated, unless told otherwise."""
    (tmp_path / "policy.yaml").write_text(_policy("request.userInfo.username == 'kcel-user' && "
                                                  "'system:authenticated' in request.userInfo.groups"))  # fmt: skip
    (tmp_path / "deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "team-a.yaml").write_text(TEAM_A)
    admit = ["admit", "--policy", str(tmp_path / "policy.yaml"), "--params", str(tmp_path / "team-a.yaml")]
    assert main([*admit, str(tmp_path / "deployment.yaml")]) == 0
    assert main([*admit, "--user", "alice", str(tmp_path / "deployment.yaml")]) == 1
    assert "sent by alice" in capsys.readouterr().out
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(DEPLOYMENT + "---\n" + TEAM_A)
    assert main(["audit", "--policy", str(tmp_path / "policy.yaml"), "-j", "1", str(snapshot)]) == 0
    assert main(["audit", "--policy", str(tmp_path / "policy.yaml"), "-j", "1", "--user", "bob", str(snapshot)]) == 1


def test_a_suite_names_the_user_of_its_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`user:` (and `groups:`) at the top of a suite is every case's that gives none; without it, kcel-user."""
    (tmp_path / "policy.yaml").write_text(_policy("request.userInfo.username != 'alice'"))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    suites = [
        {"policies": "policy.yaml", "user": "alice", "base": deployment,
         "cases": [{"name": "the suite's user", "expect": {"allowed": False, "message": "sent by alice"}},
                   {"name": "a case's own", "user": "bob", "expect": "allowed"}]},
        {"policies": "policy.yaml", "base": deployment,
         "cases": [{"name": "the default user", "expect": {"allowed": True}}]},
    ]  # fmt: skip
    (tmp_path / "who.kcel-test.yaml").write_text(yaml.safe_dump_all(suites))
    assert main(["test", str(tmp_path)]) == 0, capsys.readouterr().out
    suites[1]["cases"][0]["expect"] = {"allowed": False}  # the default user is named: this case must fail
    suites[1]["policies"] = "default-user.yaml"
    (tmp_path / "default-user.yaml").write_text(_policy("request.userInfo.username != 'kcel-user'"))
    (tmp_path / "who.kcel-test.yaml").write_text(yaml.safe_dump_all(suites))
    assert main(["test", str(tmp_path)]) == 0, capsys.readouterr().out


def test_a_namespace_not_given_is_said_to_be_assumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A namespace no Namespace object was given for gets only its kubernetes.io/metadata.name label: said, in
    kcel admit (not given in --params) and kcel audit (not in the snapshot)."""
    (tmp_path / "policy.yaml").write_text(_policy("true"))
    (tmp_path / "deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "team-a.yaml").write_text(TEAM_A)
    admit = ["admit", "--policy", str(tmp_path / "policy.yaml"), str(tmp_path / "deployment.yaml")]
    assert main(admit) == 0
    assumed = (
        "Namespace 'team-a' is not among the objects given: assumed to exist with only the label "
        "kubernetes.io/metadata.name=team-a (give its Namespace object with --params for its other labels)"
    )
    assert f"warning: {assumed}" in capsys.readouterr().err
    assert main([*admit, "--params", str(tmp_path / "team-a.yaml")]) == 0
    assert "Namespace 'team-a'" not in capsys.readouterr().err
    assert main(["audit", "--policy", str(tmp_path / "policy.yaml"), "-j", "1", str(tmp_path / "deployment.yaml")]) == 0
    assert "warning: Namespace 'team-a' is not in the snapshot (nor --params): assumed to exist with only the label " \
           "kubernetes.io/metadata.name=team-a" in capsys.readouterr().err  # fmt: skip
    audit = ["audit", "--policy", str(tmp_path / "policy.yaml"), "-j", "1", "--params", str(tmp_path / "team-a.yaml")]
    assert main([*audit, str(tmp_path / "deployment.yaml")]) == 0
    assert "Namespace 'team-a'" not in capsys.readouterr().err


def test_a_suite_assumes_beta_apis_on_with_runtime_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text(BETA_POLICY)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    labelled = {**deployment, "metadata": {"name": "web", "namespace": "default", "labels": {"team": "a"}}}
    case = {"name": "labelled", "expect": {"allowed": True, "patched": labelled}}
    suite: dict[str, Any] = {"policies": "policy.yaml", "k8sVersion": "1.34", "base": deployment, "cases": [case]}
    (tmp_path / "beta.kcel-test.yaml").write_text(yaml.safe_dump(suite))
    assert main(["test", str(tmp_path)]) == 2  # the suite cannot be run: its policies are not served
    out, err = capsys.readouterr()
    assert "MutatingAdmissionPolicy is served by Kubernetes 1.34 only when switched on" in out + err
    suite["runtimeConfig"] = ["admissionregistration.k8s.io/v1beta1"]
    (tmp_path / "beta.kcel-test.yaml").write_text(yaml.safe_dump(suite))
    assert main(["test", str(tmp_path)]) == 0, capsys.readouterr().out


def test_check_refuses_a_beta_api_unless_assumed_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kcel check says what kcel admit says of a policy of an API version served only when switched on, and takes
    the same --runtime-config (at one version and at several)."""
    (tmp_path / "policy.yaml").write_text(BETA_POLICY)
    assert main(["check", "--k8s-version", "1.34", str(tmp_path / "policy.yaml")]) == 1
    assert "MutatingAdmissionPolicy is served by Kubernetes 1.34 only when switched on" in capsys.readouterr().err
    for versions in ("1.34", "1.34-1.35"):
        argv = ["check", "--k8s-version", versions, "--runtime-config", "api/beta", str(tmp_path / "policy.yaml")]
        assert main(argv) == 0, capsys.readouterr()


BETA_CLASS = """\
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
"""


SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
"""


def test_dra_beta_versions_are_refused_unless_assumed_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """resource.k8s.io/v1beta1 is off by default like every beta API: kcel check says so and takes
    --runtime-config; a devices suite takes runtimeConfig:."""
    (tmp_path / "class.yaml").write_text(BETA_CLASS)
    assert main(["check", str(tmp_path / "class.yaml")]) == 1
    assert ("resource.k8s.io/v1beta1 DeviceClass is served by Kubernetes 1.37 only when switched on (kube-apiserver "
            "--runtime-config=resource.k8s.io/v1beta1=true)") in capsys.readouterr().out  # fmt: skip
    assert main(["check", "--runtime-config", "resource.k8s.io/v1beta1", str(tmp_path / "class.yaml")]) == 0
    capsys.readouterr()
    (tmp_path / "slice.yaml").write_text(SLICE)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}  # fmt: skip
    case = {"name": "the one GPU", "claim": claim, "expect": {"selected": {"r": ["gpu.example.com/node-1/gpu-0"]}}}
    suite: dict[str, Any] = {"devices": ["class.yaml", "slice.yaml"], "cases": [case]}
    (tmp_path / "dra.kcel-test.yaml").write_text(yaml.safe_dump(suite))
    assert main(["test", str(tmp_path / "dra.kcel-test.yaml")]) == 1
    assert "only when switched on" in capsys.readouterr().out
    suite["runtimeConfig"] = "api/beta"
    (tmp_path / "dra.kcel-test.yaml").write_text(yaml.safe_dump(suite))
    assert main(["test", str(tmp_path / "dra.kcel-test.yaml")]) == 0, capsys.readouterr().out
