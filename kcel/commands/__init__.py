"""The commands that read manifests (`kcel check`, `kcel validate`), and what the `kcel` front end shares with
them. Each command module is imported only when its command runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """Bad usage: the command says it and exits with status 2."""


def positive(text: str) -> int:
    """An argparse type: a number of at least 1 (`--jobs`)."""
    import argparse

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return int(text)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def read_documents(path: str) -> list[Any]:
    """Manifests decoded as the API server decodes them (timestamps stay strings, keys are strings)."""
    from kcel.k8s.crds.crd import CRDLoadError, load_documents

    try:
        return load_documents(Path(path))
    except CRDLoadError as err:
        raise UsageError(str(err)) from None


def requested_versions(option: str | None) -> tuple[str, ...]:
    """The Kubernetes versions to answer at: `--k8s-version`'s (a range or list), else the nearest `.kcel.yaml`'s,
    else none (the newest)."""
    from kcel.settings import requested_versions as requested

    try:
        return requested(option)
    except ValueError as err:
        raise UsageError(str(err)) from None


class Progress:
    """A one-line progress bar on stderr, only on a terminal and only for much work (never in CI logs); without a
    total (a snapshot read as a stream), a count."""

    MIN_FILES = 20
    WIDTH = 30

    def __init__(self, total: int | None, unit: str = "files") -> None:
        self.total, self.done, self.unit = total, 0, unit
        self.shown = (total is None or total >= self.MIN_FILES) and sys.stderr.isatty()

    def __enter__(self) -> Progress:
        self.draw()
        return self

    def __exit__(self, *exc: object) -> None:
        self.clear()

    def advance(self, done: int | None = None) -> None:
        self.done = self.done + 1 if done is None else done
        self.draw()

    def draw(self) -> None:
        if not self.shown:
            return
        if self.total is None:
            print(f"\r{self.done:,} {self.unit}", end="", file=sys.stderr, flush=True)
            return
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        print(f"\r[{bar}] {self.done}/{self.total} {self.unit}", end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
