"""The `kcel` command: exit statuses and output of check and validate on the shipped examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcel.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CRD, WIDGET = str(EXAMPLES / "widget-crd.yaml"), str(EXAMPLES / "widget.yaml")


def test_check_accepts_the_example_crd(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", CRD]) == 0
    assert capsys.readouterr().out == "widgets.example.com: 3 rules compile\n"


def test_check_reports_a_rule_that_does_not_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "crd.yaml"
    broken.write_text(Path(CRD).read_text().replace("self.replicas <= self.maxReplicas", "self.replicas <= 'x'"))
    assert main(["check", str(broken), "-o", "json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["errors"][0]["field"].endswith("x-kubernetes-validations[0].rule")
    assert "found no matching overload for '_<=_' applied to '(int, string)'" in report["errors"][0]["message"]


def test_validate_prints_the_api_servers_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--crd", CRD, WIDGET]) == 1
    assert capsys.readouterr().out == (
        f'{WIDGET}: document 0: Widget.example.com "w1" is invalid: ['
        "spec: Invalid value: replicas must not exceed maxReplicas in Safe mode, "
        "spec.containers[1].image: Invalid value: images must be pinned to a tag other than latest]\n"
    )


def test_validate_an_update_runs_transition_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(Path(WIDGET).read_text().replace("mode: Safe", "mode: Fast"))
    assert main(["validate", "--crd", CRD, "--old", str(old), WIDGET, "-o", "json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert {"reason": "FieldValueInvalid", "message": "Invalid value: mode is immutable", "field": "spec"} in report[
        "errors"
    ]


def test_unknown_kinds_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert main(["validate", "--crd", CRD, str(other)]) == 1
    assert "no CRD given for this apiVersion and kind" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_manifests_are_decoded_as_the_api_server_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unquoted date stays a string (YAML 1.1 would make it a date), as sigs.k8s.io/yaml leaves it."""
    crd = tmp_path / "crd.yaml"
    text = Path(CRD).read_text()
    text = text.replace("mode: {type: string, enum: [Fast, Safe]}", "since: {type: string}")
    text = text.replace('rule: "self.mode == oldSelf.mode"', "rule: \"self.since.startsWith('2024')\"")
    crd.write_text(text.replace("message: mode is immutable", "message: since must be in 2024"))
    widget = tmp_path / "widget.yaml"
    widget.write_text(Path(WIDGET).read_text().replace("mode: Safe", "since: 2023-01-01"))
    assert main(["validate", "--crd", str(crd), str(widget), "-o", "json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    messages = [e["message"] for e in report["errors"]]
    assert "Invalid value: since must be in 2024" in messages
    assert not any("invalid data" in m for m in messages)
