"""A kustomize patch applied to one object, with the trace of what it changed (kcel.k8s.kustomize.traces).

Strategic merge is kustomize's (sigs.k8s.io/kustomize/kyaml merge2 with its built-in OpenAPI document): maps merge
key by key, a null deletes, and a list is replaced whole unless the kind's schema gives it a merge key. kustomize's
schema is of Kubernetes 1.21, so a CRD, a custom resource or a kind newer than that (ValidatingAdmissionPolicy)
has none: its strategic merge is a JSON merge patch (RFC 7386), as `kubectl kustomize` (kustomize v5.5) does,
`spec.versions` of a CRD included. Of the kinds kcel checks, only the webhook configurations have a merge key
there (`webhooks`, by `name`; not their `matchConditions`, newer than 1.21); the patch's items come first, merged
into the object's items of the same key, then the object's other items, as kyaml orders them. `$patch: delete`
and `$patch: replace` are followed; other directives are ignored.

JSON 6902 patches are applied by kcel.k8s.patch.jsonpatch (evanphx/json-patch, which kustomize uses too),
operation by operation so that the trace follows each one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kcel.k8s.kustomize.traces import Place, Trace, expanded
from kcel.k8s.patch.jsonpatch import JSONPatchError, apply_patch

MERGE_KEYS: dict[tuple[str, str], dict[tuple[str, ...], str]] = {
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): {("webhooks",): "name"},
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): {("webhooks",): "name"},
}
"""The merge keys of kustomize's schema for the kinds kcel checks (group, kind): list path -> key."""


class PatchError(ValueError):
    """A patch that cannot be applied (kustomize's build fails on it too); the message says why."""


def merge_keys_of(obj: Mapping[str, Any]) -> dict[tuple[str, ...], str]:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return MERGE_KEYS.get((group, str(obj.get("kind", ""))), {})


def strategic_merge(
    value: Mapping[str, Any], trace: Trace, patch: Mapping[str, Any], place: Place
) -> tuple[dict[str, Any], Trace]:
    """The object `value` (traced by `trace`) with kustomize's strategic merge of `patch` (written at `place`)."""
    merged, merged_trace = _merge(value, trace, patch, place, merge_keys_of(value), ())
    if not isinstance(merged, dict):
        raise PatchError("the patch deletes the whole object ($patch: delete)")
    return merged, merged_trace


_DELETED = object()


def _merge(
    value: Any, trace: Trace, patch: Any, place: Place, keys: Mapping[tuple[str, ...], str], at: tuple[str, ...]
) -> tuple[Any, Trace]:
    if not isinstance(patch, Mapping):
        return _new(patch), Trace(place)
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETED, trace
    if directive == "replace":
        return _new({k: v for k, v in patch.items() if k != "$patch"}), Trace(place)
    if not isinstance(value, Mapping):
        value, trace = {}, Trace(place)
    out = dict(value)
    children = expanded(trace, value)
    assert isinstance(children, dict)
    for key, change in patch.items():
        if key.startswith("$"):
            continue  # $setElementOrder, $retainKeys: directives of ordering, not of content
        if change is None:
            out.pop(key, None)
            children.pop(key, None)
            continue
        key_name = keys.get((*at, key))
        if key_name and isinstance(change, list) and isinstance(value.get(key), list):
            out[key], children[key] = _merge_items(value[key], children[key], change, place.child(key), key_name)
        elif isinstance(change, Mapping) and key in value:
            merged, merged_trace = _merge(value[key], children[key], change, place.child(key), keys, (*at, key))
            if merged is _DELETED:
                out.pop(key, None)
                children.pop(key, None)
            else:
                out[key], children[key] = merged, merged_trace
        elif not (isinstance(change, Mapping) and change.get("$patch") == "delete"):
            out[key], children[key] = _new(change), Trace(place.child(key))
    return out, Trace(trace.place, children)


def _merge_items(items: list[Any], trace: Trace, patch: list[Any], place: Place, key: str) -> tuple[list[Any], Trace]:
    """A list merged by key: the patch's items first (each merged into the item of its key), then the others."""
    children = expanded(trace, items)
    assert isinstance(children, list)
    by_key = {item[key]: i for i, item in enumerate(items) if isinstance(item, Mapping) and key in item}
    used: set[int] = set()
    out: list[Any] = []
    traces: list[Trace] = []
    for i, change in enumerate(patch):
        found = by_key.get(change.get(key)) if isinstance(change, Mapping) else None
        if found is not None:
            used.add(found)
        if isinstance(change, Mapping) and change.get("$patch") == "delete":
            continue
        if found is None:
            out.append(_new(change))
            traces.append(Trace(place.child(i)))
            continue
        merged, merged_trace = _merge(items[found], children[found], change, place.child(i), {}, ())
        out.append(merged)
        traces.append(merged_trace)
    for i, item in enumerate(items):
        if i not in used:
            out.append(item)
            traces.append(children[i])
    return out, Trace(trace.place, traces)


def _new(value: Any) -> Any:
    """A value the patch sets, copied, without the nulls a merge patch uses to delete (RFC 7386)."""
    if isinstance(value, Mapping):
        return {k: _new(v) for k, v in value.items() if v is not None and not str(k).startswith("$")}
    if isinstance(value, list):
        return [_new(v) for v in value]
    return value


def json_patch(
    value: Mapping[str, Any], trace: Trace, operations: Sequence[Any], place: Place
) -> tuple[dict[str, Any], Trace]:
    """The object with a JSON 6902 patch applied (the operations written at `place`, a list)."""
    current: Any = value
    for i, operation in enumerate(operations):
        if not isinstance(operation, Mapping):
            raise PatchError(f"operation {i}: must be an object with op and path")
        try:
            after = apply_patch(current, [operation])
        except JSONPatchError as err:
            raise PatchError(f"operation {i} ({operation.get('op')} {operation.get('path')}): {err}") from None
        trace = _traced(current, trace, operation, place.child(i).child("value"))
        current = after
    if not isinstance(current, dict):
        raise PatchError("the patched document is no longer an object")
    return current, trace


def _tokens(pointer: Any) -> list[str] | None:
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _traced(value: Any, trace: Trace, operation: Mapping[str, Any], place: Place) -> Trace:
    """The trace after one operation that succeeded on `value`."""
    kind, path = operation.get("op"), _tokens(operation.get("path"))
    if path is None or kind == "test":
        return trace
    if kind in ("add", "replace"):
        return _put(value, trace, path, Trace(place), insert=kind == "add")
    if kind == "remove":
        return _put(value, trace, path, None, insert=False)
    source = _tokens(operation.get("from"))
    moved = _node(value, trace, source) if source is not None else None
    if moved is None:
        return Trace(place)  # a move or copy kcel cannot follow: the whole object is the patch's
    if kind == "move":
        trace = _put(value, trace, source or [], None, insert=False)
        value = apply_patch(value, [{"op": "remove", "path": operation["from"]}])
    return _put(value, trace, path, moved, insert=True)


def _node(value: Any, trace: Trace, path: list[str]) -> Trace | None:
    for token in path:
        children = expanded(trace, value)
        if isinstance(children, dict) and isinstance(value, Mapping) and token in children:
            trace, value = children[token], value[token]
        elif isinstance(children, list) and token.isdigit() and int(token) < len(children):
            trace, value = children[int(token)], value[int(token)]
        else:
            return None
    return trace


def _put(value: Any, trace: Trace, path: list[str], new: Trace | None, insert: bool) -> Trace:
    """The trace with the node at `path` set to `new` (inserted into a list when `insert`), or removed (None)."""
    if not path:
        return new if new is not None else trace
    children = expanded(trace, value)
    token, rest = path[0], path[1:]
    if isinstance(children, dict) and isinstance(value, Mapping):
        if rest:
            if token not in children:
                return trace
            children[token] = _put(value[token], children[token], rest, new, insert)
        elif new is None:
            children.pop(token, None)
        else:
            children[token] = new
        return Trace(trace.place, children)
    if isinstance(children, list) and isinstance(value, list):
        index = len(children) if token == "-" else int(token) if token.isdigit() else None
        if index is None or index > len(children):
            return Trace(trace.place)  # an index kcel cannot follow (negative): the list as a whole
        if rest:
            if index >= len(children):
                return trace
            children[index] = _put(value[index], children[index], rest, new, insert)
        elif new is None:
            children.pop(index)
        elif insert:
            children.insert(index, new)
        elif index < len(children):
            children[index] = new
        return Trace(trace.place, children)
    return trace
