"""Pairs each node of a new object with its old value, for CRD ratcheting (apiserver `common.CorrelatedObject`).

Ratcheting lets an update keep a value that fails a rule as long as that value did not change, so the
validator walks the new object and asks, node by node, "what was here before?". Object properties and map
entries pair up by key, items of `x-kubernetes-list-type: map` lists by their key tuple; items of atomic and
set lists have no old value. Upstream source: k8s.io/apiserver `pkg/cel/common/equality.go`.
"""

from __future__ import annotations

from typing import Any

from kcel.k8s.schemas.maplist import MapListIndex
from kcel.k8s.schemas.schema import Schema


def deep_equal(a: Any, b: Any) -> bool:
    """Go's `reflect.DeepEqual` on unstructured JSON values.

    Unlike Python's `==`, types must match exactly (`1 != 1.0`, `True != 1`, `None != {}`); map key order
    does not matter, list order does; NaN differs from itself except inside the very same list or map.

    >>> deep_equal({"a": [1, 2.0]}, {"a": [1, 2.0]}), deep_equal(1, 1.0), deep_equal(True, 1)
    (True, False, False)
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a is b or (len(a) == len(b) and all(k in b and deep_equal(v, b[k]) for k, v in a.items()))
    if isinstance(a, list):
        return a is b or (len(a) == len(b) and all(map(deep_equal, a, b)))
    return bool(a == b)


class CorrelatedObject:
    """A node of the new object (`value`) with the old value at the same place (`old_value`) and its schema.

    `key` and `index` step to a child and return None when the child has no old counterpart; that None
    is upstream's nil node, which never equals its old value. Children and `cached_deep_equal` results
    are kept, so a subtree compared once (say by a child's rule) is not compared again by its parent.
    Not thread-safe, like upstream.

    >>> schema = Schema(properties={"a": Schema(type="string")})
    >>> node = CorrelatedObject({"a": "x"}, {"a": "x", "b": 1}, schema)
    >>> node.key("a").cached_deep_equal(), node.cached_deep_equal(), node.key("b")
    (True, False, None)
    """

    __slots__ = ("value", "old_value", "schema", "_children", "_equal", "_map_list")

    def __init__(self, value: Any, old_value: Any, schema: Schema | None) -> None:
        self.value = value
        self.old_value = old_value
        self.schema = schema
        self._children: dict[str | int, CorrelatedObject] = {}
        self._equal: bool | None = None
        self._map_list: MapListIndex | None = None  # set once a map-list item has been correlated

    def key(self, name: str) -> CorrelatedObject | None:
        """The child at property or map key `name`, if both the new and the old object have that key."""
        if self.schema is None:
            return None
        if (child := self._children.get(name)) is not None:
            return child
        new, old = self.value, self.old_value
        if not (isinstance(new, dict) and isinstance(old, dict) and name in new and name in old):
            return None
        schema = _property_schema(self.schema, name)
        return None if schema is None else self._add_child(name, new[name], old[name], schema)

    def index(self, i: int) -> CorrelatedObject | None:
        """The child at list index `i`, if it is a map-list item whose key tuple is in the old list."""
        if self.schema is None:
            return None
        if (child := self._children.get(i)) is not None:
            return child
        new = self.value
        if not isinstance(new, list) or not 0 <= i < len(new):
            return None
        old = self._old_item(self.schema, new[i])
        items = self.schema.items
        return None if old is None or items is None else self._add_child(i, new[i], old, items)

    def cached_deep_equal(self) -> bool:
        """Whether `value` deep-equals `old_value`, computed from the children and remembered."""
        if self._equal is None:
            self._equal = self._deep_equal()
        return self._equal

    def _deep_equal(self) -> bool:
        new, old = self.value, self.old_value
        if isinstance(new, list) and isinstance(old, list):
            return len(new) == len(old) and self._items_equal(new, old)
        if isinstance(new, dict) and isinstance(old, dict):
            # A key without a correlated child (unknown field, or missing from old) makes the objects differ.
            return len(new) == len(old) and all(_equal(self.key(name)) for name in new)
        return deep_equal(new, old)

    def _items_equal(self, new: list[Any], old: list[Any]) -> bool:
        for i in range(len(new)):
            child = self.index(i)
            if child is None:
                # Atomic and set lists are compared whole; a map-list item missing from old means a change.
                return self._map_list is None and deep_equal(new, old)
            if not child.cached_deep_equal():
                return False
        return True

    def _old_item(self, schema: Schema, item: Any) -> Any:
        """The old item with `item`'s key tuple; only map lists correlate their items."""
        if not isinstance(self.old_value, list) or schema.list_type != "map":
            return None
        if self._map_list is None:
            self._map_list = MapListIndex(schema, self.old_value)
        return self._map_list.get(item)

    def _add_child(self, step: str | int, value: Any, old_value: Any, schema: Schema) -> CorrelatedObject:
        child = self._children[step] = CorrelatedObject(value, old_value, schema)
        return child


def _equal(node: CorrelatedObject | None) -> bool:
    return node is not None and node.cached_deep_equal()


def _property_schema(schema: Schema, name: str) -> Schema | None:
    """The schema of property `name`: declared, else the additionalProperties schema; unknown fields have none."""
    if schema.properties is not None and name in schema.properties:
        return schema.properties[name]
    extra = schema.additional_properties
    return extra if isinstance(extra, Schema) else None
