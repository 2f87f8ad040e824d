"""The repository's GitHub Action (`action.yml`): its steps, run as the runner would run them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _step(name: str) -> dict[str, str]:
    return next(step for step in ACTION["runs"]["steps"] if step.get("name") == name)


def test_the_action_is_a_composite_of_setup_install_and_run() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["runs"]["steps"][0]["uses"].startswith("actions/setup-python@")
    assert set(ACTION["inputs"]) == {"command", "version", "python-version"}
    install = _step("install kcel")
    assert install["env"] == {"KCEL_VERSION": "${{ inputs.version }}"}  # inputs reach the shell as data, not code


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
@pytest.mark.parametrize(("version", "requirement"), [("", "kcel"), ("0.9.0", "kcel==0.9.0")])
def test_the_install_step_asks_pip_for_the_version_given(version: str, requirement: str) -> None:
    command = _step("install kcel")["run"].replace("python -m pip install --quiet", "printf '%s\\n'")
    done = subprocess.run(["bash", "-c", command], env={**os.environ, "KCEL_VERSION": version},
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == requirement


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_the_run_step_annotates_what_kcel_finds() -> None:
    """The step's shell line, with this checkout's kcel first on PATH."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "KCEL_COMMAND": "check examples/"}
    done = subprocess.run(["bash", "-c", _step("kcel")["run"]], env=env, cwd=ROOT, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 1, done.stderr  # examples/ holds a CRD that is too expensive, on purpose
    assert done.stdout.startswith("::error file=examples/expensive-crd.yaml,line="), done.stdout
