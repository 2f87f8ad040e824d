"""Where a kind's schema comes from: a CRD (as apiextensions-apiserver publishes it), a saved OpenAPI v3 document,
or kubernetes-validate's built-in definitions (loaded once per process and version, put back to what the API
server's OpenAPI v3 says where it differs), and what SchemaNotFound says when none applies."""

from __future__ import annotations

import copy
import importlib.util
import threading
from typing import Any

import pytest

import kcel.k8s.patch.schemas as schemas
from kcel.k8s.patch.merge import MergeError, apply_configuration
from kcel.k8s.patch.schemas import SchemaNotFound, SchemaSource, builtin_definitions
from kcel.k8s.patch.typed import DEDUCED, TypeIndex, TypeRef

needs_builtin = pytest.mark.skipif(
    importlib.util.find_spec("kubernetes_validate") is None,
    reason="kubernetes-validate is not installed (pip install 'kcel[schemas]'): no built-in schemas",
)

PATCH = "failed to convert patch object to typed object: "


@pytest.fixture
def no_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if kubernetes-validate were not installed."""
    monkeypatch.setattr(schemas, "builtin_definitions", lambda version: None)


# --- a saved OpenAPI v3 document (kubectl get --raw /openapi/v3/apis/apps/v1) ---------------------------------


def components(name: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}], "default": {}}


APPS_V1: dict[str, Any] = {
    "openapi": "3.0.0",
    "components": {
        "schemas": {
            "io.k8s.api.apps.v1.Deployment": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": components("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
                    "spec": components("io.k8s.api.apps.v1.DeploymentSpec"),
                },
                "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}],
            },
            "io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
                },
            },
        }
    },
}


def test_a_schema_file_types_its_kinds_without_loading_the_builtin_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "_builtin", {})
    root = SchemaSource("1.36", schema_files=[APPS_V1]).root_for("apps/v1", "Deployment")
    assert root.ref == TypeRef(named="io.k8s.api.apps.v1.Deployment") and root.k8s_version == (1, 36)
    assert schemas._builtin == {}
    live = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}}
    merged = apply_configuration(live, {"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 2}}, root)
    assert merged["metadata"] == {"labels": {"a": "b"}, "name": "d"} and merged["spec"] == {"replicas": 2}
    with pytest.raises(MergeError) as raised:  # the file's DeploymentSpec knows only replicas
        apply_configuration(live, {"spec": {"paused": True}}, root)
    assert str(raised.value) == PATCH + ".spec.paused: field not declared in schema"


@needs_builtin
def test_a_schema_file_is_preferred_to_the_builtin_schemas() -> None:
    root = SchemaSource("1.37", schema_files=[APPS_V1]).root_for("apps/v1", "Deployment")
    assert root.index.named("io.k8s.api.apps.v1.DeploymentSpec") is not None
    assert root.index.named("io.k8s.api.core.v1.PodSpec") is None  # not the built-in definitions


def test_not_an_openapi_document() -> None:
    with pytest.raises(ValueError, match="not an OpenAPI document"):
        SchemaSource("1.37", schema_files=[{"paths": {}}])


def test_unsupported_kubernetes_version() -> None:
    with pytest.raises(ValueError, match="unsupported Kubernetes version 1.20"):
        SchemaSource("1.20")


# --- kubernetes-validate ------------------------------------------------------------------------------------


@needs_builtin
def test_builtin_definitions_are_loaded_once_per_version_and_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "_builtin", {})
    found: list[TypeIndex | None] = []
    threads = [threading.Thread(target=lambda: found.append(builtin_definitions((1, 37)))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and found[0] is not None and all(index is found[0] for index in found)
    first = SchemaSource("1.37").root_for("apps/v1", "Deployment")
    assert SchemaSource("1.37").root_for("v1", "Pod").index is first.index
    assert SchemaSource("1.32").root_for("apps/v1", "Deployment").index is not first.index


@needs_builtin
def test_builtin_kinds_of_each_version() -> None:
    assert SchemaSource("1.37").root_for("v1", "Pod").ref == TypeRef(named="io.k8s.api.core.v1.Pod")
    claim = SchemaSource("1.37").root_for("resource.k8s.io/v1", "ResourceClaim")
    assert claim.ref == TypeRef(named="io.k8s.api.resource.v1.ResourceClaim")
    with pytest.raises(SchemaNotFound) as raised:
        SchemaSource("1.32").root_for("resource.k8s.io/v1", "ResourceClaim")
    assert str(raised.value) == (
        "no schema for resource.k8s.io/v1 ResourceClaim: Kubernetes 1.32 has no such built-in kind; give its CRD "
        "or a schema file (kubectl get --raw /openapi/v3/apis/resource.k8s.io/v1 saved to a file)"
    )


@needs_builtin
def test_builtin_definitions_as_the_openapi_v3_document_has_them() -> None:
    index = builtin_definitions((1, 37))
    assert index is not None
    int_or_string = index.named("io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    assert int_or_string is not None
    assert (int_or_string.scalar, int_or_string.list_type, int_or_string.map_type) == ("untyped", None, None)
    for name in ("io.k8s.api.core.v1.ContainerPort", "io.k8s.api.core.v1.ServicePort"):
        port = index.named(name)
        assert port is not None and port.map_type is not None
        assert port.map_type.fields["protocol"].default == "TCP"


@needs_builtin
def test_service_ports_merge_by_port_and_default_protocol() -> None:
    root = SchemaSource("1.37").root_for("v1", "Service")
    live = {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80, "protocol": "TCP", "name": "a"}]}}
    merged = apply_configuration(live, {"spec": {"ports": [{"port": 80, "name": "b"}, {"port": 81}]}}, root)
    assert merged["spec"]["ports"] == [{"name": "b", "port": 80, "protocol": "TCP"}, {"port": 81}]


# --- SchemaNotFound -----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_builtin")
@pytest.mark.parametrize(
    ("api_version", "kind", "message"),
    [
        (
            "apps/v1",
            "Deployment",
            "no schema for apps/v1 Deployment: pip install 'kcel[schemas]' or give a schema file "
            "(kubectl get --raw /openapi/v3/apis/apps/v1 saved to a file)",
        ),
        (
            "v1",
            "Pod",
            "no schema for v1 Pod: pip install 'kcel[schemas]' or give a schema file "
            "(kubectl get --raw /openapi/v3/api/v1 saved to a file)",
        ),
        (
            "networking.k8s.io/v1",
            "Ingress",
            "no schema for networking.k8s.io/v1 Ingress: pip install 'kcel[schemas]' or give a schema file "
            "(kubectl get --raw /openapi/v3/apis/networking.k8s.io/v1 saved to a file)",
        ),
        (
            "example.com/v1",
            "Widget",
            "no schema for example.com/v1 Widget: give its CustomResourceDefinition or a schema file "
            "(kubectl get --raw /openapi/v3/apis/example.com/v1 saved to a file)",
        ),
    ],
)
def test_schema_not_found(api_version: str, kind: str, message: str) -> None:
    with pytest.raises(SchemaNotFound) as raised:
        SchemaSource("1.37").root_for(api_version, kind)
    assert str(raised.value) == message


# --- CustomResourceDefinitions -------------------------------------------------------------------------------


def crd(
    schema: dict[str, Any], *, group: str = "example.com", kind: str = "Widget", version: str = "v1"
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


WIDGET = crd(
    {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
            "spec": {
                "type": "object",
                "properties": {
                    "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": True,
                            "properties": {"a": {"type": "string"}},
                        },
                    },
                },
            },
        },
    }
)


def widget(**source: Any) -> Any:
    return SchemaSource("1.37", crds=[WIDGET], **source).root_for("example.com/v1", "Widget")


def test_a_crd_root_is_published_with_type_meta_and_a_gvk() -> None:
    root = widget()
    assert root.ref == TypeRef(named="com.example.v1.Widget")  # gvkToModelName
    spec = root.index.definitions["com.example.v1.Widget"]
    assert spec["properties"]["apiVersion"] == {"type": "string"} and spec["properties"]["kind"] == {"type": "string"}
    assert spec["x-kubernetes-group-version-kind"] == [{"group": "example.com", "version": "v1", "kind": "Widget"}]
    assert "apiVersion" not in WIDGET["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]  # not modified


@needs_builtin
def test_crd_metadata_is_object_meta() -> None:
    root = widget()
    live = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "finalizers": ["a"]}}
    merged = apply_configuration(live, {"metadata": {"finalizers": ["b"], "labels": {"x": "y"}}}, root)
    assert merged["metadata"] == {"finalizers": ["a", "b"], "labels": {"x": "y"}, "name": "w"}  # a set, granular labels
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"metadata": {"nope": 1}}, root)
    assert str(raised.value) == PATCH + ".metadata.nope: field not declared in schema"


@needs_builtin
def test_embedded_resources_get_type_meta_and_object_meta() -> None:
    root = widget()
    live = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "spec": {"template": {"kind": "Pod", "whatever": {"a": 1}}},
    }
    merged = apply_configuration(live, {"spec": {"template": {"metadata": {"name": "p"}, "whatever": {"b": 2}}}}, root)
    assert merged["spec"]["template"] == {"kind": "Pod", "metadata": {"name": "p"}, "whatever": {"a": 1, "b": 2}}
    for patch, path in (
        ({"template": {"metadata": {"nope": 1}}}, ".spec.template.metadata.nope"),
        ({"template": {"kind": 1}}, ".spec.template.kind"),
    ):
        with pytest.raises(MergeError, match="^" + PATCH.replace(".", r"\.") + path.replace(".", r"\.")):
            apply_configuration(live, {"spec": patch}, root)
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"spec": {"items": [{"apiVersion": "v1", "metadata": {"name": "n"}}]}}, root)
    assert str(raised.value) == "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.items"


def test_crd_int_or_string_has_no_type_so_smd_takes_any_value() -> None:
    """SMD accepts a map here (the CRD's own validation rejects it later) and merges it like any value."""
    root = widget()
    live = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"port": 80}}
    assert apply_configuration(live, {"spec": {"port": "http"}}, root)["spec"] == {"port": "http"}
    assert apply_configuration(live, {"spec": {"port": {"a": 1}}}, root)["spec"] == {"port": {"a": 1}}


@pytest.mark.usefixtures("no_builtin")
def test_crd_metadata_is_deduced_without_object_meta() -> None:
    root = widget()
    metadata = root.index.definitions["com.example.v1.Widget"]["properties"]["metadata"]
    assert metadata == {"$ref": f"#/components/schemas/{DEDUCED}"}
    live = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "1"}}}
    merged = apply_configuration(live, {"metadata": {"labels": {"b": "2"}, "anything": True}}, root)
    assert merged["metadata"] == {"anything": True, "labels": {"a": "1", "b": "2"}, "name": "w"}


@pytest.mark.usefixtures("no_builtin")
def test_crd_metadata_from_a_schema_file() -> None:
    root = widget(schema_files=[APPS_V1])
    assert root.index.named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") is not None
    live = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    with pytest.raises(MergeError) as raised:
        apply_configuration(live, {"metadata": {"finalizers": ["a"]}}, root)  # the file's ObjectMeta has no finalizers
    assert str(raised.value) == PATCH + ".metadata.finalizers: field not declared in schema"


def test_a_crd_is_preferred_for_its_group_and_kind() -> None:
    own = crd(
        {"type": "object", "properties": {"spec": {"type": "object", "properties": {"mine": {"type": "string"}}}}},
        group="apps",
        kind="Deployment",
    )
    root = SchemaSource("1.37", schema_files=[APPS_V1], crds=[own]).root_for("apps/v1", "Deployment")
    assert root.ref == TypeRef(named="apps.v1.Deployment")
    live = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}}
    assert apply_configuration(live, {"spec": {"mine": "x"}}, root)["spec"] == {"mine": "x"}


def test_a_crd_without_the_version_has_no_schema() -> None:
    with pytest.raises(SchemaNotFound) as raised:
        SchemaSource("1.37", crds=[WIDGET]).root_for("example.com/v2", "Widget")
    assert str(raised.value) == (
        "no schema for example.com/v2 Widget: "
        "the CustomResourceDefinition widgets.example.com has no version v2 with a schema"
    )


def test_crd_types_are_cached_per_source() -> None:
    source = SchemaSource("1.37", crds=[copy.deepcopy(WIDGET)])
    assert source.root_for("example.com/v1", "Widget") is source.root_for("example.com/v1", "Widget")
