"""Lints: what the API server will not say about a CRD rule, each with the Kubernetes versions it concerns and a fix.

The API server answers a rule at one version, in cel-go's words: `token recognition error at: '”'` for a quote
gofmt curled, `undefined field 'namespace'` on 1.30 and 1.31 only, a cost over the budget at some versions only, and
nothing at all for a quote curled inside a string literal (the rule silently compares with another character) or a
rule controller-gen cut at a comma. `LINTS` is the table of what kcel looks for; the functions below are pure: they
read a rule's text (or a marker's comment line, kcel.k8s.rules.markerargs; or one rule's estimated cost at several
versions) and return findings at the character they concern, offsets into the text they were given. `kcel check`,
`kcel lsp` and the Go marker reader place and show them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from kcel.errors import CompileError
from kcel.k8s.environment import KEYWORD_FIELD_NAMES, LATEST, compatibility, server_version, supported_versions
from kcel.k8s.rules.cost import STATIC_ESTIMATED_COST_LIMIT
from kcel.k8s.rules.validation import ExpressionCost, RuleEnvironments
from kcel.k8s.schemas.escaping import RESERVED
from kcel.parser import parse
from kcel.parser.ast import Call, Const, Select, walk


@dataclass(frozen=True)
class Lint:
    """One kind of finding: what it finds, the Kubernetes versions it concerns, and how to fix it."""

    id: str
    finds: str
    concerns: str
    fix: str


LINTS: Mapping[str, Lint] = {lint.id: lint for lint in (
    Lint("curly-quote",
         "A typographic quote (U+2018, U+2019, U+201C, U+201D) in a rule: gofmt turns '' into ” in Go doc comments "
         "and editors curl quotes. Inside a string literal the rule silently compares with another character; "
         "outside one the API server's error is a `token recognition error`.",
         "every Kubernetes version", "the straight quote"),
    Lint("marker-comma",
         "A +kubebuilder:validation:XValidation marker whose rule or message controller-gen's argument parser reads "
         "otherwise than written: an unquoted value ends at the first comma, and a quote inside a quoted value ends "
         "it there (kube-api-linter#99, controller-tools pkg/markers/parse.go).",
         "every Kubernetes version (controller-gen reads the marker)", "quote the value with backquotes"),
    Lint("reserved-field-name",
         "A field named by a CEL reserved word selected by its name (`self.namespace`): API servers before 1.32 "
         "select such a property only by its escaped name and reject the rule on create with `undefined field`.",
         "Kubernetes 1.30-1.31 (before compatibility version 1.31)", "the escaped name (`self.__namespace__`)"),
    Lint("cost-by-version",
         "A rule whose estimated cost fits the per-expression budget at some Kubernetes versions only (cost "
         "functions and size tracking changed between releases).",
         "the versions where the estimate is over the limit", "a bound on the schema (maxItems, maxLength...)"),
)}  # fmt: skip


@dataclass(frozen=True)
class LintFinding:
    """A lint found in a text: the characters [start, end) it concerns, what is wrong and the fix for this text."""

    lint: str  # a LINTS key
    message: str
    fix: str
    start: int
    end: int
    versions: tuple[str, ...] = ()  # the Kubernetes versions it concerns; () every version

    def text(self) -> str:
        """`Warning (lint reserved-field-name, Kubernetes 1.30-1.31): ...; fix: ...`."""
        return f"Warning ({self.heading()}): {self.message}; fix: {self.fix}"

    def said(self) -> str:
        """`...; fix: ... (lint reserved-field-name, Kubernetes 1.30-1.31)`: an editor's diagnostic, which has its
        severity."""
        return f"{self.message}; fix: {self.fix} ({self.heading()})"

    def heading(self) -> str:
        from kcel.matrix import versions_text

        versions = f"Kubernetes {versions_text(self.versions)}" if self.versions else "every Kubernetes version"
        return f"lint {self.lint}, {versions}"

    def within(self, versions: Sequence[str]) -> LintFinding | None:
        """The finding at the versions asked about (narrowed to them), or None when it concerns none of them."""
        if not self.versions or not versions:
            return self
        kept = tuple(v for v in self.versions if v in versions)
        return replace(self, versions=kept) if kept else None

    def shifted(self, offset: int) -> LintFinding:
        return replace(self, start=self.start + offset, end=self.end + offset)


def concerns_newest(finding: LintFinding) -> bool:
    """Whether a finding concerns the newest API server (every version's do): the editor's Warning, not Information."""
    return not finding.versions or f"{LATEST[0]}.{LATEST[1]}" in finding.versions


def rule_lints(rule: str) -> list[LintFinding]:
    """The lints of a rule's (or messageExpression's) text alone, in the order of the characters they concern."""
    return sorted([*curly_quotes(rule), *reserved_field_names(rule)], key=lambda f: f.start)


# -- curly quotes ----------------------------------------------------------------------------------------------------

_CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
_GOFMT_NOTE = "; in a Go comment gofmt curls '' again: write \"\" or compare size(...) with 0 there"


def curly_quotes(rule: str) -> list[LintFinding]:
    """Each typographic quote of the text: outside a string literal a syntax error the API server words as a
    `token recognition error`; inside one a rule that silently changed. A lone U+201D is gofmt's `''`."""
    literals = _literal_spans(rule)
    found = []
    opened = False  # a U+201C before: a pair of curled double quotes
    for at, character in enumerate(rule):
        if character not in _CURLY:
            continue
        inside = any(start <= at < end for start, end in literals)
        name = f"{character} (U+{ord(character):04X} {unicodedata.name(character)})"
        if character == "\u201d" and not opened:
            straight, note = "''", _GOFMT_NOTE  # gofmt's rewrite of two single quotes
        else:
            straight, note = _CURLY[character], ""
        opened = character == "\u201c" or (opened and character != "\u201d")
        if inside:
            message = f"{name} inside a string literal: the rule compares with that character, not a straight quote"
        else:
            message = f"{name} outside a string literal: the API server rejects the rule (token recognition error)"
        found.append(LintFinding("curly-quote", message, f"{straight} instead{note}", at, at + 1))
    return found


def _literal_spans(text: str) -> list[tuple[int, int]]:
    """The [start, end) of every string or bytes literal's content, as CEL's lexer reads them (quotes, triple
    quotes, raw strings whose backslashes escape nothing); an unterminated one runs to its line's end."""
    spans = []
    i = 0
    while i < len(text):
        quote = text[i]
        if quote not in "'\"":
            i += 1
            continue
        raw = _raw_prefix(text, i)
        delimiter = quote * 3 if text.startswith(quote * 3, i) else quote
        j = i + len(delimiter)
        while j < len(text) and not text.startswith(delimiter, j):
            if len(delimiter) == 1 and text[j] in "\r\n":
                break
            j += 2 if text[j] == "\\" and not raw else 1
        spans.append((i + len(delimiter), min(j, len(text))))
        i = j + len(delimiter)
    return spans


def _raw_prefix(text: str, quote: int) -> bool:
    """Whether the literal whose quote is at `quote` is raw (`r'...'`, `R"..."`, `br'...'`, `rb'...'`)."""
    for prefix in (2, 1):
        word = text[max(quote - prefix, 0) : quote]
        before = text[quote - prefix - 1] if quote - prefix - 1 >= 0 else " "
        if len(word) == prefix and word.lower() in ("r", "br", "rb") and not (before.isalnum() or before == "_"):
            return True
    return False


# -- reserved words as field names -------------------------------------------------------------------------------

# Reserved words the lexer lets through as a field name after a `.` (`true`, `false`, `null` and `in` are tokens:
# `self.in` is a syntax error at every version, which the API server says).
_SELECTABLE = RESERVED - {"true", "false", "null", "in"}


@cache
def keyword_rejecting_versions() -> tuple[str, ...]:
    """The versions whose API server rejects `self.namespace` in a new rule: compatibility version before
    KEYWORD_FIELD_NAMES."""
    return tuple(v for v in supported_versions() if compatibility(server_version(v)) < KEYWORD_FIELD_NAMES)


def reserved_field_names(rule: str) -> list[LintFinding]:
    """Each field selected by a reserved word (`self.namespace`, `has(self.namespace)`, `self.?namespace`), with the
    rule rewritten to the escaped names, which every version accepts; none when the rule does not parse."""
    try:
        parsed = parse(rule)
    except CompileError:
        return []
    places: dict[int, str] = {}
    written = [node for call in parsed.macro_calls.values() for node in walk(call)]  # has(...) as written
    for node in [*walk(parsed.expr), *written]:
        if isinstance(node, Select) and node.field in _SELECTABLE:
            at = node.end - len(node.field)
            if rule[at : node.end] == node.field:
                places[at] = node.field
        elif isinstance(node, Call) and node.function == "_?._" and isinstance(node.args[1], Const):
            name = node.args[1].value
            at = node.args[1].end - len(str(name))
            if isinstance(name, str) and name in _SELECTABLE and rule[at : node.args[1].end] == name:
                places[at] = name
    if not places:
        return []
    rewritten, done = [], 0
    for at in sorted(places):
        rewritten += [rule[done:at], f"__{places[at]}__"]
        done = at + len(places[at])
    fixed = "".join(rewritten) + rule[done:]
    versions = keyword_rejecting_versions()
    return [
        LintFinding("reserved-field-name",
                    f"the field {name!r} is a CEL reserved word: selected as .{name}, API servers before 1.32 reject "
                    f"the rule on create (undefined field {name!r})", f"write .__{name}__, as every version "
                    f"accepts: {fixed}", at, at + len(name), versions)
        for at, name in sorted(places.items())
    ]  # fmt: skip


def confirmed_reserved(findings: Sequence[LintFinding], cost: ExpressionCost) -> list[LintFinding]:
    """The reserved-field-name findings the rule's schema bears out: the rule rewritten compiles at each version
    they concern, and the rule as written does not (a `namespace` the schema does not have is an error everywhere,
    which the API server says)."""
    reserved = [f for f in findings if f.lint == "reserved-field-name"]
    if not reserved or cost.compiled.self_type is None:
        return [f for f in findings if f.lint != "reserved-field-name"]
    fixed = reserved[0].fix.partition("accepts: ")[2]
    text = cost.expression
    rejected = tuple(v for v in reserved[0].versions if not _compiles(text, cost, v) and _compiles(fixed, cost, v))
    kept = [replace(f, versions=rejected) for f in reserved] if rejected else []
    return sorted([*(f for f in findings if f.lint != "reserved-field-name"), *kept], key=lambda f: f.start)


def _compiles(text: str, cost: ExpressionCost, version: str) -> bool:
    assert cost.compiled.self_type is not None
    env = RuleEnvironments(version, "new").for_type(cost.compiled.self_type, bool(cost.compiled.rule.optional_old_self))
    try:
        env.compile(text)
    except CompileError:
        return False
    return True


# -- the cost budget by version ------------------------------------------------------------------------------------


def cost_by_version(
    costs: Mapping[str, ExpressionCost], limit: int = STATIC_ESTIMATED_COST_LIMIT
) -> LintFinding | None:
    """One rule's estimated cost at several versions (version -> its cost there): when it is over the limit at some
    of them only, the versions it is over at and the bound that brings it under at all of them."""
    from kcel.k8s.rules.explain import explain

    over = tuple(v for v, cost in costs.items() if cost.cost > limit)
    if not over or len(over) == len(costs):
        return None  # within everywhere, or over everywhere (an error at every version, explained there)
    fits = [v for v in costs if v not in over]
    from kcel.matrix import versions_text

    by_cost: dict[int, list[str]] = {}
    for version, cost in costs.items():
        by_cost.setdefault(cost.cost, []).append(version)
    shown = "; ".join(f"{versions_text(at)}: {cost:,}" for cost, at in by_cost.items())
    by_version = [
        {(b.location, b.keyword): b.suggestion for b in explain(costs[v], limit).bounds if b.suggestion is not None}
        for v in over
    ]
    # a bound that brings it under at every version it is over at: the strictest value of those versions
    suggestions = {
        key: min(found[key] for found in by_version)
        for key in by_version[0]
        if all(key in found for found in by_version)
    }
    if suggestions:
        (location, keyword), value = min(suggestions.items(), key=lambda item: -item[1])
        fix = f"{keyword}: {value:,} or less on {location} brings it under the limit at every version"
    else:  # kcel.cost: cel-go before v0.23 (Kubernetes 1.33) loses sizes through dyn(), literals and locals
        fix = (
            "no single bound on the schema brings it under the limit: simplify the expression (before 1.33 the "
            "estimate does not follow sizes through dyn(), list and map literals or comprehension results)"
        )
    message = (f"estimated cost over the limit of {limit:,} at Kubernetes {versions_text(over)}, within it at "
               f"{versions_text(fits)} ({shown})")  # fmt: skip
    first = next(iter(costs.values()))
    return LintFinding("cost-by-version", message, fix, 0, len(first.expression), over)
