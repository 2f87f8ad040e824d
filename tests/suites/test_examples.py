"""The shipped example suites: they pass, a broken copy of each fails readably, JUnit parses, the schema holds."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kcel.k8s.manifests.decoding import decode_documents
from kcel.suites import SCHEMA

from .helpers import EXAMPLES, run

SUITES = sorted(EXAMPLES.rglob("*.kcel-test.yaml"))


def test_there_are_example_suites_for_crds_and_admission() -> None:
    assert [p.relative_to(EXAMPLES).as_posix() for p in SUITES] == [
        "admission/admission.kcel-test.yaml", "admission/mutating/mutating.kcel-test.yaml",
        "surfaces/surfaces.kcel-test.yaml", "widget.kcel-test.yaml",
    ]  # fmt: skip


def test_the_example_suites_pass(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, str(EXAMPLES))
    assert (status, err) == (0, "")
    assert re.fullmatch(r"\d+ passed, 0 failed\n", out)
    assert int(out.split()[0]) >= 19


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A copy of the examples with one expectation broken in each suite (and a stored object changed)."""
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    widget = copy / "widget.kcel-test.yaml"
    text = widget.read_text()
    text = text.replace("{errors: replicas must not exceed maxReplicas in Safe mode}",
                        "{errors: replicas must not exceed maxReplicas in Fast mode}")  # fmt: skip
    text = text.replace("        spec:\n          replicas: 2", "        spec:\n          replicas: 4")
    widget.write_text(text)
    admission = copy / "admission" / "admission.kcel-test.yaml"
    text = admission.read_text().replace("expect: {message: only release managers may approve deployments, reason: "
                                         "Forbidden}", "expect: allowed")  # fmt: skip
    admission.write_text(text.replace("reason: Invalid\n", "reason: Forbidden\n"))
    return copy


def test_a_broken_copy_fails_with_what_was_expected_and_what_came(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, str(broken))
    assert status == 1
    lines = out.splitlines()
    admission, widget = broken / "admission" / "admission.kcel-test.yaml", broken / "widget.kcel-test.yaml"
    at = lines.index(f"FAIL {widget}::replicas above maxReplicas")
    assert lines[at + 1 : at + 4] == [
        "  errors",
        '    expected: a message containing "replicas must not exceed maxReplicas in Fast mode"',
        '    got:      Widget.example.com "w1" is invalid: spec: Invalid value: replicas must not exceed maxReplicas '
        "in Safe mode",
    ]
    at = lines.index(f"FAIL {widget}::unknown fields are pruned when ignored")
    assert lines[at + 1 : at + 4] == ["  stored (- expected, + actual)", "    --- expected", "    +++ actual"]
    diff = lines[at + 4 : at + 14]
    assert "    -  replicas: 4" in diff and "    +  replicas: 2" in diff
    at = lines.index(f"FAIL {admission}::anyone else may not")
    assert lines[at + 1 : at + 4] == [
        "  allowed",
        "    expected: allowed",
        "    got:      denied (403 Forbidden): ValidatingAdmissionPolicy 'approval.policy.example.com' with binding "
        "'approval.binding.example.com' denied request: only release managers may approve deployments",
    ]
    at = lines.index(f"FAIL {admission}::seven replicas are denied, with a warning")
    assert lines[at + 1 : at + 4] == ["  reason", "    expected: Forbidden", "    got:      Invalid"]
    assert re.fullmatch(r"\d+ passed, 4 failed", lines[-1])


def test_junit_output_parses(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "-o", "junit", str(broken))
    assert status == 1
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    cases = root.findall("testsuite/testcase")
    assert int(root.get("tests", "")) == len(cases) >= 19
    assert root.get("failures") == "4" and root.get("errors") == "0" and root.get("skipped") == "0"
    names = {s.get("name") for s in root.findall("testsuite")}
    admission = str(broken / "admission" / "admission.kcel-test.yaml")
    mutating = str(broken / "admission" / "mutating" / "mutating.kcel-test.yaml")
    surfaces = str(broken / "surfaces" / "surfaces.kcel-test.yaml")
    assert names == {
        admission, f"{admission} (document 1)", mutating, str(broken / "widget.kcel-test.yaml"),
        surfaces, *(f"{surfaces} (document {n})" for n in (1, 2, 3)),
    }  # fmt: skip
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert sorted(failed) == [
        "anyone else may not", "replicas above maxReplicas", "seven replicas are denied, with a warning",
        "unknown fields are pruned when ignored",
    ]  # fmt: skip
    failure = failed["replicas above maxReplicas"]
    assert failure is not None
    assert failure.get("message") == 'errors: expected a message containing "replicas must not exceed maxReplicas ' \
        'in Fast mode"'  # fmt: skip
    assert "got:      Widget.example.com" in (failure.text or "")
    versions = [c.get("name") for c in cases if c.get("name", "").startswith("the image rule")]
    assert versions == ["the image rule holds at every supported version [1.30]",
                        "the image rule holds at every supported version [1.37]"]  # fmt: skip
    assert all(float(c.get("time", "")) >= 0 for c in cases)


def test_junit_file_beside_the_text(broken: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.xml"
    status, out, _ = run(capsys, "--junit-xml", str(report), str(broken / "widget.kcel-test.yaml"))
    assert status == 1 and out.endswith("7 passed, 2 failed\n")
    root = ET.parse(report).getroot()
    assert (root.get("tests"), root.get("failures")) == ("9", "2")


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "-o", "json", str(EXAMPLES / "widget.kcel-test.yaml"))
    assert status == 0
    report = json.loads(out)
    assert report["summary"] == {"passed": 9, "failed": 0, "skipped": 0, "deselected": 0, "recorded": 0}
    first = report["results"][0]
    assert first["case"] == "the base widget is valid" and first["status"] == "passed"
    assert first["actual"] == "valid" and first["k8sVersion"] == "1.37"


# -- the JSON Schema --------------------------------------------------------------------------------------------


def schema_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: p.name)
def test_the_schema_validates_every_example_suite(suite: Path) -> None:
    validator = schema_validator()
    documents = decode_documents(suite.read_text(encoding="utf-8"), str(suite))
    assert documents
    for document in documents:
        assert [e.message for e in validator.iter_errors(document.value)] == []


def test_the_schema_ships_in_the_package() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "suites/*.json" in project["tool"]["setuptools"]["package-data"]["kcel"]
    assert json.loads(SCHEMA.read_text(encoding="utf-8"))["title"] == "kcel test suite"


def test_a_wrong_patched_object_is_shown_as_a_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`patched` fails as `stored` does: a unified diff of the objects, `-` expected and `+` actual."""
    copy = tmp_path / "mutating"
    shutil.copytree(EXAMPLES / "admission" / "mutating", copy)
    suite = copy / "mutating.kcel-test.yaml"
    text = suite.read_text()
    assert text.count("labels: {example.com/team: payments}") == 1
    suite.write_text(text.replace("labels: {example.com/team: payments}", "labels: {example.com/team: billing}"))
    status, out, _ = run(capsys, str(suite))
    assert status == 1
    lines = out.splitlines()
    at = lines.index(f"FAIL {suite}::a new Deployment gets the sidecar and the team label")
    assert lines[at + 1 : at + 4] == ["  patched (- expected, + actual)", "    --- expected", "    +++ actual"]
    diff = lines[at + 4 : lines.index(f"  at {suite}:16")]
    assert [line for line in diff if line.startswith(("    -", "    +"))] == [
        "    -    example.com/team: billing", "    +    example.com/team: payments"
    ]  # fmt: skip
