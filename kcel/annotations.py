"""Where findings are in their files, for CI (kcel.findings writes them): the line of a field a CRD error names,
the line and column of a compile error inside a rule's YAML text, the Go marker a rule came from, the line of an
object's field; and each command's findings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcel.findings import Finding, TestCase, junit_xml
from kcel.k8s import field as fe
from kcel.k8s.gotypes.markers import RuleSource, xvalidation_rules
from kcel.k8s.gotypes.syntax import GoSyntaxError

if TYPE_CHECKING:
    from kcel.k8s.manifests.yamltext import Lines


def crd_field_place(crd: Any, path: fe.Path) -> tuple[str, int]:
    """The file and line of a field of a CRD (kcel.k8s.crds.crd.CRD), for an error the API server reports at
    `path`: in the CRD's file, or in the kustomize patch that wrote the field; the CRD's first line when the field
    cannot be found."""
    file, document, elements = _written_at(crd, path)
    line = _field_line(file, document, elements)
    return (file, line) if line else (crd.file, crd.line)


def _written_at(crd: Any, path: fe.Path) -> tuple[str, int, tuple[tuple[str, str], ...]]:
    """The file, document and field path where a field of a CRD is written (a patch's, for a patched CRD)."""
    elements = crd_elements(crd, path)
    if crd.origins is None:
        return crd.file, crd.document, elements
    file, document, written = crd.origins.locate(elements)
    return str(file), int(document), written


def crd_place(crd: Any, path: fe.Path, message: str) -> tuple[str, int, int]:
    """The file, line and column (0: none) of an error the API server reports at `path` with `message`: inside
    the rule's text for a compile error, else the field's line; for a CRD derived from Go (`crd.rule_origins`), the
    place in the marker the rule was written in, else the kind's type."""
    if crd.rule_origins is None:
        position = expression_position(crd, path, message) if message else None
        return position if position is not None else (*crd_field_place(crd, path), 0)
    origin = nearest_rule_origin(crd.rule_origins, crd_elements(crd, path))
    if origin is None:
        return crd.file, crd.line, 0
    character = error_character(message, _origin_text(origin)) if message and origin.positions else None
    if character is None:
        return origin.file, origin.line, origin.column
    try:
        text = _text(origin.file)
    except (OSError, UnicodeDecodeError):
        return origin.file, origin.line, origin.column
    at_offset = origin.positions[min(character, len(origin.positions) - 1)]
    return origin.file, text.count("\n", 0, at_offset) + 1, at_offset - (text.rfind("\n", 0, at_offset) + 1) + 1


def nearest_rule_origin(origins: Any, elements: tuple[tuple[str, str], ...]) -> Any:
    """The origin (kcel.k8s.gotypes.derive.RuleOrigin) of the field at `elements` of a CRD derived from Go, or of
    the nearest field above it that has one (the marker a rule, or the type a schema, was written at); None."""
    keys = tuple(name or subscript for name, subscript in elements)
    while keys and keys not in origins:
        keys = keys[:-1]
    return origins.get(keys) if keys else None


def _origin_text(origin: Any) -> str:
    """The expression an origin's positions spell (one character a position, the last is one past the end)."""
    try:
        text = _text(origin.file)
    except (OSError, UnicodeDecodeError):
        return ""
    return "".join(text[p] if p < len(text) else "" for p in origin.positions[:-1])


def crd_elements(crd: Any, path: fe.Path) -> tuple[tuple[str, str], ...]:
    """Where an error's field is in the CRD's YAML: one under `spec.validation` is in the versions' one schema (the
    API server moves a schema all versions share there)."""
    elements = path.elements
    if elements[:2] == (("spec", ""), ("validation", "")) and crd.api_version.endswith("/v1") and crd.versions:
        return (("spec", ""), ("versions", ""), ("", "0"), ("schema", ""), *elements[2:])
    return elements


def _field_line(file: str, document: int, elements: tuple[tuple[str, str], ...]) -> int | None:
    """The 1-based line of a field of a document, each document composed once for every error found in it."""
    lines = _lines(file)
    return lines.line(document, fe.Path(elements)) if lines is not None else None


@cache
def _text(file: str) -> str:
    from kcel.k8s.manifests.files import STDIN

    return (STDIN if file == "-" else Path(file)).read_text(encoding="utf-8")  # `-`: what stdin held, read once


@cache
def _lines(file: str) -> Lines | None:
    """The lines of a file's fields (kcel.k8s.manifests.yamltext.Lines: each document composed once)."""
    from kcel.k8s.manifests.yamltext import Lines

    try:
        return Lines(_text(file))
    except (OSError, UnicodeDecodeError):
        return None


def _composed(file: str, document: int) -> tuple[int, Any] | None:
    """A document's offset in its file and its YAML node tree."""
    lines = _lines(file)
    return lines.document(document) if lines is not None else None


def object_field_line(file: str, document: int, item: int | None, field: str, fallback: int) -> int:
    """The line of a field an API error names (`spec.containers[1].image`) in an object's file (inside a List,
    under `items[item]`); for a field the object lacks (`Required value`), the line of the nearest one it has
    that holds it (the list item, `spec.containers[1]`); `fallback` (the document's line) when none is found."""
    elements = (("items", ""), ("", str(item))) if item is not None else ()
    path = field_elements(field) if field != "<nil>" else ()
    for length in range(len(path), 0, -1):
        found = _field_line(file, document, elements + path[:length])
        if found:
            return found
    return fallback


_STEP = re.compile(r"[^.\[\]]+|\[[^\]]*\]")


def field_elements(text: str) -> tuple[tuple[str, str], ...]:
    """`spec.containers[1].image` as field path elements (name, index)."""
    return tuple(("", part[1:-1]) if part.startswith("[") else (part, "") for part in _STEP.findall(text))


def crd_rule_marker(crd: Any, path: fe.Path) -> str:
    """`file.go:line` of the `+kubebuilder:validation:XValidation` marker that holds the rule an error names, when
    controller-gen made the CRD from Go types of the same project (the nearest folder above it with a go.mod);
    empty otherwise."""
    if crd.rule_origins is not None:
        return ""  # the CRD is derived from the Go types: its findings are in the Go files already
    found = _expression_node(crd, path)
    if found is None:
        return ""
    node = found[2]
    project = next((d for d in Path(crd.file).resolve().parents if (d / "go.mod").is_file()), None)
    if project is None:
        return ""
    for file, line, rule in _markers(str(project)):
        if rule == node.value:
            return f"{file}:{line}"
    return ""


def _expression_node(crd: Any, path: fe.Path) -> tuple[str, int, Any] | None:
    """The file the rule (or messageExpression) an error names is written in, its document's offset there and the
    rule's YAML scalar."""
    from kcel.k8s.manifests.yamltext import find, value_of

    file, document, elements = _written_at(crd, path)
    if not elements or elements[-1] not in (("rule", ""), ("messageExpression", "")):
        return None
    composed = _composed(file, document)
    if composed is None:
        return None
    node = value_of(find(composed[1], fe.Path(elements[:-1])), elements[-1][0])
    return (file, composed[0], node) if node is not None and isinstance(node.value, str) else None


_POSITION = re.compile(r"ERROR: <input>:(\d+):(\d+):")


def error_character(message: str, expression: str) -> int | None:
    """The character of `expression` the first compile error of `message` names (`ERROR: <input>:2:7: ...`: cel-go's
    line and 1-based column), one past the end for an error at the end; None when there is none or it is outside."""
    at = _POSITION.search(message)
    if at is None:
        return None
    line, column = int(at.group(1)), int(at.group(2))
    lines = expression.split("\n")
    if line > len(lines) or column > len(lines[line - 1]) + 1:
        return None
    return sum(len(t) + 1 for t in lines[: line - 1]) + column - 1


def expression_position(crd: Any, path: fe.Path, message: str) -> tuple[str, int, int] | None:
    """The file, line and column of the first compile error in a rule's message (`ERROR: <input>:1:18: ...`),
    in any style of YAML scalar (kcel.k8s.manifests.scalars); None when it cannot be placed."""
    found = _expression_node(crd, path)
    character = error_character(message, found[2].value) if found is not None else None
    return character_position(crd, path, character) if character is not None else None


def character_position(crd: Any, path: fe.Path, character: int) -> tuple[str, int, int] | None:
    """The file, line and column of a character of a rule's (or messageExpression's) text, in any style of YAML
    scalar (kcel.k8s.manifests.scalars); None when it cannot be placed."""
    from kcel.k8s.manifests.scalars import value_positions

    found = _expression_node(crd, path)
    if found is None:
        return None
    file, offset, node = found
    start = offset + node.start_mark.index
    text = _text(file)
    positions = value_positions(text[start : offset + node.end_mark.index], node.style, node.value)
    if positions is None:
        return None
    at_offset = start + positions[min(character, len(positions) - 1)]
    line_start = text.rfind("\n", 0, at_offset) + 1
    return file, text.count("\n", 0, at_offset) + 1, at_offset - line_start + 1


@cache
def _markers(project: str) -> tuple[tuple[str, int, str], ...]:
    """(file, line, rule) of every XValidation marker in the project's Go files (vendor/ and hidden folders aside)."""
    found = []
    root = Path(project)
    for file in sorted(root.rglob("*.go")):
        parts = file.relative_to(root).parts
        if any(p == "vendor" or p.startswith(".") for p in parts[:-1]):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        shown = str(file.relative_to(Path.cwd()) if file.is_relative_to(Path.cwd()) else file)
        found += [(shown, text.count("\n", 0, marker.start) + 1, marker.rule) for marker in go_markers(text)]
    return tuple(found)


Marker = RuleSource  # a rule in a kubebuilder XValidation marker, with the file offset of each character


def go_markers(text: str) -> Iterator[Marker]:
    """Every XValidation rule of a Go file's text, read with tree-sitter as controller-gen reads markers; none
    when kcel[go] (tree-sitter) is not installed, or the text is not Go."""
    try:
        yield from xvalidation_rules(text)
    except GoSyntaxError:
        return


# -- the commands' findings --------------------------------------------------------------------------------------


def findings(error: str, warnings: Any, file: str, line: int = 0, rule: str = "object-invalid") -> list[Finding]:
    """An error (when there is one) and warnings on the file (and line)."""
    found = [Finding("error", error, file, line, rule=rule)] if error else []
    return found + [Finding("warning", warning, file, line, rule="warning") for warning in warnings]


NOT_CHECKED = "some validation rules were not checked because the object was invalid"
"""The API server's companion to schema errors that kept CEL rules from running (an error of the whole object)."""


def report_findings(report: Any) -> list[Finding]:
    """`kcel validate`: each error of an invalid object on the line of the field it names, else the whole message.
    Under strict field validation, each unknown or duplicate field at its line (with the field it may have been
    meant to be), then what the API server answers once they are fixed; the companion saying some rules were not
    checked goes with the error it accompanies, not on a line of its own."""
    name = f"{report.kind} {json.dumps(report.name)}"
    decoding = {problem["message"]: problem for problem in report.decoding}
    if report.status == "invalid" and (report.errors or report.decoding):
        found = [_place_finding(report, "error", f"{name}: strict decoding error: {p['message']}", p)
                 for p in decoding.values() if p["message"] not in report.warnings]  # fmt: skip
        found += _cause_findings(report, report.errors, name)
        found += _cause_findings(report, report.after_decoding_errors, f"once those fields are fixed, {name}")
    else:
        error = report.message if report.status in ("invalid", "error") else ""
        rule = "object-invalid" if report.status == "invalid" else "object-not-validated"
        found = findings(error, (), report.file, report.line, rule)
    for warning in report.warnings:
        problem = decoding.get(warning)
        if problem is not None:
            found.append(_place_finding(report, "warning", warning, problem))
        else:
            found.append(Finding("warning", warning, report.file, report.line, rule="warning"))
    return found


def _place_finding(report: Any, level: str, text: str, problem: dict[str, str]) -> Finding:
    """A decoding problem at its field's line, with kcel's hint."""
    line = object_field_line(report.file, report.document, report.item, problem["field"], report.line)
    hint = f" ({problem['hint']})" if problem.get("hint") else ""
    rule = "object-invalid" if level == "error" else "warning"
    return Finding(level, text + hint, report.file, line, rule=rule)


def _cause_findings(report: Any, causes: Sequence[dict[str, str]], name: str) -> list[Finding]:
    found, companions = [], []
    for cause in causes:
        field, message = cause.get("field", ""), cause.get("message", "")
        if field in ("", "<nil>") and NOT_CHECKED in message:
            companions.append(message)
            continue
        line = object_field_line(report.file, report.document, report.item, field, report.line)
        found.append(Finding("error", f"{name}: {field}: {message}", report.file, line, rule="object-invalid"))
    if companions and found:
        found[-1] = replace(found[-1], message=f"{found[-1].message}; {'; '.join(companions)}")
    elif companions:
        found.append(Finding("error", f"{name}: {'; '.join(companions)}", report.file, report.line,
                             rule="object-invalid"))  # fmt: skip
    return found


def field_places(report: Any, causes: Sequence[dict[str, str]] | None = None) -> list[str]:
    """`file:line: field` of each field an invalid object's errors (or `causes`) name, shown after the API
    server's message."""
    places = []
    for cause in report.errors if causes is None else causes:
        field = cause.get("field", "")
        if field and field != "<nil>":  # the API server's `<nil>`: an error of the object as a whole
            line = object_field_line(report.file, report.document, report.item, field, report.line)
            places.append(f"{report.file}:{line}: {field}")
    return list(dict.fromkeys(places))


def decoding_places(report: Any) -> list[str]:
    """`file:line: field (did you mean ...?)` of each unknown or duplicate field of an object."""
    places = []
    for problem in report.decoding:
        line = object_field_line(report.file, report.document, report.item, problem["field"], report.line)
        hint = f" ({problem['hint']})" if problem["hint"] else ""
        places.append(f"{report.file}:{line}: {problem['field']}{hint}")
    return places


def crd_findings(crd: Any, errors: Any, warnings: Any, lead: Any = None) -> list[Finding]:
    """`kcel check`: each error of a CRD on the line (and column) of the field it names, and on the Go marker's line
    when the rule came from one; warnings on the CRD. `lead(error)`: the line to show before the API server's text
    (its cause, kcel.k8s.surfaces.hints), or None."""
    found = []
    for error in errors:
        text = f"{crd.name}: {error.cause()['field']}: {error.cause()['message']}"
        first = lead(error) if lead is not None else None
        text = f"{first}\n\n{text}" if first else text
        file, line, column = crd_place(crd, error.field, error.cause()["message"])
        place = crd_rule_marker(crd, error.field)
        related: tuple[tuple[str, int, int, str], ...] = ()
        if place:  # on the Go source too, where the rule is written: one finding, two places
            marker_file, _, marker_line = place.rpartition(":")
            related = ((marker_file, int(marker_line), 0, "the kubebuilder marker the rule is generated from"),)
        found.append(Finding("error", text + _marker_note(place), file, line, column, rule="crd-rejected",
                             related=related))  # fmt: skip
    return found + findings("", warnings, crd.file, crd.line)


def checked_findings(where: str, checked: Any, origins: Any = None) -> list[Finding]:
    """`kcel check` of an object other than a CRD (`file: document N`): its errors and warnings where it starts;
    for an object kustomize patches made (`origins`, kcel.k8s.kustomize.traces.Origins), each error at the line
    of the field it names, in the file that wrote it."""
    file, line = document_place(where)
    if origins is None or not checked.errors:
        return findings("\n".join(checked.errors), checked.warnings, file, line, "crd-rejected")
    found = [Finding("error", error, at_file, at_line, rule="crd-rejected")
             for at_file, at_line, error in patched_error_places(checked.errors, origins, file, line)]  # fmt: skip
    return found + findings("", checked.warnings, file, line)


def patched_error_places(errors: Sequence[str], origins: Any, file: str, line: int) -> list[tuple[str, int, str]]:
    """(file, line, error) of each error of a patched object (`spec.x[0].expression: Invalid value: ...`): where
    the field it names was written; the object's `file` and `line` when the field cannot be found."""
    places = []
    for error in errors:
        written, document, elements = origins.locate(field_elements(error.partition(": ")[0]))
        found = _field_line(str(written), int(document), elements)
        places.append((str(written), found, error) if found else (file, line, error))
    return places


def error_places(crd: Any, errors: Any) -> list[str]:
    """Where in its file each error of a rejected CRD is (`file:line[:column]: field`, and the Go marker that made
    the rule), shown after the API server's message."""
    places = []
    for error in errors:
        file, line, column = crd_place(crd, error.field, error.cause()["message"])
        at = f"{line}:{column}" if column else str(line)
        places.append(f"{file}:{at}: {error.field}{_marker_note(crd_rule_marker(crd, error.field))}")
    return list(dict.fromkeys(places))


def _marker_note(place: str) -> str:
    return f" (the marker at {place})" if place else ""


def crd_test_case(crd: Any, check: Any) -> TestCase:
    """`kcel check -o junit`'s test case of a CRD, on the line of its first error."""
    file, line, _ = crd_place(crd, check.errors[0].field, "") if check.errors else (crd.file, crd.line, 0)
    message = "\n".join(f"{e.cause()['field']}: {e.cause()['message']}" for e in check.errors)
    return TestCase(crd.name, file, line, "failure" if check.errors else "passed", message)


def check_junit(crd_cases: list[TestCase], others: Any, origins_of: Any = None) -> str:
    """`kcel check -o junit`: a test case per CRD and per other object checked (a patched one's on the line of
    its first error, `origins_of(where)` telling where its fields were written)."""
    cases = list(crd_cases)
    for where, checked in others.checked:
        file, line = where.partition(": document ")[0], 0
        origins = origins_of(where) if origins_of is not None else None
        if origins is not None and checked.errors:
            file, line, _ = patched_error_places(checked.errors[:1], origins, file, line)[0]
        cases.append(TestCase(where, file, line, "passed" if checked.valid else "failure", "\n".join(checked.errors)))
    return junit_xml("kcel check", cases)


def admission_findings(records: Sequence[dict[str, Any]], problems: Sequence[str]) -> list[Finding]:
    """`kcel admit`: a denial (an error) or warnings on the line where the object's document starts."""
    found = [Finding("error", p, p.partition(": ")[0], title="kcel admit", rule="input-error") for p in problems]
    for record in records:
        file, line = document_place(str(record["source"]))
        if not record["allowed"]:
            found.append(Finding("error", record["message"], file, line, title="kcel admit", rule="admission-denied"))
        found += [Finding("warning", w, file, line, title="kcel admit", rule="warning") for w in record["warnings"]]
    return found


def admission_junit(records: Sequence[dict[str, Any]], problems: Sequence[str]) -> str:
    """`kcel admit -o junit`: a test case per request (failed when denied), one erred per input problem."""
    cases = [TestCase(p.partition(": ")[0], p.partition(": ")[0], 0, "error", p) for p in problems]
    for record in records:
        file, line = document_place(str(record["source"]))
        name = f"{record['source']}: {record['kind']} {record['name']} {record['operation']}"
        cases.append(TestCase(name, file, line, "passed" if record["allowed"] else "failure", record["message"]))
    return junit_xml("kcel admit", cases)


def document_place(where: str) -> tuple[str, int]:
    """The file and line of `file: document N[: ...]`, as the commands name a document (line 0 when unknown)."""
    file, _, rest = where.partition(": document ")
    number = rest.split(":")[0]
    return file, document_line(file, int(number)) if number.isdigit() else 0


def document_line(file: str, document: int) -> int:
    """The line where a document of a YAML file starts (1 for the first; 0 when the file cannot be read)."""
    from kcel.k8s.manifests.yamltext import split_documents

    try:
        chunks = split_documents(_text(file))
    except (OSError, UnicodeDecodeError):
        return 0
    if document >= len(chunks):
        return 0
    offset, chunk = chunks[document]
    skipped = len(chunk) - len(chunk.lstrip("\n"))  # blank lines before the document's text
    return _text(file).count("\n", 0, offset + skipped) + 1
