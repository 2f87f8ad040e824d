"""The `kcel` command: exit statuses and output of check and validate on the shipped examples."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kcel.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CRD, WIDGET = str(EXAMPLES / "widget-crd.yaml"), str(EXAMPLES / "widget.yaml")


def test_check_accepts_the_example_crd(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", CRD]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "widgets.example.com: accepted (3 rules)"
    assert "    estimated cost 109 x 64 runs = 6,976 (0.07% of the per-expression limit)" in out
    assert out[-1] == "  total 6,998 (0.01% of the per-CRD limit) for spec.validation.openAPIV3Schema"


def test_check_reports_a_rule_that_does_not_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "crd.yaml"
    broken.write_text(Path(CRD).read_text().replace("self.replicas <= self.maxReplicas", "self.replicas <= 'x'"))
    assert main(["check", str(broken), "-o", "json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["errors"][0]["field"].endswith("x-kubernetes-validations[0].rule")
    assert "found no matching overload for '_<=_' applied to '(int, string)'" in report["errors"][0]["message"]


def test_check_rejects_a_library_the_version_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The IP library came in 1.30: a 1.30 API server offers new CRDs 1.29's environment, a 1.31 one has it."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(Path(CRD).read_text().replace("self.image.contains(':')", "!isIP(self.image)"))
    assert main(["check", str(crd), "--k8s-version", "1.31"]) == 0
    capsys.readouterr()
    assert main(["check", str(crd), "--k8s-version", "1.30"]) == 1
    out = capsys.readouterr().out
    assert "widgets.example.com: rejected (3 rules)" in out
    assert "undeclared reference to 'isIP' (in container '')" in out
    with pytest.raises(SystemExit) as exited:
        main(["check", str(crd), "--k8s-version", "2.0"])
    assert exited.value.code == 2


def test_validate_answers_as_the_version_asked(capsys: pytest.CaptureFixture[str]) -> None:
    """Before 1.35 a rule failure shows the type of the node the rule sits on (not its fieldPath's) as the value."""
    assert main(["validate", "--crd", CRD, WIDGET, "--k8s-version", "1.34"]) == 1
    assert capsys.readouterr().out == (
        f'{WIDGET}: document 0: Widget.example.com "w1" is invalid: ['
        'spec: Invalid value: "object": replicas must not exceed maxReplicas in Safe mode, '
        'spec.containers[1].image: Invalid value: "object": images must be pinned to a tag other than latest]\n'
        f"  at {WIDGET}:5: spec\n  at {WIDGET}:13: spec.containers[1].image\n"
    )


def test_validate_prints_the_api_servers_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--crd", CRD, WIDGET]) == 1
    assert capsys.readouterr().out == (
        f'{WIDGET}: document 0: Widget.example.com "w1" is invalid: ['
        "spec: Invalid value: replicas must not exceed maxReplicas in Safe mode, "
        "spec.containers[1].image: Invalid value: images must be pinned to a tag other than latest]\n"
        f"  at {WIDGET}:5: spec\n  at {WIDGET}:13: spec.containers[1].image\n"  # where each field is in the file
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
    other.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nresources: [a.yaml]\n")
    assert main(["validate", "--crd", CRD, str(other)]) == 0  # a built-in kind and a kustomization: none of ours
    assert "2 objects in 1 file: 0 valid, 0 invalid, 0 not validated, 2 skipped" in capsys.readouterr().err
    assert main(["validate", "--strict", "--crd", CRD, str(other)]) == 1
    err = capsys.readouterr().err
    assert f"{other}: document 0: error: no CRD given for apiVersion v1, kind ConfigMap" in err
    assert f"{other}: document 1: error: apiVersion and kind must be set" in err
    typo = tmp_path / "typo.yaml"
    typo.write_text("apiVersion: example.com/v1\nkind: Widgit\nmetadata: {name: w}\n")
    assert main(["validate", "--crd", CRD, str(typo)]) == 1  # a kind missing from a group the CRDs serve: a typo
    assert "no CRD given for apiVersion example.com/v1, kind Widgit" in capsys.readouterr().err
    assert main(["validate", "--skip-kind", "Widgit,Other", "--crd", CRD, str(typo)]) == 0
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


# -- kcel validate over many files ----------------------------------------------------------------------------

WIDGET_OK = """apiVersion: example.com/v1
kind: Widget
metadata: {name: NAME}
spec: {replicas: 1, maxReplicas: 3, mode: Safe}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_directories_are_walked_in_sorted_order_and_bad_documents_do_not_stop_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crds = tmp_path / "crds"
    write(crds, "widget.yaml", Path(CRD).read_text())
    write(crds, "notes/readme.yaml", "just: notes\n")  # not a CRD: ignored inside a directory
    objects = tmp_path / "objects"
    write(objects, "b.yaml", WIDGET_OK.replace("NAME", "b") + "---\nspec: [\n---\n" + WIDGET_OK.replace("NAME", "c"))
    write(objects, "a/a.json", '{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, '
                               '"spec": {"replicas": 9, "maxReplicas": 3, "mode": "Slow"}}')  # fmt: skip
    assert main(["validate", "--crd", str(crds), str(objects), "-v"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f'{objects}/a/a.json: document 0: Widget.example.com "a" is invalid: [spec.mode: Unsupported value: "Slow": '
        'supported values: "Fast", "Safe", <nil>: Invalid value: null: some validation rules were not checked because '
        "the object was invalid; correct the existing errors to complete validation]",
        f"  at {objects}/a/a.json:1: spec.mode",
        f'{objects}/b.yaml: document 0: Widget.example.com "b" is valid',
        f'{objects}/b.yaml: document 2: Widget.example.com "c" is valid',
    ]
    assert err.splitlines() == [
        f"{objects}/b.yaml: document 1: error: {objects}/b.yaml:7:1: invalid YAML: did not find expected node content "
        "(while parsing a flow node at line 7, column 1)",
        "4 objects in 2 files: 2 valid, 1 invalid, 1 not validated",
    ]


def test_json_output_is_one_record_per_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = write(tmp_path, "list.yaml", "apiVersion: v1\nkind: List\nitems:\n- " +
                   WIDGET_OK.replace("NAME", "x").replace("\n", "\n  ").rstrip() + "\n- {kind: Gizmo}\n")  # fmt: skip
    assert main(["validate", "--crd", CRD, str(listed), "-o", "json"]) == 1
    records = json.loads(capsys.readouterr().out)
    assert records == [
        {"file": str(listed), "document": 0, "item": 0, "line": 1, "status": "valid", "valid": True,
         "kind": "Widget.example.com", "name": "x", "reason": "", "message": "", "errors": [], "warnings": []},
        {"file": str(listed), "document": 0, "item": 1, "line": 1, "status": "error", "valid": False,
         "error": "apiVersion and kind must be set (as strings)"},
    ]  # fmt: skip


def test_unknown_and_duplicate_fields_follow_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = WIDGET_OK.replace("NAME", "w").replace("mode: Safe", "mode: Safe, extra: 1") + "kind: Widget\n"
    path = write(tmp_path, "w.yaml", text)
    assert main(["validate", "--crd", CRD, str(path)]) == 1
    assert capsys.readouterr().out == (
        f'{path}: document 0: Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'yaml: unmarshal errors:\n  line 5: key "kind" already set in map, unknown field "spec.extra"\n'
        f"  at {path}:4: spec.extra\n"  # kcel's: the line of each unknown field
    )
    assert main(["validate", "--crd", CRD, str(path), "--validate", "warn"]) == 0
    assert capsys.readouterr().out == (
        f'{path}: document 0: warning: line 5: key "kind" already set in map\n'
        f'{path}: document 0: warning: unknown field "spec.extra"\n'
        f"  at {path}:4: spec.extra\n"
    )


def test_old_objects_are_matched_by_name_and_status_updates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = write(tmp_path, "crd.yaml", Path(CRD).read_text().replace(
        "      storage: true\n", "      storage: true\n      subresources: {status: {}}\n"))  # fmt: skip
    old = write(tmp_path, "old.yaml", WIDGET_OK.replace("NAME", "w").replace("Safe", "Fast"))
    new = write(tmp_path, "new.yaml", WIDGET_OK.replace("NAME", "w") + "---\n" + WIDGET_OK.replace("NAME", "v"))
    assert main(["validate", "--crd", str(crd), "--old", str(old), str(new)]) == 1
    assert capsys.readouterr().out == (
        f'{new}: document 0: Widget.example.com "w" is invalid: spec: Invalid value: mode is immutable\n'
        f"  at {new}:4: spec\n"
    )
    assert main(["validate", "--crd", str(crd), "--old", str(old), str(new), "--subresource", "status"]) == 1
    assert "a status update needs the object before it (--old)" in capsys.readouterr().err


def test_bad_crds_are_reported_and_their_objects_not_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_crd = write(tmp_path, "nocrd.yaml", "apiVersion: v1\nkind: ConfigMap\n")
    broken = write(tmp_path, "broken.yaml", Path(CRD).read_text().replace("replicas: {type: integer}", "replicas: {}"))
    objects = write(tmp_path, "w.yaml", WIDGET_OK.replace("NAME", "w"))
    assert main(["validate", "--crd", str(not_crd), "--crd", str(broken), str(objects)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        f"error: {not_crd}: no CustomResourceDefinition in this file",
        f'error: {broken}: document 0: CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is '
        "invalid: spec.validation.openAPIV3Schema.properties[spec].properties[replicas].type: Required value: "
        "must not be empty for specified object fields",
    ]
    assert err[2] == f"{objects}: document 0: error: the schema of widgets.example.com v1 is not structural"
    assert main(["validate", "--crd", CRD, str(tmp_path / "missing")]) == 2


def test_a_progress_bar_only_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(25):
        write(tmp_path / "objects", f"{i:02}.yaml", WIDGET_OK.replace("NAME", f"w{i}"))
    assert main(["validate", "--crd", CRD, str(tmp_path / "objects")]) == 0
    assert "\r" not in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["validate", "--crd", CRD, str(tmp_path / "objects")]) == 0
    assert "] 25/25 files" in capsys.readouterr().err


# -- kcel eval ----------------------------------------------------------------------------------------------


DEPLOYMENT = str(EXAMPLES / "deployment.yaml")


def test_eval_prints_the_value_in_cel_notation_with_its_type(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "{'a': [dyn(1), dyn(2u), dyn(3.0), dyn(b'x'), dyn(null)]}"]) == 0
    assert capsys.readouterr().out == '{"a": [1, 2u, 3.0, b"x", null]} : map(string, list(dyn))\n'
    assert main(["eval", "[1, 2u]"]) == 1  # the API server's environment: list literals of one type
    assert "expected type 'int' but found 'uint'" in capsys.readouterr().err
    assert main(["eval", "--var", "x=[1, 2]", "x.map(n, n * 2)", "--cost"]) == 0
    assert capsys.readouterr().out == "[2, 4] : list(int)\ncost: 30\n"


def test_eval_declarations_type_check_the_expression(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--decl", "name:string", "--var", "name=kcel", "name.startsWith('k')"]) == 0
    assert capsys.readouterr().out == "true : bool\n"
    assert main(["eval", "--decl", "name:string", "name + 1"]) == 1
    assert "found no matching overload for '_+_' applied to '(string, int)'" in capsys.readouterr().err
    assert main(["eval", "--decl", "name", "name"]) == 2
    assert "--decl takes NAME:TYPE" in capsys.readouterr().err


def test_eval_inputs_from_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--input", f"self={DEPLOYMENT}", "self.spec.replicas"]) == 0
    assert capsys.readouterr().out == "3 : int\n"
    variables = tmp_path / "vars.yaml"
    variables.write_text("a: 1\nb: [p, q]\n")
    assert main(["eval", "-i", str(variables), "b[a]"]) == 0
    assert capsys.readouterr().out == '"q" : string\n'
    assert main(["eval", "-i", f"self={tmp_path / 'missing.yaml'}", "self"]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err


def test_eval_explain_shows_why(capsys: pytest.CaptureFixture[str]) -> None:
    rule = "self.spec.template.spec.containers.all(c, c.image.startsWith('docker.io/'))"
    assert main(["eval", "--explain", "--input", f"self={DEPLOYMENT}", rule]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "false : bool"
    assert out[1].endswith("= false   <- false at step 1")
    assert out[-1] == '   └─ c.image = "registry.example.com/web:1.2"'
    assert main(["eval", "--explain", "-o", "json", "--var", "x={}", "x.a"]) == 1  # an error still explains
    captured = capsys.readouterr()
    assert "x.a = error: no such key: a" in captured.out and "error: no such key: a" in captured.err


def test_eval_k8s_version_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--k8s-version", "1.34", "-o", "json", "quantity('1Gi').isGreaterThan(quantity('1Mi'))"]) == 0
    assert json.loads(capsys.readouterr().out) == {"value": True, "type": "bool", "cost": 3}
    assert main(["eval", "quantity('1Gi').isGreaterThan(quantity('1Mi'))"]) == 0  # the newest API server's libraries
    assert capsys.readouterr().out == "true : bool\n"
    # The IP library came in 1.30: a 1.30 API server offers new expressions 1.29's environment, a 1.31 one has it.
    assert main(["eval", "--k8s-version", "1.30", "ip('1.2.3.4').family()"]) == 1
    assert "undeclared reference to 'ip'" in capsys.readouterr().err
    assert main(["eval", "--k8s-version", "1.31", "ip('1.2.3.4').family()"]) == 0
    assert capsys.readouterr().out == "4 : int\n"
    with pytest.raises(SystemExit) as exited:
        main(["eval", "--k8s-version", "1.26", "1"])
    assert exited.value.code == 2
    assert "unsupported Kubernetes version 1.26: kcel answers as Kubernetes 1.30 to 1.37" in capsys.readouterr().err


def test_help_shows_working_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("eval", "check", "validate", "repl"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "examples:\n  kcel " + command in capsys.readouterr().out
    assert main(["--version"]) == 0  # answered before the parser is built
    assert capsys.readouterr().out.startswith("kcel ")
    with pytest.raises(SystemExit):
        main(["--color", "never", "--version"])  # argparse's own --version
    assert capsys.readouterr().out.startswith("kcel ")


def test_check_prints_the_api_servers_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(Path(CRD).read_text().replace("mode: {type: string,", "mode: {type: string, format: my-format,"))
    assert main(["check", str(crd)]) == 0
    assert '  Warning: unrecognized format "my-format"' in capsys.readouterr().out.splitlines()


def test_validate_in_parallel_keeps_file_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Enough files for worker processes: the same reports, in the same order, as in one process."""
    import yaml

    widget = yaml.safe_load((EXAMPLES / "widget.yaml").read_text())
    widget["spec"]["containers"] = widget["spec"]["containers"][:1]  # valid, but for replicas
    for i in range(40):  # every third invalid, one unreadable
        widget["metadata"]["name"] = f"w{i}"
        widget["spec"]["replicas"] = 5 if i % 3 == 0 else 1
        (tmp_path / f"w{i:02}.yaml").write_text(yaml.safe_dump(widget) if i != 7 else "a: [", encoding="utf-8")
    runs = []
    for jobs in ("1", "2"):
        args = ["validate", "-v", "-j", jobs, "--crd", str(EXAMPLES / "widget-crd.yaml"), str(tmp_path)]
        runs.append((main(args), capsys.readouterr()))
    (serial, one), (parallel, two) = runs
    assert serial == parallel == 1
    assert one.out == two.out and one.err == two.err
    assert "40 objects in 40 files: 25 valid, 14 invalid, 1 not validated" in two.err
    assert [line.split(":")[0] for line in two.out.splitlines() if line.startswith(str(tmp_path))] == sorted(
        line.split(":")[0] for line in two.out.splitlines() if line.startswith(str(tmp_path))
    )


def test_a_var_meant_as_json_that_does_not_parse_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """`--var 'x=[1,2'` used to bind the string "[1,2"; a bare word stays a string."""
    assert main(["eval", "--var", "x=[1,2", "x"]) == 2
    assert "--var x: not valid JSON: Expecting ',' delimiter at column 5" in capsys.readouterr().err
    assert main(["eval", "--var", "x=alice", "x"]) == 0
    assert capsys.readouterr().out.startswith('"alice"')
    assert main(["eval", "--decl", "x:lst(int)", "--var", "x=[1]", "x"]) == 2
    assert "unknown type 'lst' (did you mean 'list'?)" in capsys.readouterr().err


def test_check_on_several_workers_prints_what_one_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcel check -j 2` over enough files to use worker processes: the same output, in file order."""
    text = Path(CRD).read_text(encoding="utf-8")
    for i in range(12):
        broken = text.replace("self.replicas <= self.maxReplicas", "self.replicas <=") if i == 5 else text
        (tmp_path / f"crd-{i:02}.yaml").write_text(broken.replace("example.com", f"example{i}.com"))
    outputs = []
    for jobs in ("1", "2"):
        code = main(["check", "-j", jobs, str(tmp_path)])
        outputs.append((code, *capsys.readouterr()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and "12 CRDs, 36 rules: 1 rejected" in outputs[0][2]
    assert outputs[0][1].index("widgets.example4.com: accepted") < outputs[0][1].index("widgets.example5.com: rejected")


def test_the_parser_of_one_command_is_the_full_parser_for_it(capsys: pytest.CaptureFixture[str]) -> None:
    """`main` declares only the command the arguments name; its help is the same."""
    from kcel.cli import build_parser, wanted_command

    assert wanted_command(["--color", "never", "eval", "1"]) == wanted_command(["--color=never", "eval"]) == "eval"
    assert wanted_command(["--help", "eval"]) is wanted_command(["--he", "eval"]) is wanted_command([]) is None
    every = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(every)[:4] == ["eval", "parse", "check", "validate"] and "serve" in every and list(every)[-1] == "lsp"
    for name, command in every.items():
        alone = build_parser(name)._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert list(alone) == [name] and alone[name].format_help() == command.format_help()
    assert main(["--col", "never", "eval", "1 + 2"]) == 0  # an abbreviated option: every command is declared
    assert capsys.readouterr().out == "3 : int\n"
    with pytest.raises(SystemExit):
        main(["--help", "eval"])
    assert "match-webhooks" in capsys.readouterr().out
