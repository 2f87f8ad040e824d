"""`kcel test` on the command line: its help's examples work, and it is wired into `kcel`."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kcel.cli import main

from .helpers import EXAMPLES, ROOT


def help_text(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main(["test", "--help"])
    return capsys.readouterr().out


def test_help_shows_working_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = help_text(capsys)
    assert "examples:\n  kcel test " in text
    assert "exit status: 0 all passed (or no suite found, unless --require-suites), 1 a case failed, 2 a suite" in text
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    commands = [line.strip() for line in text.split("examples:\n")[1].split("\n\n")[0].splitlines()]
    assert len(commands) == 4
    for command in commands:
        words = shlex.split(command.split(" > ")[0].split("  #")[0])
        assert words[:2] == ["kcel", "test"]
        assert main(words[1:]) == 0, command
        capsys.readouterr()
    assert (tmp_path / "examples" / "widget.kcel-test.yaml").read_text() == (
        EXAMPLES / "widget.kcel-test.yaml"
    ).read_text()


def test_the_kcel_command_runs_the_examples() -> None:
    done = subprocess.run([sys.executable, "-m", "kcel.cli", "test", "examples"], cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(" passed, 0 failed\n")


def test_without_paths_it_searches_the_current_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(EXAMPLES)
    assert main(["test", "-k", "widget.kcel-test.yaml::the base"]) == 0
    assert capsys.readouterr().out.endswith("1 passed, 0 failed, 40 deselected\n")  # 41 cases, one selected


def test_the_readme_example_and_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's suite, run from a folder holding it as examples/widget.kcel-test.yaml, prints what it shows."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Testing CRD rules, policies and the rest")[1]
    suite = section.split("```yaml\n")[1].split("```")[0]
    output = section.split("```\n$ kcel test examples/\n")[1].split("```")[0]
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLES / "widget-crd.yaml", tmp_path / "examples")
    (tmp_path / "examples" / "widget.kcel-test.yaml").write_text(suite, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["test", "examples/"]) == 1
    assert capsys.readouterr().out == output


def test_the_pre_commit_hooks_run_kcel_commands() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == ["kcel-check", "kcel-check-go", "kcel-validate", "kcel-test"]
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= set(hook) and hook["language"] == "python"
        assert hook["entry"] == "kcel " + hook["id"].removeprefix("kcel-").removesuffix("-go")
    assert hooks[-1]["pass_filenames"] is False  # kcel test finds its suites itself
