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


# -- only the expectations recorded change: comments, flow style, quoting, blank lines and key order stay ---------

KEPT = """\
# yaml-language-server: $schema=../kcel/suites/schema.json
crds: widget-crd.yaml   # the CRD
base:
  apiVersion: "example.com/v1"
  kind: Widget
  metadata: {name: w1}   # flow, kept
  spec: {replicas: 2, maxReplicas: 3, mode: Safe, containers: [{name: app, image: 'registry.example.com/app:1.2'}]}
cases:
  # passing, untouched
  - name: 'valid'         # a quoted name
    expect: valid         # unchanged

  - name: new one
    patch: {spec: {replicas: 5}}   # too many: this comment stays on its line

  # the failing one
  - name: failing
    expect:   # the answer was wrong
      # the message
      errors: [nope]
    fieldValidation: Strict    # after the expectation

  - name: failing flow
    patch: {spec: {replicas: 5}}
    expect: {valid: false, errors: [nope]}   # a flow expectation stays in flow style
  - {name: flow case, patch: {spec: {replicas: 9}}}   # a flow case
  - name: "last"
    update: {spec: {mode: Fast}}
    expect: {errors: [mode is immutable]}   # passes
"""
ERROR = "spec: Invalid value: replicas must not exceed maxReplicas in Safe mode"


def test_update_changes_only_the_expectations_it_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = widget_folder(tmp_path) / "s.kcel-test.yaml"
    suite.write_text(KEPT)
    status, out, err = run(capsys, "--update", str(suite))
    assert (status, err) == (0, "") and out.endswith("2 passed, 0 failed, 4 recorded\n")
    expected = KEPT
    for old, new in [
        ("# too many: this comment stays on its line\n",
         f"# too many: this comment stays on its line\n    expect:\n      errors:\n      - '{ERROR}'\n"),
        ("expect:   # the answer was wrong\n      # the message\n      errors: [nope]\n",
         "expect: valid   # the answer was wrong\n      # the message\n"),
        ("expect: {valid: false, errors: [nope]}   #", f'expect: {{"errors": ["{ERROR}"]}}   #'),
        ("{name: flow case, patch: {spec: {replicas: 9}}}", f'{{name: flow case, patch: {{spec: {{replicas: 9}}}}, '
                                                            f'expect: {{"errors": ["{ERROR}"]}}}}'),
    ]:  # fmt: skip
        assert expected.count(old) == 1
        expected = expected.replace(old, new)
    assert suite.read_text() == expected
    assert run(capsys, str(suite))[:2] == (0, "6 passed, 0 failed\n")


@pytest.mark.parametrize(
    ("text", "updated"),
    [
        ("cases:\r\n- name: a   # windows\r\n  patch: {}  # p\r\n- name: b\r\n",
         "cases:\r\n- name: a   # windows\r\n  patch: {}  # p\r\n  expect:\r\n    errors:\r\n    - e\r\n- name: b\r\n"),
        ("cases:\n- {name: a,\n   patch: {}, }\n",
         'cases:\n- {name: a,\n   patch: {}, expect: {"errors": ["e"]}, }\n'),
        ("cases:\n- name: a\n  expect:   # why\n\n    errors: [x]  # old\n  # next\n  patch: {}\n",
         "cases:\n- name: a\n  expect:   # why\n\n    errors:\n    - e\n  # next\n  patch: {}\n"),
        ("cases:\n- name: a\n  expect: valid   # why\n",
         "cases:\n- name: a\n  expect:   # why\n    errors:\n    - e\n"),
        ("cases:\n- name: a\n  patch: |\n    text\n\n# end\n",
         "cases:\n- name: a\n  patch: |\n    text\n  expect:\n    errors:\n    - e\n\n# end\n"),
    ],
)  # fmt: skip
def test_rewrite_keeps_the_text_around(text: str, updated: str) -> None:
    """Line breaks as the file has them, a flow case's trailing comma, the comments of the `expect:` line."""
    assert rewrite(text, [Change(Path("x"), 0, 0, "x::a", {"errors": ["e"]}, False)]) == updated
