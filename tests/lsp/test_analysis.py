"""kcel.lsp.analysis without a client: every surface's expressions are found, and an error lands on its token."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcel.lsp.analysis import analyze

SURFACES = Path(__file__).resolve().parents[2] / "examples" / "surfaces"


@pytest.mark.parametrize(("name", "expressions"), [
    ("authentication-configuration.yaml", 5), ("authorization-configuration.yaml", 2), ("device-class.yaml", 2),
    ("webhook-configuration.yaml", 2), ("mutating-webhook-configuration.yaml", 1),
])  # fmt: skip
def test_every_surface_example_is_clean(name: str, expressions: int) -> None:
    analysis = analyze((SURFACES / name).read_text(encoding="utf-8"), "1.37")
    assert len(analysis.expressions) == expressions and analysis.diagnostics == []


@pytest.mark.parametrize(("name", "old", "new", "token"), [
    ("authentication-configuration.yaml", '"claims.email"', '"claims.email +"', '"'),
    ("webhook-configuration.yaml", "object.metadata", "object.metadata.", None),
])  # fmt: skip
def test_a_broken_surface_expression_is_reported_on_its_line(name: str, old: str, new: str, token: str | None) -> None:
    text = (SURFACES / name).read_text(encoding="utf-8").replace(old, new, 1)
    (diagnostic, *_) = analyze(text, "1.37").diagnostics
    line = text[: diagnostic.start].count("\n")
    assert new.strip('"') in text.splitlines()[line] or new in text.splitlines()[line]
    if token is not None:
        assert text[diagnostic.start] == token


def test_hover_shows_schema_types_by_their_place_not_their_internal_names() -> None:
    pytest.importorskip("pygls", reason="the language server (the kcel[lsp] extra) is not installed")
    from kcel.lsp.server import shown_type

    assert shown_type("list(selfType36742888.@idx)") == "list(object (self[*]))"
    assert shown_type("map(string, selfType5.spec.containers.@idx)") == "map(string, object (self.spec.containers[*]))"
    assert shown_type("selfType1") == "object (self)" and shown_type("list(int)") == "list(int)"
