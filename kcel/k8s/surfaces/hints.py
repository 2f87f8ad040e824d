"""What to show first of an API server error, and the fix where it is known: the cause (`undefined field
'nodeLabl'`) ahead of the `Invalid value: {"Rule":...}` text it is buried in, with `did you mean` for a field or a
function with a near name, and the Kubernetes versions that have a function this version lacks.

The API server's text itself is never changed: callers show the lead, then that text (`-o json` and the plain report
keep the text alone).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

_COMPILE_ERROR = re.compile(r"ERROR: <input>:\d+:\d+: ([^\n]*)")
_UNDEFINED_FIELD = re.compile(r"undefined field '([^']+)'")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")
MAX_FIELDS = 10_000  # property names gathered from a schema for `did you mean`


def lead(message: str, environment: str = "crd", version: str | None = None, fields: Iterable[str] = (),
         cost_hint: str | None = None) -> str | None:  # fmt: skip
    """The first line to show of an error: its first compile error's cause with a hint, or the fix a cost error
    has (`cost_hint`); None when the message is short enough to lead by itself."""
    found = _COMPILE_ERROR.search(message)
    if found is not None:
        cause = found.group(1)
        hint = _hint(cause, environment, version, fields)
        return f"{cause} ({hint})" if hint else cause
    if cost_hint and "exceeds budget" in message:
        return f"estimated cost over the limit: {cost_hint}"
    return None


def with_lead(message: str, first: str | None) -> str:
    """The message as a diagnostic or an annotation shows it: the lead, a blank line, the API server's text."""
    return f"{first}\n\n{message}" if first else message


def _hint(cause: str, environment: str, version: str | None, fields: Iterable[str]) -> str:
    from kcel.k8s.surfaces.catalog import functions, versions_with

    field = _UNDEFINED_FIELD.search(cause)
    if field is not None:
        near = difflib.get_close_matches(field.group(1), sorted(set(fields)), n=1, cutoff=0.75)
        return f"did you mean '{near[0]}'?" if near else ""
    undeclared = _UNDECLARED.search(cause)
    if undeclared is None:
        return ""
    name = undeclared.group(1)
    having = versions_with(environment, name)
    if having:
        return f"Kubernetes {_versions(having)} have a function '{name}'; this is Kubernetes {version or 'the newest'}"
    from kcel.k8s.surfaces.environments import environment as environment_named

    names = [*functions(environment, version), *environment_named(environment, version).variables]
    near = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return f"did you mean '{near[0]}'?" if near else ""


def _versions(versions: tuple[str, ...]) -> str:
    from kcel.matrix import versions_text

    return versions_text(list(versions))


def schema_fields(schema: Any) -> list[str]:
    """Every property name in a schema and below it (items, additionalProperties), at most MAX_FIELDS; the schema
    as written (a mapping) or as kcel reads it (kcel.k8s.schemas.Schema)."""
    found: list[str] = []
    stack = [schema]
    while stack and len(found) < MAX_FIELDS:
        node = stack.pop()
        if isinstance(node, Mapping):
            properties, below = node.get("properties"), (node.get("items"), node.get("additionalProperties"))
        elif node is not None and not isinstance(node, bool):
            properties = getattr(node, "properties", None)
            below = (getattr(node, "items", None), getattr(node, "additional_properties", None))
        else:
            continue
        if isinstance(properties, Mapping):
            found += [str(name) for name in properties]
            stack += list(properties.values())
        stack += [child for child in below if child is not None]
    return found[:MAX_FIELDS]
