"""A MutatingAdmissionPolicy's ApplyConfiguration merged into the object as the API server does it.

k8s.io/apiserver `ApplyStructuredMergeDiff` types the patch (strictly) and the live object (duplicates allowed
since 1.35) with structured-merge-diff, rejects atomic values in the patch, and merges with SMD's
`TypedValue.Merge`: the patch wins at leaves, granular maps and structs merge key by key, associative lists
(`x-kubernetes-list-type: map` or `set`) merge item by item in SMD's order, atomic values are replaced. Texts
follow SMD v6.4 (typed/validate.go, merge.go, helpers.go) with Go's formatting of the values they print.

Go walks maps in random order; here keys are visited sorted, so when a map holds several errors (SMD stops at
its first undeclared field) or atomics, the one reported and the order are deterministic where Go's are not.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kcel.gofloat import format_double
from kcel.k8s.patch.typed import Atom, ListType, MapType, ObjectType, Scalar, TypeIndex, TypeRef


class MergeError(Exception):
    """Why the merge failed, worded as the API server's text inside `error applying patch: %w`."""


class _Missing:
    """An absent value (Go's nil Value), unlike an explicit JSON null (None)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


# -- Go's formatting of unstructured values ------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float))  # bool is an int


def _go_quote(text: str) -> str:
    """strconv.Quote (%q)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")  # a lone surrogate: Go decoded the JSON escape as U+FFFD
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _go_v(v: Any) -> str:
    """fmt's %v of an unstructured value: `map[a:1 b:[x y]]`."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, Mapping):
        return "map[" + " ".join(f"{k}:{_go_v(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_v(x) for x in v) + "]"
    return str(v)


def _go_sharp_v(v: Any) -> str:
    """fmt's %#v of an unstructured value: `map[string]interface {}{"a":1}`."""
    if v is None:
        return "interface {}(nil)"
    if isinstance(v, str):
        return _go_quote(v)
    if isinstance(v, Mapping):
        return "map[string]interface {}{" + ", ".join(f"{_go_quote(k)}:{_go_sharp_v(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[]interface {}{" + ", ".join(_go_sharp_v(x) for x in v) + "}"
    return _go_v(v)


def _go_type(v: Any) -> str:
    """fmt's %T."""
    if isinstance(v, bool):
        return "bool"
    if _is_int(v):
        return "int64"
    names = {str: "string", float: "float64", dict: "map[string]interface {}", list: "[]interface {}"}
    return next((n for t, n in names.items() if isinstance(v, t)), "<nil>")


def _smd_string(v: Any) -> str:
    """SMD's value.ToString, which path elements print their keys with."""
    if v is None:
        return "null"
    if isinstance(v, str):
        return _go_quote(v)
    if isinstance(v, list):
        return "[" + ",".join(_smd_string(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "".join(f"{k}={_smd_string(v[k])}" for k in sorted(v))
    return _go_v(v)


def _ident(v: Any) -> Hashable:
    """A hashable identity with SMD's value.Equals: ints equal floats numerically, booleans equal no number."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    if isinstance(v, Mapping):
        return ("m", tuple((k, _ident(v[k])) for k in sorted(v)))
    if isinstance(v, list):
        return ("l", tuple(_ident(x) for x in v))
    return ("s", v) if isinstance(v, str) else ("z",)


# -- errors and path elements ----------------------------------------------------------------


@dataclass(frozen=True)
class _Error:
    """One of SMD's ValidationErrors: the field path (empty at the root) and what is wrong there."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def _joined(errors: list[_Error]) -> str:
    """ValidationErrors.Error()."""
    if len(errors) == 1:
        return str(errors[0])
    return "\n".join(["errors:", *(f"  {e}" for e in errors)])


@dataclass(frozen=True)
class _Element:
    """An associative list item's path element: equal by value, printed as SMD prints it (`[name="x"]`)."""

    ident: Hashable
    text: str = field(compare=False)


@dataclass(frozen=True)
class _Walk:
    """A validation or merge walk: the types it looks up and SMD's options (optional list keys, duplicates)."""

    index: TypeIndex
    optional_keys: bool  # SMD >= v6.3: a keyed item may omit some (not all) keys
    allow_duplicates: bool = False

    def item_element(self, lt: ListType, child: Any) -> tuple[_Element | None, str]:
        """listItemToPathElement: the item's key, or why it has none."""
        if lt.relationship != "associative":
            return None, "invalid indexing of non-associative list"
        if not lt.keys:
            if isinstance(child, Mapping):
                return None, "associative list without keys has an element that's a map type"
            if isinstance(child, list):
                return None, "not supported: associative list with lists as elements"
            if child is None:
                return None, "associative list without keys has an element that's an explicit null"
            return _Element(("v", _ident(child)), f"[={_smd_string(child)}]"), ""
        if child is None:
            return None, "associative list with keys may not have a null element"
        if not isinstance(child, Mapping):
            return None, "associative list with keys may not have non-map elements"
        pairs = []
        for name in lt.keys:
            if name in child:
                pairs.append((name, child[name]))
                continue
            atom = self.index.resolve(lt.element)
            if atom is None or atom.map_type is None:
                why = "invalid elementType for list" if atom is None else "associative list may not have non-map types"
                return None, f"couldn't find default value for {name}: {why}"
            found = atom.map_type.fields.get(name)
            if found is not None and found.default is not None:
                pairs.append((name, found.default))
            elif not self.optional_keys:
                omits = f"associative list with keys has an element that omits key field {_go_quote(name)}"
                return None, omits + " (and doesn't have default value)"
        if not pairs:
            keys = "[" + " ".join(_go_quote(k) for k in lt.keys) + "]"
            return None, (
                f"associative list with keys has an element that omits all key fields {keys} "
                "(and doesn't have default values for any key fields)"
            )
        pairs.sort(key=lambda pair: pair[0])
        text = "[" + ",".join(f"{name}={_smd_string(value)}" for name, value in pairs) + "]"
        return _Element(("k", tuple((name, _ident(value)) for name, value in pairs)), text), ""


def _pick(atom: Atom, v: Any) -> str:
    """deduceAtom + handleAtom: the part of the atom that handles this value (map, scalar, list, in that order
    when the value fits none, e.g. null)."""
    if _is_scalar(v) and atom.scalar is not None:
        return "scalar"
    if isinstance(v, list) and atom.list_type is not None:
        return "list"
    if isinstance(v, Mapping) and atom.map_type is not None:
        return "map"
    if atom.map_type is not None:
        return "map"
    return "scalar" if atom.scalar is not None else "list" if atom.list_type is not None else ""


def _invalid_atom(ref: TypeRef) -> str:
    return "schema error: invalid atom: " + (f"named type: {ref.named}" if ref.named is not None else "inlined")


def _scalar_error(kind: Scalar, v: Any, prefix: str = "") -> str:
    """validateScalar; "" when the value fits (null and absent always do)."""
    if v is None or v is MISSING:
        return ""
    if kind == "numeric" and not (_is_int(v) or isinstance(v, float)):
        return f"{prefix}expected numeric (int or float), got {_go_type(v)}"
    if kind == "string" and not isinstance(v, str):
        return f"{prefix}expected string, got &value.valueUnstructured{{Value:{_go_sharp_v(v)}}}"
    if kind == "boolean" and not isinstance(v, bool):
        return f"{prefix}expected boolean, got &{{{_go_v(v)}}}"
    if kind == "untyped" and not _is_scalar(v):
        return f"{prefix}expected any scalar, got &{{{_go_v(v)}}}"
    return ""


# -- typing a value (typed.AsTyped) ------------------------------------------------------------


def _validate(walk: _Walk, v: Any, ref: TypeRef, path: str) -> list[_Error]:
    atom = walk.index.resolve(ref)
    if atom is None:
        return [_Error(path, f"schema error: no type found matching: {ref.describe()}")]
    part = _pick(atom, v)
    if part == "map" and atom.map_type is not None:
        return _validate_map(walk, atom.map_type, v, path)
    if part == "list" and atom.list_type is not None:
        return _validate_list(walk, atom.list_type, v, path)
    if part == "scalar" and atom.scalar is not None:
        message = _scalar_error(atom.scalar, v)
        return [_Error(path, message)] if message else []
    return [_Error(path, _invalid_atom(ref))]


def _validate_map(walk: _Walk, m: MapType, v: Any, path: str) -> list[_Error]:
    if v is None:
        return []
    if not isinstance(v, Mapping):
        return [_Error(path, f"expected map, got &{{{_go_v(v)}}}")]
    errors: list[_Error] = []
    for key in sorted(v):
        declared = m.fields.get(key)
        if declared is None and m.element.empty:
            errors.append(_Error(f"{path}.{key}", "field not declared in schema"))
            break  # SMD stops walking this map
        errors += _validate(walk, v[key], declared.type if declared else m.element, f"{path}.{key}")
    return errors


def _validate_list(walk: _Walk, lt: ListType, v: Any, path: str) -> list[_Error]:
    if v is None:
        return []
    if not isinstance(v, list):
        return [_Error(path, f"expected list, got &{{{_go_v(v)}}}")]
    errors: list[_Error] = []
    seen: set[Hashable] = set()
    for i, child in enumerate(v):
        text = f"[{i}]"
        if lt.relationship == "associative":
            element, why = walk.item_element(lt, child)
            if element is None:
                return [*errors, _Error(path, f"element {i}: {why}")]  # SMD gives up on the list
            if element.ident in seen and not walk.allow_duplicates:
                errors.append(_Error(path, f"duplicate entries for key {element.text}"))
            seen.add(element.ident)
            text = element.text
        errors += _validate(walk, child, lt.element, path + text)
    return errors


def _atomics(index: TypeIndex, ref: TypeRef, v: Any, path: str) -> list[str]:
    """smd.go findAtomics: atomic maps, structs and lists the patch sets (declared fields only)."""
    atom = index.resolve(ref)
    if atom is None:
        return []
    found: list[str] = []
    if isinstance(v, Mapping) and atom.map_type is not None:
        if atom.map_type.relationship == "atomic":
            found.append(path)
        for key in sorted(v):
            declared = atom.map_type.fields.get(key)
            if declared is not None:
                found += _atomics(index, declared.type, v[key], f"{path}.{key}")
    if isinstance(v, list) and atom.list_type is not None:
        if atom.list_type.relationship == "atomic":
            found.append(path)
        for i, child in enumerate(v):
            found += _atomics(index, atom.list_type.element, child, f"{path}[{i}]")
    return found


# -- merging (typed.TypedValue.Merge with ruleKeepRHS) -----------------------------------------


def _keep_rhs(lhs: Any, rhs: Any) -> Any:
    return rhs if rhs is not MISSING else lhs


def _merge(walk: _Walk, lhs: Any, rhs: Any, ref: TypeRef, path: str) -> tuple[Any, list[_Error]]:
    """The merged value (MISSING for none) and errors. A value of another kind than the other side's (possible
    in untyped parts) is replaced by the patch's."""
    if lhs is MISSING and rhs is MISSING:
        return MISSING, [_Error(path, "at least one of lhs and rhs must be provided")]
    atom = walk.index.resolve(ref)
    if atom is None:
        return MISSING, [_Error(path, f"schema error: no type found matching: {ref.describe()}")]
    part = _pick(atom, rhs if rhs is not MISSING else lhs)
    if part == "map" and atom.map_type is not None:
        return _merge_map(walk, atom.map_type, lhs, rhs, path)
    if part == "list" and atom.list_type is not None:
        return _merge_list(walk, atom.list_type, lhs, rhs, path)
    if part == "scalar" and atom.scalar is not None:
        left, right = _scalar_error(atom.scalar, lhs, "lhs: "), _scalar_error(atom.scalar, rhs, "rhs: ")
        if left and right:
            return MISSING, [_Error(path, left), _Error(path, right)]
        return _keep_rhs(lhs, rhs), []
    return MISSING, [_Error(path, _invalid_atom(ref))]


def _merge_map(walk: _Walk, m: MapType, lhs: Any, rhs: Any, path: str) -> tuple[Any, list[_Error]]:
    left = lhs if isinstance(lhs, Mapping) else {}
    right = rhs if isinstance(rhs, Mapping) else {}
    if m.relationship == "atomic" or (not left and not right):
        return _keep_rhs(lhs, rhs), []  # both empty or null: keep the distinction as a leaf
    out: dict[str, Any] = {}
    errors: list[_Error] = []
    pairs = [(k, left[k], right.get(k, MISSING)) for k in left]
    pairs += [(k, MISSING, right[k]) for k in right if k not in left]
    for key, lv, rv in pairs:
        declared = m.fields.get(key)
        merged, more = _merge(walk, lv, rv, declared.type if declared else m.element, f"{path}.{key}")
        errors += more
        if merged is not MISSING:
            out[key] = merged
    return (out if out else MISSING), errors


def _merge_list(walk: _Walk, lt: ListType, lhs: Any, rhs: Any, path: str) -> tuple[Any, list[_Error]]:
    left = lhs if isinstance(lhs, list) else []
    right = rhs if isinstance(rhs, list) else []
    if lt.relationship == "atomic" or (not left and not right):
        return _keep_rhs(lhs, rhs), []
    return _merge_items(walk, lt, left, right, path)


def _index(
    walk: _Walk, lt: ListType, items: list[Any], duplicates: bool, path: str
) -> tuple[list[_Element], dict[Hashable, Any], list[_Error]]:
    """indexListPathElements: each item's key, and the item per key (null for a duplicated key)."""
    elements: list[_Element] = []
    observed: dict[Hashable, Any] = {}
    errors: list[_Error] = []
    for i, child in enumerate(items):
        element, why = walk.item_element(lt, child)
        if element is None:
            errors.append(_Error(path, f"element {i}: {why}"))
            continue
        if element.ident in observed:
            if not duplicates:
                errors.append(_Error(path, f"duplicate entries for key {element.text}"))
                continue
            observed[element.ident] = None  # duplicates are not merged with the patch's item
        else:
            observed[element.ident] = child
        elements.append(element)
    return elements, observed, errors


def _merge_items(walk: _Walk, lt: ListType, lhs: list[Any], rhs: list[Any], path: str) -> tuple[Any, list[_Error]]:
    """SMD's visitListItems step by step, for its order: the live items the patch does not name stay where they
    are, the patch's items come in the patch's order, each shared one where the walk meets it in both lists."""
    rhs_keys, observed_rhs, errors = _index(walk, lt, rhs, False, path)
    lhs_keys, observed_lhs, lhs_errors = _index(walk, lt, lhs, True, path)
    errors += lhs_errors
    if errors:
        return MISSING, errors
    shared = [k for k in rhs_keys if k.ident in observed_lhs]
    next_shared = shared.pop(0) if shared else None
    merged_rhs: set[Hashable] = set()
    out: list[Any] = []

    def add(element: _Element, lv: Any, rv: Any) -> None:
        merged, _ = _merge(walk, lv, rv, lt.element, path + element.text)  # SMD drops item errors
        if merged is not MISSING:
            out.append(merged)

    li = ri = 0
    while li < len(lhs_keys) or ri < len(rhs_keys):
        if li < len(lhs_keys) and ri < len(rhs_keys):
            key = lhs_keys[li]
            if key == rhs_keys[ri]:
                merged_rhs.add(key.ident)
                add(key, observed_lhs.get(key.ident, MISSING), observed_rhs[key.ident])
                li, ri = li + 1, ri + 1
                next_shared = shared.pop(0) if shared else None
                continue
            if key.ident in observed_rhs and next_shared is not None and next_shared != key:
                li += 1  # shared, but its turn comes with the patch's order
                continue
        if li < len(lhs_keys):
            key = lhs_keys[li]
            if key.ident not in observed_rhs:
                add(key, lhs[li], MISSING)
                li += 1
                continue
            if key.ident in merged_rhs:
                li += 1
        if ri < len(rhs_keys):
            key = rhs_keys[ri]
            merged_rhs.add(key.ident)
            add(key, observed_lhs.get(key.ident, MISSING), observed_rhs[key.ident])
            ri += 1
            if next_shared is not None and next_shared == key:
                next_shared = shared.pop(0) if shared else None
    return (out if out else MISSING), []


def _plain(v: Any) -> Any:
    """A fresh copy with map keys sorted, as encoding/json writes Go's unstructured maps."""
    if isinstance(v, Mapping):
        return {k: _plain(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def apply_configuration(live: Mapping[str, Any], patch: Mapping[str, Any], schema: ObjectType) -> dict[str, Any]:
    """smd.go ApplyStructuredMergeDiff: type the patch (strict), reject atomics in it, type the live object
    (duplicates allowed from 1.35), merge, return the new object (live is not modified).

    The patch takes the live object's apiVersion and kind first, as the patcher's SetGroupVersionKind does.

    Raises:
        MergeError: the text the API server wraps in `error applying patch: %w`.
    """
    patch = dict(patch)
    for name in ("apiVersion", "kind"):
        if isinstance(live.get(name), str):
            patch[name] = live[name]
    strict = _Walk(schema.index, schema.optional_list_keys)
    errors = _validate(strict, patch, schema.ref, "")
    if errors:
        raise MergeError(f"failed to convert patch object to typed object: {_joined(errors)}")
    atomics = _atomics(schema.index, schema.ref, patch, "")
    if atomics:
        atomic = "may not mutate atomic arrays, maps or structs"
        raise MergeError(f"invalid ApplyConfiguration: {atomic}: {', '.join(atomics)}")
    lenient = _Walk(schema.index, schema.optional_list_keys, schema.live_duplicates_allowed)
    errors = _validate(lenient, live, schema.ref, "")
    if errors:
        raise MergeError(f"failed to convert original object to typed object: {_joined(errors)}")
    merged, errors = _merge(lenient, live, patch, schema.ref, "")
    if errors:
        raise MergeError(f"failed to merge patch: {_joined(errors)}")
    if not isinstance(merged, Mapping):
        raise MergeError(
            "failed to convert typed object to object: failed to convert value to unstructured for type "
            + _go_type(None if merged is MISSING else merged)
        )
    result: dict[str, Any] = _plain(merged)
    return result
