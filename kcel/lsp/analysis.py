"""What the language server says about a YAML file, without an editor: every CEL expression it holds (where, and of
what kind), the API server's errors and warnings at the exact range they concern, and what a rule's schema offers.

The checks are kcel's own, so the texts are the API server's: `check_crd` for CustomResourceDefinitions (compile
errors, estimated-cost rejections), `PolicySet` for Validating- and MutatingAdmissionPolicies, and the surface
checkers for webhook configurations, DRA objects and authentication/authorization configurations. An error's field
path is found in the YAML, and a compile error's `<input>:L:C` inside the expression's text, whatever its style.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kcel.annotations import error_character, field_elements
from kcel.k8s import field as fe
from kcel.k8s.manifests.decoding import aliasing_problem
from kcel.k8s.manifests.nesting import too_deep_message, too_deep_path
from kcel.k8s.manifests.scalars import value_positions
from kcel.k8s.manifests.yamltext import find, split_documents

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # marks count characters in both
EXPRESSION_KEYS = frozenset({"rule", "messageExpression", "expression", "valueExpression"})  # keys that hold CEL
_STEP = re.compile(r"[^.\[\]]+|\[[^\]]*\]")


@dataclass(frozen=True)
class Diagnostic:
    """A problem at [start, end) (offsets in the file), as the API server words it."""

    start: int
    end: int
    message: str
    severity: str = "error"  # or "warning", "information"


@dataclass(frozen=True)
class Expression:
    """A CEL expression in the file: its field path in its document, its text and where each character is."""

    document: int
    path: fe.Path
    text: str
    start: int  # the scalar's first offset in the file (a quote, a block header)
    end: int
    positions: tuple[int, ...] | None  # each character's offset in the file, and one past the end; None: unknown

    def offset_of(self, character: int) -> int:
        """The file offset of a character of the expression (its end for one past it)."""
        if self.positions is None:
            return self.start
        return self.positions[min(character, len(self.positions) - 1)]

    def character_at(self, offset: int) -> int | None:
        """The character of the expression at a file offset, or None when the offset is not inside it."""
        if self.positions is None or not self.start <= offset <= self.end:
            return None
        return max((i for i, at in enumerate(self.positions) if at <= offset), default=0)


@dataclass
class Analysis:
    """Everything found in one file, for one Kubernetes version."""

    expressions: list[Expression] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    costs: dict[tuple[int, tuple[str, ...]], Any] = field(default_factory=dict)  # (document, rule steps): reports
    documents: list[tuple[int, Node | None, Any]] = field(default_factory=list)  # (offset, node tree, value)
    accepted: dict[tuple[int, tuple[str, ...]], tuple[str, ...]] = field(default_factory=dict)  # kept for hover

    def expression_at(self, offset: int) -> Expression | None:
        return next((e for e in self.expressions if e.start <= offset <= e.end), None)

    def expression_named(self, document: int, path: fe.Path) -> Expression | None:
        wanted = steps(path)
        return next((e for e in self.expressions if e.document == document and steps(e.path) == wanted), None)

    def cost_of(self, expression: Expression) -> Any:
        """kcel's cost report of a CRD rule (its estimate, the runs its schema allows, the share of the limit)."""
        return self.costs.get((expression.document, steps(expression.path)))


def accepting_versions(analysis: Analysis, expression: Expression) -> tuple[str, ...]:
    """The Kubernetes versions whose API server accepts a CRD's rule (or messageExpression): no error at it, from
    compiling to the cost limits, when the whole CRD is checked at that version."""
    from kcel.annotations import crd_elements
    from kcel.k8s.crds.crd import check_crd, crds_of
    from kcel.k8s.environment import supported_versions

    key = (expression.document, steps(expression.path))
    if key not in analysis.accepted:
        value = analysis.documents[expression.document][2]
        try:
            (crd,) = crds_of([dict(value)])
        except (ValueError, TypeError, KeyError):
            return ()
        concerned = {key[1], key[1][:-1]}
        analysis.accepted[key] = tuple(
            version for version in supported_versions()
            if not any(steps(fe.Path(crd_elements(crd, e.field))) in concerned
                       for e in check_crd(crd, k8s_version=version).errors)
        )  # fmt: skip
    return analysis.accepted[key]


def merged_diagnostics(by_version: Mapping[str | None, list[Diagnostic]]) -> list[Diagnostic]:
    """One version's diagnostics as they are; several versions': those of every version once, the others each
    prefixed with the versions that report it (`Kubernetes 1.30-1.31: ...`)."""
    from kcel.matrix import versions_text

    if len(by_version) == 1:
        return next(iter(by_version.values()))
    found: dict[Diagnostic, list[str]] = {}
    for version, diagnostics in by_version.items():
        for diagnostic in diagnostics:
            found.setdefault(diagnostic, []).append(str(version))
    everywhere = len(by_version)
    return [
        d if len(at) == everywhere else replace(d, message=f"Kubernetes {versions_text(at)}: {d.message}")
        for d, at in found.items()
    ]


def analyze(text: str, k8s_version: str | None = None, runtime_config: Sequence[str] = ()) -> Analysis:
    """Every document of a YAML file: its expressions, and the API server's verdict on the objects holding them
    (`runtime_config`: the alpha and beta API versions assumed switched on, as kube-apiserver's --runtime-config)."""
    analysis = Analysis()
    for index, (offset, chunk) in enumerate(split_documents(text)):
        try:
            root = yaml.compose(chunk, Loader=_LOADER)  # libyaml's, when PyYAML has it: each keystroke parses
            refused = _refused(root, chunk)
            value = SafeConstructor().construct_document(root) if root is not None and not refused else None
            deep = too_deep_path(value) if value is not None and "*" in chunk else None  # aliases nest what they name
            refused = refused or (too_deep_message(deep) if deep is not None else None)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            at = offset + (mark.index if mark is not None else 0)
            analysis.diagnostics.append(Diagnostic(at, at + 1, f"invalid YAML: {err}"))
            analysis.documents.append((offset, None, None))
            continue
        except RecursionError:  # aliases nesting a value some thousands of levels deep
            refused = too_deep_message("")
        if refused:  # as the API server refuses it, and before anything expands the aliases
            analysis.diagnostics.append(Diagnostic(offset, offset + 1, f"invalid YAML: {refused}"))
            analysis.documents.append((offset, None, None))
            continue
        analysis.documents.append((offset, root, value))
        found = list(_expressions(root, fe.Path(), text, offset, index))
        analysis.expressions += found
        if isinstance(value, Mapping) and found:
            _check(analysis, index, offset, root, value, k8s_version, runtime_config)
    return analysis


def _refused(root: Node | None, chunk: str) -> str | None:
    """What the API server's decoding refuses in a document's aliases (a cycle, a billion laughs), which walking
    its nodes or its value would expand without end; only documents that have an alias (`*`) are looked at."""
    return aliasing_problem(root) if root is not None and "*" in chunk else None


def _expressions(node: Node | None, path: fe.Path, text: str, offset: int, document: int) -> Iterator[Expression]:
    """The scalars under keys that hold CEL, anywhere in the document (CRD rules, policies, configurations)."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                continue
            child = path.child(key.value)
            if key.value in EXPRESSION_KEYS and isinstance(value, ScalarNode) and isinstance(value.value, str):
                yield _expression(value, child, text, offset, document)
            else:
                yield from _expressions(value, child, text, offset, document)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            yield from _expressions(item, path.index(i), text, offset, document)


def _expression(node: ScalarNode, path: fe.Path, text: str, offset: int, document: int) -> Expression:
    start, end = offset + node.start_mark.index, offset + node.end_mark.index
    found = value_positions(text[start:end], node.style, node.value)
    positions = tuple(start + p for p in found) if found is not None else None
    return Expression(document, path, node.value, start, end, positions)


# -- the API server's verdicts -------------------------------------------------------------------------------------


def _check(analysis: Analysis, index: int, offset: int, root: Node, value: Mapping[str, Any],
           k8s_version: str | None, runtime_config: Sequence[str] = ()) -> None:  # fmt: skip
    """Run the check the object's kind has, and place each error at its field (inside its expression when it can)."""
    kind = str(value.get("kind", ""))
    group = str(value.get("apiVersion", "")).rpartition("/")[0]
    if (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        found = crd_errors(analysis, index, value, k8s_version)
    elif group == "admissionregistration.k8s.io" and "AdmissionPolicy" in kind:
        found = _policy_errors(value, k8s_version, runtime_config)
    else:
        found = _surface_errors(value, k8s_version, runtime_config)
    for path, message, severity in found:
        analysis.diagnostics.append(_place(analysis, index, offset, root, path, message, severity))


def crd_errors(analysis: Analysis, index: int, value: Mapping[str, Any],
               k8s_version: str | None) -> list[tuple[fe.Path, str, str]]:  # fmt: skip
    """The API server's errors and warnings on a CRD (document `index` of the analysis), by field path, each led by
    its cause and the fix where one is known (kcel.k8s.surfaces.hints); its rules' costs and lints recorded in the
    analysis (lints at the characters of its expressions)."""
    from kcel.annotations import crd_elements
    from kcel.k8s.crds.crd import check_crd, crds_of
    from kcel.k8s.rules.explain import bound_fix
    from kcel.k8s.surfaces.hints import lead, schema_fields, with_lead

    try:
        (crd,) = crds_of([dict(value)])
    except (ValueError, TypeError, KeyError) as err:
        return [(fe.Path(), str(err), "error")]
    check = check_crd(crd, k8s_version=k8s_version)
    for cost in check.costs:
        analysis.costs[(index, steps(fe.Path(crd_elements(crd, cost.path))))] = cost
    _crd_lints(analysis, index, crd, check)
    fields = [name for schema in _version_schemas(value) for name in schema_fields(schema)]
    found = []
    for e in check.errors:
        path = fe.Path(crd_elements(crd, e.field))
        message = e.cause()["message"]
        rule_cost = analysis.costs.get((index, steps(path))) if "exceeds budget" in message else None
        fix = bound_fix(rule_cost) if rule_cost is not None else None
        found.append((path, with_lead(message, lead(message, "crd", k8s_version, fields, fix)), "error"))
    return found + [(fe.Path(), warning, "warning") for warning in check.warnings]


def _version_schemas(value: Mapping[str, Any]) -> list[Any]:
    """The openAPIV3Schema of each version of a CRD document (and the one `spec.validation` shares)."""
    spec = value.get("spec")
    if not isinstance(spec, Mapping):
        return []
    found = [(v.get("schema") or {}).get("openAPIV3Schema") for v in spec.get("versions") or ()
             if isinstance(v, Mapping) and isinstance(v.get("schema"), Mapping)]  # fmt: skip
    validation = spec.get("validation")
    return found + ([validation.get("openAPIV3Schema")] if isinstance(validation, Mapping) else [])


def _crd_lints(analysis: Analysis, index: int, crd: Any, check: Any) -> None:
    """What the API server will not say about the CRD's rules (kcel.k8s.rules.lints), at the characters concerned:
    a Warning when it concerns the newest version, else Information (1.30-1.31 only, say)."""
    from kcel.annotations import crd_elements
    from kcel.k8s.rules.lints import concerns_newest, confirmed_reserved, rule_lints

    for cost in check.costs:
        expression = analysis.expression_named(index, fe.Path(crd_elements(crd, cost.path)))
        if expression is None:
            continue
        for lint in confirmed_reserved(rule_lints(cost.expression), cost):
            start, end = expression.offset_of(lint.start), expression.offset_of(lint.end)
            severity = "warning" if concerns_newest(lint) else "information"
            analysis.diagnostics.append(Diagnostic(start, max(end, start + 1), lint.said(), severity))


def _policy_errors(value: Mapping[str, Any], k8s_version: str | None,
                   runtime_config: Sequence[str] = ()) -> list[tuple[fe.Path, str, str]]:  # fmt: skip
    from kcel.k8s.admission import PolicySet

    try:
        policies = PolicySet.from_manifests([value], k8s_version=k8s_version, runtime_config=runtime_config)
    except ValueError as err:  # a malformed runtimeConfig in .kcel.yaml
        return [(fe.Path(), str(err), "error")]
    found = [_located(problem.partition("document 0: ")[2] or problem, "error") for problem in policies.problems]
    return _led(found, value, k8s_version)


def _led(found: list[tuple[fe.Path, str, str]], value: Mapping[str, Any],
         k8s_version: str | None) -> list[tuple[fe.Path, str, str]]:  # fmt: skip
    """Each error led by its cause (kcel.k8s.surfaces.hints), in the environment of the object's expressions."""
    from kcel.k8s.surfaces.catalog import environment_name
    from kcel.k8s.surfaces.hints import lead, with_lead

    environment = environment_name(value)
    return [(path, with_lead(message, lead(message, environment, k8s_version)), severity)
            for path, message, severity in found]  # fmt: skip


def _surface_errors(value: Mapping[str, Any], k8s_version: str | None,
                    runtime_config: Sequence[str] = ()) -> list[tuple[fe.Path, str, str]]:  # fmt: skip
    from kcel.k8s.environment import NEWEST
    from kcel.k8s.surfaces.checking import SWITCHED_ON_GROUPS, checker_for

    check: Any = checker_for(value)  # a Checker; DRA's takes the runtime config too
    if check is None:
        return []
    if str(value.get("apiVersion", "")).rpartition("/")[0] in SWITCHED_ON_GROUPS:
        check = functools.partial(check, runtime_config=runtime_config)
    try:
        checked = check(value, "", k8s_version or NEWEST)
    except ValueError as err:  # a malformed runtimeConfig in .kcel.yaml
        return [(fe.Path(), str(err), "error")]
    found = [_located(e, "error") for e in checked.errors] + [_located(w, "warning") for w in checked.warnings]
    return _led(found, value, k8s_version)


def _located(message: str, severity: str) -> tuple[fe.Path, str, str]:
    """`spec.validations[0].expression: Invalid value: ...` as the field path and the rest."""
    head, separator, rest = message.partition(": ")
    if separator and _STEP.fullmatch(head.split(".")[0].split("[")[0]) and " " not in head:
        return fe.Path(field_elements(head)), rest, severity
    return fe.Path(), message, severity


def steps(path: fe.Path) -> tuple[str, ...]:
    """A path as the keys and positions it goes through: `properties[spec]` and `properties.spec` alike."""
    found: list[str] = []
    for name, position in path.elements:
        found += [name] if name else []
        found += [position] if position else []
    return tuple(found)


def _place(analysis: Analysis, index: int, offset: int, root: Node, path: fe.Path, message: str,
           severity: str) -> Diagnostic:  # fmt: skip
    """The range an error concerns: the character of its expression a compile error names, else its field."""
    expression = analysis.expression_named(index, path)
    character = error_character(message, expression.text) if expression is not None else None
    if expression is not None and character is not None and expression.positions is not None:
        start = expression.offset_of(character)
        return Diagnostic(start, max(start + 1, expression.offset_of(character + 1)), message, severity)
    if expression is not None:
        return Diagnostic(expression.start, expression.end, message, severity)
    node = find(root, path) if path.elements else None
    node = node if node is not None else root
    return Diagnostic(offset + node.start_mark.index, offset + node.end_mark.index, message, severity)


def schema_at(value: Mapping[str, Any], path: Sequence[tuple[str, str]]) -> Mapping[str, Any] | None:
    """The mapping at a path of a document (the schema holding `x-kubernetes-validations`, say)."""
    node: Any = value
    for name, position in path:
        if name:
            node = node.get(name) if isinstance(node, Mapping) else None
        else:
            node = node[int(position)] if isinstance(node, list) and position.isdigit() else None
        if node is None:
            return None
    return node if isinstance(node, Mapping) else None
