"""Options the commands share: one spelling for the same input in every command (the others still read), one
default user, versions as people write them."""

from __future__ import annotations

import argparse

import pytest

from kcel.cli import build_parser
from kcel.completion import script


def _parse(argv: list[str]) -> argparse.Namespace:
    return build_parser(argv[0]).parse_args(argv)


def _help(command: str) -> str:
    parser = build_parser(command)
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return str(sub.choices[command].format_help())


@pytest.mark.parametrize("command", ["admit", "audit", "serve"])
def test_policies_and_params_are_spelt_one_way(command: str) -> None:
    """`--policy` and `--params` in admit, audit and serve; serve's `--policies`/`--resources` read as aliases that
    the help and the shell completion do not offer."""
    text = _help(command)
    assert "--policy FILE|DIR" in text and "--params FILE|DIR" in text
    assert "--policies" not in text and "--resources" not in text
    completion = script(build_parser(), "bash")
    assert " --policy " in completion and " --policies " not in completion and " --resources " not in completion
    last = ["OBJECT.yaml"] if command != "serve" else []
    both = _parse([command, "--policy", "a", "--policies", "b", "--params", "c", "--resources", "d", *last])
    assert (both.policy, both.params) == (["a", "b"], ["c", "d"])
