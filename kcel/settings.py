"""A project's `.kcel.yaml`, found in the folder of the file worked on (or the current folder) or above it, as git
and ruff find theirs. `k8sVersion` names the Kubernetes version to answer as (`"1.34"`), or the versions the project
supports (`"1.30-1.37"`, `"1.31,1.34"`, or a YAML list): `kcel check`, `validate`, `admit` and `test` then answer at
each and say where they differ, and `kcel lsp` checks at each. `runtimeConfig` names the alpha and beta API versions
the project's clusters switch on (kube-apiserver's `--runtime-config`: `admissionregistration.k8s.io/v1beta1`, a
list or comma-separated), for `kcel lsp`."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import yaml

from kcel.k8s.environment import server_versions

SETTINGS_FILE = ".kcel.yaml"
# a key kcel does not read is an error: a misspelt one would be ignored unseen
KNOWN_KEYS = ("k8sVersion", "runtimeConfig")


@dataclass(frozen=True)
class Settings:
    """What a project's `.kcel.yaml` sets."""

    path: Path | None = None  # None: no .kcel.yaml found
    k8s_versions: tuple[str, ...] = ()  # empty: not set
    runtime_config: tuple[str, ...] = ()  # the alpha and beta API versions assumed switched on


def find_settings(start: Path) -> Settings:
    """The settings of the nearest `.kcel.yaml` in `start` (a folder, or a file's folder) or above."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder / SETTINGS_FILE, *(parent / SETTINGS_FILE for parent in folder.resolve().parents)):
        if candidate.is_file():
            return read_settings(candidate)
    return Settings()


def read_settings(path: Path) -> Settings:
    """A `.kcel.yaml`; ValueError names the file and what is wrong in it."""
    try:
        # every scalar a string: `k8sVersion: 1.30` stays "1.30", not the number 1.3
        found = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: cannot read: {err}") from None
    if found is None:
        return Settings(path)
    if not isinstance(found, dict):
        raise ValueError(f"{path}: expected a mapping of settings (k8sVersion: ...)")
    for key in found:
        if key not in KNOWN_KEYS:
            raise ValueError(f"{path}: unknown setting {key!r}{_did_you_mean(str(key))}; kcel reads "
                             f"{', '.join(KNOWN_KEYS)}")  # fmt: skip
    switched = found.get("runtimeConfig") or []
    runtime_config = tuple(str(v) for v in (switched if isinstance(switched, list) else [switched]))
    version = found.get("k8sVersion")
    if version is None or version == "":
        return Settings(path, runtime_config=runtime_config)
    text = ",".join(str(v) for v in version) if isinstance(version, list) else str(version)
    try:
        return Settings(path, server_versions(text), runtime_config)
    except ValueError as err:
        raise ValueError(f"{path}: k8sVersion: {err}") from None


def requested_versions(option: str | None, start: Path | None = None) -> tuple[str, ...]:
    """The versions a command answers at: `--k8s-version`'s, else those of the nearest `.kcel.yaml` (from the
    current folder), else none (the newest). ValueError for a broken `.kcel.yaml`."""
    if option:
        return server_versions(option)
    return find_settings(start or Path.cwd()).k8s_versions


def _did_you_mean(key: str) -> str:
    """` (did you mean 'k8sVersion'?)` for a key close to a known one, ignoring case (`k8sversion`), else nothing."""
    by_lower = {known.lower(): known for known in KNOWN_KEYS}
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""
