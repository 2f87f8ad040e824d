"""Ctrl-C while the `kcel` command starts: imported first of all by the kcel package, so that an interrupt during the
imports ends the command quietly with status 130 rather than a traceback. kcel.cli hands Ctrl-C
back to Python's KeyboardInterrupt once its command line is parsed (and `main` catches it)."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def _quit(signum: int, frame: FrameType | None) -> None:
    """Leave at once: an exception raised here could land in a finalizer the garbage collector runs during an
    import, and be swallowed there; nothing has been written yet that exiting now would lose."""
    os._exit(130)


def started_as_command() -> bool:
    """The `kcel` console script, or `python -m kcel.cli`; not a program that imports kcel (tests, embedders).
    While the package imports for `-m`, sys.argv[0] is still "-m": the original command line tells."""
    argv = sys.orig_argv
    module = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
    return os.path.basename(sys.argv[0]) == "kcel" or module in ("kcel.cli", "kcel")


if started_as_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _quit)


def restore() -> None:
    """Ctrl-C raises KeyboardInterrupt again (main() catches it, the REPL drops the line being typed)."""
    if signal.getsignal(signal.SIGINT) is _quit:
        signal.signal(signal.SIGINT, signal.default_int_handler)
