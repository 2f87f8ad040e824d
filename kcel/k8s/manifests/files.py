"""Files and directories of manifests, and the objects an update starts from.

`kcel validate` and `kcel admit` both take files or directories of YAML/JSON manifests; a directory
is searched recursively and its files taken in sorted order, so output comes out the same way every run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


SKIPPED_FOLDERS = frozenset(("node_modules", "__pycache__", "venv"))
"""Folders a search never enters, besides hidden ones (`.git`, `.venv`)."""


SUITE_SUFFIXES = (".kcel-test.yaml", ".kcel-test.yml")
SUITE_NAMES = ("kcel-test.yaml", "kcel-test.yml")


def is_suite(path: Path) -> bool:
    """A `kcel test` suite: not a manifest, though YAML."""
    name = path.name.lower()
    return name in SUITE_NAMES or name.endswith(SUITE_SUFFIXES)


def is_manifest(path: Path) -> bool:
    """YAML or JSON, not a `kcel test` suite (which `kcel test` runs; check and validate pass it by in a folder)."""
    return path.suffix.lower() in MANIFEST_SUFFIXES and not is_suite(path)


def manifest_files(
    paths: Iterable[str | os.PathLike[str]], matches: Callable[[Path], bool] = is_manifest
) -> list[Path]:
    """The files named (`-`: standard input), and the files under the directories named that `matches` accepts
    (YAML and JSON by default), recursively and sorted, each once; hidden folders and `SKIPPED_FOLDERS` are not
    searched.

    Raises:
        FileNotFoundError: a path that does not exist.
    """
    files: list[Path] = []
    for given in map(Path, paths):
        if given.as_posix() == "-":
            files.append(STDIN)
        elif given.is_dir():
            files += sorted((p for p in _walk(given) if matches(p)), key=lambda p: p.as_posix())
        elif given.exists():
            files.append(given)
        else:
            raise FileNotFoundError(f"{given}: no such file or directory")
    return list(dict.fromkeys(files))


_ConcretePath: Any = type(Path())


class StdinPath(_ConcretePath):  # type: ignore[misc]
    """`-` among the files: standard input, read once (a command may read its documents twice)."""

    _text: list[str] = []

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        if not StdinPath._text:
            StdinPath._text.append(sys.stdin.read())
        return StdinPath._text[0]

    def exists(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def is_file(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def is_dir(self, *args: Any, **kwargs: Any) -> bool:
        return False


STDIN = StdinPath("-")


def _walk(folder: Path) -> Iterator[Path]:
    for root, folders, names in os.walk(folder):
        folders[:] = [f for f in folders if not f.startswith(".") and f not in SKIPPED_FOLDERS]
        yield from (Path(root) / name for name in names)


class OldObjects:
    """Objects before an update, found by apiVersion group, kind, namespace and name."""

    def __init__(self, objects: Iterable[Any] = (), namespace: str = "default") -> None:
        self.namespace = namespace
        self.objects: dict[tuple[str, str, str, str], Any] = {}
        for obj in objects:
            self.objects.setdefault(self.key(obj), obj)

    def key(self, obj: Any) -> tuple[str, str, str, str]:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        return group, str(obj.get("kind", "")), str(meta.get("namespace") or self.namespace), str(meta.get("name", ""))

    def get(self, obj: dict[str, Any]) -> Any:
        return self.objects.get(self.key(obj))
