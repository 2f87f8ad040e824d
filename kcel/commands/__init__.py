"""The commands that read manifests (`kcel check`, `kcel validate`), and what the `kcel` front end shares with
them. Each command module is imported only when its command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class UsageError(Exception):
    """Bad usage: the command says it and exits with status 2."""


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
