"""Options the commands share: one spelling for the same input in every command (the others still read), one
default user, versions as people write them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

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
    with pytest.raises(ValueError, match="unknown setting 'colour'; kcel reads k8sVersion$"):
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
