"""The policy set being served, compiled again when its files change, never replaced by a worse one.

Directories are polled by stat stamps (path, inode, size, mtime) rather than watched with inotify: ConfigMap
volumes change by swapping a `..data` symlink, which stat sees through and some watchers miss, and a poll a
second costs microseconds for a few dozen files. Files are listed here, not by the engine, so the hidden
`..<timestamp>` copies a ConfigMap volume keeps are skipped and not loaded twice.

A reload that adds a problem (a document that no longer loads) is rejected and the last good set keeps
serving: dropping a broken policy would silently stop enforcing it. Problems already present in the set
being served do not block reloads, so fixing one file while another stays broken still takes effect.
"""

from __future__ import annotations

import enum
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kcel.k8s.admission import PolicySet

log = logging.getLogger("kcel.webhook.policies")

SUFFIXES = frozenset({".yaml", ".yml", ".json"})

Loader = Callable[[Sequence[Path], Sequence[Path]], "PolicySet"]
Stamp = tuple[tuple[str, int, int, int], ...]


class Outcome(enum.Enum):
    """What one poll did."""

    UNCHANGED = "unchanged"
    LOADED = "loaded"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Served:
    """The set in service with what is known about it; swapped as one reference so readers never see a mix."""

    policies: PolicySet
    generation: int
    problems: tuple[str, ...]
    files: int
    loaded_at: float  # time.time()


class PolicyStore:
    """Loads `PolicySet`s from policy and resource paths; `served` is what requests use (None before the first load)."""

    def __init__(
        self,
        policies: Sequence[str | os.PathLike[str]],
        resources: Sequence[str | os.PathLike[str]] = (),
        *,
        k8s_version: str | None = None,
        loader: Loader | None = None,
        runtime_config: Sequence[str] = (),
    ) -> None:
        self.policy_paths = [Path(p) for p in policies]
        self.resource_paths = [Path(p) for p in resources]
        self.k8s_version = k8s_version
        self.runtime_config = tuple(runtime_config)  # alpha and beta API versions assumed on
        self._loader = loader or self._load_with_engine
        self._stamp: Stamp | None = None
        self.served: Served | None = None

    def poll(self) -> Outcome:
        """Compile the files again if any changed since the last attempt (successful or not)."""
        policy_files, resource_files = list_files(self.policy_paths), list_files(self.resource_paths)
        stamp = _stamp([*policy_files, *resource_files])
        if stamp == self._stamp:
            return Outcome.UNCHANGED
        self._stamp = stamp
        return self._load(policy_files, resource_files)

    def _load(self, policy_files: list[Path], resource_files: list[Path]) -> Outcome:
        if not policy_files:
            log.warning("no policy files (*.yaml, *.yml, *.json) under %s", ", ".join(map(str, self.policy_paths)))
        started = time.perf_counter()
        try:
            policies = self._loader(policy_files, resource_files)
        except Exception as exc:  # PolicyLoadError, or anything the engine did not foresee: keep serving
            keeping = ", keeping the previous set" if self.served else ""
            log.error("policies not loaded%s: %s", keeping, exc, extra={"fields": {"error": str(exc)}})
            return Outcome.REJECTED
        problems = tuple(policies.problems)
        current = self.served
        new_problems = [p for p in problems if current is None or p not in current.problems]
        for problem in problems:
            log.warning("policy problem: %s", problem, extra={"fields": {"problem": problem}})
        if current is not None and new_problems:
            log.error(
                "policy reload rejected (%d new problem(s)), keeping generation %d",
                len(new_problems),
                current.generation,
                extra={"fields": {"problems": new_problems}},
            )
            return Outcome.REJECTED
        generation = 1 if current is None else current.generation + 1
        self.served = Served(policies, generation, problems, len(policy_files), time.time())
        log.info(
            "policies loaded: generation %d from %d file(s) in %.0f ms",
            generation,
            len(policy_files),
            (time.perf_counter() - started) * 1000,
            extra={"fields": {"generation": generation, "files": len(policy_files), "problems": len(problems)}},
        )
        return Outcome.LOADED

    def _load_with_engine(self, policy_files: Sequence[Path], resource_files: Sequence[Path]) -> PolicySet:
        from kcel.k8s.admission import PolicySet  # imported on first load: keeps `import kcel.webhook` cheap

        return PolicySet.load(policy_files, resources=resource_files, k8s_version=self.k8s_version,
                              runtime_config=self.runtime_config)  # fmt: skip


def list_files(paths: Sequence[Path]) -> list[Path]:
    """Every non-hidden YAML/JSON file under `paths` (files given directly are kept whatever their suffix)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            found.append(path)  # a missing file shows up as a load problem, not as silence
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found.extend(
                Path(root, f) for f in sorted(files) if not f.startswith(".") and Path(f).suffix.lower() in SUFFIXES
            )
    return found


def _stamp(files: Sequence[Path]) -> Stamp:
    entries = []
    for path in files:
        try:
            s = os.stat(path)  # through symlinks: ConfigMap volumes link each file into ..data
            entries.append((str(path), s.st_ino, s.st_size, s.st_mtime_ns))
        except OSError:
            entries.append((str(path), 0, -1, 0))
    return tuple(entries)
