"""`kcel completion bash|zsh|fish`: shell completion scripts, written from the command line's own parser.

The scripts complete commands, each command's options, the choices of options that have them
(`-o text|json|github`, `--k8s-version 1.30 ...`), and files otherwise. They are generated from the argparse
parser, so a new command or option completes without editing them.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator

SHELLS = ("bash", "zsh", "fish")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands here; no public accessor
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(option string, its choices) for every option of a parser its help shows (not the aliases it hides)."""
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        choices = tuple(str(c) for c in action.choices) if action.choices else ()
        for option in action.option_strings:
            yield option, choices


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for `shell` (one of SHELLS)."""
    if shell == "bash":
        return _bash(parser)
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + _bash(parser)
    return _fish(parser)


def _bash(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    cases = []
    for name, sub in commands.items():
        options = " ".join(option for option, _ in _options(sub))
        choices = [
            f'            {option}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(values))} -- "$cur")); return;;'
            for option, values in _options(sub)
            if values
        ]
        cases.append(
            f"        {name})\n"
            f'            case "$prev" in\n' + "\n".join(choices) + ("\n" if choices else "") + "            esac\n"
            f"            opts={shlex.quote(options)};;"
        )
    names = " ".join(commands)
    return f"""# kcel completion for bash: source <(kcel completion bash)
_kcel() {{
    local cur prev command opts
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    command="${{COMP_WORDS[1]}}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W {shlex.quote(names + " --help --version")} -- "$cur"))
        return
    fi
    case "$command" in
{chr(10).join(cases)}
        *) opts="";;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _kcel kcel
"""


def _fish(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    lines = ["# kcel completion for fish: kcel completion fish | source", "complete -c kcel -f"]
    for name, sub in commands.items():
        summary = (sub.description or "").rstrip(".")
        lines.append(f"complete -c kcel -n __fish_use_subcommand -a {name} -d {shlex.quote(summary[:60])}")
        for option, values in _options(sub):
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            extra = f" -x -a {shlex.quote(' '.join(values))}" if values else " -F"
            lines.append(f"complete -c kcel -n '__fish_seen_subcommand_from {name}' {flag}{extra}")
    return "\n".join(lines) + "\n"
