"""kcel.k8s.surfaces.hints: the cause first, with `did you mean` and the versions that have a function, ahead of
the API server's unchanged text; and the editor's diagnostics led by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcel.errors import CompileError
from kcel.k8s.surfaces.environments import environment
from kcel.k8s.surfaces.hints import lead, schema_fields, with_lead
from kcel.lsp.analysis import analyze

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _compile_error(expression: str, version: str) -> str:
    with pytest.raises(CompileError) as raised:
        environment("crd", version).compile(expression)
    return str(raised.value)


@pytest.mark.parametrize(("expression", "version", "expected"), [
    ("[1].isSortd()", "1.37", "undeclared reference to 'isSortd' (in container '') (did you mean 'isSorted'?)"),
    ("slef.size() > 0", "1.37", "undeclared reference to 'slef' (in container '') (did you mean 'self'?)"),
    ("ip('10.0.0.1').family() == 4", "1.30",
     "undeclared reference to 'ip' (in container '') (Kubernetes 1.31-1.37 have a function 'ip'; this is "
     "Kubernetes 1.30)"),
    ("'abc'.reverse() == 'cba'", "1.34",
     "undeclared reference to 'reverse' (in container '') (Kubernetes 1.35-1.37 have a function 'reverse'; this "
     "is Kubernetes 1.34)"),
    ("[1].frobnicate()", "1.37", "undeclared reference to 'frobnicate' (in container '')"),
])  # fmt: skip
def test_a_compile_error_leads_with_its_cause_and_a_hint(expression: str, version: str, expected: str) -> None:
    message = _compile_error(expression, version)
    assert lead(message, "crd", version) == expected
    assert with_lead(message, expected).endswith("\n\n" + message)  # the API server's text kept whole after it


def test_an_undefined_field_is_matched_against_the_schemas_fields() -> None:
    message = "compilation failed: ERROR: <input>:1:5: undefined field 'nodeLabl'\n | self.nodeLabl\n | ....^"
    schema = {"properties": {"spec": {"properties": {"nodeLabel": {"type": "string"}}}}}
    assert schema_fields(schema) == ["spec", "nodeLabel"]
    assert lead(message, fields=schema_fields(schema)) == "undefined field 'nodeLabl' (did you mean 'nodeLabel'?)"
    assert lead(message, fields=["replicas"]) == "undefined field 'nodeLabl'"
    assert lead("spec: Required value", fields=["spec"]) is None  # short enough to lead itself


def test_the_editor_leads_with_the_cause_and_the_bound_that_fits_the_budget() -> None:
    crd = (EXAMPLES / "widget-crd.yaml").read_text(encoding="utf-8")
    (typo,) = analyze(crd.replace('"self.replicas <= self.maxReplicas"', '"self.replicaz <= self.maxReplicas"'),
                      "1.37").diagnostics  # fmt: skip
    first, _, rest = typo.message.partition("\n\n")
    assert first == "undefined field 'replicaz' (did you mean 'replicas'?)"
    assert rest.startswith('Invalid value: {"Rule":"self.replicaz')
    expensive = analyze((EXAMPLES / "expensive-crd.yaml").read_text(encoding="utf-8"), "1.37").diagnostics
    first = expensive[0].message.partition("\n\n")[0]
    assert first.startswith("estimated cost over the limit: spec.hostnames (no maxItems")
    assert "maxItems: 5,753 or less brings it under the limit" in first


def test_kcel_checks_annotations_lead_with_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kcel.cli import main

    crd = tmp_path / "crd.yaml"
    text = (EXAMPLES / "widget-crd.yaml").read_text(encoding="utf-8")
    crd.write_text(text.replace('"self.replicas <= self.maxReplicas"', '"self.replicaz <= self.maxReplicas"'))
    assert main(["check", "-o", "github", str(crd)]) == 1
    (annotation,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error")]
    title, _, message = annotation.partition("title=kcel::")
    assert message.startswith("undefined field 'replicaz' (did you mean 'replicas'?)%0A%0Awidgets.example.com: spec.")
    assert "compilation failed: ERROR: <input>:1:5: undefined field 'replicaz'" in message  # the whole text after
    assert main(["check", "-o", "json", str(crd)]) == 1
    assert "did you mean" not in capsys.readouterr().out  # the API server's answer, as it is
