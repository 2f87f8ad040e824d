"""`kcel lsp` on a Go API package as it is typed (pytest-lsp over stdio): a marker's rule checked in the CRD derived
from the editor's text, with no CRD YAML anywhere (tests/gotypes/widget.py); hover and completion inside the marker."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp (the test extra) drives the server")
pytest.importorskip("tree_sitter_go", reason="the kcel[go] extra (tree-sitter-go) is not installed")
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from tests.gotypes.widget import RULE, write_widget  # noqa: E402


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "kcel.cli", "lsp"]))
async def client(lsp_client: LanguageClient) -> None:  # type: ignore[misc]
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=None))
    yield
    await lsp_client.shutdown_session()


def where(text: str, needle: str, after: int = 0) -> lsp.Position:
    offset = text.index(needle) + after
    return lsp.Position(text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1)


async def opened(client: LanguageClient, path: Path) -> tuple[str, list[lsp.Diagnostic]]:
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(path.as_uri(), "go", 1, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return text, client.diagnostics[path.as_uri()]


async def changed(client: LanguageClient, path: Path, text: str, version: int = 2) -> list[lsp.Diagnostic]:
    """The whole text replaced, unsaved (the file on disk keeps the old one)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, path.as_uri()),
        [lsp.TextDocumentContentChangeWholeDocument(text)]))  # fmt: skip
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[path.as_uri()]


@pytest.mark.asyncio
async def test_a_field_typo_in_a_marker_is_found_as_it_is_typed(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, diagnostics = await opened(client, path)
    assert not diagnostics
    edited = text.replace("self.replicas <=", "self.replicaz <=")
    (diagnostic,) = await changed(client, path, edited)
    assert "undefined field 'replicaz'" in diagnostic.message
    assert diagnostic.range.start == where(edited, "self.replicaz", 4)  # the `.` cel-go's error points at
    assert not list(tmp_path.rglob("*.yaml"))  # nothing was generated
    assert not await changed(client, path, text, 3)  # fixed again


@pytest.mark.asyncio
async def test_a_schema_bound_counts_in_the_cost_as_typed(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, _ = await opened(client, path)
    quadratic = "self.items.all(x, self.items.all(y, x == y))"
    field = '\tMaxReplicas int32 `json:"maxReplicas"`'
    edited = text.replace(RULE, quadratic).replace(field, field + '\n\tItems []string `json:"items"`')
    diagnostics = await changed(client, path, edited)
    assert any("exceeds budget" in d.message or "estimated rule cost" in d.message for d in diagnostics)
    bounds = "\t// +kubebuilder:validation:MaxItems=10\n\t// +kubebuilder:validation:items:MaxLength=10\n"
    bounded = edited.replace("\tItems []string", bounds + "\tItems []string")
    assert not [d for d in await changed(client, path, bounded, 3) if d.severity == lsp.DiagnosticSeverity.Error]


@pytest.mark.asyncio
async def test_a_marker_grammar_error_is_shown_on_its_marker(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, _ = await opened(client, path)
    edited = text.replace(",message=", ",messag=")
    (diagnostic,) = await changed(client, path, edited)
    assert 'unknown argument "messag"' in diagnostic.message
    assert diagnostic.range.start.line == where(edited, "messag=").line


@pytest.mark.asyncio
async def test_hover_on_a_marker_shows_self_the_cost_and_the_versions(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, _ = await opened(client, path)
    hovered = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), where(text, "self.maxReplicas", 6)))  # fmt: skip
    assert hovered is not None and isinstance(hovered.contents, lsp.MarkupContent)
    shown = hovered.contents.value
    assert "`self.maxReplicas`: `int`" in shown
    assert "`self`: `spec`, `object`: WidgetSpec is what a widget should be." in shown
    assert "of the API server's 10,000,000 per rule (StaticEstimatedCostLimit)" in shown
    assert "accepted by Kubernetes 1.30-1.37" in shown


@pytest.mark.asyncio
async def test_hover_names_the_versions_a_rule_needs(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, _ = await opened(client, path)
    edited = text.replace(RULE, "ip('10.0.0.1').family() == 4 && self.replicas > 0")  # the IP library: 1.31 on
    await changed(client, path, edited)
    hovered = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), where(edited, "self.replicas", 2)))  # fmt: skip
    assert hovered is not None and isinstance(hovered.contents, lsp.MarkupContent)
    assert "accepted by Kubernetes 1.31-1.37" in hovered.contents.value


@pytest.mark.asyncio
async def test_completion_in_a_marker_offers_the_go_structs_fields(client: LanguageClient, tmp_path: Path) -> None:
    path = write_widget(tmp_path)
    text, _ = await opened(client, path)
    edited = text.replace(RULE, "self.")
    await changed(client, path, edited)
    items = await client.text_document_completion_async(
        lsp.CompletionParams(lsp.TextDocumentIdentifier(path.as_uri()), where(edited, 'rule="self.', 11)))  # fmt: skip
    names = {item.label for item in (items.items if isinstance(items, lsp.CompletionList) else items or [])}
    assert names == {"replicas", "maxReplicas"}
