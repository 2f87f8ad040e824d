"""Runners for the k8s-cases kinds about CRD field names and paths: property escaping and rule `fieldPath`s."""

from __future__ import annotations

import re
from collections.abc import Callable

from conformance.outcome import Case, Outcome
from kcel.k8s.rules.fieldpath import FieldPathError, valid_field_path
from kcel.k8s.schemas.escaping import escape, unescape
from kcel.k8s.schemas.schema import Schema

_CEL_IDENTIFIER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _escape_property_name(case: Case) -> Outcome:
    """escaping_test.go: Escape gives the expected identifier and Unescape undoes it, or Escape refuses."""
    name, expect = case.data["inputs"]["property_name"], case.data["expect"]
    escaped = escape(name)
    if not expect["escapable"]:
        return _check(case, escaped is None, f"escaped to {escaped!r}")
    if escaped is None or escaped != expect["escaped"]:
        return _check(case, False, f"escaped to {escaped!r}, expected {expect['escaped']!r}")
    if not _CEL_IDENTIFIER.fullmatch(escaped):
        return _check(case, False, f"{escaped!r} is not a CEL identifier")
    return _check(case, unescape(escaped) == name, f"unescaped to {unescape(escaped)!r}")


def _unescape_property_name(case: Case) -> Outcome:
    expect = case.data["expect"]
    unescaped = unescape(case.data["inputs"]["escaped"])
    wanted = expect.get("unescaped") if expect["ok"] else None
    return _check(case, unescaped == wanted, f"unescaped to {unescaped!r}, expected {wanted!r}")


def _crd_field_path(case: Case) -> Outcome:
    """validation_test.go TestValidateFieldPath: an error containing a text, or the path's String()."""
    inputs, expect = case.data["inputs"], case.data["expect"]
    try:
        path, _ = valid_field_path(inputs["field_path"], Schema.from_json(inputs["schema"]))
    except FieldPathError as err:
        wanted = expect.get("error_contains")
        return _check(case, wanted is not None and wanted in str(err), f"unexpected error {str(err)!r}")
    if "error_contains" in expect:
        return _check(case, False, f"expected an error containing {expect['error_contains']!r}, got {path}")
    wanted = expect.get("valid_field_path")
    return _check(case, wanted is None or str(path) == wanted, f"path {str(path)!r}, expected {wanted!r}")


def _check(case: Case, ok: bool, failure: str) -> Outcome:
    return Outcome(case.id, "passed") if ok else Outcome(case.id, "failed", failure)


RUNNERS: dict[str, Callable[[Case], Outcome]] = {
    "escape_property_name": _escape_property_name,
    "unescape_property_name": _unescape_property_name,
    "crd_field_path": _crd_field_path,
}
