"""`kcel check` shows the lints (kcel.k8s.rules.lints) under the CRD, at the file, line and column of the character,
in every output format; they change the exit status only with --strict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kcel.cli import main

# jobset's VolumeClaimPolicies rule (kubernetes-sigs/jobset config/components/crd/bases), cut down to its schema
JOBSET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobsets.jobset.x-k8s.io
spec:
  group: jobset.x-k8s.io
  names: {kind: JobSet, plural: jobsets}
  scope: Namespaced
  versions:
  - name: v1alpha2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              volumeClaimPolicies:
                type: array
                maxItems: 50
                items:
                  type: object
                  properties:
                    templates:
                      type: array
                      maxItems: 50
                      items:
                        type: object
                        properties:
                          metadata:
                            type: object
                            properties:
                              name: {type: string, maxLength: 63}
                              namespace: {type: string, maxLength: 63}
                  x-kubernetes-validations:
                  - message: namespace cannot be set for VolumeClaimPolicies templates
                    rule: self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace)
                      == 0)
"""
RULE_LINE = 39  # the line of `rule:` above; `namespace` first at column 65


@pytest.fixture
def jobset(tmp_path: Path) -> Path:
    path = tmp_path / "jobsets.yaml"
    path.write_text(JOBSET_CRD, encoding="utf-8")
    assert JOBSET_CRD.splitlines()[RULE_LINE - 1].index("namespace") == 64
    return path


def test_the_lint_is_told_under_the_crd_with_its_versions_fix_and_place(
    jobset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(jobset)]) == 0  # accepted by the newest API server; a lint fails nothing
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0] == "jobsets.jobset.x-k8s.io: accepted (1 rule)"
    places = [i for i, line in enumerate(out) if line.startswith("  Warning (lint ")]
    warnings = [out[i] for i in places]
    assert len(warnings) == 2  # one a character: the same text twice
    assert warnings[0].startswith("  Warning (lint reserved-field-name, Kubernetes 1.30-1.31): the field 'namespace'")
    assert "fix: write .__namespace__, as every version accepts: self.templates.all(t, " in warnings[0]
    assert "!has(t.metadata.__namespace__) || size(t.metadata.__namespace__) == 0)" in warnings[0]
    at = out[places[0] + 1]
    assert at.startswith(f"    at {jobset}:{RULE_LINE}:65: spec.validation.openAPIV3Schema.properties[spec]")
    assert out[places[1] + 1].startswith(f"    at {jobset}:{RULE_LINE}:95: ")
    assert captured.err.strip().endswith("0 rejected, 2 lints")


def test_strict_fails_on_a_lint_and_a_version_it_does_not_concern_shows_none(
    jobset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--strict", str(jobset)]) == 1
    capsys.readouterr()
    assert main(["check", "--k8s-version", "1.34", str(jobset)]) == 0  # 1.34 accepts `.namespace`
    assert "Warning (lint" not in capsys.readouterr().out
    assert main(["check", "--strict", "--k8s-version", "1.34", str(jobset)]) == 0


def test_json_github_and_sarif_name_the_lint(jobset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-o", "json", str(jobset)]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    first = report["lints"][0]
    assert (first["lint"], first["versions"], first["line"], first["column"]) == (
        "reserved-field-name", ["1.30", "1.31"], RULE_LINE, 65)  # fmt: skip
    assert first["fix"].startswith("write .__namespace__")
    assert main(["check", "-o", "github", str(jobset)]) == 0
    github = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::warning")]
    assert len(github) == 2 and github[0].startswith(f"::warning file={jobset},line={RULE_LINE},col=65,title=kcel::")
    assert "Warning (lint reserved-field-name, Kubernetes 1.30-1.31)" in github[0]
    assert main(["check", "-o", "sarif", str(jobset)]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    results = [r for r in run["results"] if r["ruleId"] == "reserved-field-name"]
    assert len(results) == 2 and results[0]["level"] == "warning"
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": RULE_LINE, "startColumn": 65}
    (rule,) = [r for r in run["tool"]["driver"]["rules"] if r["id"] == "reserved-field-name"]
    assert "reserved word" in rule["shortDescription"]["text"]
    assert main(["check", "--strict", "-o", "sarif", str(jobset)]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert {r["level"] for r in run["results"]} == {"error"}


def test_junit_tells_the_lints_beside_the_verdict(jobset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-o", "junit", str(jobset)]) == 0
    (case,) = ET.fromstring(capsys.readouterr().out).iter("testcase")
    assert case.find("failure") is None
    output = case.find("system-out")
    assert output is not None and output.text is not None
    assert output.text.startswith("Warning (lint reserved-field-name, Kubernetes 1.30-1.31)")
    assert main(["check", "--strict", "-o", "junit", str(jobset)]) == 1
    (case,) = ET.fromstring(capsys.readouterr().out).iter("testcase")
    assert case.find("failure") is not None


def test_at_several_versions_the_lints_follow_the_matrix(jobset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--k8s-version", "1.30-1.37", str(jobset)]) == 1  # rejected by 1.30-1.31
    out = capsys.readouterr().out.splitlines()
    subject = f"{jobset}: document 0: CRD jobsets.jobset.x-k8s.io"
    assert out[0] == subject and out[1].startswith("  1.30-1.31  rejected: ")
    told = out.index(subject, 1)
    assert out[told + 1].startswith("  Warning (lint reserved-field-name, Kubernetes 1.30-1.31)")
    assert out[told + 2].startswith(f"    at {jobset}:{RULE_LINE}:65: ")
    assert main(["check", "--k8s-version", "1.30-1.37", "-o", "json", str(jobset)]) == 1
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [(n["subject"], n["lint"], n["versions"]) for n in notes] == [(subject, "reserved-field-name",
                                                                          ["1.30", "1.31"])] * 2  # fmt: skip
    assert main(["check", "--k8s-version", "1.32-1.37", str(jobset)]) == 0
    assert "Warning (lint" not in capsys.readouterr().out


def test_the_cost_lint_at_several_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`dyn(self)` hides the string's size from the estimator before 1.33: over the budget there only."""
    crd = tmp_path / "hosts.yaml"
    crd.write_text(JOBSET_CRD.replace("name: {type: string, maxLength: 63}", (
        "name:\n                                type: string\n                                maxLength: 63\n"
        "                                x-kubernetes-validations:\n"
        "                                - rule: dyn(self).matches('^[a-z]+$')")), encoding="utf-8")  # fmt: skip
    assert main(["check", "--k8s-version", "1.30-1.37", "-o", "sarif", str(crd)]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    (lint,) = [r for r in run["results"] if r["ruleId"] == "cost-by-version"]
    assert (
        "Warning (lint cost-by-version, Kubernetes 1.30-1.32): estimated cost over the limit" in lint["message"]["text"]
    )
    assert lint["locations"][0]["physicalLocation"]["region"]["startLine"] == 39  # the `- rule:` under name
    assert main(["check", "--k8s-version", "1.33-1.37", str(crd)]) == 0
    assert "cost-by-version" not in capsys.readouterr().out
