"""Snapshots cut into objects by their lines (kubectl's layouts), other layouts decoded whole."""

from __future__ import annotations

import json

import yaml

from kcel.k8s.manifests.decoding import MAX_DOCUMENT_BYTES
from kcel.k8s.manifests.streaming import stored_items


def _pod(i: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "args": ["- not an item", "items:"]}]}}  # fmt: skip


def _listed(count: int) -> dict[str, object]:
    return {"apiVersion": "v1", "items": [_pod(i) for i in range(count)], "kind": "List", "metadata": {}}


def _decoded(text: str) -> list[tuple[str, object]]:
    return [(item.where, item.decode()) for item in stored_items(text.splitlines(keepends=True), "s")]


def test_yaml_lists_in_kubectls_layout_and_indented_sequences() -> None:
    expected = [(f"s: document 0: items[{i}]", _pod(i)) for i in range(3)]
    assert _decoded(yaml.safe_dump(_listed(3))) == expected
    indented = "apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\nkind: List\n"
    assert _decoded(indented) == [
        ("s: document 0: items[0]", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}})
    ]


def test_several_documents_with_lists_and_objects() -> None:
    text = yaml.safe_dump(_pod(7)) + "---\n" + yaml.safe_dump(_listed(2)) + "---\n# only a comment\n"
    assert [where for where, _ in _decoded(text)] == [
        "s: document 0",
        "s: document 1: items[0]",
        "s: document 1: items[1]",
    ]


def test_indented_json_is_cut_and_kinds_are_read_without_decoding() -> None:
    items = list(stored_items(json.dumps(_listed(2), indent=4).splitlines(keepends=True), "s.json"))
    assert [item.kind for item in items] == ["Pod", "Pod"]
    assert [item.decode() for item in items] == [_pod(0), _pod(1)]
    assert items[1].line > items[0].line > 1


def test_a_pod_whose_volume_has_items_is_not_cut() -> None:
    pod = {**_pod(0), "spec": {"volumes": [{"name": "v", "secret": {"items": [{"key": "k", "path": "p"}]}}]}}
    assert _decoded(json.dumps(pod, indent=4)) == [("s: document 0", pod)]
    assert _decoded(yaml.safe_dump(pod)) == [("s: document 0", pod)]


def test_compact_json_larger_than_a_request_is_read_item_by_item() -> None:
    big = _listed(MAX_DOCUMENT_BYTES // len(json.dumps(_pod(0))) + 100)
    text = json.dumps(big)
    assert len(text) > MAX_DOCUMENT_BYTES
    items = list(stored_items([text], "s.json"))
    assert len(items) == len(big["items"])  # type: ignore[arg-type]
    assert items[-1].decode() == big["items"][-1]  # type: ignore[index]
