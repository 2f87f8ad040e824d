"""A suite with many failing cases costs time in proportion to its cases: its YAML is parsed a fixed number of times,
however many failing cases the reports place at their lines (once a case, 400 failing cases took two minutes)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kcel.k8s.manifests import decoding, yamltext

from .helpers import run, widget_folder


def failing_suite(folder: Path, count: int, expect: str = "    expect: valid\n") -> Path:
    """`count` cases whose answer is an error, each expecting `valid` (or nothing: `expect=""`)."""
    cases = "".join(f"  - name: case {i}\n    patch: {{spec: {{replicas: {5 + i}}}}}\n{expect}" for i in range(count))
    path = folder / f"s{count}.kcel-test.yaml"
    path.write_text(f"crds: widget-crd.yaml\nbase: widget.yaml\ncases:\n{cases}", encoding="utf-8")
    return path


def count_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every YAML parse: the loader's (one per document decoded) and the node trees composed to find lines."""
    parses: Counter[str] = Counter()

    def counted(name: str, parse: Callable[..., Any]) -> Callable[..., Any]:
        def parsing(*args: Any, **kwargs: Any) -> Any:
            parses[name] += 1
            return parse(*args, **kwargs)

        return parsing

    monkeypatch.setattr(yamltext, "compose", counted("compose", yamltext.compose))
    monkeypatch.setattr(decoding, "_decode_yaml", counted("decode", decoding._decode_yaml))
    return parses


@pytest.mark.parametrize(
    "args",
    [(), ("-o", "github"), ("-o", "sarif"), ("-o", "json"), ("-o", "junit"), ("--junit-xml", "{junit}")],
    ids=["text", "github", "sarif", "json", "junit", "junit-xml"],
)
def test_parses_do_not_grow_with_the_failing_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    folder = widget_folder(tmp_path)
    parses = count_parses(monkeypatch)
    counts = []
    for count in (3, 30):
        suite = failing_suite(folder, count)
        parses.clear()
        given = [arg.format(junit=tmp_path / "junit.xml") for arg in args]
        status, out, err = run(capsys, *given, str(suite))
        assert status == 1, (out, err)
        if not args:  # each failure at its case's line
            assert out.count(f"  at {suite}:") == count and f"  at {suite}:{3 + 3 * count - 2}" in out
        counts.append(dict(parses))
    if args != ("-o", "json"):  # the lines were looked up (JSON names none), so the counter sees the parses
        assert counts[0]["compose"] >= 1
    assert counts[0] == counts[1]


def test_problems_at_many_lines_parse_the_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cases without an expectation: a problem at each one's line."""
    folder = widget_folder(tmp_path)
    parses = count_parses(monkeypatch)
    counts = []
    for count in (3, 30):
        suite = failing_suite(folder, count, expect="")
        parses.clear()
        status, _, err = run(capsys, str(suite))
        assert status == 2 and err.count(": no expectation") == count, err
        assert f"{suite}:{3 + 2 * count - 1}: document 0: cases[{count - 1}]: no expectation" in err
        counts.append(dict(parses))
    assert counts[0] == counts[1]


def test_update_parses_do_not_grow_with_the_cases_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = widget_folder(tmp_path)
    parses = count_parses(monkeypatch)
    counts = []
    for count in (3, 30):
        suite = failing_suite(folder, count)
        parses.clear()
        status, out, _ = run(capsys, "--update", str(suite))
        assert status == 0 and out.endswith(f"0 passed, 0 failed, {count} recorded\n")
        assert suite.read_text(encoding="utf-8").count("expect: valid") == 0
        counts.append(dict(parses))
    assert counts[0] == counts[1]
