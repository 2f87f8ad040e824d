"""How controller-gen reads the arguments of a `+kubebuilder:validation:XValidation` marker, for the marker-comma lint
(kcel.k8s.rules.lints): a rule it reads otherwise than it was written.

controller-tools (pkg/markers/parse.go) scans the arguments with Go's text/scanner: `name=value` pairs a comma apart.
A value that is a Go string (`"..."`, or `...` between backquotes) is unquoted; any other value is the bare tokens up
to the next `,`, `;` or `}` — so `rule=self.all(a, a > 0)` is read as the rule `self.all(a` (kube-api-linter#99 is
the same misreading in a linter), an unquoted `message=... rule="..."` swallows the rule, and a `"` inside a quoted
rule ends it there (istio's `rule="default(self.address, "")..."`, controller-tools#1211). Whatever follows is then
an error that names neither the argument nor the column. Here the marker's comment line is read the same way and
each misreading is told at its column, with the marker as it should be written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kcel.k8s.rules.lints import LintFinding

MARKER = "+kubebuilder:validation:XValidation:"
# The marker's arguments (controller-tools pkg/crd/markers/validation.go XValidation) and their kinds.
ARGUMENTS = {"rule": "string", "message": "string", "messageExpression": "string", "reason": "string",
             "fieldPath": "string", "optionalOldSelf": "bool"}  # fmt: skip
_SWALLOWED = re.compile(r"[,\s](" + "|".join(ARGUMENTS) + r")\s*=")
_DELIMITERS = ",;}"


@dataclass(frozen=True)
class _Token:
    kind: str  # ident, string (quoted or raw), char, eof, unterminated
    text: str
    start: int
    end: int


def _scan(text: str, at: int, raw_strings: bool) -> _Token:
    """The token at or after `at` (whitespace skipped), as text/scanner's Scan with ScanIdents and ScanStrings."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if at >= len(text):
        return _Token("eof", "", at, at)
    first = text[at]
    if first == "_" or first.isalpha():
        end = at + 1
        while end < len(text) and (text[end] == "_" or text[end].isalpha() or unicodedata.category(text[end]) == "Nd"):
            end += 1
        return _Token("ident", text[at:end], at, end)
    if first == '"' or (first == "`" and raw_strings):
        end = at + 1
        while end < len(text) and text[end] != first:
            if first == '"' and text[end] == "\n":
                break
            end += 2 if first == '"' and text[end] == "\\" else 1
        if end >= len(text) or text[end] != first:
            return _Token("unterminated", text[at:], at, len(text))
        return _Token("string", text[at : end + 1], at, end + 1)
    return _Token("char", first, at, at + 1)


def _peek(text: str, at: int) -> str:
    """The next character that is not white space (text/scanner's peekNoSpace); "" at the end."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return text[at] if at < len(text) else ""


@dataclass(frozen=True)
class _Value:
    """One `name=value` as controller-gen read it: the value's text and where it is, and what ended it."""

    name: str
    text: str
    start: int
    end: int
    bare: bool  # not a Go string: the tokens up to a delimiter
    stop: str  # for a bare value, the delimiter that ended it ("" at the end of the marker)


@dataclass(frozen=True)
class _Reading:
    values: tuple[_Value, ...]
    error: str  # "" when the arguments were read to the end
    error_at: int


def _read(fields: str, raw_strings: bool = True) -> _Reading:
    """The arguments of a marker (the text after `XValidation:`), as Definition.parse reads them."""
    values: list[_Value] = []
    at = 0
    while True:
        name = _scan(fields, at, raw_strings)
        if name.kind != "ident":
            return _Reading(tuple(values), f"expected argument name, got {name.text!r}", name.start)
        equals = _scan(fields, name.end, raw_strings)
        if equals.text != "=":
            return _Reading(tuple(values), f"expected equals, got {equals.text!r}", equals.start)
        if name.text not in ARGUMENTS:
            return _Reading(tuple(values), f"unknown argument {name.text!r}", name.start)
        value = _value(fields, name.text, equals.end, raw_strings)
        if isinstance(value, _Reading):
            return _Reading(tuple(values), value.error, value.error_at)
        values.append(value)
        at = value.end
        if at >= len(fields):
            return _Reading(tuple(values), "", 0)
        comma = _scan(fields, at, raw_strings)
        if comma.text != ",":
            return _Reading(tuple(values), f"expected comma, got {comma.text!r}", comma.start)
        at = comma.end


def _value(fields: str, name: str, at: int, raw_strings: bool) -> _Value | _Reading:
    first = _scan(fields, at, raw_strings)
    if first.kind == "unterminated":
        return _Reading((), "literal not terminated", first.start)
    if ARGUMENTS[name] == "bool":
        if first.text not in ("true", "false"):
            return _Reading((), f"expected true or false, got {first.text!r}", first.start)
        return _Value(name, first.text, first.start, first.end, False, "")
    if first.kind == "string":
        return _Value(name, first.text[1:-1], first.start, first.end, False, "")
    end, token = first.end, first
    while _peek(fields, end) not in (*_DELIMITERS, ""):
        token = _scan(fields, end, raw_strings)
        if token.kind == "unterminated":
            return _Reading((), "literal not terminated", token.start)
        end = token.end
    return _Value(name, fields[first.start : end], first.start, end, True, _peek(fields, end))


def marker_lints(line: str) -> list[LintFinding]:
    """The marker-comma findings of one comment line holding an XValidation marker, at offsets into the line."""
    begin = line.find(MARKER)
    if begin < 0:
        return []
    offset = begin + len(MARKER)
    fields = line[offset:].rstrip()
    reading = _read(fields)
    if "not terminated" in reading.error:  # controller-gen tries again, backquotes read as plain characters
        reading = _read(fields, raw_strings=False)
    found = []
    for value in reading.values:
        if not value.bare:
            continue
        swallowed = _SWALLOWED.search(fields, value.start, value.end)
        if swallowed is not None:
            message = (f"the unquoted {value.name}= runs on into {swallowed.group(1)}=: controller-gen reads "
                       f"{value.name} as {value.text!r}")  # fmt: skip
            at = swallowed.start(1)
            fixed = fields[value.start : swallowed.start()].strip()
            found.append(_finding(message, value.name, fixed, ", then a comma before " + swallowed.group(1), at))
        elif value.stop and reading.error:
            message = (f"the unquoted {value.name}= ends at this {value.stop!r}: controller-gen reads {value.name} as "
                       f"{value.text!r}, then fails on the rest ({reading.error})")  # fmt: skip
            found.append(_finding(message, value.name, _intended(fields, value.start), "", value.end))
    if reading.error and not found and reading.error.startswith("expected comma"):
        last = reading.values[-1] if reading.values else None
        if last is not None and not last.bare and fields[last.start] == '"':
            message = (
                f"the quoted {last.name}= ends at this '\"': a quote inside it closes the Go string, so "
                f"controller-gen reads {last.name} as {last.text!r}, then fails ({reading.error})"
            )
            intended = _intended(fields, last.start)[1:-1] if _intended(fields, last.start).endswith('"') else ""
            found.append(_finding(message, last.name, intended, "", last.end - 1))
    return [f.shifted(offset) for f in found]


def _intended(fields: str, start: int) -> str:
    """The value as written: from its start to the next `,name=` of a known argument, or the marker's end."""
    following = re.compile(r",\s*(" + "|".join(ARGUMENTS) + r")\s*=").search(fields, start)
    return fields[start : following.start() if following is not None else len(fields)].strip()


def _finding(message: str, name: str, value: str, more: str, at: int) -> LintFinding:
    if value and "`" not in value:
        fix = f"quote it with backquotes: {name}=`{value}`{more}"
    elif value:
        fix = f'quote it, each " inside as \\": {name}="{value.replace(chr(34), chr(92) + chr(34))}"{more}'
    else:
        fix = f"quote {name}= with backquotes{more}"
    return LintFinding("marker-comma", message, fix, at, at + 1)
