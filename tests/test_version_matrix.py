"""`--k8s-version 1.30-1.37` on check, validate, admit and test: one answer per version only where they differ;
a project's range in `.kcel.yaml`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kcel.cli import main
from kcel.k8s.environment import server_versions
from kcel.matrix import Matrix, Outcome, versions_text
from kcel.settings import find_settings

EXAMPLES = Path(__file__).parent.parent / "examples"
WIDGET_CRD = (EXAMPLES / "widget-crd.yaml").read_text(encoding="utf-8")
RULE = '"self.replicas <= self.maxReplicas"'

# `orValue` on a value that is not optional: cel-go v0.28 (Kubernetes 1.37) made it `no such overload`.
OR_VALUE_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: tolerations}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]
  validations:
    - expression: "object.spec.tolerations.orValue([]).size() <= 2"
      message: too many tolerations
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: tolerations}
spec: {policyName: tolerations, validationActions: [Deny]}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: nginx}]
  tolerations: [{key: a, operator: Exists}]
"""


def _answers(capsys: pytest.CaptureFixture[str]) -> dict[str, list[tuple[list[str], str, str]]]:
    """-o json's subjects: (versions, verdict, message) of each answer."""
    report = json.loads(capsys.readouterr().out)
    return {
        s["subject"]: [(a["versions"], a["verdict"], a["message"]) for a in s["answers"]] for s in report["subjects"]
    }


def _crd(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "crd.yaml"
    path.write_text(WIDGET_CRD.replace(RULE, json.dumps(rule)), encoding="utf-8")
    return path


def test_a_policy_using_or_value_on_a_list_changes_its_decision_at_1_37(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "policy.yaml").write_text(OR_VALUE_POLICY, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    args = [
        "admit",
        "--k8s-version",
        "1.30-1.37",
        "--policy",
        str(tmp_path / "policy.yaml"),
        str(tmp_path / "pod.yaml"),
    ]
    assert main([*args, "-o", "json"]) == 1  # denied on one version
    ((subject, answers),) = _answers(capsys).items()
    assert subject.endswith("Pod default/web CREATE")
    assert [(versions, verdict) for versions, verdict, _ in answers] == [
        (["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"], "allowed"),
        (["1.37"], "denied (422 Invalid)"),
    ]
    assert answers[1][2].endswith("resulted in error: no such overload")
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "  1.30-1.36  allowed\n  1.37       denied (422 Invalid): " in out
    assert "1 requests: 1 answered differently by version" in err


def test_a_crd_using_the_ip_library_is_rejected_on_1_30_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The IP library arrived with the 1.30 API server, for expressions stored by it; new ones may use it from 1.31
    (the compatibility version), so a CRD created on 1.30 is rejected."""
    crd = _crd(tmp_path, "isIP(self.mode) || self.mode == 'Safe'")
    assert main(["check", "--k8s-version", "1.30-1.37", "-o", "json", str(crd)]) == 1
    ((subject, answers),) = _answers(capsys).items()
    assert subject == f"{crd}: document 0: CRD widgets.example.com"
    assert [(versions, verdict) for versions, verdict, _ in answers] == [
        (["1.30"], "rejected"),
        (["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"], "accepted"),
    ]
    assert "undeclared reference to 'isIP'" in answers[0][2]


def test_answers_that_agree_are_told_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--k8s-version", "1.31,1.34", str(EXAMPLES / "widget-crd.yaml")]) == 0
    out, err = capsys.readouterr()
    assert out == ""  # nothing differs, nothing fails
    assert "Kubernetes 1.31, 1.34: 1 CRDs and objects: 0 answered differently by version, 0 failing" in err
    assert main(["check", "--k8s-version", "1.33-1.34", str(EXAMPLES / "expensive-crd.yaml")]) == 1
    out, _ = capsys.readouterr()
    assert "CRD routes.example.com: rejected on every version: " in out


def test_validate_tells_a_message_that_changed_between_versions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kubernetes 1.35 stopped quoting `"object"` as the invalid value of a rule's message."""
    widget = tmp_path / "widget.yaml"
    widget.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
                      "spec: {replicas: 5, maxReplicas: 3, mode: Safe}\n", encoding="utf-8")  # fmt: skip
    args = ["validate", "--k8s-version", "1.34-1.35", "-j", "1", "--crd", str(EXAMPLES / "widget-crd.yaml")]
    assert main([*args, "-o", "json", str(widget)]) == 1
    ((_, answers),) = _answers(capsys).items()
    assert [(versions, verdict) for versions, verdict, _ in answers] == [(["1.34"], "invalid"), (["1.35"], "invalid")]
    assert 'Invalid value: "object": replicas must not exceed' in answers[0][2]
    assert "Invalid value: replicas must not exceed" in answers[1][2]


def test_a_suite_is_run_at_each_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text(OR_VALUE_POLICY, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    suite = tmp_path / "pods.kcel-test.yaml"
    suite.write_text("policies: policy.yaml\ncases:\n  - name: one toleration\n    object: pod.yaml\n"
                     "    expect: allowed\n", encoding="utf-8")  # fmt: skip
    assert main(["test", "--k8s-version", "1.36-1.37", "-o", "json", str(suite)]) == 1
    answers = _answers(capsys)[f"{suite}::one toleration"]
    assert [(versions, verdict) for versions, verdict, _ in answers] == [(["1.36"], "passed"), (["1.37"], "failed")]
    assert main(["test", "--k8s-version", "1.36-1.37", "-o", "github", str(suite)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"::error file={suite},line=3,") and "failed on Kubernetes 1.37" in line
    assert main(["test", "--k8s-version", "1.36-1.37", "--update", str(suite)]) == 2


def test_a_suite_that_a_version_cannot_prepare_answers_an_error_there(capsys: pytest.CaptureFixture[str]) -> None:
    """MutatingAdmissionPolicy v1 is served from 1.36: before, the suite's cases are errors, after, they run."""
    suite = EXAMPLES / "admission" / "mutating" / "mutating.kcel-test.yaml"
    assert main(["test", "--k8s-version", "1.35-1.36", "-o", "json", str(suite)]) == 1
    for answers in _answers(capsys).values():
        assert [(versions, verdict) for versions, verdict, _ in answers] == [(["1.35"], "error"), (["1.36"], "passed")]
        assert "is not served by Kubernetes 1.35" in answers[0][2]


def test_the_project_range_comes_from_kcel_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crd = _crd(tmp_path, "isIP(self.mode) || self.mode == 'Safe'")
    (tmp_path / ".kcel.yaml").write_text("k8sVersion: 1.30-1.31  # a range, unquoted\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found above the current folder
    assert main(["check", "-o", "json", str(crd)]) == 1
    assert [a[0] for a in next(iter(_answers(capsys).values()))] == [["1.30"], ["1.31"]]
    assert main(["check", "--k8s-version", "1.31", str(crd)]) == 0  # the option wins
    capsys.readouterr()
    (tmp_path / ".kcel.yaml").write_text("k8sVersion: 1.29\n", encoding="utf-8")
    assert main(["check", str(crd)]) == 2
    assert f"{tmp_path / '.kcel.yaml'}: k8sVersion: unsupported Kubernetes version 1.29" in capsys.readouterr().err


def test_settings_keep_versions_as_written(tmp_path: Path) -> None:
    (tmp_path / ".kcel.yaml").write_text("k8sVersion: [1.30, '1.34']\n", encoding="utf-8")
    assert find_settings(tmp_path).k8s_versions == ("1.30", "1.34")  # 1.30, not the number 1.3
    (tmp_path / ".kcel.yaml").write_text("", encoding="utf-8")
    assert find_settings(tmp_path).k8s_versions == ()


def test_commands_of_one_version_refuse_a_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["eval", "--k8s-version", "1.30-1.31", "1 + 1"])
    assert exited.value.code == 2
    assert "one version only here, not 1.30-1.31" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "versions"),
    [("1.34", ("1.34",)), ("1.35-1.37", ("1.35", "1.36", "1.37")), ("1.34, 1.31,1.34", ("1.31", "1.34")),
     ("1.30-1.31,1.37", ("1.30", "1.31", "1.37"))],
)  # fmt: skip
def test_server_versions(text: str, versions: tuple[str, ...]) -> None:
    assert server_versions(text) == versions


@pytest.mark.parametrize(
    ("text", "error"),
    [("1.33-1.31", "1.33 is newer than 1.31"), ("1.29-1.31", "unsupported Kubernetes version 1.29"),
     ("1.30-", "invalid Kubernetes version ''")],
)  # fmt: skip
def test_server_versions_refuse(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        server_versions(text)


def test_matrix_groups_versions_and_names_them_in_messages() -> None:
    def at(version: str, verdict: str, message: str = "") -> list[Outcome]:
        return [Outcome("x", verdict, verdict != "ok", message)]

    answers: dict[str, Any] = {
        "1.30": at("1.30", "bad", "Kubernetes 1.30 serves no such kind"),
        "1.31": at("1.31", "bad", "Kubernetes 1.31 serves no such kind"),
        "1.32": at("1.32", "ok"),
        "1.33": [],  # not answered at all
    }
    (row,) = Matrix.of(answers).rows
    assert [(s.versions, s.verdict, s.message) for s in row.spans] == [
        (("1.30", "1.31"), "bad", "Kubernetes 1.30-1.31 serves no such kind"),
        (("1.32",), "ok", ""),
        (("1.33",), "absent", ""),
    ]
    assert row.differs and row.failed
    assert versions_text(["1.30", "1.31", "1.32", "1.34"]) == "1.30-1.32, 1.34"
    assert versions_text(["1.31", "1.34"]) == "1.31, 1.34"
