"""Runners for the ratcheting cases: old/new correlation (`correlated_object`) and map-list lookups (`map_list_get`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.outcome import Case, Outcome
from kcel.k8s.schemas.correlation import CorrelatedObject, deep_equal
from kcel.k8s.schemas.maplist import MapListIndex
from kcel.k8s.schemas.schema import Schema


def correlated_object(case: Case) -> Outcome:
    """Walk `key_path` from the root (strings are `Key`, integers `Index`) and compare the node reached."""
    inputs = case.data["inputs"]
    node: CorrelatedObject | None = CorrelatedObject(
        inputs["object"], inputs["old_object"], Schema.from_json(inputs["schema"])
    )
    for step in inputs["key_path"]:
        if node is not None:
            node = node.key(step) if isinstance(step, str) else node.index(step)
    got = None if node is None else _summary(node)
    return _compare(case, case.data["expect"]["correlated"], got)


def _summary(node: CorrelatedObject) -> dict[str, Any]:
    return {"value": node.value, "old_value": node.old_value, "cached_deep_equal": node.cached_deep_equal()}


def map_list_get(case: Case) -> Outcome:
    """Issue the warm-up queries, then the query; the result must `reflect.DeepEqual` the expected item."""
    inputs = case.data["inputs"]
    index = MapListIndex(Schema.from_json(inputs["schema"]), inputs["items"])
    for query in inputs["warm_up_queries"]:
        index.get(query)
    return _compare(case, case.data["expect"]["result"], index.get(inputs["query"]))


def _compare(case: Case, expected: Any, got: Any) -> Outcome:
    if deep_equal(expected, got):
        return Outcome(case.id, "passed")
    return Outcome(case.id, "failed", f"expected {expected!r}, got {got!r}")


RUNNERS: dict[str, Callable[[Case], Outcome]] = {"correlated_object": correlated_object, "map_list_get": map_list_get}
