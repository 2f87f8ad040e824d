"""kcel against cel-go's own answers, recorded from the reference engine (cel-go and the API server's CEL
environment of each Kubernetes minor, built from upstream sources outside this repository).

`data/*.jsonl.gz` holds generated expressions (tests/fuzz/strategies.py) with activations, each answered by cel-go
in the plain environment (`env: cel`) and by the Kubernetes base environment of 1.30 to 1.37 (`env: k8s`).
Every aspect is compared: compile error text, output type, estimated cost, value, evaluation error and runtime cost.

Disagreements not fixed yet are listed, one case a line, in `open_differences.txt`, with what differs: the test
fails on a disagreement that is not listed (a regression, or a new case) and on a listed case that now agrees (so
the list only shrinks). `python -m tests.golden.test_celgo_golden --update` rewrites the list.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.golden.celgo import differences

HERE = Path(__file__).parent
OPEN = HERE / "open_differences.txt"


def cases() -> Iterator[dict[str, Any]]:
    for path in sorted((HERE / "data").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line)


def key(case: Mapping[str, Any]) -> str:
    """A case's identity: its environment, expression and activation."""
    what = [case["env"], case.get("version"), case.get("mode"), case["expr"], case.get("vars")]
    return hashlib.sha256(json.dumps(what, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def label(case: Mapping[str, Any]) -> str:
    return "cel" if case["env"] == "cel" else f"k8s-{case['version']}"


def disagreements() -> tuple[dict[str, tuple[str, list[str]]], collections.Counter[str], collections.Counter[str]]:
    """Each disagreeing case by key (its line for the list, and what differs), with cases and disagreements counted
    per environment."""
    found: dict[str, tuple[str, list[str]]] = {}
    total: collections.Counter[str] = collections.Counter()
    differing: collections.Counter[str] = collections.Counter()
    for case in cases():
        total[label(case)] += 1
        problems = list(differences(case))
        if problems:
            differing[label(case)] += 1
            aspects = sorted({p.split(":", 1)[0] for p in problems})
            found[key(case)] = (f"{label(case)}\t{','.join(aspects)}\t{case['expr'][:120]}", problems)
    return found, total, differing


def listed() -> dict[str, str]:
    if not OPEN.exists():
        return {}
    lines = OPEN.read_text(encoding="utf-8").splitlines()
    entries = (line.split("\t", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {k: rest for k, rest in entries}


def test_kcel_answers_as_cel_go_does_or_the_difference_is_listed() -> None:
    if not any((HERE / "data").glob("*.jsonl.gz")):
        pytest.skip("no recorded cel-go answers in tests/golden/data")
    found, total, differing = disagreements()
    known = listed()
    summary = ", ".join(f"{name}: {differing[name]}/{total[name]} differ" for name in sorted(total))
    new = sorted(set(found) - set(known))
    fixed = sorted(set(known) - set(found))
    detail = "\n".join(f"{k} {found[k][0]}\n    " + "\n    ".join(found[k][1]) for k in new[:20])
    assert not new, f"{len(new)} new disagreements with cel-go ({summary}):\n{detail}"
    assert not fixed, f"{len(fixed)} listed disagreements now agree: remove them (--update). {summary}"
    assert sum(total.values()) >= 20_000, summary


def main() -> None:
    if "--update" not in sys.argv:
        raise SystemExit("usage: python -m tests.golden.test_celgo_golden --update")
    found, total, differing = disagreements()
    header = [
        "# kcel's open disagreements with cel-go over tests/golden/data: key, environment, aspects, expression.",
        "# " + ", ".join(f"{name}: {differing[name]}/{total[name]}" for name in sorted(total)),
    ]
    lines = [f"{k}\t{line}" for k, (line, _) in sorted(found.items())]
    OPEN.write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    print(header[1])


if __name__ == "__main__":
    main()
