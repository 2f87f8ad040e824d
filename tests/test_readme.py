"""The README's documented API: every import its Python examples show, and every module path it names, exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
IMPORTS = [m.groups() for block in PYTHON_BLOCKS for m in re.finditer(r"^from ([\w.]+) import ([\w, ]+)$", block, re.M)]
NAMED = sorted(set(re.findall(r"`(kcel(?:\.\w+)+)", README)))


def test_the_readme_has_python_examples() -> None:
    assert IMPORTS and NAMED


@pytest.mark.parametrize(("module", "names"), IMPORTS)
def test_documented_imports_work(module: str, names: str) -> None:
    loaded = importlib.import_module(module)
    assert [n.strip() for n in names.split(",") if not hasattr(loaded, n.strip())] == []


@pytest.mark.parametrize("dotted", NAMED)
def test_named_modules_and_attributes_exist(dotted: str) -> None:
    """`kcel.k8s.admission.PolicySet`, `kcel.k8s.rules.validation.Validator`: the longest importable prefix, then
    attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return
    pytest.fail(f"{dotted} names no module")
