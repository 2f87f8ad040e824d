"""`kcel completion`: the scripts complete commands, options and option choices from the parser itself."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

KCEL = [sys.executable, "-m", "kcel.cli"]


def _script(shell: str) -> str:
    return subprocess.run([*KCEL, "completion", shell], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["kcel", "ch"], ["check"]),
        (["kcel", "check", "-o", ""], ["text", "json", "github", "sarif", "junit"]),
        (["kcel", "validate", "--sk"], ["--skip-kind"]),
        (["kcel", "test", "--require"], ["--require-suites"]),
        (["kcel", "completion", "--h"], ["--help"]),
    ],
)
def test_bash_completes_commands_options_and_choices(words: list[str], expected: list[str]) -> None:
    program = (
        _script("bash")
        + f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; _kcel\n"
        + 'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout.split() == expected


def test_zsh_and_fish_scripts_name_every_command() -> None:
    zsh, fish = _script("zsh"), _script("fish")
    assert zsh.startswith("autoload -U +X bashcompinit && bashcompinit\n") and "complete -o filenames -F _kcel" in zsh
    for command in ("eval", "check", "validate", "admit", "test", "serve", "completion"):
        assert f"complete -c kcel -n __fish_use_subcommand -a {command} " in fish
    assert "complete -c kcel -n '__fish_seen_subcommand_from check' -s o -x -a 'text json github sarif junit'" in fish
