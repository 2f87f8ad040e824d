"""`kcel validate` under strict field validation: the API server's answer (the strict decoding error alone, as
apiextensions-apiserver and the create handler give it), each unknown field at its line with the field it may have
been meant to be, and what the API server would answer once they are fixed (schema and CEL errors), each at its line
too; `Required value` at the list item that lacks the field; the `some validation rules were not checked` companion
inside the finding it goes with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcel.cli import main
from kcel.k8s.crds.crd import load_crds
from kcel.k8s.crds.hints import decoding_problems, field_hint

ROOT = Path(__file__).resolve().parents[1]
CRD = str(ROOT / "examples" / "widget-crd.yaml")
WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  replicas: 5
  maxReplica: 3
  mode: Sloww
  containers:
    - name: app
      image: registry.example.com/app:1.2
    - name: sidecar
"""
AFTER = (
    'Widget.example.com "w1" is invalid: [spec.mode: Unsupported value: "Sloww": supported values: "Fast", "Safe", '
    "spec.containers[1].image: Required value, <nil>: Invalid value: null: some validation rules were not checked "
    "because the object was invalid; correct the existing errors to complete validation]"
)


@pytest.fixture
def widget(tmp_path: Path) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(WIDGET)
    return path


def test_the_text_has_the_answer_then_each_field_at_its_line(widget: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--crd", CRD, str(widget)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f'{widget}: document 0: Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "spec.maxReplica"',
        f"  at {widget}:7: spec.maxReplica (did you mean spec.maxReplicas?)",
        f"  once those fields are fixed: {AFTER}",
        f"  at {widget}:8: spec.mode",
        f"  at {widget}:12: spec.containers[1].image",  # the list item without an image, not line 1
    ]


def test_annotations_are_each_at_their_line(widget: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--crd", CRD, "-o", "github", str(widget)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[1] for line in lines] == ["line=7", "line=8", "line=12"]
    assert lines[0].endswith('strict decoding error: unknown field "spec.maxReplica" (did you mean spec.maxReplicas?)')
    assert 'once those fields are fixed, Widget.example.com "w1": spec.mode: Unsupported value' in lines[1]
    assert lines[2].endswith(
        "spec.containers[1].image: Required value; Invalid value: null: some validation rules were not checked "
        "because the object was invalid; correct the existing errors to complete validation"
    )  # the companion goes with the error it follows, not at a line of its own


def test_json_keeps_the_api_servers_answer_and_adds_the_rest(widget: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--crd", CRD, "-o", "json", str(widget)]) == 1
    (record,) = json.loads(capsys.readouterr().out)
    assert record["reason"] == "BadRequest" and record["errors"] == []
    assert record["message"].endswith('strict decoding error: unknown field "spec.maxReplica"')
    assert record["decodingErrors"] == [{"field": "spec.maxReplica", "message": 'unknown field "spec.maxReplica"',
                                         "hint": "did you mean spec.maxReplicas?"}]  # fmt: skip
    assert record["afterDecoding"]["message"] == AFTER
    assert [e["field"] for e in record["afterDecoding"]["errors"]] == ["spec.mode", "spec.containers[1].image", "<nil>"]


def test_cel_rules_are_among_what_comes_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WIDGET.replace("mode: Sloww", "mode: Safe\n  maxReplicas: 3").replace("    - name: sidecar\n", ""))
    assert main(["validate", "--crd", CRD, str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        'once those fields are fixed: Widget.example.com "w1" is invalid: spec: Invalid value: replicas must not '
        "exceed maxReplicas in Safe mode\n"
    ) in out


def test_an_object_with_only_unknown_fields_has_nothing_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WIDGET.replace("mode: Sloww", "mode: Safe\n  maxReplicas: 9").replace("    - name: sidecar\n", ""))
    assert main(["validate", "--crd", CRD, str(path)]) == 1
    out = capsys.readouterr().out
    assert "at " in out and "once those fields are fixed" not in out


def test_hints_follow_the_schema_and_object_meta() -> None:
    (crd,) = load_crds(Path(CRD))
    schema = crd.schema_of(crd.versions[0])
    assert field_hint(schema, "spec.maxReplica") == "did you mean spec.maxReplicas?"
    assert field_hint(schema, "spec.containers[3].imag") == "did you mean spec.containers[3].image?"
    assert field_hint(schema, "metadata.labelz") == "did you mean metadata.labels?"
    assert field_hint(schema, "metadata.ownerReferences[0].blockOwnerDeletio") == (
        "did you mean metadata.ownerReferences[0].blockOwnerDeletion?"
    )
    assert field_hint(schema, "spek") == "did you mean spec?"
    assert field_hint(schema, "spec.colour") == ""  # nothing alike
    assert decoding_problems('x: strict decoding error: unknown field "a.b", unknown field "c"') == [
        ("a.b", 'unknown field "a.b"'), ("c", 'unknown field "c"'),
    ]  # fmt: skip
    assert decoding_problems('unknown field "a"') == [("a", 'unknown field "a"')]
    assert decoding_problems("something else") == []
