"""`kcel test --update`: answers written back as expectations, the rest of the file kept, the diff shown first."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kcel.suites.update import Change, rewrite

from .helpers import EXAMPLES, run, widget_folder

SUITE = """\
# A suite with new cases, a failing one and comments to keep.
crds: widget-crd.yaml   # the CRD
base:
  apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w1}
  spec: {replicas: 2, maxReplicas: 3, mode: Safe, containers: [{name: app, image: registry.example.com/app:1.2}]}
cases:
  - name: new and invalid
    patch: {spec: {replicas: 5}}

  # a comment before a case
  - name: failing
    expect: {errors: nope}   # wrong
  - {name: flow, patch: {spec: {replicas: 9}}}
  - name: passing
    expect: valid
  - name: pruned
    patch: {spec: {colour: blue}}
    fieldValidation: Ignore
"""

UPDATED = """\
# A suite with new cases, a failing one and comments to keep.
crds: widget-crd.yaml   # the CRD
base:
  apiVersion: example.com/v1
  kind: Widget
  metadata: {name: w1}
  spec: {replicas: 2, maxReplicas: 3, mode: Safe, containers: [{name: app, image: registry.example.com/app:1.2}]}
cases:
  - name: new and invalid
    patch: {spec: {replicas: 5}}
    expect:
      errors:
      - 'spec: Invalid value: replicas must not exceed maxReplicas in Safe mode'

  # a comment before a case
  - name: failing
    expect: valid   # wrong
  - {name: flow, patch: {spec: {replicas: 9}}, expect: {"errors": ["spec: Invalid value: replicas must not exceed \
maxReplicas in Safe mode"]}}
  - name: passing
    expect: valid
  - name: pruned
    patch: {spec: {colour: blue}}
    fieldValidation: Ignore
    expect:
      stored:
        apiVersion: example.com/v1
        kind: Widget
        metadata:
          name: w1
          namespace: default
        spec:
          replicas: 2
          maxReplicas: 3
          mode: Safe
          containers:
          - name: app
            image: registry.example.com/app:1.2
"""


def test_update_records_new_cases_and_rewrites_failing_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = widget_folder(tmp_path) / "s.kcel-test.yaml"
    suite.write_text(SUITE)
    status, _, err = run(capsys, str(suite))
    assert status == 2 and "cases[0]: no expectation" in err
    status, out, err = run(capsys, "--update", str(suite))
    assert (status, err) == (0, "")
    assert suite.read_text() == UPDATED
    lines = out.splitlines()
    assert lines[:4] == [f"FAIL {suite}::failing", "  valid", "    expected: invalid", "    got:      valid"]
    assert lines[4].startswith(f"  at {suite}:")
    assert lines[5:7] == [f"--- {suite} (before)", f"+++ {suite} (updated)"]
    assert "-    expect: {errors: nope}   # wrong" in lines and "+    expect: valid   # wrong" in lines
    assert lines[-1] == "1 passed, 0 failed, 4 recorded"
    assert run(capsys, str(suite))[:2] == (0, "5 passed, 0 failed\n")


def test_update_only_touches_the_selected_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = widget_folder(tmp_path) / "s.kcel-test.yaml"
    suite.write_text(SUITE)
    status, out, _ = run(capsys, "--update", "-k", "flow", str(suite))
    assert status == 0 and out.endswith("0 passed, 0 failed, 4 deselected, 1 recorded\n")
    assert suite.read_text().count("expect:") == 3


def test_answers_that_differ_between_versions_are_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = widget_folder(tmp_path) / "s.kcel-test.yaml"
    suite.write_text(SUITE.split("cases:")[0] + "k8sVersion: ['1.30', '1.37']\ncases:\n  - name: versions\n"
                     "    patch: {spec: {replicas: 5}}\n")  # fmt: skip
    before = suite.read_text()
    status, out, err = run(capsys, "--update", str(suite))
    assert status == 1
    assert err == f"error: {suite}::versions: not recorded: the answers differ between Kubernetes 1.30 and 1.37\n"
    assert out == "0 passed, 2 failed\n"
    assert suite.read_text() == before


def test_update_the_admission_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "admission"
    shutil.copytree(EXAMPLES / "admission", copy)
    suite = copy / "admission.kcel-test.yaml"
    suite.write_text(suite.read_text().replace("    expect: {message: only test images are allowed in namespace "
                                               "default, code: 422}\n", ""))  # fmt: skip
    status, out, _ = run(capsys, "--update", "-k", "prod images", str(suite))
    assert status == 0 and out.endswith("0 passed, 0 failed, 9 deselected, 1 recorded\n")
    assert """\
  - name: prod images are denied in a test namespace
    object: objects/deployment-wrong-image.yaml
    expect:
      allowed: false
      reason: Invalid
      message: 'ValidatingAdmissionPolicy ''image-matches-namespace-environment.policy.example.com'' with binding \
''image-matches-namespace-environment.binding.example.com'' denied request: only test images are allowed in namespace \
default'
      auditAnnotations:
        demo-policy.example.com/high-replica-count: Deployment spec.replicas set to 1
""" in suite.read_text()
    assert run(capsys, str(copy))[0] == 0


def test_rewrite_in_later_documents() -> None:
    text = "crds: a\ncases:\n- name: a\n---\n# second\ncrds: b\ncases:\n- name: b\n  patch: {}\n"
    change = Change(Path("x"), 1, 0, "x::b", {"errors": ["e"]}, True)
    assert rewrite(text, [change]) == text + "  expect:\n    errors:\n    - e\n"
