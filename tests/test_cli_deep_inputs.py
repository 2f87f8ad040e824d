"""Every command that reads schemas or objects, run as a user runs it, on documents nested 3,000 and 100,000 levels
deep (YAML and JSON, in a CRD's schema and in an object): one clear line naming the file, the place and the field
path where kcel's limit of 1,000 levels is passed (kcel.k8s.manifests.nesting), never a traceback or a hang."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kcel.k8s.manifests.nesting import MAX_DEPTH

EXAMPLES = Path(__file__).parent.parent / "examples"
KCEL = [sys.executable, "-m", "kcel.cli"]
TOO_DEEP = f"exceeded max depth of {MAX_DEPTH}"


def kcel(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KCEL, *arguments], capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def deep_schema(levels: int) -> str:
    """A CRD whose schema nests `levels` properties (two JSON levels each), in JSON (which is YAML's flow style)."""
    schema = '{"type":"object","properties":{"a":' * levels + '{"type":"string"}' + "}}" * levels
    return (
        '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",'
        '"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"kind":"Widget",'
        '"plural":"widgets","singular":"widget","listKind":"WidgetList"},"scope":"Namespaced","versions":'
        '[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":' + schema + "}}]}}"
    )


def deep_object(levels: int) -> str:
    return (
        '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":'
        + '{"a":' * levels
        + '"x"'
        + "}" * levels
        + "}"
    )


def as_yaml(json_text: str) -> str:
    """The same document read as YAML (flow style): a comment first, so kcel does not take it for JSON."""
    return "# the YAML reader's turn\n" + json_text + "\n"


def write_deep(directory: Path, levels: int, suffix: str) -> tuple[Path, Path]:
    """(CRD, object) files: the schema `levels` levels deep (half as many properties, each two levels; a
    100,000-property schema would be over the API server's 3 MiB), the object `levels` levels deep."""
    crd, obj = deep_schema(levels // 2), deep_object(levels)
    if suffix == "yaml":
        crd, obj = as_yaml(crd), as_yaml(obj)
    (directory / f"crd.{suffix}").write_text(crd, encoding="utf-8")
    (directory / f"obj.{suffix}").write_text(obj, encoding="utf-8")
    return directory / f"crd.{suffix}", directory / f"obj.{suffix}"


@pytest.fixture(params=["json", "yaml"])
def deep(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """Each command is run on 3,000 levels (the 100,000 of test_the_deepest_documents take the same way, bar
    decoding)."""
    return write_deep(tmp_path, 3_000, request.param)


def assert_refused(done: subprocess.CompletedProcess[str], path: Path, field: str) -> None:
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "RecursionError" not in output, output[-2000:]
    assert done.returncode in (1, 2), output[-2000:]
    (line,) = [line for line in output.splitlines() if TOO_DEEP in line]
    assert f"{path.name}:" in line and f"{field}" in line and "…" in line  # the path, its middle elided


def test_commands_refuse_a_deep_schema(deep: tuple[Path, Path]) -> None:
    crd, _ = deep
    field = "spec.versions[0].schema.openAPIV3Schema.properties.a.properties"
    assert_refused(kcel("check", crd.name, cwd=crd.parent), crd, field)
    assert_refused(kcel("validate", "--crd", crd.name, str(EXAMPLES / "widget.yaml"), cwd=crd.parent), crd, field)
    assert_refused(kcel("audit", "--crd", crd.name, str(EXAMPLES / "widget.yaml"), cwd=crd.parent), crd, field)
    suite = crd.parent / "deep.kcel-test.yaml"
    suite.write_text(f"crds: {crd.name}\ncases:\n  - name: one\n    object: {EXAMPLES / 'widget.yaml'}\n"
                     "    expect: valid\n", encoding="utf-8")  # fmt: skip
    assert_refused(kcel("test", suite.name, cwd=crd.parent), crd, field)


def test_commands_refuse_a_deep_object(deep: tuple[Path, Path]) -> None:
    _, obj = deep
    field = "spec.a.a.a"
    crd = str(EXAMPLES / "widget-crd.yaml")
    assert_refused(kcel("validate", "--crd", crd, obj.name, cwd=obj.parent), obj, field)
    assert_refused(kcel("eval", "--input", f"self={obj.name}", "self.spec", cwd=obj.parent), obj, field)
    assert_refused(kcel("admit", "--policy", str(EXAMPLES / "admission" / "policies"), obj.name, cwd=obj.parent),
                   obj, field)  # fmt: skip
    assert_refused(kcel("audit", "--crd", crd, obj.name, cwd=obj.parent), obj, field)
    suite = obj.parent / "deep.kcel-test.yaml"
    suite.write_text(f"crds: {crd}\ncases:\n  - name: one\n    object: {obj.name}\n    expect: valid\n",
                     encoding="utf-8")  # fmt: skip
    assert_refused(kcel("test", suite.name, cwd=obj.parent), obj, field)


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_the_deepest_documents(suffix: str, tmp_path: Path) -> None:
    """100,000 levels: Python's json module and PyYAML's parsers give up long before (RecursionError, libyaml's
    own limit); the place is still found, by a reader that keeps its own stack."""
    crd, obj = write_deep(tmp_path, 100_000, suffix)
    assert_refused(kcel("check", crd.name, cwd=tmp_path), crd, "spec.versions[0].schema.openAPIV3Schema.properties")
    assert_refused(kcel("eval", "--input", f"self={obj.name}", "self", cwd=tmp_path), obj, "spec.a.a.a")


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 60_000])  # an argument is at most 128 KiB
def test_eval_refuses_a_deep_var(levels: int, tmp_path: Path) -> None:
    done = kcel("eval", "--var", "x=" + "[" * levels + "]" * levels, "size(x)", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.startswith(f"kcel: --var x: at column {MAX_DEPTH + 1}: [0][0]") and TOO_DEEP in done.stderr


def test_documents_at_the_limit_are_read(tmp_path: Path) -> None:
    """1,000 levels, the most kcel takes, in a schema (497 properties below the CRD's 6 levels) and an object."""
    (tmp_path / "crd.json").write_text(deep_schema((MAX_DEPTH - 6) // 2), encoding="utf-8")
    (tmp_path / "obj.json").write_text(deep_object(MAX_DEPTH - 2), encoding="utf-8")
    checked = kcel("check", "crd.json", cwd=tmp_path)
    assert checked.returncode == 0 and "accepted" in checked.stdout, checked.stderr
    evaluated = kcel("eval", "--input", "self=obj.json", "has(self.spec.a.a)", cwd=tmp_path)
    assert evaluated.returncode == 0 and evaluated.stdout.startswith("true"), evaluated.stderr
