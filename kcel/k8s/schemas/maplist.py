"""Keys and lookups for `x-kubernetes-list-type: map` lists over plain JSON data (lists of dicts).

Go keys these lists with `interface{}` map keys, which compare by dynamic type: `true`, `1` and `1.0`
are three different keys. Python's `True == 1 == 1.0` (with equal hashes) would merge them, so every
key element here is a `(type, value)` pair.

Upstream has two key functions, and they differ at the edges:

* `item_key` is what the CEL runtime uses for map-list `==` and `+` (apiserver
  `pkg/cel/common/valuesunstructured.go` `toMapKey`, `valuesreflect.go` `refValMapKey`): a missing key
  property counts as null.
* `lookup_key` is what `MakeMapList(...).Get` uses (apiserver `pkg/cel/common/maplist.go`, the
  correlation of old and new items for ratcheting): an item whose key is missing, null or not a scalar
  has no key and is never found.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from functools import cached_property
from typing import Any

from kcel.k8s.schemas.schema import Schema

Key = tuple[Hashable, ...]

_PLAIN = frozenset({str, int, float, bool, type(None)})
_SCALARS = frozenset({str, int, float, bool})  # Go's bool, float64, int64, string


def tag(value: Any) -> Hashable:
    """A hashable stand-in for `value` that keeps Go's type distinctions (`1`, `1.0`, `True` differ).

    Lists and maps, which Go cannot use as map keys, are tagged element-wise so they still hash.

    >>> tag(1) == tag(1.0), tag(1) == tag(1)
    (False, True)
    """
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if isinstance(value, Mapping):
        return (dict, frozenset((tag(k), tag(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (list, tuple(tag(v) for v in value))
    return (kind, value)


def item_key(item: Mapping[str, Any], keys: Sequence[str]) -> Key:
    """The key of a map-list item for the CEL runtime's `==` and `+`; a missing key property counts as null.

    `keys` are the property names to read, exactly as the caller wants them looked up (upstream reads
    the *escaped* names from the raw data).

    >>> item_key({"port": 80}, ("port",)) == item_key({"port": 80.0}, ("port",))
    False
    >>> item_key({}, ("port",)) == item_key({"port": None}, ("port",))
    True
    """
    if len(keys) <= 3:
        return tuple([tag(item.get(name)) for name in keys])
    # Upstream serialises longer key tuples with Go's `%#v`, and that text is the key.
    return tuple([tag(_as_printed(item.get(name))) for name in keys])


def _as_printed(value: Any) -> Any:
    """The value whose tag matches Go's `%#v` text: `2.0` prints as `2` (same key as the int), `-0.0` as `-0`."""
    if type(value) is not float or not value.is_integer() or abs(value) >= 1e6:  # 1e6 prints as `1e+06`
        return value
    return value if value == 0 and math.copysign(1.0, value) < 0 else int(value)


def lookup_key(item: Any, keys: Sequence[str]) -> Key | None:
    """The key `MapList.Get` matches on, or None for an item that is not an object or has no usable key.

    Every key property must be present and a scalar (string, int, float or bool; null is not). With
    several keys upstream compares the `%f` text of floats, so floats equal to 6 decimals share a key.

    >>> lookup_key({"k": None}, ("k",)) is None, lookup_key([], ("k",)) is None
    (True, True)
    """
    if not isinstance(item, Mapping):
        return None
    values = [item.get(name) for name in keys]
    if not all(type(v) in _SCALARS for v in values):
        return None
    if len(values) == 1:
        return (tag(values[0]),)
    return tuple([(float, f"{v:f}") if type(v) is float else tag(v) for v in values])


class MapListIndex:
    """`MakeMapList(schema, items)`: finds the item with the same key as a query, the first one on duplicates.

    The index is built on the first `get`, so repeated lookups are O(1). A schema that is not an array with
    `x-kubernetes-list-type: map` and at least one key gives an index that finds nothing, as upstream does.

    >>> schema = Schema(type="array", list_type="map", list_map_keys=("k",))
    >>> MapListIndex(schema, [{"k": "a", "v": 1}, {"k": "a", "v": 2}]).get({"k": "a"})
    {'k': 'a', 'v': 1}
    """

    def __init__(self, schema: Schema, items: Sequence[Any] | None) -> None:
        is_map_list = schema.type == "array" and schema.list_type == "map" and bool(schema.list_map_keys)
        self.keys: tuple[str, ...] = schema.list_map_keys if is_map_list else ()
        self._items: Sequence[Any] = (items or ()) if is_map_list else ()

    def get(self, query: Any) -> Any:
        """The first item whose key equals the query's key, or None (also for a query without a usable key)."""
        key = lookup_key(query, self.keys)
        return None if key is None else self._by_key.get(key)

    @cached_property
    def _by_key(self) -> dict[Key, Any]:
        by_key: dict[Key, Any] = {}
        for item in self._items:
            key = lookup_key(item, self.keys)
            if key is not None:
                by_key.setdefault(key, item)
        return by_key
