"""The README's documented API: every import its Python examples show, and every module path it names, exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
IMPORTS = [m.groups() for block in PYTHON_BLOCKS for m in re.finditer(r"^from ([\w.]+) import ([\w, ]+)$", block, re.M)]
NAMED = sorted(set(re.findall(r"`(kcel(?:\.\w+)+)", README)))


def test_the_readme_has_python_examples() -> None:
    assert IMPORTS and NAMED


@pytest.mark.parametrize(("module", "names"), IMPORTS)
def test_documented_imports_work(module: str, names: str) -> None:
    loaded = importlib.import_module(module)
    assert [n.strip() for n in names.split(",") if not hasattr(loaded, n.strip())] == []


@pytest.mark.parametrize("dotted", NAMED)
def test_named_modules_and_attributes_exist(dotted: str) -> None:
    """`kcel.k8s.admission.PolicySet`, `kcel.k8s.rules.validation.Validator`: the longest importable prefix, then
    attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return
    pytest.fail(f"{dotted} names no module")


ROOT = Path(__file__).resolve().parents[1]
# Shell examples whose output the README shows whole: those of the other CEL surfaces, with the files the README
# itself gives (a ```yaml block whose first line is `# NAME.yaml`).
SURFACE_RUNS = re.findall(
    r"```\n(\$ kcel [^\n]*(?:examples/surfaces/|bad-authentication)[^\n]*)\n(.*?)```", README, re.S
)
GIVEN_FILES = dict(re.findall(r"```yaml\n# ([\w-]+\.yaml)\n(.*?)```", README, re.S))


def test_the_readme_shows_every_surface_command() -> None:
    shown = {line.split()[2] for line, _ in SURFACE_RUNS}
    assert shown == {"check", "match-webhooks", "select-devices", "authenticate", "authorize"}


@pytest.mark.parametrize(("line", "output"), SURFACE_RUNS, ids=[line[:60] for line, _ in SURFACE_RUNS])
def test_surface_examples_print_what_the_readme_shows(
    line: str, output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex

    from kcel.cli import main

    monkeypatch.chdir(ROOT)
    args = shlex.split(line.removeprefix("$ kcel "))
    for name, text in GIVEN_FILES.items():
        if name in args:
            (tmp_path / name).write_text(text, encoding="utf-8")
            monkeypatch.chdir(tmp_path)
    main(args)
    assert capsys.readouterr().out == output
