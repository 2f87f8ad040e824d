"""A kubebuilder project with its Go API types (tests/gotypes/widget.py): the hooks of `.pre-commit-hooks.yaml` as
pre-commit runs them are green on it; with one bad rule in a marker and one bad sample, red at the marker's
`file.go:line:col` and at the sample's line, in text, github, SARIF (one result per finding) and JUnit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

pytest.importorskip("tree_sitter_go", reason="the kcel[go] extra (tree-sitter-go) is not installed")

from kcel.cli import main  # noqa: E402
from tests.conftest import sarif_results  # noqa: E402
from tests.gotypes.widget import RULE, write_widget  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TYPES = "api/v1/widget_types.go"
SAMPLE = "config/samples/widget.yaml"
HOOK_ARGS = {"kcel-validate": ["--crd", "config/crd/bases"]}


def _red(root: Path) -> tuple[int, int]:
    """The marker's rule names a field that does not exist; the sample has more replicas than it allows. The
    marker's line and the column of the error in it (cel-go's `.` before the field)."""
    types = write_widget(root, project=True)
    types.write_text(types.read_text().replace(RULE, "self.replicas <= self.maxReplica"))
    sample = root / SAMPLE
    sample.write_text(sample.read_text().replace("replicas: 2", "replicas: 5"))
    lines = types.read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if 'self.maxReplica"' in t)
    return line, lines[line - 1].index('.maxReplica"') + 1


def _hooks(root: Path) -> dict[str, int]:
    """Each hook as pre-commit runs it on every file of the tree: its entry, the project's args, the files its
    pattern matches (none: not run)."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(root), "GOMODCACHE": str(root / "no-cache")}
    env |= {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    outcomes = {}
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        passed = hook.get("pass_filenames", True)
        matched = [f for f in files if re.search(hook["files"], f) and not re.search(hook.get("exclude", "^$"), f)]
        if passed and not matched:
            continue
        command = [*hook["entry"].split(), *HOOK_ARGS.get(hook["id"], []), *(matched if passed else [])]
        outcomes[hook["id"]] = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                                              timeout=120, check=False).returncode  # fmt: skip
    return outcomes


def test_the_hooks_are_green_on_the_project(tmp_path: Path) -> None:
    write_widget(tmp_path, project=True)
    assert _hooks(tmp_path) == {"kcel-check": 0, "kcel-check-go": 0, "kcel-validate": 0, "kcel-test": 0}


def test_the_hooks_are_red_on_a_bad_marker_and_a_bad_sample(tmp_path: Path) -> None:
    _red(tmp_path)
    assert _hooks(tmp_path) == {"kcel-check": 0, "kcel-check-go": 1, "kcel-validate": 1, "kcel-test": 0}


def test_a_bad_marker_and_a_bad_sample_are_red_at_their_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    line, column = _red(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "no-cache"))
    assert main(["check", TYPES]) == 1
    assert f"  at {TYPES}:{line}:{column}: spec.validation.openAPIV3Schema.properties[spec]" in capsys.readouterr().out
    assert main(["check", "-o", "github", TYPES]) == 1
    (annotation,) = [a for a in capsys.readouterr().out.splitlines() if a.startswith("::error")]
    assert annotation.startswith(f"::error file={TYPES},line={line},col={column},") and "maxReplica" in annotation
    assert main(["check", "-o", "sarif", TYPES]) == 1
    (result,) = sarif_results(capsys.readouterr().out)
    assert result[:4] == ("crd-rejected", TYPES, line, column) and "undefined field 'maxReplica'" in result[4]
    assert main(["check", "-o", "junit", TYPES]) == 1
    (failed,) = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase/failure/..")
    assert (failed.get("file"), failed.get("line")) == (TYPES, str(line))

    spec_line = 5  # the rule is on spec: the API server's error names spec
    assert (tmp_path / SAMPLE).read_text().splitlines()[spec_line - 1] == "spec:"
    crds = "config/crd/bases"
    assert main(["validate", "--crd", crds, SAMPLE]) == 1
    assert f"  at {SAMPLE}:{spec_line}: spec" in capsys.readouterr().out.splitlines()
    assert main(["validate", "-o", "github", "--crd", crds, SAMPLE]) == 1
    (annotation,) = capsys.readouterr().out.splitlines()
    assert annotation.startswith(f"::error file={SAMPLE},line={spec_line},") and "must not exceed" in annotation
    assert main(["validate", "-o", "sarif", "--crd", crds, SAMPLE]) == 1
    ((rule, uri, found_line, _, message),) = sarif_results(capsys.readouterr().out)
    assert (rule, uri, found_line) == ("object-invalid", SAMPLE, spec_line) and "must not exceed" in message
    assert main(["validate", "-o", "junit", "--crd", crds, SAMPLE]) == 1
    (invalid,) = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase/failure/..")
    assert invalid.get("file") == SAMPLE
