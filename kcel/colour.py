"""When output is coloured: `--color auto|always|never` (auto: on a terminal), then NO_COLOR (no-color.org) and
FORCE_COLOR (force-color.org) when set and not empty, as most command-line tools read them."""

from __future__ import annotations

import os
from typing import TextIO

CHOICES = ("auto", "always", "never")
_chosen = ["auto"]


def choose(choice: str) -> None:
    """The command line's `--color`."""
    _chosen[0] = choice


def wanted(*streams: TextIO) -> bool:
    """Whether to colour what goes to these streams."""
    if _chosen[0] != "auto":
        return _chosen[0] == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return all(stream.isatty() for stream in streams)
