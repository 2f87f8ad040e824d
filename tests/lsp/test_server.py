"""`kcel lsp` driven by a real client over stdio (pytest-lsp): diagnostics at the exact range, hover, completion and
go to definition on CRD rules, policies and a version set in `.kcel.yaml`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp (the test extra) drives the server")
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CRD = (ROOT / "examples" / "widget-crd.yaml").read_text(encoding="utf-8")
BAD_RULE = CRD.replace('"self.replicas <= self.maxReplicas"', '"self.replicas <= "')


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "kcel.cli", "lsp"]))
async def client(lsp_client: LanguageClient) -> None:  # type: ignore[misc]
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=None))
    yield
    await lsp_client.shutdown_session()


async def opened(client: LanguageClient, path: Path, text: str) -> list[lsp.Diagnostic]:
    """Open a file and wait for its diagnostics."""
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def where(text: str, needle: str, after: int = 0) -> lsp.Position:
    offset = text.index(needle) + after
    return lsp.Position(text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1)


@pytest.mark.asyncio
async def test_a_compile_error_is_shown_where_it_is(client: LanguageClient, tmp_path: Path) -> None:
    (diagnostic,) = await opened(client, tmp_path / "crd.yaml", BAD_RULE)
    assert "Syntax error: mismatched input '<EOF>'" in diagnostic.message
    assert diagnostic.severity == lsp.DiagnosticSeverity.Error
    assert diagnostic.range.start == where(BAD_RULE, '"self.replicas <= "', 18)  # the closing quote: the end


@pytest.mark.asyncio
async def test_a_good_crd_has_no_diagnostics_and_hover_shows_the_cost(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "crd.yaml"
    assert not await opened(client, path, CRD)
    hovered = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), where(CRD, "self.maxReplicas", 6))
    )
    assert hovered is not None and isinstance(hovered.contents, lsp.MarkupContent)
    assert "estimated cost" in hovered.contents.value and "integer" in hovered.contents.value
    assert "`self.maxReplicas`: `int`" in hovered.contents.value  # the subexpression under the cursor, as checked


@pytest.mark.asyncio
async def test_completion_offers_the_fields_of_self(client: LanguageClient, tmp_path: Path) -> None:
    text = CRD.replace('"self.replicas <= self.maxReplicas"', '"self."')
    path = tmp_path / "crd.yaml"
    await opened(client, path, text)
    items = await client.text_document_completion_async(
        lsp.CompletionParams(lsp.TextDocumentIdentifier(path.as_uri()), where(text, '"self."', 6))
    )
    names = {item.label for item in (items.items if isinstance(items, lsp.CompletionList) else items or [])}
    assert {"replicas", "maxReplicas", "mode", "containers"} <= names


@pytest.mark.asyncio
async def test_definition_leads_to_the_schema_property(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "crd.yaml"
    await opened(client, path, CRD)
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(lsp.TextDocumentIdentifier(path.as_uri()), where(CRD, "self.maxReplicas", 7))
    )
    assert isinstance(found, lsp.Location)
    line = CRD.splitlines()[found.range.start.line]
    assert line[found.range.start.character : found.range.end.character] == "maxReplicas"  # the property's key


@pytest.mark.asyncio
async def test_a_policy_expression_error_and_the_version_of_kcel_yaml(client: LanguageClient, tmp_path: Path) -> None:
    policy = (ROOT / "examples" / "admission" / "policies" / "replica-limit.yaml").read_text(encoding="utf-8")
    broken = policy.replace("object.spec.replicas <=", "object.spec.replicas <<=", 1)
    (diagnostic, *_) = await opened(client, tmp_path / "policy.yaml", broken)
    assert "compilation failed" in diagnostic.message
    line = broken.splitlines()[diagnostic.range.start.line]
    assert "<<=" in line
    uses_first = CRD.replace('"self.replicas <= self.maxReplicas"', '"[1, 2].first() == optional.of(1)"')
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / ".kcel.yaml").write_text('k8sVersion: "1.32"\n', encoding="utf-8")
    (old,) = await opened(client, folder / "crd.yaml", uses_first)  # first() came with Kubernetes 1.33
    assert "undeclared reference to 'first'" in old.message
    assert not await opened(client, tmp_path / "new.yaml", uses_first)
    ranged = tmp_path / "ranged"
    ranged.mkdir()
    (ranged / ".kcel.yaml").write_text("k8sVersion: 1.32-1.34\n", encoding="utf-8")  # a range: checked at each
    assert not await opened(client, ranged / "crd.yaml", uses_first)  # the newest of the range, 1.34, at once
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # then every version's
    (at_one,) = client.diagnostics[(ranged / "crd.yaml").as_uri()]
    assert at_one.message.startswith("Kubernetes 1.32: ") and "undeclared reference to 'first'" in at_one.message


def test_the_command_says_what_to_install_without_pygls(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from kcel.cli import main

    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    monkeypatch.delitem(sys.modules, "kcel.lsp.server", raising=False)
    assert main(["lsp"]) == 2
    assert "pip install 'kcel[lsp]'" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_a_code_action_sets_the_bound_that_brings_a_rule_under_its_limit(client: LanguageClient,
                                                                               tmp_path: Path) -> None:  # fmt: skip
    text = (ROOT / "examples" / "expensive-crd.yaml").read_text(encoding="utf-8")
    path = tmp_path / "crd.yaml"
    diagnostics = await opened(client, path, text)
    rule = next(d for d in diagnostics if "exceeds budget" in d.message)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(path.as_uri()), rule.range, lsp.CodeActionContext([rule])))  # fmt: skip
    (action,) = [a for a in actions or [] if isinstance(a, lsp.CodeAction) and "maxItems" in a.title]
    assert action.edit is not None and action.edit.changes is not None
    (edit,) = action.edit.changes[path.as_uri()]
    lines = text.splitlines(keepends=True)
    at = sum(len(line) for line in lines[: edit.range.start.line]) + edit.range.start.character
    fixed = text[:at] + edit.new_text + text[at:]
    changed = [lsp.TextDocumentContentChangeWholeDocument(fixed)]
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(lsp.VersionedTextDocumentIdentifier(version=2, uri=path.as_uri()), changed)
    )
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert not any("exceeds budget" in d.message for d in client.diagnostics[path.as_uri()])


GO_TYPES = """package v1

// +kubebuilder:validation:XValidation:rule="self.replicas <= self.maxReplicas",message="replicas must not exceed"
// +kubebuilder:validation:XValidation:rule="self.mode == \\"Fast\\" || self.size() <",message="broken"
type WidgetSpec struct {
	Replicas int32 `json:"replicas"`
}
"""


@pytest.mark.asyncio
async def test_go_markers_are_checked_in_the_crd_made_from_them(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/widget\n", encoding="utf-8")
    (tmp_path / "config" / "crd").mkdir(parents=True)
    expensive = (ROOT / "examples" / "expensive-crd.yaml").read_text(encoding="utf-8")
    (tmp_path / "config" / "crd" / "routes.yaml").write_text(expensive, encoding="utf-8")
    rule = next(line for line in expensive.splitlines() if "- rule:" in line).split("rule: ", 1)[1]
    expensive_marker = f"// +kubebuilder:validation:XValidation:rule={rule}\n"
    (tmp_path / "api").mkdir()
    text = GO_TYPES + expensive_marker + "type RouteSpec struct{}\n"  # a marker is read on the type it precedes
    diagnostics = await opened(client, tmp_path / "api" / "types.go", text)
    messages = sorted(d.message for d in diagnostics)
    assert any("Syntax error" in m for m in messages)  # compiled alone (no CRD holds it): self is dyn
    assert any("exceeds budget" in m for m in messages)  # found in the project's CRD: its cost counts
    syntax = next(d for d in diagnostics if "Syntax error" in d.message)
    line = text.splitlines()[syntax.range.start.line]
    assert line[syntax.range.start.character] == '"'  # the end of the rule: its closing quote
    assert line[: syntax.range.start.character].endswith("self.size() <")


@pytest.mark.asyncio
async def test_a_suite_problem_is_shown_on_its_line(client: LanguageClient, tmp_path: Path) -> None:
    for name in ("widget-crd.yaml", "widget.yaml"):
        (tmp_path / name).write_text((ROOT / "examples" / name).read_text(encoding="utf-8"), encoding="utf-8")
    suite = (
        (ROOT / "examples" / "widget.kcel-test.yaml")
        .read_text(encoding="utf-8")
        .replace("expect: valid", "expect: vaild", 1)
    )
    (diagnostic,) = await opened(client, tmp_path / "widget.kcel-test.yaml", suite)
    assert "did you mean valid?" in diagnostic.message
    assert "expect: vaild" in suite.splitlines()[diagnostic.range.start.line]


@pytest.mark.asyncio
async def test_positions_inside_block_and_escaped_scalars(client: LanguageClient, tmp_path: Path) -> None:
    block = CRD.replace(
        '- rule: "self.replicas <= self.maxReplicas"',
        "- rule: >-\n                    self.replicas <=\n                    self.maxReplicas &&",
    )
    (diagnostic,) = await opened(client, tmp_path / "crd.yaml", block)
    assert diagnostic.range.start.line == block.splitlines().index("                    self.maxReplicas &&")
    escaped = CRD.replace('"self.replicas <= self.maxReplicas"', '"self.replicas\\t<= \\u0073elf.maxReplicas &&"')
    (diagnostic,) = await opened(client, tmp_path / "escaped.yaml", escaped)
    line = escaped.splitlines()[diagnostic.range.start.line]
    assert line[diagnostic.range.start.character] == '"' and line[: diagnostic.range.start.character].endswith("&&")


@pytest.mark.asyncio
async def test_functions_complete_sign_and_hover_with_their_versions(client: LanguageClient, tmp_path: Path) -> None:
    text = CRD.replace('"self.replicas <= self.maxReplicas"', "\"self.mode.startsWith('F') && isSemver(self.mode)\"")
    path = tmp_path / "crd.yaml"
    assert not await opened(client, path, text)
    document = lsp.TextDocumentIdentifier(path.as_uri())
    signed = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(document, where(text, "startsWith('F')", len("startsWith(")))
    )
    assert signed is not None and signed.signatures[0].label == "string.startsWith(string) -> bool"
    hovered = await client.text_document_hover_async(lsp.HoverParams(document, where(text, "isSemver", 2)))
    assert hovered is not None and isinstance(hovered.contents, lsp.MarkupContent)
    assert "isSemver(string) -> bool" in hovered.contents.value
    assert "Kubernetes 1.34 and later" in hovered.contents.value  # 1.33 brought semver; new rules from 1.34
    completed = await client.text_document_completion_async(lsp.CompletionParams(document, where(text, "isSemver", 0)))
    names = {i.label for i in (completed.items if isinstance(completed, lsp.CompletionList) else completed or [])}
    assert {"isSemver", "startsWith", "quantity", "exists", "has"} <= names


@pytest.mark.asyncio
async def test_a_mutating_policy_error_inside_a_folded_block(client: LanguageClient, tmp_path: Path) -> None:
    policy = (ROOT / "examples" / "admission" / "mutating" / "docs-json-patch.yaml").read_text(encoding="utf-8")
    policy = policy.replace("admissionregistration.k8s.io/v1beta1", "admissionregistration.k8s.io/v1")  # served
    broken = policy.replace('op: "add",', 'op: "add" path,', 1)  # a missing comma, inside a `>` block
    (diagnostic, *_) = await opened(client, tmp_path / "policy.yaml", broken)
    assert "compilation failed" in diagnostic.message and "Syntax error" in diagnostic.message
    line = broken.splitlines()[diagnostic.range.start.line]
    assert line[diagnostic.range.start.character :].startswith("path")  # the token the parser did not expect


@pytest.mark.asyncio
async def test_policy_variables_complete_from_their_declared_types(client: LanguageClient, tmp_path: Path) -> None:
    policy = (ROOT / "examples" / "admission" / "policies" / "replica-limit.yaml").read_text(encoding="utf-8")
    text = policy.replace(
        "object.spec.replicas <=", "request.userInfo. == '' && variables. == 1 && object.spec.replicas <=", 1
    )
    path = tmp_path / "policy.yaml"
    await opened(client, path, text)
    document = lsp.TextDocumentIdentifier(path.as_uri())

    async def labels(needle: str) -> set[str]:
        found = await client.text_document_completion_async(
            lsp.CompletionParams(document, where(text, needle, len(needle)))
        )
        return {i.label for i in (found.items if isinstance(found, lsp.CompletionList) else found or [])}

    assert {"username", "groups", "uid"} <= await labels("request.userInfo.")
    assert {"operation", "userInfo", "namespace"} <= await labels("request.")


@pytest.mark.asyncio
async def test_object_completes_from_the_built_in_kind_the_policy_matches(client: LanguageClient,
                                                                          tmp_path: Path) -> None:  # fmt: skip
    pytest.importorskip("kubernetes_validate", reason="built-in kinds' schemas come with pip install 'kcel[schemas]'")
    policy = (ROOT / "examples" / "admission" / "policies" / "replica-limit.yaml").read_text(encoding="utf-8")
    text = policy.replace("object.spec.replicas <=", "object.spec.template.spec. == 1 && object.spec.replicas <=", 1)
    path = tmp_path / "policy.yaml"
    await opened(client, path, text)
    needle = "object.spec.template.spec."
    found = await client.text_document_completion_async(
        lsp.CompletionParams(lsp.TextDocumentIdentifier(path.as_uri()), where(text, needle, len(needle)))
    )
    labels = {i.label for i in (found.items if isinstance(found, lsp.CompletionList) else found or [])}
    assert {"containers", "initContainers", "serviceAccountName"} <= labels  # a Deployment's pod spec


PARAMS_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: replicalimits.rules.example.com}
spec:
  group: rules.example.com
  scope: Namespaced
  names: {kind: ReplicaLimit, plural: replicalimits, singular: replicalimit, listKind: ReplicaLimitList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          maxReplicas: {type: integer}
          team: {type: object, properties: {name: {type: string}}}
"""


@pytest.mark.asyncio
async def test_params_complete_from_the_crd_of_the_param_kind(client: LanguageClient, tmp_path: Path) -> None:
    policy = (ROOT / "examples" / "admission" / "policies" / "replica-limit.yaml").read_text(encoding="utf-8")
    text = policy.replace("object.spec.replicas <=", "params.team. == '' && object.spec.replicas <=", 1)
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "replicalimits.yaml").write_text(PARAMS_CRD, encoding="utf-8")
    path = tmp_path / "policy.yaml"
    await opened(client, path, text)
    document = lsp.TextDocumentIdentifier(path.as_uri())
    for needle, expected in (("params.", {"maxReplicas", "team"}), ("params.team.", {"name"})):
        found = await client.text_document_completion_async(
            lsp.CompletionParams(document, where(text, needle, len(needle)))
        )
        assert expected <= {i.label for i in (found.items if isinstance(found, lsp.CompletionList) else found or [])}


def billion_laughs(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


DEEP = "[" * 400 + "x" + "]" * 400
HOSTILE = {
    "cycle": ("a: &a [*a]\n", "invalid YAML: anchor value contains itself"),
    "mapping-cycle": ("kind: Pod\nspec: &s {containers: [*s]}\n", "invalid YAML: anchor value contains itself"),
    "billion-laughs": (billion_laughs(), "invalid YAML: document contains excessive aliasing"),
    "deep-through-aliases": (f"a: &a {DEEP}\nb: &b {DEEP.replace('x', '*a')}\nc: {DEEP.replace('x', '*b')}\n",
                             "invalid YAML: c[0][0]"),
}  # fmt: skip


@pytest.mark.asyncio
@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_yaml_gets_a_diagnostic_and_the_server_goes_on(
    name: str, client: LanguageClient, tmp_path: Path
) -> None:
    """What the API server refuses while decoding (an alias cycle, a billion laughs, aliases nesting a value past
    kcel's limit) is a diagnostic on the document, as for any YAML error: nothing expands the aliases (a RecursionError
    came back in the error reply), and hover and the next document are answered."""
    text, message = HOSTILE[name]
    path = tmp_path / f"{name}.yaml"
    (diagnostic,) = await asyncio.wait_for(opened(client, path, text), timeout=60)  # none came before
    assert diagnostic.message.startswith(message) and diagnostic.severity == lsp.DiagnosticSeverity.Error
    hovered = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(0, 1))
    )
    assert hovered is None
    assert not await opened(client, tmp_path / "crd.yaml", CRD)


@pytest.mark.asyncio
async def test_hostile_crds_in_the_folder_are_left_out_of_completion(client: LanguageClient, tmp_path: Path) -> None:
    """Param completion reads the CRDs under the folder: one nested 3,000 levels deep and an alias bomb are skipped
    (they were read by PyYAML's recursive loader), the good one still completes."""
    policy = (ROOT / "examples" / "admission" / "policies" / "replica-limit.yaml").read_text(encoding="utf-8")
    text = policy.replace("object.spec.replicas <=", "params.team. == '' && object.spec.replicas <=", 1)
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "a-deep.yaml").write_text(
        "kind: CustomResourceDefinition\nspec: " + '{"a": ' * 3_000 + "1" + "}" * 3_000 + "\n", encoding="utf-8"
    )
    (tmp_path / "crds" / "b-bomb.yaml").write_text("kind: CustomResourceDefinition\n" + billion_laughs(),
                                                   encoding="utf-8")  # fmt: skip
    (tmp_path / "crds" / "replicalimits.yaml").write_text(PARAMS_CRD, encoding="utf-8")
    path = tmp_path / "policy.yaml"
    await asyncio.wait_for(opened(client, path, text), timeout=60)
    found = await asyncio.wait_for(client.text_document_completion_async(
        lsp.CompletionParams(lsp.TextDocumentIdentifier(path.as_uri()), where(text, "params.team.", 12))
    ), timeout=60)  # fmt: skip
    assert {"name"} <= {i.label for i in (found.items if isinstance(found, lsp.CompletionList) else found or [])}


@pytest.mark.asyncio
async def test_a_lint_is_published_as_information_or_warning(client: LanguageClient, tmp_path: Path) -> None:
    """`self.namespace` concerns 1.30-1.31 only (Information); a curled quote every version (a Warning)."""
    text = CRD.replace("self.replicas <= self.maxReplicas", "self.namespace != '\u2019'", 1)
    text = text.replace(
        "replicas: {type: integer}", "replicas: {type: integer}\n                namespace: {type: string}"
    )
    diagnostics = await opened(client, tmp_path / "crd.yaml", text)
    lints = sorted((d.severity, d.message.rpartition("(lint ")[2]) for d in diagnostics if "(lint " in d.message)
    assert lints == [(lsp.DiagnosticSeverity.Warning, "curly-quote, every Kubernetes version)"),
                     (lsp.DiagnosticSeverity.Information, "reserved-field-name, Kubernetes 1.30-1.31)")]  # fmt: skip
    curly = next(d for d in diagnostics if "curly-quote" in d.message)
    assert curly.range.start == where(text, "\u2019")


@pytest.mark.asyncio
async def test_kcel_yaml_switches_a_beta_api_on_and_a_bad_one_is_said(client: LanguageClient, tmp_path: Path) -> None:
    """A v1beta1 MutatingAdmissionPolicy is refused at 1.34 unless `.kcel.yaml` names it in `runtimeConfig`; a
    `.kcel.yaml` with a key kcel does not read is shown on the file, not silently taken as absent."""
    policy = (ROOT / "examples" / "admission" / "mutating" / "docs-json-patch.yaml").read_text(encoding="utf-8")
    refused = tmp_path / "refused"
    refused.mkdir()
    (refused / ".kcel.yaml").write_text('k8sVersion: "1.34"\n', encoding="utf-8")
    (diagnostic,) = await opened(client, refused / "policy.yaml", policy)
    assert "only when switched on" in diagnostic.message
    switched = tmp_path / "switched"
    switched.mkdir()
    (switched / ".kcel.yaml").write_text(
        'k8sVersion: "1.34"\nruntimeConfig: [admissionregistration.k8s.io/v1beta1]\n', encoding="utf-8"
    )
    assert not await opened(client, switched / "policy.yaml", policy)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".kcel.yaml").write_text('k8sversion: "1.34"\n', encoding="utf-8")
    found = await opened(client, broken / "crd.yaml", CRD)
    (said,) = [d for d in found if ".kcel.yaml" in d.message]
    assert "unknown setting 'k8sversion'" in said.message and "k8sVersion" in said.message
    assert said.severity == lsp.DiagnosticSeverity.Warning and said.range.start.line == 0
