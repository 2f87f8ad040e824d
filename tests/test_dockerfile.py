"""The container image (`Dockerfile`): what its install step installs, and what it runs."""

from __future__ import annotations

import re
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
    assert PROJECT["readme"] == "README.md" and PROJECT["scripts"]["kcel"] == "kcel.cli:main"
    assert 'ENTRYPOINT ["kcel"]' in DOCKERFILE and re.search(r"^USER \d+", DOCKERFILE, re.MULTILINE)
