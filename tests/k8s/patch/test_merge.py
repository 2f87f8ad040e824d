"""ApplyConfiguration merges as the API server's ApplyStructuredMergeDiff makes them (structured-merge-diff v6.4).

`CASES` pins one merge rule each on a small schema, with the exact result (list order included) or the exact
error text; they were cross-checked against SMD's Go code. Then k8s.io/apiserver's smd_test.go cases, a sidecar
injection and other Deployment merges typed by kubernetes-validate's 1.37 schemas, and a custom resource
typed from a CRD.
"""

from __future__ import annotations

import copy
import importlib.util
from typing import Any

import pytest

from kcel.k8s.patch.merge import MergeError, apply_configuration
from kcel.k8s.patch.schemas import SchemaSource
from kcel.k8s.patch.typed import ObjectType, TypeIndex, TypeRef

needs_builtin = pytest.mark.skipif(
    importlib.util.find_spec("kubernetes_validate") is None,
    reason="kubernetes-validate is not installed (pip install 'kcel[schemas]'): no built-in schemas",
)


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def strings(**extension: Any) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, **extension}


SCHEMAS: dict[str, Any] = {
    "t.Widget": {
        "type": "object",
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "spec": ref("t.Spec")},
    },
    "t.Spec": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "on": {"type": "boolean"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "selector": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "properties": {
                    "match": {"type": "object", "additionalProperties": {"type": "string"}},
                    "exprs": strings(),
                },
            },
            "config": {**ref("t.Config"), "x-kubernetes-map-type": "atomic"},
            "nested": {"allOf": [ref("t.Config")]},
            "args": strings(),
            "finalizers": strings(**{"x-kubernetes-list-type": "set"}),
            "numbers": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}},
            "items": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": ref("t.Item"),
            },
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
                "items": {
                    "type": "object",
                    "properties": {
                        "port": {"type": "integer"},
                        "protocol": {"type": "string", "default": "TCP"},
                        "name": {"type": "string"},
                    },
                },
            },
            "routes": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["host", "path"],
                "items": {
                    "type": "object",
                    "properties": {"host": {"type": "string"}, "path": {"type": "string"}, "to": {"type": "string"}},
                },
            },
            "port": {"type": "string", "format": "int-or-string"},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "anything": {"x-kubernetes-preserve-unknown-fields": True},
        },
    },
    "t.Config": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
    "t.Item": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "string"},
            "args": strings(),
            "tags": strings(**{"x-kubernetes-list-type": "set"}),
        },
    },
}
INDEX = TypeIndex(SCHEMAS)


def widget(version: tuple[int, int] = (1, 37)) -> ObjectType:
    return ObjectType(INDEX, TypeRef(named="t.Widget"), version)


PATCH = "failed to convert patch object to typed object: "
LIVE = "failed to convert original object to typed object: "
ATOMIC = "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: "

# (id, live spec, patch spec, the merged spec or the error text)
CASES: list[tuple[str, Any, Any, Any]] = [
    # structs and granular maps merge key by key; the patch wins at leaves
    ("struct", {"name": "a", "count": 1}, {"count": 2, "on": True}, {"name": "a", "count": 2, "on": True}),
    ("struct-nested", {"nested": {"a": "1", "b": "2"}}, {"nested": {"b": "3"}}, {"nested": {"a": "1", "b": "3"}}),
    (
        "granular-map",
        {"labels": {"a": "1", "b": "2"}},
        {"labels": {"b": "3", "c": "4"}},
        {"labels": {"a": "1", "b": "3", "c": "4"}},
    ),
    # atomic maps, structs and lists may not be set at all
    (
        "atomic-struct",
        {"selector": {"match": {"a": "1"}}},
        {"selector": {"match": {"b": "2"}}},
        ATOMIC + ".spec.selector",
    ),
    ("atomic-ref", {}, {"config": {"a": "1"}}, ATOMIC + ".spec.config"),
    ("atomic-empty", {}, {"config": {}}, ATOMIC + ".spec.config"),
    ("atomic-inside-atomic", {}, {"selector": {"exprs": ["x"]}}, ATOMIC + ".spec.selector, .spec.selector.exprs"),
    ("atomic-list", {"args": ["a"]}, {"args": ["b"]}, ATOMIC + ".spec.args"),
    (
        "atomic-in-items",
        {},
        {"items": [{"name": "a", "args": ["x"]}, {"name": "b"}, {"name": "c", "args": []}]},
        ATOMIC + ".spec.items[0].args, .spec.items[2].args",
    ),
    (
        "atomic-null",
        {"config": {"a": "1"}, "args": ["a"]},
        {"config": None, "args": None},
        {"config": None, "args": None},
    ),
    # sets and map lists: the union, in the order of SMD's visitListItems
    ("set-union", {"finalizers": ["a", "b", "c"]}, {"finalizers": ["d", "b"]}, {"finalizers": ["a", "d", "b", "c"]}),
    ("set-reorder", {"finalizers": ["a", "b", "c"]}, {"finalizers": ["c", "a"]}, {"finalizers": ["b", "c", "a"]}),
    ("set-numbers", {"numbers": [1, 2.5]}, {"numbers": [1.0, 3]}, {"numbers": [1.0, 2.5, 3]}),
    ("set-empty-patch", {"finalizers": ["a"]}, {"finalizers": []}, {"finalizers": ["a"]}),
    ("set-both-empty", {"finalizers": []}, {"finalizers": None}, {"finalizers": None}),
    # map lists merge items by key
    ("map-add", {"items": [{"name": "x"}]}, {"items": [{"name": "y"}]}, {"items": [{"name": "x"}, {"name": "y"}]}),
    (
        "map-order",
        {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"items": [{"name": "c"}, {"name": "x"}, {"name": "a"}]},
        {"items": [{"name": "b"}, {"name": "c"}, {"name": "x"}, {"name": "a"}]},
    ),
    (
        "map-insert-after",
        {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"items": [{"name": "b"}, {"name": "n"}]},
        {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "n"}]},
    ),
    (
        "map-nested-merge",
        {"items": [{"name": "a", "value": "1", "tags": ["x"]}, {"name": "b"}]},
        {"items": [{"name": "a", "tags": ["y"]}]},
        {"items": [{"name": "a", "value": "1", "tags": ["x", "y"]}, {"name": "b"}]},
    ),
    (
        "map-two-keys",
        {"routes": [{"host": "h", "path": "/", "to": "a"}, {"host": "h", "path": "/b", "to": "b"}]},
        {"routes": [{"host": "h", "path": "/b", "to": "c"}, {"host": "g", "path": "/", "to": "d"}]},
        {
            "routes": [
                {"host": "h", "path": "/", "to": "a"},
                {"host": "h", "path": "/b", "to": "c"},
                {"host": "g", "path": "/", "to": "d"},
            ]
        },
    ),
    (
        "map-key-default",
        {"ports": [{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 80, "protocol": "UDP"}]},
        {"ports": [{"port": 80, "name": "web"}]},
        {"ports": [{"port": 80, "protocol": "TCP", "name": "web"}, {"port": 80, "protocol": "UDP"}]},
    ),
    (
        "map-optional-key",
        {"routes": [{"host": "h", "path": "/", "to": "a"}]},
        {"routes": [{"host": "h", "to": "b"}]},
        {"routes": [{"host": "h", "path": "/", "to": "a"}, {"host": "h", "to": "b"}]},
    ),
    (
        "map-no-key",
        {},
        {"routes": [{"to": "b"}]},
        PATCH + ".spec.routes: element 0: associative list with keys has an element that omits all key fields "
        '["host" "path"] (and doesn\'t have default values for any key fields)',
    ),
    (
        "map-null-item",
        {},
        {"items": [None]},
        PATCH + ".spec.items: element 0: associative list with keys may not have a null element",
    ),
    (
        "map-scalar-item",
        {},
        {"items": ["a"]},
        PATCH + ".spec.items: element 0: associative list with keys may not have non-map elements",
    ),
    (
        "set-map-item",
        {},
        {"finalizers": [{"a": "b"}]},
        PATCH + ".spec.finalizers: element 0: associative list without keys has an element that's a map type",
    ),
    (
        "set-null-item",
        {},
        {"finalizers": [None]},
        PATCH + ".spec.finalizers: element 0: associative list without keys has an element that's an explicit null",
    ),
    (
        "set-list-item",
        {},
        {"finalizers": [["a"]]},
        PATCH + ".spec.finalizers: element 0: not supported: associative list with lists as elements",
    ),
    (
        "patch-duplicates",
        {},
        {"items": [{"name": "a"}, {"name": "a"}]},
        PATCH + '.spec.items: duplicate entries for key [name="a"]',
    ),
    (
        "patch-duplicate-set",
        {},
        {"finalizers": ["a", "a"]},
        PATCH + '.spec.finalizers: duplicate entries for key [="a"]',
    ),
    (
        "live-duplicates",
        {"items": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}, {"name": "b"}], "finalizers": ["x", "x"]},
        {"count": 1},
        {
            "count": 1,
            "items": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}, {"name": "b"}],
            "finalizers": ["x", "x"],
        },
    ),
    (
        "live-duplicates-merged",
        {"items": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}, {"name": "b"}]},
        {"items": [{"name": "a", "tags": ["t"]}]},
        {"items": [{"name": "a", "tags": ["t"]}, {"name": "b"}]},
    ),
    # null in the patch: a scalar or atomic value becomes null, a granular struct, map or list is kept
    ("null-scalar", {"name": "a"}, {"name": None}, {"name": None}),
    ("null-absent", {}, {"name": None, "labels": None}, {"name": None, "labels": None}),
    (
        "null-granular",
        {"nested": {"a": "1"}, "labels": {"a": "1"}, "items": [{"name": "a"}]},
        {"nested": None, "labels": None, "items": None},
        {"nested": {"a": "1"}, "labels": {"a": "1"}, "items": [{"name": "a"}]},
    ),
    ("empty-map-kept", {"labels": {"a": "1"}}, {"labels": {}}, {"labels": {"a": "1"}}),
    ("empty-map-added", {}, {"labels": {}, "items": []}, {"labels": {}, "items": []}),
    # typing the patch: undeclared fields and wrong scalar kinds
    ("unknown-field", {}, {"nope": 1}, PATCH + ".spec.nope: field not declared in schema"),
    (
        "unknown-nested",
        {},
        {"items": [{"name": "a", "nope": 1}]},
        PATCH + '.spec.items[name="a"].nope: field not declared in schema',
    ),
    ("wrong-string", {}, {"name": 5}, PATCH + ".spec.name: expected string, got &value.valueUnstructured{Value:5}"),
    (
        "wrong-string-map",
        {},
        {"name": {"a": [1, "x", None, 2.5, 1e21]}},
        PATCH + ".spec.name: expected string, got &value.valueUnstructured{Value:map[string]interface {}"
        '{"a":[]interface {}{1, "x", interface {}(nil), 2.5, 1e+21}}}',
    ),
    ("wrong-number", {}, {"count": "1"}, PATCH + ".spec.count: expected numeric (int or float), got string"),
    ("wrong-number-bool", {}, {"count": True}, PATCH + ".spec.count: expected numeric (int or float), got bool"),
    ("wrong-bool", {}, {"on": "yes"}, PATCH + ".spec.on: expected boolean, got &{yes}"),
    ("wrong-bool-number", {}, {"on": 1}, PATCH + ".spec.on: expected boolean, got &{1}"),
    ("wrong-struct", {}, {"nested": "x"}, PATCH + ".spec.nested: expected map, got &{x}"),
    ("wrong-list", {}, {"args": {"a": 1, "b": [2.0]}}, PATCH + ".spec.args: expected list, got &{map[a:1 b:[2]]}"),
    (
        "several-errors",
        {},
        {"count": "1", "on": "yes", "items": [{"name": 1}]},
        PATCH + "errors:\n  .spec.count: expected numeric (int or float), got string\n"
        "  .spec.items[name=1].name: expected string, got &value.valueUnstructured{Value:1}\n"
        "  .spec.on: expected boolean, got &{yes}",
    ),
    ("live-unknown", {"nope": 1}, {"count": 1}, LIVE + ".spec.nope: field not declared in schema"),
    # int-or-string is an untyped scalar
    ("int-or-string", {"port": 80}, {"port": "http"}, {"port": "http"}),
    ("int-or-string-map", {}, {"port": {"a": 1}}, PATCH + ".spec.port: expected any scalar, got &{map[a:1]}"),
    # preserve-unknown-fields: unknown keys are deduced, merged granularly; lists there are atomic
    (
        "deduced",
        {"extra": {"a": {"x": 1, "y": 2}, "b": 1}},
        {"extra": {"a": {"y": 3}, "c": {"z": True}}},
        {"extra": {"a": {"x": 1, "y": 3}, "b": 1, "c": {"z": True}}},
    ),
    (
        "deduced-kind-change",
        {"extra": {"a": {"x": 1}, "b": "s"}},
        {"extra": {"a": "now", "b": {"n": 1}}},
        {"extra": {"a": "now", "b": {"n": 1}}},
    ),
    (
        "deduced-null",
        {"extra": {"a": {"x": 1}, "b": "s"}},
        {"extra": {"a": None, "b": None}},
        {"extra": {"a": {"x": 1}, "b": None}},
    ),
    ("deduced-list", {"extra": {"l": [1, 2]}}, {"extra": {"l": [3]}}, {"extra": {"l": [3]}}),  # replaced: atomic
    ("untyped-field-list", {}, {"anything": [{"a": 1}, 2]}, ATOMIC + ".spec.anything, .spec.anything[0]"),
    ("untyped-field-map", {"anything": {"a": 1}}, {"anything": {"b": 2}}, {"anything": {"a": 1, "b": 2}}),
]


@pytest.mark.parametrize(
    ("live_spec", "patch_spec", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_merge_rules(live_spec: Any, patch_spec: Any, expected: Any) -> None:
    live = {"spec": live_spec}
    if isinstance(expected, str):
        with pytest.raises(MergeError) as raised:
            apply_configuration(live, {"spec": patch_spec}, widget())
        assert str(raised.value) == expected
    else:
        assert apply_configuration(live, {"spec": patch_spec}, widget()) == {"spec": expected}


# --- what the API server version changes -----------------------------------------------------------------


def test_live_duplicates_are_rejected_before_1_35() -> None:
    live = {"spec": {"items": [{"name": "a"}, {"name": "a"}]}}
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"spec": {"count": 1}}, widget((1, 34)))
    assert str(raised.value) == LIVE + '.spec.items: duplicate entries for key [name="a"]'


def test_a_missing_key_is_an_error_before_1_34() -> None:
    """SMD v4 (1.32, 1.33) wants every key (or its default); v6.3 keys an item by the keys it has."""
    patch = {"spec": {"routes": [{"host": "h", "to": "b"}]}}
    with pytest.raises(MergeError) as raised:
        apply_configuration({"spec": {}}, patch, widget((1, 33)))
    assert str(raised.value) == (
        PATCH + '.spec.routes: element 0: associative list with keys has an element that omits key field "path" '
        "(and doesn't have default value)"
    )
    assert apply_configuration({"spec": {}}, patch, widget((1, 34))) == {"spec": {"routes": [{"host": "h", "to": "b"}]}}


# --- the object as a whole -----------------------------------------------------------------------------


def test_the_patch_takes_the_live_objects_group_version_kind() -> None:
    live = {"apiVersion": "t/v1", "kind": "Widget", "spec": {"count": 1}}
    merged = apply_configuration(live, {"apiVersion": "t/v2", "kind": "Other", "spec": {"count": 2}}, widget())
    assert merged == {"apiVersion": "t/v1", "kind": "Widget", "spec": {"count": 2}}


def test_live_is_not_modified_and_the_result_shares_nothing() -> None:
    live = {"spec": {"labels": {"a": "1"}, "items": [{"name": "a", "tags": ["x"]}], "nested": {"a": "1"}}}
    patch = {"spec": {"labels": {"b": "2"}, "items": [{"name": "b", "tags": ["y"]}]}}
    before_live, before_patch = copy.deepcopy(live), copy.deepcopy(patch)
    merged = apply_configuration(live, patch, widget())
    assert (live, patch) == (before_live, before_patch)
    merged["spec"]["nested"]["a"] = "changed"
    merged["spec"]["items"][0]["tags"].append("z")
    merged["spec"]["items"][1]["tags"].append("z")
    assert (live, patch) == (before_live, before_patch)


def test_map_keys_come_out_sorted_as_encoding_json_writes_them() -> None:
    merged = apply_configuration(
        {"spec": {"on": True, "name": "n"}}, {"spec": {"labels": {"z": "1", "a": "2"}, "count": 1}}, widget()
    )
    assert list(merged["spec"]) == ["count", "labels", "name", "on"]
    assert list(merged["spec"]["labels"]) == ["a", "z"]


def test_errors_in_live_and_patch_name_the_failing_step() -> None:
    with pytest.raises(
        MergeError, match=r"^failed to convert original object to typed object: \.spec\.count: expected"
    ):
        apply_configuration({"spec": {"count": "x"}}, {"spec": {}}, widget())


# --- k8s.io/apiserver smd_test.go, typed by the built-in 1.37 schemas ------------------------------------


@pytest.fixture(scope="module")
def deployment() -> ObjectType:
    return SchemaSource("1.37").root_for("apps/v1", "Deployment")


def dep(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}, "spec": spec}


def pod_spec(**fields: Any) -> dict[str, Any]:
    return {"template": {"spec": fields}}


NGINX_DUPLICATES = [{"name": "test", "value": "a"}, {"name": "test", "value": "b"}]

# smd_test.go's TestApplyConfiguration; the CEL-only cases (type name mismatch, return types) are the caller's.
SMD_TEST: list[tuple[str, Any, Any, Any]] = [
    (
        "add to listType=map",
        pod_spec(volumes=[{"name": "x"}]),
        pod_spec(volumes=[{"name": "y"}]),
        pod_spec(volumes=[{"name": "x"}, {"name": "y"}]),
    ),
    (
        "update listType=map entry",
        pod_spec(volumes=[{"name": "x"}, {"name": "y"}]),
        pod_spec(volumes=[{"name": "y", "hostPath": {"path": "a"}}]),
        pod_spec(volumes=[{"name": "x"}, {"name": "y", "hostPath": {"path": "a"}}]),
    ),
    ("with conditionals", {"replicas": 2}, {"replicas": 3}, {"replicas": 3}),
    ("with old object", {"replicas": 1}, {"replicas": 3}, {"replicas": 3}),
    (
        "complex apply configuration initialization",
        {},
        {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.14.2",
                            "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "128M"}},
                        }
                    ]
                },
            },
        },
        {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.14.2",
                            "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "128M"}},
                        }
                    ]
                },
            },
        },
    ),
    ("with change to atomic", {"replicas": 1}, {"selector": {"matchLabels": {"l": "v"}}}, ATOMIC + ".spec.selector"),
    (
        "with invalid field name",
        {"replicas": 1},
        {"replicasx": 1},
        PATCH + ".spec.replicasx: field not declared in schema",
    ),
    (
        "with duplicate env vars in original object",
        {"replicas": 1, **pod_spec(containers=[{"name": "nginx", "env": NGINX_DUPLICATES}])},
        {"replicas": 3},
        {"replicas": 3, **pod_spec(containers=[{"name": "nginx", "env": NGINX_DUPLICATES}])},
    ),
    (
        "modify existing env variable",
        {
            "replicas": 1,
            **pod_spec(containers=[{"name": "nginx", "env": [*NGINX_DUPLICATES, {"name": "foo", "value": "bar"}]}]),
        },
        pod_spec(containers=[{"name": "nginx", "env": [{"name": "test", "value": "c"}]}]),
        {
            "replicas": 1,
            **pod_spec(
                containers=[{"name": "nginx", "env": [{"name": "test", "value": "c"}, {"name": "foo", "value": "bar"}]}]
            ),
        },
    ),
]


@needs_builtin
@pytest.mark.parametrize(
    ("live_spec", "patch_spec", "expected"), [case[1:] for case in SMD_TEST], ids=[case[0] for case in SMD_TEST]
)
def test_smd_test_go(deployment: ObjectType, live_spec: Any, patch_spec: Any, expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(MergeError) as raised:
            apply_configuration(dep(live_spec), {"spec": patch_spec}, deployment)
        assert str(raised.value) == expected
    else:
        assert apply_configuration(dep(live_spec), {"spec": patch_spec}, deployment) == dep(expected)


@needs_builtin
def test_round_trip_with_an_empty_patch(deployment: ObjectType) -> None:
    """typeconverter_test.go: a Deployment typed and back is unchanged."""
    live = dep(pod_spec(containers=[{"name": "a"}, {"name": "x", "ports": [{"containerPort": 8080}]}]))
    assert apply_configuration(live, {}, deployment) == live


@needs_builtin
def test_sidecar_injection(deployment: ObjectType) -> None:
    live = dep(
        {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "web:1", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                },
            },
        }
    )
    patch = {
        "spec": {
            "template": {
                "metadata": {"annotations": {"sidecar/injected": "true"}},
                "spec": {
                    "initContainers": [{"name": "init", "image": "init:1"}],
                    "containers": [
                        {
                            "name": "proxy",
                            "image": "proxy:2",
                            "env": [{"name": "MODE", "value": "sidecar"}],
                            "volumeMounts": [{"name": "certs", "mountPath": "/certs"}],
                            "resources": {"limits": {"cpu": "100m", "memory": 64}},
                        },
                        {"name": "app", "env": [{"name": "PROXY", "value": "localhost:15001"}]},
                    ],
                    "volumes": [{"name": "certs", "secret": {"secretName": "certs"}}],
                },
            }
        }
    }
    merged = apply_configuration(live, patch, deployment)
    template = merged["spec"]["template"]
    assert template["metadata"] == {"annotations": {"sidecar/injected": "true"}, "labels": {"app": "web"}}
    assert [c["name"] for c in template["spec"]["containers"]] == ["proxy", "app"]  # shared items in the patch's order
    assert template["spec"]["containers"][1] == {
        "env": [{"name": "PROXY", "value": "localhost:15001"}],
        "image": "web:1",
        "name": "app",
        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
    }
    assert template["spec"]["initContainers"] == [{"image": "init:1", "name": "init"}]
    assert template["spec"]["volumes"] == [
        {"emptyDir": {}, "name": "data"},
        {"name": "certs", "secret": {"secretName": "certs"}},
    ]
    assert merged["spec"]["selector"] == {"matchLabels": {"app": "web"}} and merged["spec"]["replicas"] == 2


@needs_builtin
def test_sidecar_with_args_is_refused_as_atomic(deployment: ObjectType) -> None:
    patch = {"spec": pod_spec(containers=[{"name": "proxy", "args": ["--x"]}], tolerations=[{"key": "k"}])}
    with pytest.raises(MergeError) as raised:
        apply_configuration(dep({}), patch, deployment)
    assert str(raised.value) == ATOMIC + ".spec.template.spec.containers[0].args, .spec.template.spec.tolerations"


@needs_builtin
def test_container_ports_key_on_protocol_defaulting_to_tcp(deployment: ObjectType) -> None:
    """The OpenAPI v3 default the API server has (and kubernetes-validate's v2 schemas lack)."""
    live = dep(pod_spec(containers=[{"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]))
    patch = {"spec": pod_spec(containers=[{"name": "app", "ports": [{"containerPort": 80, "name": "http"}]}])}
    ports = apply_configuration(live, patch, deployment)["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]


@needs_builtin
def test_int_or_string_and_quantities_are_untyped_scalars(deployment: ObjectType) -> None:
    live = dep({"strategy": {"rollingUpdate": {"maxSurge": 1}}})
    merged = apply_configuration(live, {"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%"}}}}, deployment)
    assert merged["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": "25%"}}
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"spec": {"strategy": {"rollingUpdate": {"maxSurge": [1]}}}}, deployment)
    assert str(raised.value) == PATCH + ".spec.strategy.rollingUpdate.maxSurge: expected any scalar, got &{[1]}"


# --- a custom resource typed by its CRD ----------------------------------------------------------------------

CRONTAB_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "names": {"kind": "CronTab", "plural": "crontabs"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "schedule": {"type": "string"},
                                    "replicas": {"type": "integer"},
                                    "jobs": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "properties": {"name": {"type": "string"}, "image": {"type": "string"}},
                                        },
                                    },
                                    "args": {"type": "array", "items": {"type": "string"}},
                                    "settings": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


def test_custom_resource_typed_by_its_crd() -> None:
    root = SchemaSource("1.37", crds=[CRONTAB_CRD]).root_for("stable.example.com/v1", "CronTab")
    live = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "c", "labels": {"a": "1"}},
        "spec": {"schedule": "* * * * *", "jobs": [{"name": "a", "image": "a:1"}], "settings": {"x": {"y": 1}}},
    }
    patch = {
        "metadata": {"labels": {"b": "2"}},
        "spec": {"replicas": 2, "jobs": [{"name": "b", "image": "b:1"}], "settings": {"x": {"z": 2}}},
    }
    assert apply_configuration(live, patch, root) == {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"labels": {"a": "1", "b": "2"}, "name": "c"},
        "spec": {
            "jobs": [{"image": "a:1", "name": "a"}, {"image": "b:1", "name": "b"}],
            "replicas": 2,
            "schedule": "* * * * *",
            "settings": {"x": {"y": 1, "z": 2}},
        },
    }
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"spec": {"args": ["x"]}}, root)
    assert str(raised.value) == ATOMIC + ".spec.args"
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"spec": {"cron": "x"}}, root)
    assert str(raised.value) == PATCH + ".spec.cron: field not declared in schema"
