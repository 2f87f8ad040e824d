"""Suites that cannot be read: each problem gives one line naming the file, its line, the document and the field; the
suites that can be read still run, and the exit status is 2."""

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


def problems_of(tmp_path: Path, capsys: pytest.CaptureFixture[str], *documents: Any) -> list[str]:
    """Write a suite, run it, and return its problem lines (after checking that nothing ran)."""
    suite = write(widget_folder(tmp_path) / "s.kcel-test.yaml", *documents)
    status, out, err = run(capsys, str(suite))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    count = len(lines) - 1
    assert lines[-1] == f"kcel test: {count} suite problem{'s' if count > 1 else ''}; no case was run"
    assert all(line.startswith("error: ") for line in lines[:-1])
    return [line.removeprefix("error: ").replace(str(tmp_path), "T") for line in lines[:-1]]


def problem_of(tmp_path: Path, capsys: pytest.CaptureFixture[str], *documents: Any) -> str:
    """The first problem line of a suite (the others are those its problem leads to: a case left without object)."""
    return problems_of(tmp_path, capsys, *documents)[0]


def test_bad_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "crds: widget-crd.yaml\ncases:\n  - name: a\n    object: [1,\n"
    assert problem_of(tmp_path, capsys, text) == (
        "T/s.kcel-test.yaml:5:1: document 0: invalid YAML: did not find expected node content (while parsing a flow "
        "node at line 5, column 1)"
    )


def test_bad_yaml_in_a_later_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": WIDGET}]}
    suite = write(widget_folder(tmp_path) / "s.kcel-test.yaml", good, "crds: [\n")
    status, out, err = run(capsys, str(suite))
    assert (status, out) == (2, "1 passed, 0 failed\n")  # the first document still runs
    problem, last = err.splitlines()
    assert problem.startswith(f"error: {suite}:") and ": document 1: invalid YAML" in problem
    assert last == "kcel test: 1 suite problem; the suites and cases they concern were not run"


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
    """The problem is at the case's line; the suite's other cases still run."""
    cases = [CASE, {"name": "b"}, {"name": "c"}]
    suite = write(
        widget_folder(tmp_path) / "s.kcel-test.yaml", {"crds": "widget-crd.yaml", "base": WIDGET, "cases": cases}
    )
    status, out, err = run(capsys, str(suite))
    assert (status, out) == (2, "1 passed, 0 failed\n")
    assert err.splitlines() == [
        *(f"error: {suite}:{line(suite, f'- name: {name}')}: document 0: cases[{index}]: no expectation: give expect "
          "(or run kcel test --update to record the answer)" for index, name in ((1, "b"), (2, "c"))),
        "kcel test: 2 suite problems; the suites and cases they concern were not run",
    ]  # fmt: skip


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
    """Each duplicate at its line of the file, in whichever document; a case that is no mapping hides no other."""
    text = "crds: widget-crd.yaml\ncrds: widget-crd.yaml\ncases: []\ncases: []\n"
    assert problems_of(tmp_path, capsys, "crds: widget-crd.yaml\ncases: [1, {name: a}]\nk8sVersion: 1\n", text) == [
        "T/s.kcel-test.yaml:3: document 0: k8sVersion: must be a string, not the number 1 (quote it: YAML reads 1.30 "
        'as 1.3, "1.30" as 1.30)',
        "T/s.kcel-test.yaml:2: document 0: cases[0]: must be a mapping, not a number",
        "T/s.kcel-test.yaml:2: document 0: cases[1]: no object: give object (or patch, with the suite's base)",
        'T/s.kcel-test.yaml:6: document 1: key "crds" already set in map',
        'T/s.kcel-test.yaml:8: document 1: key "cases" already set in map',
    ]


def test_every_problem_is_listed_and_the_other_suites_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = widget_folder(tmp_path)
    write(folder / "good.kcel-test.yaml", {"crds": "widget-crd.yaml", "base": WIDGET, "cases": [CASE]})
    bad = write(folder / "bad.kcel-test.yaml", {"crds": "widget-crd.yaml", "cases": [CASE]}, {"crds": "nope.yaml"})
    status, out, err = run(capsys, str(folder))
    assert (status, out) == (2, "1 passed, 0 failed\n")
    assert [text.split(": document")[0] for text in err.splitlines()[:-1]] == [
        f"error: {bad}:{line(bad, '- name: a')}", f"error: {bad}:{line(bad, 'crds: nope.yaml')}",
        f"error: {bad}",  # and it has no cases (no line to point at)
    ]  # fmt: skip
    assert err.splitlines()[-1] == "kcel test: 3 suite problems; the suites and cases they concern were not run"


def test_every_problem_of_a_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A problem does not hide the next: unknown keys, each case's problems, names given twice, all at their lines."""
    text = """\
crds: [widget-crd.yaml, nope.yaml]
extra: 1
base: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w1}}
cases:
  - name: a
    objekt: {}
    expect: vaild
  - name: b
    expect: valid
    patch: {spec: {replicas: 5}}
  - {name: c, colour: blue, expect: {valid: true, eror: x}}
  - {name: b, expect: valid}
"""
    assert problems_of(tmp_path, capsys, text) == [
        "T/s.kcel-test.yaml:2: document 0: extra: unknown field (known here: crds, k8sVersion, base, cases)",
        "T/s.kcel-test.yaml:1: document 0: crds[1]: T/nope.yaml: no such file or directory",
        "T/s.kcel-test.yaml:6: document 0: cases[0].objekt: unknown field (did you mean object? known here: name, "
        "object, patch, old, update, expect, skip, k8sVersion, namespace, subresource, fieldValidation)",
        "T/s.kcel-test.yaml:7: document 0: cases[0].expect: must be valid, invalid or a mapping, not 'vaild' (did you "
        "mean valid?)",
        "T/s.kcel-test.yaml:11: document 0: cases[2].colour: unknown field (known here: name, object, patch, old, "
        "update, expect, skip, k8sVersion, namespace, subresource, fieldValidation)",
        "T/s.kcel-test.yaml:11: document 0: cases[2].expect.eror: unknown field (did you mean errors? known here: "
        "valid, errors, reason, warnings, stored)",
        "T/s.kcel-test.yaml:12: document 0: cases[3].name: 'b' is also the name of cases[1]",
    ]


def test_problems_found_preparing_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every case whose object no CRD serves, not only the first."""
    gizmo = {**WIDGET, "kind": "Gizmo"}
    suite = {"crds": "widget-crd.yaml", "cases": [{**CASE, "object": gizmo}, {"name": "b", "object": gizmo,
                                                                            "expect": "valid"}]}  # fmt: skip
    found = problems_of(tmp_path, capsys, suite)
    lines = [
        n for n, text in enumerate((tmp_path / "s.kcel-test.yaml").read_text().splitlines(), 1) if "object:" in text
    ]
    assert found == [
        f"T/s.kcel-test.yaml:{n}: document 0: cases[{i}].object: no CRD in crds serves apiVersion example.com/v1, "
        "kind Gizmo"
        for i, n in enumerate(lines)
    ]


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ({"expect": "Valid"}, "cases[0].expect: must be valid, invalid or a mapping, not 'Valid' (did you mean "
                              "valid?)"),
        ({"expect": {"vaild": True}}, "cases[0].expect.vaild: unknown field (did you mean valid? known here"),
        ({"fieldValidation": "strict"}, "cases[0].fieldValidation: must be one of Strict, Warn, Ignore, not 'strict' "
                                        "(did you mean Strict?)"),
        ({"expect": {"valid": False, "reason": "invalid"}}, "cases[0].expect.reason: must be one of Invalid, "
                                                            "BadRequest, not 'invalid' (did you mean Invalid?)"),
        ({"expect": "nonsense"}, "cases[0].expect: must be valid, invalid or a mapping, not 'nonsense'"),
    ],
)  # fmt: skip
def test_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Any, problem: str) -> None:
    suite = {"crds": "widget-crd.yaml", "base": WIDGET, "cases": [{"name": "a", **case}]}
    found = problem_of(tmp_path, capsys, suite)
    assert f": document 0: {problem}" in found and found.count("did you mean") == problem.count("did you mean")


def test_did_you_mean_an_admission_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"policies": "widget-crd.yaml", "base": WIDGET, "cases": [{"name": "a", "expect": "alowed"}]}
    assert problem_of(tmp_path, capsys, suite).endswith(
        ": document 0: cases[0].expect: must be allowed, denied or a mapping, not 'alowed' (did you mean allowed?)"
    )


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


def test_the_readable_suites_run_in_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON, JUnit and --update: the problems beside the results of the suites that ran, exit status 2."""
    folder = widget_folder(tmp_path)
    good = write(folder / "good.kcel-test.yaml", {"crds": "widget-crd.yaml", "base": WIDGET,
                                                  "cases": [CASE, {"name": "new"}]})  # fmt: skip
    bad = write(folder / "bad.kcel-test.yaml", {"crds": "widget-crd.yaml", "cases": [{**CASE, "objekt": 1}]})
    status, out, _ = run(capsys, "-o", "json", str(folder))
    report = json.loads(out)
    assert status == 2 and [r["case"] for r in report["results"]] == ["a"]
    assert [p.split(": document 0: ")[1].split(":")[0] for p in report["problems"]] == [
        "cases[0].objekt", "cases[0]", "cases[1]"
    ]  # fmt: skip
    status, out, _ = run(capsys, "-o", "junit", str(folder))
    assert status == 2 and 'tests="4"' in out and 'errors="3"' in out
    status, out, err = run(capsys, "--update", str(folder))
    assert status == 2 and out.endswith("1 passed, 0 failed, 1 recorded\n") and f"error: {bad}:" in err
    assert "expect:" in good.read_text().split("name: new")[1]
