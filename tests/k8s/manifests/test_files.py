"""Which files of a folder are manifests: `kcel test` suites are not, though YAML."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kcel.cli import main
from kcel.k8s.manifests.files import is_manifest, is_suite, manifest_files

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize(("name", "suite"), [
    ("widget.kcel-test.yaml", True), ("kcel-test.yaml", True), ("a.KCEL-TEST.YML", True),
    ("widget.yaml", False), ("test.yaml", False), ("kcel-test.json", False),
])  # fmt: skip
def test_suites_are_not_manifests(name: str, suite: bool) -> None:
    assert is_suite(Path(name)) is suite
    assert is_manifest(Path(name)) is (not suite and not name.endswith(".txt"))


def test_a_folder_is_checked_without_its_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLES / "surfaces", tmp_path / "surfaces")
    assert not any(is_suite(p) for p in manifest_files([tmp_path / "surfaces"]))
    main(["check", str(tmp_path / "surfaces")])
    assert ".kcel-test.yaml" not in capsys.readouterr().err  # not listed as skipped
    named = sorted(p.name for p in manifest_files([tmp_path / "surfaces" / "surfaces.kcel-test.yaml"]))
    assert named == ["surfaces.kcel-test.yaml"]  # a file named is taken as it is


def test_a_document_that_is_no_object_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- a: 1\n- b: 2\n", encoding="utf-8")
    assert main(["check", str(listed)]) == 1
    err = capsys.readouterr().err
    assert err.count(f"{listed}: document 0") == 1 and "skipped" not in err


def test_fields_read_from_standard_input_keep_their_lines() -> None:
    import subprocess
    import sys

    widget = (EXAMPLES / "widget.yaml").read_text(encoding="utf-8")
    command = [sys.executable, "-m", "kcel.cli", "validate", "--crd", str(EXAMPLES / "widget-crd.yaml"), "-"]
    done = subprocess.run(command, input=widget, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "  at -:5: spec\n  at -:13: spec.containers[1].image\n" in done.stdout
