"""The container image (`Dockerfile`): what its install step installs, and what it runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads pyproject.toml")

ROOT = Path(__file__).parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DEVELOPMENT_EXTRAS = {"test", "bench"}  # for kcel's own tests and benchmarks, not for its users


def test_the_image_installs_kcel_with_every_users_extra() -> None:
    (extras,) = re.findall(r'pip install --no-cache-dir "/src\[([a-z,]+)\]"', DOCKERFILE)
    assert set(extras.split(",")) == set(PROJECT["optional-dependencies"]) - DEVELOPMENT_EXTRAS


def test_the_image_copies_what_the_package_is_built_from_and_runs_kcel() -> None:
    copied = {part for line in DOCKERFILE.splitlines() if line.startswith("COPY") for part in line.split()[1:-1]}
    assert {"pyproject.toml", "README.md", "kcel", "conformance"} <= copied  # the packages pyproject includes
    assert PROJECT["readme"] == "README.md" and PROJECT["scripts"]["kcel"] == "kcel.cli:console"
    assert 'ENTRYPOINT ["kcel"]' in DOCKERFILE and re.search(r"^USER \d+", DOCKERFILE, re.MULTILINE)


def test_the_install_step_resolves_from_the_copied_files_alone(tmp_path: Path) -> None:
    """The image's `RUN pip install` on a folder holding only what the `COPY` lines copy, as a dry run against the
    package index: the project builds from those files and every extra's requirements resolve (no image built)."""
    source = tmp_path / "src"
    source.mkdir()
    for line in DOCKERFILE.splitlines():
        if line.startswith("COPY"):
            for part in line.split()[1:-1]:
                copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
                copy(ROOT / part, source / part)
    (extras,) = re.findall(r'pip install --no-cache-dir "/src\[([a-z,]+)\]"', DOCKERFILE)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
         f"{source}[{extras}]"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    installed = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert {"kcel", "lark", "google-re2", "uvicorn", "orjson", "protobuf"} <= installed
