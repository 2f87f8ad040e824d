"""`--color auto|always|never`, NO_COLOR and FORCE_COLOR, on every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KCEL = [sys.executable, "-m", "kcel.cli"]
SUITE = Path(__file__).parent.parent / "examples" / "widget.kcel-test.yaml"
RED = "\033[31m"


def _stderr(args: list[str], **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    done = subprocess.run([*KCEL, *args], capture_output=True, text=True, env={**clean, **env}, check=False)
    return done.stderr + done.stdout


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        (["eval", "1/0"], {}, False),  # not a terminal
        (["--color", "always", "eval", "1/0"], {}, True),
        (["eval", "--color", "always", "1/0"], {}, True),  # after the command too
        (["eval", "1/0"], {"FORCE_COLOR": "1"}, True),
        (["eval", "1/0"], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["eval", "--color", "always", "1/0"], {"NO_COLOR": "1"}, True),  # the option wins
        (["eval", "--color", "never", "1/0"], {"FORCE_COLOR": "1"}, False),
        (["eval", "1/0"], {"FORCE_COLOR": ""}, False),  # set but empty: not set
    ],
)  # fmt: skip
def test_colour_follows_the_option_then_the_environment(args: list[str], env: dict[str, str], coloured: bool) -> None:
    assert (RED in _stderr(args, **env)) is coloured


def test_kcel_test_colours_its_verdicts_when_asked(tmp_path: Path) -> None:
    suite = tmp_path / SUITE.name
    suite.write_text(SUITE.read_text().replace("expect: valid", "expect: invalid", 1))
    for name in ("widget-crd.yaml", "widget.yaml"):
        (tmp_path / name).write_text((SUITE.parent / name).read_text())
    assert f"{RED}FAIL" in _stderr(["test", "--color", "always", str(suite)])
    assert f"{RED}FAIL" not in _stderr(["test", str(suite)])
