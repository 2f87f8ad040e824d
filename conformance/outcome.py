"""Outcomes of conformance cases and the checked-in list of skips with their reasons."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Outcome:
    id: str
    status: str  # "passed", "failed" or "skipped"
    reason: str = ""


@dataclass(frozen=True)
class Case:
    """One Kubernetes test-table case: its id, the file it came from and its JSON."""

    id: str
    file: str
    data: Mapping[str, Any]


class Unsupported(Exception):
    """Raised by a runner for a case it cannot run; the case is counted as skipped with this reason."""


@dataclass(frozen=True)
class SkipList:
    """Skips read from a text file: `<test id or glob>: <reason>`, or `requires <feature>: <reason>`.

    Every skip has a reason, and every skipped case is printed and counted by the runner.
    """

    by_pattern: tuple[tuple[str, str], ...]
    by_feature: dict[str, str]

    @classmethod
    def read(cls, path: Path) -> SkipList:
        patterns: list[tuple[str, str]] = []
        features: dict[str, str] = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, reason = line.partition(": ")
            if not sep or not reason.strip():
                raise ValueError(f"{path}:{number}: expected '<pattern>: <reason>'")
            if key.startswith("requires "):
                features[key.removeprefix("requires ").strip()] = reason.strip()
            else:
                patterns.append((key.strip(), reason.strip()))
        return cls(tuple(patterns), features)

    def reason(self, case_id: str, requires: Iterable[str] = ()) -> str | None:
        for feature in requires:
            if feature in self.by_feature:
                return self.by_feature[feature]
        for pattern, reason in self.by_pattern:
            if fnmatch.fnmatchcase(case_id, pattern):
                return reason
        return None
