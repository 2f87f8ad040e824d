"""Suites that cannot be read: each gives one line naming the file, the document and the field, and nothing runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kcel.suites import SCHEMA
from kcel.suites.loading import merge_patch, suite_files

from .helpers import WIDGET, run, widget_folder, write

CASE = {"name": "a", "expect": "valid"}


def line(path: Path, text: str) -> int:
    """The 1-based number of the first line of a file that contains `text`."""
    return next(i for i, content in enumerate(path.read_text().splitlines(), 1) if text in content)


def problem_of(tmp_path: Path, capsys: pytest.CaptureFixture[str], *documents: Any) -> str:
    """Write a suite, run it, and return the one problem line (after checking that nothing ran)."""
    suite = write(widget_folder(tmp_path) / "s.kcel-test.yaml", *documents)
    status, out, err = run(capsys, str(suite))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert lines[-1] == "kcel test: 1 suite problem; no case was run"
    assert len(lines) == 2 and lines[0].startswith("error: ")
    return lines[0].removeprefix("error: ").replace(str(tmp_path), "T")


def test_bad_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "crds: widget-crd.yaml\ncases:\n  - name: a\n    object: [1,\n"
    assert problem_of(tmp_path, capsys, text) == (
        "T/s.kcel-test.yaml:5:1: document 0: invalid YAML: did not find expected node content (while parsing a flow "
        "node at line 5, column 1)"
    )


def test_bad_yaml_in_a_later_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": WIDGET}]}
    line = problem_of(tmp_path, capsys, good, "crds: [\n")
    assert line.startswith("T/s.kcel-test.yaml:") and ": document 1: invalid YAML" in line


def test_unknown_field_in_a_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": WIDGET}, {"name": "b", "objekt": WIDGET}]}
    assert problem_of(tmp_path, capsys, suite) == (
        f"T/s.kcel-test.yaml:{line(tmp_path / 's.kcel-test.yaml', 'objekt:')}: document 0: cases[1].objekt: unknown "
        "field (did you mean object? known here: name, object, patch, old, update, expect, skip, k8sVersion, "
        "namespace, subresource, fieldValidation)"
    )


@pytest.mark.parametrize(
    ("suite", "field"),
    [
        ({"crds": "widget-crd.yaml", "cases": [CASE], "extra": 1}, "extra: unknown field"),
        ({"crds": "widget-crd.yaml", "base": WIDGET, "cases": [{**CASE, "expect": {"valid": True, "x": 1}}]},
         "cases[0].expect.x: unknown field"),
        ({"policies": "widget-crd.yaml", "cases": [CASE], "fieldValidation": "Warn"}, "fieldValidation: unknown field"),
    ],
)  # fmt: skip
def test_unknown_fields_anywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Any, field: str) -> None:
    assert f": document 0: {field} (" in problem_of(tmp_path, capsys, suite)


def test_a_missing_crd_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"crds": ["widget-crd.yaml", "missing.yaml"], "cases": [{**CASE, "object": WIDGET}]}
    assert problem_of(tmp_path, capsys, suite) == (
        "T/s.kcel-test.yaml:3: document 0: crds[1]: T/missing.yaml: no such file or directory"
    )


def test_a_missing_object_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": "nope.yaml"}]}
    assert problem_of(tmp_path, capsys, suite) == (
        "T/s.kcel-test.yaml:5: document 0: cases[0].object: T/nope.yaml: no such file"
    )


def test_a_case_with_neither_object_nor_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": WIDGET}, {"name": "b"}]}
    problem = problem_of(tmp_path, capsys, suite)
    number = line(tmp_path / "s.kcel-test.yaml", "name: b")
    assert problem == f"T/s.kcel-test.yaml:{number}: document 0: cases[1]: no object: give object (or patch, with " \
        "the suite's base)"  # fmt: skip


def test_a_case_without_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"crds": "widget-crd.yaml", "base": WIDGET, "cases": [CASE, {"name": "b"}]}
    assert problem_of(tmp_path, capsys, suite) == (
        "T/s.kcel-test.yaml: document 0: cases[1]: no expectation: give expect (or run kcel test --update to record "
        "the answer)"
    )


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ({"expect": "yes"}, "cases[0].expect: must be valid, invalid or a mapping, not 'yes'"),
        ({"expect": {"errors": []}}, "cases[0].expect.errors: give at least one text the message contains"),
        ({"expect": {"valid": True, "errors": "x"}}, "cases[0].expect.errors: a valid object has no errors"),
        ({"expect": {"valid": False, "stored": WIDGET}}, "cases[0].expect.stored: only a valid object is stored"),
        ({"expect": {"warnings": []}}, "cases[0].expect: say whether the object is valid"),
        ({"expect": {"errors": [1]}}, "cases[0].expect.errors[0]: must be a string, not a number"),
        ({"object": WIDGET}, "cases[0].patch: give either object or patch, not both"),
        ({"old": WIDGET, "update": {}}, "cases[0].update: give either old or update, not both"),
        ({"subresource": "status"}, "cases[0].subresource: a status update needs the object before it"),
        ({"subresource": "scale"}, "cases[0].subresource: must be one of status, not 'scale'"),
        ({"fieldValidation": "strict"}, "cases[0].fieldValidation: must be one of Strict, Warn, Ignore, not 'strict'"),
        ({"k8sVersion": 1.3}, 'cases[0].k8sVersion: must be a string, not the number 1.3 (quote it'),
        ({"k8sVersion": ["1.33", "1.29"]}, "cases[0].k8sVersion[1]: unsupported Kubernetes version 1.29: kcel "
                                           "answers as Kubernetes 1.30 to 1.37"),
        ({"skip": " "}, "cases[0].skip: give the reason the case is skipped"),
        ({"patch": {"kind": None}}, "cases[0].patch: a Kubernetes object needs kind (a string)"),
    ],
)  # fmt: skip
def test_malformed_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Any, problem: str) -> None:
    suite = {
        "crds": "widget-crd.yaml",
        "base": WIDGET,
        "cases": [{"name": "a", "expect": "valid", "patch": {}, **case}],
    }
    line = problem_of(tmp_path, capsys, suite)
    assert f": document 0: {problem}" in line, line


@pytest.mark.parametrize(
    ("suite", "problem"),
    [
        ({"cases": [CASE]}, "a suite needs crds (files of CRDs) or policies (admission policies)"),
        ({"crds": "widget-crd.yaml", "policies": "x", "cases": [CASE]}, "policies: a suite tests either CRDs"),
        ({"crds": "widget-crd.yaml", "cases": []}, "cases: must be a list with at least one item"),
        ({"crds": "widget-crd.yaml", "cases": [{**CASE, "patch": {}}]}, "cases[0].patch: the suite has no base"),
        ({"crds": "widget-crd.yaml", "base": WIDGET, "cases": [CASE, CASE]},
         "cases[1].name: 'a' is also the name of cases[0]"),
        ({"crds": "widget-crd.yaml", "base": {"kind": "Widget"}, "cases": [CASE]},
         "base: a Kubernetes object needs apiVersion (a string)"),
        ({"crds": "widget.yaml", "base": WIDGET, "cases": [CASE]}, "crds: T/widget.yaml: no CustomResourceDefinition"),
        ({"crds": "widget-crd.yaml", "base": {**WIDGET, "kind": "Gizmo"}, "cases": [CASE]},
         "base: no CRD in crds serves apiVersion example.com/v1, kind Gizmo"),
        ({"policies": "widget-crd.yaml", "base": WIDGET, "cases": [{**CASE, "expect": "allowed"}]},
         "policies: no ValidatingAdmissionPolicy or MutatingAdmissionPolicy in these files"),
        ({"policies": "widget-crd.yaml", "base": WIDGET, "cases": [CASE]},
         "cases[0].expect: must be allowed, denied or a mapping, not 'valid'"),
        ({"policies": "widget-crd.yaml", "namespaces": {"a": {"env": 1}}, "base": WIDGET, "cases": [CASE]},
         "namespaces[a][env]: must be a string, not a number"),
    ],
)  # fmt: skip
def test_malformed_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Any, problem: str) -> None:
    line = problem_of(tmp_path, capsys, suite)
    assert f": document 0: {problem}" in line, line


def test_a_crd_that_does_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "broken-crd.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
          "metadata: {name: x}\nspec: {group: example.com, versions: 5}\n")  # fmt: skip
    suite = {"crds": "broken-crd.yaml", "base": WIDGET, "cases": [CASE]}
    line = problem_of(tmp_path, capsys, suite)
    assert line.startswith("T/s.kcel-test.yaml:1: document 0: crds: T/broken-crd.yaml: document 0: spec.")


def test_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert problem_of(tmp_path, capsys, "") == "T/s.kcel-test.yaml: no suite in this file (it is empty)"


def test_duplicate_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "crds: widget-crd.yaml\ncrds: widget-crd.yaml\ncases: []\n"
    assert problem_of(tmp_path, capsys, text) == 'T/s.kcel-test.yaml: document 0: line 2: key "crds" already set in map'


def test_every_problem_is_listed_and_nothing_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = widget_folder(tmp_path)
    write(folder / "good.kcel-test.yaml", {"crds": "widget-crd.yaml", "base": WIDGET, "cases": [CASE]})
    write(folder / "bad.kcel-test.yaml", {"crds": "widget-crd.yaml", "cases": [CASE]}, {"crds": "nope.yaml"})
    status, out, err = run(capsys, str(folder))
    assert (status, out) == (2, "")
    bad = folder / "bad.kcel-test.yaml"
    assert [text.split(": document")[0] for text in err.splitlines()[:-1]] == [
        f"error: {bad}:{line(bad, '- name: a')}", f"error: {bad}:{line(bad, 'crds: nope.yaml')}"
    ]  # fmt: skip
    assert err.splitlines()[-1] == "kcel test: 2 suite problems; no case was run"


def test_unreadable_suites_in_json_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write(widget_folder(tmp_path) / "s.kcel-test.yaml", {"crds": "widget-crd.yaml", "cases": [CASE]})
    status, out, _ = run(capsys, "-o", "json", str(suite))
    assert status == 2
    assert json.loads(out)["problems"] == [f"{suite}:{line(suite, '- name: a')}: document 0: cases[0]: no object: "
                                           "give object (or patch, with the suite's base)"]  # fmt: skip
    status, out, _ = run(capsys, "-o", "junit", str(suite))
    assert status == 2 and 'errors="1"' in out and "no object" in out


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, str(tmp_path / "nope"))[::2] == (2, f"kcel test: {tmp_path}/nope: no such file or directory\n")
    none = f"kcel test: no suites under {tmp_path} (files named *.kcel-test.yaml)\n"
    assert run(capsys, str(tmp_path))[::2] == (0, none)  # a repository without suites yet keeps its CI green
    assert run(capsys, "--require-suites", str(tmp_path))[::2] == (2, none)
    with pytest.raises(SystemExit) as exited:
        run(capsys, "--k8s-version", "1.29", str(tmp_path))
    assert exited.value.code == 2


def test_discovery_follows_the_naming_convention(tmp_path: Path) -> None:
    for name in ("a.kcel-test.yaml", "b/kcel-test.yml", "b/c.kcel-test.yml", "d.yaml", ".hidden/e.kcel-test.yaml",
                 "node_modules/f.kcel-test.yaml", "kcel-test.json"):  # fmt: skip
        write(tmp_path / name, "")
    found = [p.relative_to(tmp_path).as_posix() for p in suite_files([tmp_path, tmp_path / "d.yaml"])]
    assert found == ["a.kcel-test.yaml", "b/c.kcel-test.yml", "b/kcel-test.yml", "d.yaml"]


def test_merge_patch() -> None:
    assert merge_patch(WIDGET, {"spec": {"containers": None, "mode": "Fast"}})["spec"] == {
        "replicas": 2, "maxReplicas": 3, "mode": "Fast"
    }  # fmt: skip
    assert WIDGET["spec"]["mode"] == "Safe"  # type: ignore[index]


# -- the JSON Schema agrees with the loader on what is malformed ---------------------------------------------------


@pytest.mark.parametrize(
    "suite",
    [
        {"crds": "c.yaml", "cases": [CASE], "extra": 1},
        {"crds": "c.yaml", "cases": [{**CASE, "objekt": {}}]},
        {"crds": "c.yaml", "cases": []},
        {"crds": "c.yaml", "policies": "p.yaml", "cases": [CASE]},
        {"crds": "c.yaml", "cases": [{"name": "a", "expect": "allowed"}]},
        {"crds": "c.yaml", "cases": [{"name": "a", "expect": {"warnings": []}}]},
        {"crds": "c.yaml", "cases": [{"name": "a", "object": "o.yaml", "patch": {}, "expect": "valid"}]},
        {"crds": "c.yaml", "k8sVersion": 1.3, "cases": [CASE]},
        {"policies": "p.yaml", "cases": [{"name": "a", "expect": {"allowed": True, "x": 1}}]},
        {"policies": "p.yaml", "cases": [{"name": "a", "fieldValidation": "Warn", "expect": "allowed"}]},
        {"policies": "p.yaml", "cases": [{"name": "a", "operation": "PATCH", "expect": "allowed"}]},
    ],
)  # fmt: skip
def test_the_schema_rejects_malformed_suites(suite: Any) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert not validator.is_valid(suite)
