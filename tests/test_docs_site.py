"""The documentation site (docs/, mkdocs.yml) builds cleanly, and every shell example on it prints what it shows.

Shell examples are fenced ```console blocks in docs/**/*.md:

    $ kcel eval '1 + 1'
    2 : int

A line starting with `$ ` is a command; the lines after it, up to the next `$ ` line or the end of the block, are its
expected standard output (compared with trailing whitespace stripped from each line; standard error is ignored, so
add `2>&1` to show an error message). A command must exit 0 unless its line ends with a bash comment naming the
status, `# exit N` (`$ kcel check examples/expensive-crd.yaml  # exit 1`). Each block's commands run in order, with
bash, in a fresh folder holding a copy of the repository's examples/ (so commands say `examples/...`), with the
Python environment's bin folder first on PATH, HOME in that folder and no colour.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent
EXIT_MARKER = re.compile(r"#\s*exit\s+(\d+)\s*$")
CONSOLE_BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Run:
    command: str
    expected: str
    status: int


@dataclass(frozen=True)
class Block:
    where: str  # page.md:line
    runs: tuple[Run, ...]


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


def _runs(body: str) -> tuple[Run, ...]:
    runs: list[Run] = []
    command: str | None = None
    output: list[str] = []
    for line in [*body.splitlines(), "$ "]:
        if not line.startswith("$ "):
            output.append(line)
            continue
        if command is not None:
            marker = EXIT_MARKER.search(command)
            runs.append(Run(command, _normalise("\n".join(output)), int(marker.group(1)) if marker else 0))
        command, output = line[2:].strip(), []
    return tuple(runs)


def console_blocks() -> list[Block]:
    """Every ```console block of the site, with where it starts."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for found in CONSOLE_BLOCK.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            blocks.append(Block(f"{page.relative_to(DOCS)}:{line}", _runs(found.group(1))))
    return blocks


BLOCKS = console_blocks()


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """A broken link, a page missing from the nav or a bad setting fails the build (mkdocs.yml `validation`)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_the_site_has_shell_examples() -> None:
    runs = [run for block in BLOCKS for run in block.runs]
    assert runs and all("kcel" in run.command for run in runs)
    assert len(runs) <= 45, "keep the site's examples few, so this test stays quick"


Outcomes = dict[str, list[tuple[Run, subprocess.CompletedProcess[str]]]]


def _run_block(block: Block, folder: Path) -> list[tuple[Run, subprocess.CompletedProcess[str]]]:
    """A block's commands in order, in a fresh folder holding a copy of examples/."""
    folder.mkdir()
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(folder), NO_COLOR="1")
    bash = functools.partial(
        subprocess.run, cwd=folder, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    return [(run, bash(["bash", "-c", run.command])) for run in block.runs]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    """Every block run once, the blocks side by side (each in its own folder), so the examples take seconds."""
    if not (BIN / "kcel").exists():
        pytest.skip(f"no kcel command beside {sys.executable} (pip install -e .)")
    root = tmp_path_factory.mktemp("docs")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        futures = {b.where: pool.submit(_run_block, b, root / f"block{i}") for i, b in enumerate(BLOCKS)}
        return {where: future.result() for where, future in futures.items()}


@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_shell_examples_print_what_the_site_shows(block: Block, outcomes: Outcomes) -> None:
    for run, result in outcomes[block.where]:
        shown = f"{block.where}: $ {run.command}\nstderr:\n{result.stderr}"
        assert result.returncode == run.status, shown
        assert _normalise(result.stdout) == run.expected, shown
