"""`kcel lsp`: the API server's answers in the editor, over the Language Server Protocol (pygls, the `kcel[lsp]`
extra). Each YAML file opened or changed is analysed (kcel.lsp.analysis) and the diagnostics published; hover
shows a rule's estimated cost and the schema node under the cursor, completion the fields of `self`, and go to
definition leads from `self.spec.x` to the schema property.

The Kubernetes version is the one a `.kcel.yaml` (`k8sVersion: "1.34"`, or a range: each) in the file's folder or
above names, else the client's `initializationOptions` (`{"k8sVersion": "1.34"}`), else the newest.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import yaml
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from kcel.k8s.manifests.files import is_suite
from kcel.k8s.schemas.escaping import escape, unescape
from kcel.lsp.analysis import (
    Analysis,
    Diagnostic,
    Expression,
    accepting_versions,
    analyze,
    merged_diagnostics,
    schema_at,
)

TYPING_PAUSE = 0.05  # seconds; deriving a large Go package again takes some hundred milliseconds
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# `request.userInfo.` (a declared variable's fields) and `self.spec.` or `oldSelf.` (a CRD rule's schema).
_VARIABLE_CHAIN = re.compile(rf"\b((?!(?:self|oldSelf)\b){_NAME})((?:\.{_NAME})*)\.[A-Za-z_]*\Z")
_SELF_CHAIN = re.compile(r"\b(?:self|oldSelf)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.?([A-Za-z_][A-Za-z0-9_]*)?\Z")


class KcelServer(LanguageServer):
    """The server, with the last analysis of each open document."""

    def __init__(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("kcel")
        except PackageNotFoundError:  # run from a checkout
            release = "0"
        super().__init__("kcel", release)
        self.analyses: dict[str, tuple[str, Analysis]] = {}
        self.default_version: str | None = None

    def analysis(self, uri: str) -> tuple[str, Analysis]:
        text = self.workspace.get_text_document(uri).source
        kept = self.analyses.get(uri)
        if kept is None or kept[0] != text:
            path = file_path(uri)
            if path is not None and is_suite(path):
                kept = (text, Analysis(diagnostics=suite_diagnostics(text, path)))
            else:  # the newest version of the project's range answers hover and completion (the others: publish)
                kept = (text, self._analyze(uri, text, path, version_for(uri, self.default_version)))
            self.analyses[uri] = kept
        return kept

    def range_diagnostics(
        self, uri: str, text: str, newest: Analysis, versions: Sequence[str | None]
    ) -> list[Diagnostic] | None:
        """The diagnostics of every version of the range, merged (`Kubernetes 1.30-1.32: ...` where only some
        report one); None if the document changed before the work started."""
        if self.workspace.get_text_document(uri).source != text:
            return None
        path = file_path(uri)
        found = {version: self._analyze(uri, text, path, version).diagnostics for version in versions[:-1]}
        return merged_diagnostics({**found, versions[-1]: newest.diagnostics})

    @staticmethod
    def _analyze(uri: str, text: str, path: Path | None, version: str | None) -> Analysis:
        settings, problem = settings_for(uri)
        if uri.endswith(".go"):  # kubebuilder markers: checked in the CRDs derived from the package as edited
            from kcel.lsp.gomarkers import go_analysis

            found = go_analysis(text, path, version)
        else:
            found = analyze(text, version, settings.runtime_config)
        if problem:  # a .kcel.yaml kcel cannot read is said, not silently taken as absent
            end = text.find("\n")
            found.diagnostics.insert(0, Diagnostic(0, end if end > 0 else len(text), problem, "warning"))
        return found


def suite_diagnostics(text: str, path: Path) -> list[Diagnostic]:
    """A `kcel test` suite's problems (unknown fields with a near name, missing files...), each on its line."""
    from kcel.suites.loading import load_text

    found = []
    for problem in load_text(text, path)[1]:
        match = re.match(rf"{re.escape(str(path))}:(\d+)(?::\d+)?: (.*)", problem, re.S)
        line = int(match[1]) - 1 if match else 0
        start = sum(len(t) + 1 for t in text.split("\n")[:line])
        end = text.find("\n", start)
        found.append(Diagnostic(start, end if end >= 0 else len(text), match[2] if match else problem))
    return found


def file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def settings_for(uri: str) -> tuple[Any, str]:
    """The nearest `.kcel.yaml` above the file (kcel.settings.Settings), and what is wrong with it ("" if nothing):
    one that cannot be read counts as absent."""
    from kcel.settings import Settings, find_settings

    path = file_path(uri)
    try:
        return (find_settings(path) if path is not None else Settings()), ""
    except ValueError as err:
        return Settings(), f"{err} (the file is ignored until it is fixed)"


def versions_for(uri: str, default: str | None) -> tuple[str | None, ...]:
    """The `k8sVersion` of the nearest `.kcel.yaml` above the file (a range: each of its versions), else
    `default`."""
    return settings_for(uri)[0].k8s_versions or (default,)


def version_for(uri: str, default: str | None) -> str | None:
    """The version hover, completion and code actions answer as: the newest of the project's."""
    return versions_for(uri, default)[-1]


server = KcelServer()


# -- positions ---------------------------------------------------------------------------------------------------


def position(text: str, offset: int) -> lsp.Position:
    """An offset as LSP's line and character (UTF-16 code units, as clients count them by default)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return lsp.Position(line, len(text[start:offset].encode("utf-16-le")) // 2)


def offset(text: str, at: lsp.Position) -> int:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: at.line])
    line = lines[at.line] if at.line < len(lines) else ""
    units = line.encode("utf-16-le")[: at.character * 2].decode("utf-16-le", errors="ignore")
    return start + len(units)


def span(text: str, start: int, end: int) -> lsp.Range:
    return lsp.Range(position(text, start), position(text, end))


# -- diagnostics -------------------------------------------------------------------------------------------------


@server.feature(lsp.INITIALIZE)
def initialize(ls: KcelServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options
    if isinstance(options, Mapping) and options.get("k8sVersion"):
        ls.default_version = str(options["k8sVersion"])


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: KcelServer, params: lsp.DidOpenTextDocumentParams) -> None:
    await publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: KcelServer, params: lsp.DidChangeTextDocumentParams) -> None:
    """Analysed once typing pauses: a change that a later one replaced within TYPING_PAUSE is not analysed."""
    await asyncio.sleep(TYPING_PAUSE)
    if ls.workspace.get_text_document(params.text_document.uri).version == params.text_document.version:
        await publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: KcelServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.analyses.pop(params.text_document.uri, None)  # a .kcel.yaml beside it may have changed
    await publish(ls, params.text_document.uri)


async def publish(ls: KcelServer, uri: str) -> None:
    """The newest version's diagnostics at once; with a `.kcel.yaml` range, every version's when they are ready
    (checked on a thread, so hover and completion answer meanwhile), unless the document changed since."""
    text, analysis = ls.analysis(uri)
    _send(ls, uri, text, analysis.diagnostics)
    versions = versions_for(uri, ls.default_version)
    path = file_path(uri)
    if len(versions) < 2 or (path is not None and is_suite(path)):
        return
    merged = await asyncio.get_running_loop().run_in_executor(None, ls.range_diagnostics, uri, text, analysis,
                                                              versions)  # fmt: skip
    if merged is not None and ls.workspace.get_text_document(uri).source == text:
        analysis.diagnostics = merged
        _send(ls, uri, text, merged)


def _send(ls: KcelServer, uri: str, text: str, found: Sequence[Diagnostic]) -> None:
    severities = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
                  "information": lsp.DiagnosticSeverity.Information}  # fmt: skip
    diagnostics = [
        lsp.Diagnostic(span(text, d.start, d.end), d.message, severity=severities[d.severity], source="kcel")
        for d in found
    ]
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


# -- hover, completion, definition -------------------------------------------------------------------------------


def _under_cursor(ls: KcelServer, uri: str, cursor: lsp.Position) -> tuple[str, Analysis, int, Expression | None]:
    """The document's text and analysis, the cursor's offset, and the expression it is in (if any)."""
    text, analysis = ls.analysis(uri)
    at = offset(text, cursor)
    return text, analysis, at, analysis.expression_at(at)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: KcelServer, params: lsp.HoverParams) -> lsp.Hover | None:
    text, analysis, at, expression = _under_cursor(ls, params.text_document.uri, params.position)
    if expression is None:
        return None
    called = _function_at(ls, analysis, expression, at, params.text_document.uri)
    if called is not None:
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, called))
    lines = [f"**{expression.path.elements[-1][0] or 'expression'}** (CEL) at `{expression.path}`"]
    cost = analysis.cost_of(expression)
    if cost is not None:
        lines += _rule_facts(analysis, expression, cost)
    typed = _subexpression_type(ls, analysis, expression, at, params.text_document.uri)
    if typed is not None:
        lines.insert(0, typed)
    node = _schema_node(analysis, expression, _chain_at(expression, at))
    if node is not None:
        lines.append(_describe(node))
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n".join(lines)))


def _rule_facts(analysis: Analysis, expression: Expression, cost: Any) -> list[str]:
    """A CRD rule's `self` (the schema it is written on), its estimated cost against the API server's limit, and
    the Kubernetes versions that accept it."""
    from kcel.k8s.rules.cost import STATIC_ESTIMATED_COST_LIMIT
    from kcel.matrix import versions_text

    found = []
    node, elements = _rule_schema(analysis, expression)
    if node is not None:
        found.append(f"`self`: `{_schema_path(elements)}`, {_describe(node)}")
    runs = f"{cost.effective_cardinality:,} runs" + ("" if cost.cardinality is not None else " (unbounded)")
    found.append(f"estimated cost {cost.estimated:,} x {runs} = {cost.cost:,} of the API server's "
                 f"{STATIC_ESTIMATED_COST_LIMIT:,} per rule (StaticEstimatedCostLimit)")  # fmt: skip
    accepted = accepting_versions(analysis, expression)
    found.append(f"accepted by Kubernetes {versions_text(accepted)}" if accepted else "accepted by no Kubernetes "
                 "version kcel knows")  # fmt: skip
    return found


def _schema_path(elements: Sequence[tuple[str, str]]) -> str:
    """A schema node's place as its object's fields (`spec.template.metadata`, `[*]` for items and map values)."""
    names = [name for name, _ in elements]
    rest = names[names.index("openAPIV3Schema") + 1 :] if "openAPIV3Schema" in names else names
    shown, after_properties = "", False
    for name in rest:
        if after_properties:
            shown += f".{name}"
            after_properties = False
        elif name == "properties":
            after_properties = True
        elif name in ("items", "additionalProperties"):
            shown += "[*]"
    return shown.lstrip(".") or "<root>"


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["."]))
def completion(ls: KcelServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    text, analysis, at, expression = _under_cursor(ls, params.text_document.uri, params.position)
    items: list[lsp.CompletionItem] = []
    if expression is not None:
        character = expression.character_at(at)
        before = expression.text[: character or 0]
        match = _SELF_CHAIN.search(before)
        typed = _VARIABLE_CHAIN.search(before)
        if match is None and typed is not None:
            items += _field_items(ls, analysis, expression, typed.group(1), typed.group(2), params.text_document.uri)
        elif match is None and re.search(r"(?:^|[^A-Za-z0-9_\"'.])[A-Za-z_]*\Z", before):
            items += _function_items(ls, analysis, expression, params.text_document.uri)
        if match is not None:
            chain = [unescape(part) or part for part in match.group(1).split(".") if part]
            node = _schema_node(analysis, expression, chain)
            for name, prop in _properties(node).items():
                cel_name = escape(name)
                if cel_name is not None:
                    detail = str(prop.get("type", "")) if isinstance(prop, Mapping) else ""
                    items.append(lsp.CompletionItem(cel_name, kind=lsp.CompletionItemKind.Field, detail=detail))
    return lsp.CompletionList(is_incomplete=False, items=items)


def _field_items(ls: KcelServer, analysis: Analysis, expression: Expression, root: str, chain: str,
                 uri: str) -> list[lsp.CompletionItem]:  # fmt: skip
    """The fields after `request.`, `namespaceObject.metadata.`, `variables.` (the policy's own variables)...: the
    declared types of the expression's environment."""
    from kcel.k8s.surfaces.catalog import environment_name
    from kcel.k8s.surfaces.environments import environment

    document = analysis.documents[expression.document][2]
    if root == "variables" and not chain and isinstance(document, Mapping):
        declared = (document.get("spec") or {}).get("variables") or []
        names = [v["name"] for v in declared if isinstance(v, Mapping) and isinstance(v.get("name"), str)]
        return [lsp.CompletionItem(n, kind=lsp.CompletionItemKind.Variable) for n in names]
    version = version_for(uri, ls.default_version)
    if root in ("object", "oldObject") and isinstance(document, Mapping):  # the kind the policy's rules name
        from kcel.lsp.builtin import object_fields

        fields = object_fields(document, [part for part in chain.split(".") if part], version)
        return [lsp.CompletionItem(name, kind=lsp.CompletionItemKind.Field) for name in fields]
    if root == "params" and isinstance(document, Mapping):  # the paramKind's CRD, beside the policy
        from kcel.lsp.builtin import params_fields

        path = file_path(uri)
        fields = params_fields(document, [part for part in chain.split(".") if part], path.parent if path else None)
        return [lsp.CompletionItem(name, kind=lsp.CompletionItemKind.Field) for name in fields]
    env = environment(environment_name(document), version)
    t = env.variables.get(root)
    for name in [part for part in chain.split(".") if part]:
        t = t.decl.field_type(name, False) if t is not None and t.kind == "message" and t.decl is not None else None
    if t is None or t.kind != "message" or t.decl is None:
        return []
    decl = t.decl
    return [lsp.CompletionItem(n, kind=lsp.CompletionItemKind.Field, detail=str(decl.field_type(n, False)))
            for n in decl.fields]  # fmt: skip


def _function_items(ls: KcelServer, analysis: Analysis, expression: Expression, uri: str) -> list[lsp.CompletionItem]:
    from kcel.k8s.surfaces.catalog import MACROS, environment_name, functions, signature

    name = environment_name(analysis.documents[expression.document][2])
    found = functions(name, version_for(uri, ls.default_version))
    items = [lsp.CompletionItem(f, kind=lsp.CompletionItemKind.Function, detail=signature(o[0]))
             for f, o in found.items()]  # fmt: skip
    return items + [lsp.CompletionItem(m, kind=lsp.CompletionItemKind.Keyword, detail=d) for m, d in MACROS.items()]


@server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP, lsp.SignatureHelpOptions(trigger_characters=["(", ","]))
def signature_help(ls: KcelServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
    """The overloads of the call the cursor is in, and which argument it is at."""
    from kcel.k8s.surfaces.catalog import environment_name, functions, signature

    _, analysis, at, expression = _under_cursor(ls, params.text_document.uri, params.position)
    character = expression.character_at(at) if expression is not None else None
    if expression is None or character is None:
        return None
    call = _open_call(expression.text[:character])
    if call is None:
        return None
    dotted, argument = call
    name = environment_name(analysis.documents[expression.document][2])
    table = functions(name, version_for(params.text_document.uri, ls.default_version))
    overloads = table.get(dotted) or table.get(dotted.rpartition(".")[2], ())  # `format.named(` or `s.startsWith(`
    if not overloads:
        return None
    signatures = [lsp.SignatureInformation(signature(o)) for o in overloads]
    return lsp.SignatureHelp(signatures, active_signature=0, active_parameter=argument)


def _open_call(before: str) -> tuple[str, int] | None:
    """The (dotted) name before the parenthesis the text ends inside, and the index of the argument being written."""
    depth, commas = 0, 0
    for i in range(len(before) - 1, -1, -1):
        c = before[i]
        if c in ")]}":
            depth += 1
        elif c in "([{" and depth > 0:
            depth -= 1
        elif c in "([{":
            name = re.search(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\Z", before[:i]) if c == "(" else None
            return (name.group(1), commas) if name else None
        elif c == "," and depth == 0:
            commas += 1
    return None


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: KcelServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    text, analysis, at, expression = _under_cursor(ls, params.text_document.uri, params.position)
    if expression is None:
        return None
    chain = _chain_at(expression, at)
    target = _schema_key_offset(analysis, expression, chain)
    if target is None:
        return None
    return lsp.Location(params.text_document.uri, span(text, target[0], target[1]))


def _subexpression_type(ls: KcelServer, analysis: Analysis, expression: Expression, at: int, uri: str) -> str | None:
    """`self.spec.replicas`: `int`: the smallest subexpression under the cursor and the type the checker gave it (in
    the rule's own environment, its schema typing `self`, for a CRD rule)."""
    from kcel.errors import CompileError
    from kcel.k8s.surfaces.catalog import environment_name
    from kcel.k8s.surfaces.environments import environment
    from kcel.parser.ast import walk

    character = expression.character_at(at)
    cost = analysis.cost_of(expression)
    program = None
    if cost is not None:
        program = cost.compiled.message_program if cost.message else cost.compiled.program
    if program is None:
        name = environment_name(analysis.documents[expression.document][2])
        try:
            program = environment(name, version_for(uri, ls.default_version)).compile(expression.text)
        except (CompileError, ValueError):
            return None
    checked = program.checked
    if character is None or checked is None:
        return None
    under = [n for n in walk(program.parsed.expr) if n.start <= character < n.end and n.id in checked.types]
    if not under:
        return None
    node = min(under, key=lambda n: n.end - n.start)
    return f"`{expression.text[node.start : node.end]}`: `{shown_type(str(checked.types[node.id]))}`"


_SCHEMA_TYPE = re.compile(r"selfType\d+((?:\.(?:@idx|@elem|[\w-]+))*)")


def shown_type(text: str) -> str:
    """A checked type as the CRD's author wrote it: a schema object's internal name (`selfType36742888.spec.@idx`,
    kcel.k8s.schemas.decltypes) as `object` of its place in `self` (`self.spec[*]`)."""

    def place(match: re.Match[str]) -> str:
        steps = match.group(1).replace(".@idx", "[*]").replace(".@elem", "[*]")
        return f"object (self{steps})" if steps else "object (self)"

    return _SCHEMA_TYPE.sub(place, text)


def _function_at(ls: KcelServer, analysis: Analysis, expression: Expression, at: int, uri: str) -> str | None:
    """A function's signatures, and the Kubernetes versions that have it, when the cursor is on its name."""
    from kcel.k8s.surfaces.catalog import environment_name, functions, signature, versions_text, versions_with

    character = expression.character_at(at)
    if character is None:
        return None
    start = end = character
    while start > 0 and (expression.text[start - 1].isalnum() or expression.text[start - 1] == "_"):
        start -= 1
    while end < len(expression.text) and (expression.text[end].isalnum() or expression.text[end] == "_"):
        end += 1
    word = expression.text[start:end]
    if not word or not expression.text[end:].lstrip().startswith("("):
        return None
    name = environment_name(analysis.documents[expression.document][2])
    overloads = functions(name, version_for(uri, ls.default_version)).get(word)
    if not overloads:
        return None
    shown = "\n".join(f"    {signature(o)}" for o in overloads)
    return f"**{word}**\n\n{shown}\n\nin {versions_text(versions_with(name, word))}"


def _chain_at(expression: Expression, at: int) -> list[str]:
    """The `self.a.b` field chain the cursor is on (through the whole name under it)."""
    character = expression.character_at(at)
    if character is None:
        return []
    end = character
    while end < len(expression.text) and (expression.text[end].isalnum() or expression.text[end] == "_"):
        end += 1
    match = _SELF_CHAIN.search(expression.text[:end])
    if match is None:
        return []
    return [unescape(p) or p for p in [*match.group(1).split("."), match.group(2) or ""] if p]


def _rule_schema(analysis: Analysis, expression: Expression) -> tuple[Mapping[str, Any] | None, tuple[Any, ...]]:
    """The schema a CRD rule is written on (`self`), and its path in the document."""
    elements = expression.path.elements
    cut = next((i for i, (name, _) in enumerate(elements) if name == "x-kubernetes-validations"), None)
    if cut is None:
        return None, ()
    value = analysis.documents[expression.document][2]
    return schema_at(value, elements[:cut]), elements[:cut]


def _schema_node(analysis: Analysis, expression: Expression, chain: Sequence[str]) -> Mapping[str, Any] | None:
    node, _ = _rule_schema(analysis, expression)
    for name in chain:
        node = _properties(node).get(name)
    return node if isinstance(node, Mapping) else None


def _properties(node: Mapping[str, Any] | None) -> Mapping[str, Any]:
    while isinstance(node, Mapping) and node.get("type") == "array" and isinstance(node.get("items"), Mapping):
        node = node["items"]
    found = node.get("properties") if isinstance(node, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _describe(node: Mapping[str, Any]) -> str:
    facts = [f"`{node.get('type', 'any')}`"]
    facts += [f"{key} {node[key]}" for key in ("maxLength", "maxItems", "maxProperties", "minimum", "maximum")
              if key in node]  # fmt: skip
    text = ", ".join(facts)
    return f"{text}: {node['description']}" if isinstance(node.get("description"), str) else text


def _schema_key_offset(analysis: Analysis, expression: Expression, chain: Sequence[str]) -> tuple[int, int] | None:
    """Where the property a `self` chain names is declared in the file: its key under `properties`."""
    from kcel.k8s import field as fe
    from kcel.k8s.manifests.yamltext import find

    node, elements = _rule_schema(analysis, expression)
    if not chain or not elements:
        return None
    steps: list[tuple[str, str]] = list(elements)
    for name in chain:
        while isinstance(node, Mapping) and node.get("type") == "array" and isinstance(node.get("items"), Mapping):
            steps.append(("items", ""))
            node = node["items"]
        steps += [("properties", ""), (name, "")]
        node = _properties(node).get(name)
    start, root, _ = analysis.documents[expression.document]
    key = find(root, fe.Path(tuple(steps)))
    if key is None:
        return None
    return start + key.start_mark.index, start + key.end_mark.index


def main(tcp: str | None = None) -> int:
    """Serve over stdio (what editors start), or on `host:port` for debugging."""
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


# -- code actions ------------------------------------------------------------------------------------------------


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
def code_action(ls: KcelServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """For a rule over its cost limit: set the schema bound the cost explanation says would bring it under."""
    from kcel.k8s.rules.explain import explain

    text, analysis, _, expression = _under_cursor(ls, params.text_document.uri, params.range.start)
    cost = analysis.cost_of(expression) if expression is not None else None
    if expression is None or cost is None:
        return []
    actions = []
    for bound in explain(cost).bounds:
        if bound.suggestion is None or bound.suggestion >= 2**40:
            continue
        edit = _bound_edit(analysis, expression, bound.location, bound.keyword, bound.suggestion, text)
        if edit is not None:
            title = f"Set {bound.keyword}: {bound.suggestion:,} on {bound.location} (kcel: under the cost limit)"
            changes = {params.text_document.uri: [edit]}
            actions.append(lsp.CodeAction(title, kind=lsp.CodeActionKind.QuickFix, edit=lsp.WorkspaceEdit(changes)))
    return actions


def _bound_edit(analysis: Analysis, expression: Expression, location: str, keyword: str, value: int,
                text: str) -> lsp.TextEdit | None:  # fmt: skip
    """The edit that sets `keyword: value` on the schema of an object location (`spec.hostnames[*]`)."""
    from kcel.k8s.manifests.yamltext import value_of

    elements = expression.path.elements
    cut = next((i for i, (name, _) in enumerate(elements) if name == "openAPIV3Schema"), None)
    if cut is None:
        return None
    steps: list[tuple[str, str]] = list(elements[: cut + 1])
    start, root, document = analysis.documents[expression.document]
    schema = schema_at(document, steps)
    for part in re.findall(r"[^.\[\]]+|\[\*\]", location):
        if part == "[*]":
            key = "items" if isinstance(schema, Mapping) and schema.get("type") == "array" else "additionalProperties"
            steps.append((key, ""))
            schema = schema.get(key) if isinstance(schema, Mapping) else None
        else:
            steps += [("properties", ""), (part, "")]
            schema = _properties(schema).get(part)
    mapping = _node_at(root, steps)
    if not isinstance(mapping, yaml.MappingNode):
        return None
    existing = value_of(mapping, keyword)
    if existing is not None:
        return lsp.TextEdit(span(text, start + existing.start_mark.index, start + existing.end_mark.index), str(value))
    if mapping.flow_style:
        at = start + mapping.start_mark.index + 1
        return lsp.TextEdit(span(text, at, at), f"{keyword}: {value}, ")
    first_key = mapping.value[0][0]
    at = start + first_key.start_mark.index
    return lsp.TextEdit(span(text, at, at), f"{keyword}: {value}\n" + " " * first_key.start_mark.column)


def _node_at(root: Any, steps: Sequence[tuple[str, str]]) -> Any:
    """The value node at a path of keys and list positions (None when it leads nowhere)."""
    from kcel.k8s.manifests.yamltext import value_of

    node = root
    for name, position in steps:
        if name:
            node = value_of(node, name)
        elif isinstance(node, yaml.SequenceNode) and position.isdigit() and int(position) < len(node.value):
            node = node.value[int(position)]
        else:
            return None
    return node
