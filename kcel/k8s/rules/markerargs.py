"""How controller-gen reads the arguments of a `+kubebuilder:validation:XValidation` marker, for the marker-comma lint
(kcel.k8s.rules.lints): a rule it reads otherwise than it was written.

controller-tools (pkg/markers/parse.go) scans the arguments with Go's text/scanner: `name=value` pairs a comma apart.
A value that is a Go string (`"..."`, or `...` between backquotes) is unquoted; any other value is the bare tokens up
to the next `,`, `;`, `:` or `}` (v0.21.0) — so `rule=self.all(a, a > 0)` is read as the rule `self.all(a`
(kube-api-linter#99 is the same misreading in a linter), an unquoted `message=... rule="..."` swallows the rule,
and a `"` inside a quoted rule ends it there (istio's `rule="default(self.address, "")..."`, controller-tools#1211).
Whatever follows is then an error that names neither the argument nor the column. Here the marker's comment line is
read by the parser the derivation uses (kcel.k8s.gotypes.markerargs) and each misreading is told at its column,
with the marker as it should be written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcel.k8s.gotypes.markerargs import Argument, ArgumentReading, MarkerSyntaxError, parse_arguments
from kcel.k8s.rules.lints import LintFinding

MARKER = "+kubebuilder:validation:XValidation:"
# The marker's arguments (controller-tools pkg/crd/markers/validation.go XValidation) and their kinds.
_TEXT = Argument("string", optional=True)
ARGUMENTS = {"rule": Argument("string"), "message": _TEXT, "messageExpression": _TEXT, "reason": _TEXT,
             "fieldPath": _TEXT, "optionalOldSelf": Argument("bool", optional=True)}  # fmt: skip
_SWALLOWED = re.compile(r"[,\s](" + "|".join(ARGUMENTS) + r")\s*=")


@dataclass(frozen=True)
class _Value:
    """One `name=value` as controller-gen read it: the value's text and where it is, and what ended it."""

    name: str
    text: str
    start: int
    end: int
    bare: bool  # a string argument not written as a Go string: the tokens up to a delimiter
    stop: str  # for a bare value, the delimiter that ended it ("" at the end of the marker)


@dataclass(frozen=True)
class _Reading:
    values: tuple[_Value, ...]
    error: str  # "" when the arguments were read to the end


def _read(fields: str) -> _Reading:
    """The arguments of a marker (the text after `XValidation:`), read by kcel.k8s.gotypes.markerargs as
    controller-gen reads them."""
    readings: list[ArgumentReading] = []
    try:
        parse_arguments(fields, ARGUMENTS, readings)
        error = ""
    except MarkerSyntaxError as err:
        error = err.reason
    values = []
    for read in readings:
        text = fields[read.start : read.end].rstrip()
        if read.quoted:
            text = text[1:-1]
        bare = not read.quoted and ARGUMENTS[read.name].kind == "string"
        values.append(_Value(read.name, text, read.start, read.end, bare, read.stop))
    return _Reading(tuple(values), error)


def marker_lints(line: str) -> list[LintFinding]:
    """The marker-comma findings of one comment line holding an XValidation marker, at offsets into the line."""
    begin = line.find(MARKER)
    if begin < 0:
        return []
    offset = begin + len(MARKER)
    fields = line[offset:].rstrip()
    reading = _read(fields)
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
