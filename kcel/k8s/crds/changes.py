"""What changes between the CRD installed and a new one, for the objects already stored: versions no longer
served, removed fields, tightened types, enums and bounds, new required fields, new or changed CEL rules; and
whether the API server would accept the update at all (rules that no longer compile, costs over the limits).

A change is `breaking` when an object valid before may be invalid (or lose data) after; the others loosen.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kcel.k8s.crds.crd import CRD, check_crd
from kcel.k8s.schemas.schema import Schema

# Bounds an object must stay under (a lower new value tightens) and over (a higher new value tightens).
_UPPER = {"max_length": "maxLength", "max_items": "maxItems", "max_properties": "maxProperties", "maximum": "maximum"}
_LOWER = {"min_length": "minLength", "min_items": "minItems", "min_properties": "minProperties", "minimum": "minimum"}


@dataclass(frozen=True)
class Change:
    """One difference, at a version's field path (`spec.replicas`; "" for the version itself)."""

    version: str
    path: str
    what: str  # version, removed, added, type, enum, bound, pattern, format, required, rule, update
    text: str
    breaking: bool = True

    def line(self) -> str:
        where = f"{self.version}: {self.path}" if self.path else self.version
        return f"{where}: {self.text}"


def crd_changes(installed: CRD, new: CRD, k8s_version: str | None = None) -> list[Change]:
    """Every change from `installed` to `new`, version by version, then the API server's verdict on the update."""
    found: list[Change] = []
    new_versions = {v.name: v for v in new.versions}
    for old_version in installed.versions:
        now = new_versions.get(old_version.name)
        if now is None or (old_version.served and not now.served):
            found.append(Change(old_version.name, "", "version", "no longer served: its stored objects cannot be read"))
            continue
        old_schema, new_schema = installed.schema_of(old_version), new.schema_of(now)
        if old_schema is not None and new_schema is not None:
            found += [Change(old_version.name, *change) for change in _schema_changes(old_schema, new_schema, "")]
    check = check_crd(new, installed, k8s_version=k8s_version)
    found += [Change("", "", "update", f"the API server rejects the update: {e.cause()}") for e in check.errors]
    return found


def _schema_changes(old: Schema, new: Schema, path: str) -> Iterator[tuple[str, str, str, bool]]:
    """(path, what, text, breaking) for one node and, recursively, its children."""
    if old.type != new.type and old.type and new.type:
        yield path, "type", f"type {old.type} became {new.type}", True
        return
    if old.int_or_string and not new.int_or_string:
        yield path, "type", "no longer int-or-string", True
    yield from _bounds(old, new, path)
    yield from _rules(old, new, path)
    old_properties, new_properties = old.properties or {}, new.properties or {}
    added = [name for name in new_properties if name not in old_properties]
    for name, schema in old_properties.items():
        child = f"{path}.{name}" if path else name
        if name in new_properties:
            yield from _schema_changes(schema, new_properties[name], child)
        elif not new.preserve_unknown_fields:
            renamed = [other for other in added if new_properties[other].type == schema.type]
            hint = f" (renamed to {', '.join(renamed)}?)" if renamed else ""
            yield child, "removed", f"removed: stored values are pruned on their next write{hint}", True
    for name in added:
        yield f"{path}.{name}" if path else name, "added", "added", False
    new_required = [name for name in new.required if name not in old.required]
    for name in new_required:
        yield path, "required", f"{name} is now required", True
    if old.items is not None and new.items is not None:
        yield from _schema_changes(old.items, new.items, f"{path}[*]")
    if isinstance(old.additional_properties, Schema) and isinstance(new.additional_properties, Schema):
        yield from _schema_changes(old.additional_properties, new.additional_properties, f"{path}[*]")
    if old.preserve_unknown_fields and not new.preserve_unknown_fields:
        yield path, "removed", "no longer preserves unknown fields: those stored are pruned on their next write", True


def _bounds(old: Schema, new: Schema, path: str) -> Iterator[tuple[str, str, str, bool]]:
    for attribute, name in _UPPER.items():
        before, after = getattr(old, attribute), getattr(new, attribute)
        if before != after:
            tighter = after is not None and (before is None or after < before)
            yield path, "bound", f"{name} {_shown(before)} became {_shown(after)}", tighter
    for attribute, name in _LOWER.items():
        before, after = getattr(old, attribute), getattr(new, attribute)
        if before != after:
            tighter = after is not None and (before is None or after > before)
            yield path, "bound", f"{name} {_shown(before)} became {_shown(after)}", tighter
    if old.enum != new.enum:
        if new.enum is None:
            yield path, "enum", "no longer an enum", False
        else:
            gone = [v for v in old.enum or () if v not in new.enum]
            if old.enum is None:
                yield path, "enum", f"now an enum of {_values(new.enum)}", True
            elif gone:
                yield path, "enum", f"enum no longer allows {_values(gone)}", True
            else:
                yield path, "enum", f"enum now also allows {_values(v for v in new.enum if v not in old.enum)}", False
    if old.pattern != new.pattern and new.pattern:
        yield path, "pattern", f"pattern {old.pattern or '(none)'!s} became {new.pattern}", True
    if old.format != new.format and new.format:
        yield path, "format", f"format {old.format or '(none)'} became {new.format}", True
    if old.nullable and not new.nullable:
        yield path, "type", "no longer nullable", True


def _rules(old: Schema, new: Schema, path: str) -> Iterator[tuple[str, str, str, bool]]:
    before = {rule.rule for rule in old.validations}
    after = {rule.rule for rule in new.validations}
    for rule in new.validations:
        if rule.rule not in before:
            yield path, "rule", f"new rule: {rule.rule}", True
    for rule in old.validations:
        if rule.rule not in after:
            yield path, "rule", f"rule removed: {rule.rule}", False


def _shown(value: float | None) -> str:
    if value is None:
        return "(none)"
    return str(int(value)) if float(value).is_integer() else str(value)


def _values(values: Iterable[Any]) -> str:
    return ", ".join(json.dumps(v) for v in values)
