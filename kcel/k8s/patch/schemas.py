"""Where the OpenAPI schemas that type a kind come from: a CustomResourceDefinition, a schema file the user saved
from the API server, or the built-in definitions of the `kubernetes-validate` package (`kcel[schemas]`).

The API server types an ApplyConfiguration with its group-version's OpenAPI v3 document; for a CRD version that is
the version's schema with `apiVersion`, `kind` and `metadata` (ObjectMeta) added as apiextensions-apiserver's
OpenAPI builder publishes it. kubernetes-validate's definitions come from the OpenAPI v2 document, so the two
differences that change a merge are put back: IntOrString is an untyped scalar, and the `protocol` keys of
container and service ports default to "TCP".
"""

from __future__ import annotations

import copy
import importlib.util
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kcel.k8s.environment import Version, server_version
from kcel.k8s.patch.typed import DEDUCED, ObjectType, TypeIndex

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TCP_KEYED = ("io.k8s.api.core.v1.ContainerPort", "io.k8s.api.core.v1.ServicePort")  # `+default="TCP"` list keys
_BUILTIN_GROUPS = frozenset({"", "apps", "batch", "autoscaling", "policy", "extensions"})

Definitions = Mapping[str, Mapping[str, Any]]


class SchemaNotFound(Exception):
    """No schema types this kind; the message says what would provide one."""


def _definitions(document: Mapping[str, Any]) -> Definitions:
    """The named schemas of an OpenAPI v3 document (`components.schemas`), a v2 one or a JSON Schema `$defs`."""
    components = document.get("components")
    if isinstance(components, Mapping) and isinstance(components.get("schemas"), Mapping):
        found: Definitions = components["schemas"]
        return found
    for name in ("definitions", "$defs"):
        if isinstance(document.get(name), Mapping):
            found = document[name]
            return found
    raise ValueError("not an OpenAPI document (kubectl get --raw /openapi/v3/apis/GROUP/VERSION): no schemas")


_builtin_lock = threading.Lock()
_builtin: dict[Version, TypeIndex | None] = {}


def _builtin_file(version: Version) -> Path | None:
    spec = importlib.util.find_spec("kubernetes_validate")  # located, never imported: it pulls in jsonschema
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations)))
    path = base / "kubernetes-json-schema" / f"v{version[0]}.{version[1]}.0-local" / "_definitions.json"
    return path if path.is_file() else None


def builtin_definitions(version: Version) -> TypeIndex | None:
    """kubernetes-validate's definitions for this Kubernetes version, read once per process (None: not installed)."""
    with _builtin_lock:
        if version not in _builtin:
            path = _builtin_file(version)
            index = None
            if path is not None:
                with path.open(encoding="utf-8") as stream:
                    definitions = dict(_definitions(json.load(stream)))
                index = TypeIndex(_as_published(definitions))
            _builtin[version] = index
        return _builtin[version]


def _as_published(definitions: dict[str, Any]) -> dict[str, Any]:
    """What the OpenAPI v3 document says where kubernetes-validate's v2-derived JSON Schema differs for SMD."""
    if INT_OR_STRING in definitions:
        definitions[INT_OR_STRING] = {"type": "string", "format": "int-or-string"}
    for name in _TCP_KEYED:
        protocol = definitions.get(name, {}).get("properties", {}).get("protocol")
        if isinstance(protocol, dict):
            protocol["default"] = "TCP"
    return definitions


def _model_name(group: str, version: str, kind: str) -> str:
    """apiextensions-apiserver's gvkToModelName: `stable.example.com` -> `com.example.stable.v1.CronTab`."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _embed(schema: Any, metadata: Mapping[str, Any]) -> None:
    """addEmbeddedProperties: an `x-kubernetes-embedded-resource` object gets apiVersion, kind and metadata."""
    if not isinstance(schema, dict):
        return
    for child in (schema.get("properties") or {}).values():
        _embed(child, metadata)
    _embed(schema.get("items"), metadata)
    _embed(schema.get("additionalProperties"), metadata)
    if schema.get("x-kubernetes-embedded-resource") is True:
        properties = schema.setdefault("properties", {})
        properties.update(apiVersion={"type": "string"}, kind={"type": "string"}, metadata=dict(metadata))


def crd_definitions(crd: Mapping[str, Any], version: str, meta: Definitions | None) -> tuple[Definitions, str] | None:
    """The definitions the API server publishes for one CRD version and the kind's model name (None: no such
    version, or no schema). `meta` supplies ObjectMeta; without it `metadata` is typed as deduced (any fields,
    merged granularly), since only the built-in definitions or a schema file describe ObjectMeta."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind = spec.get("group", ""), names.get("kind", "")
    for entry in spec.get("versions") or ():
        schema = ((entry.get("schema") or {}).get("openAPIV3Schema")) if entry.get("name") == version else None
        if isinstance(schema, Mapping):
            break
    else:
        return None
    has_meta = meta is not None and OBJECT_META in meta
    metadata = {"$ref": f"#/components/schemas/{OBJECT_META if has_meta else DEDUCED}"}
    root = copy.deepcopy(dict(schema))
    _embed(root, metadata)
    root.setdefault("properties", {}).update(apiVersion={"type": "string"}, kind={"type": "string"}, metadata=metadata)
    root["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
    name = _model_name(group, version, kind)
    definitions: dict[str, Mapping[str, Any]] = {name: root}
    if has_meta and meta is not None:
        definitions.update((k, v) for k, v in meta.items() if k != name)
    return definitions, name


# The OpenAPI model names of the API server's own Go types (a CRD's: its group reversed, `io.k8s.networking.gateway`).
_BUILTIN_MODELS = ("io.k8s.api.", "io.k8s.apiextensions-apiserver.", "io.k8s.kube-aggregator.")


class SchemaSource:
    """The schemas one API server version types objects with: CRDs first (for their group and kind), then the
    given OpenAPI documents, then the built-in definitions. Built lazily; safe to share between threads."""

    def __init__(
        self, k8s_version: str, schema_files: Sequence[Mapping[str, Any]] = (), crds: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        self.version = server_version(k8s_version)
        self._files = [TypeIndex(_definitions(document)) for document in schema_files]
        self._crds = list(crds)
        self._crd_types: dict[tuple[str, str, str], ObjectType] = {}
        self._lock = threading.Lock()

    def root_for(self, api_version: str, kind: str) -> ObjectType:
        """The root type of this kind.

        Raises:
            SchemaNotFound: nothing here types the kind.
        """
        group, _, version = api_version.rpartition("/")
        crd = self._crd(group, kind)
        if crd is not None:
            return self._crd_type(crd, group, version, kind)
        for index in self._files:
            ref = index.for_gvk(group, version, kind)
            if ref is not None:
                return ObjectType(index, ref, self.version)
        builtin = builtin_definitions(self.version)
        ref = builtin.for_gvk(group, version, kind) if builtin is not None else None
        if builtin is not None and ref is not None:
            return ObjectType(builtin, ref, self.version)
        raise SchemaNotFound(self._missing(group, version, kind, installed=builtin is not None))

    def builtin_root(self, api_version: str, kind: str) -> ObjectType | None:
        """The root type of a kind the API server serves from Go types (not a CRD's), when a schema is known."""
        group, _, _ = api_version.rpartition("/")
        if self._crd(group, kind) is not None:
            return None
        try:
            root = self.root_for(api_version, kind)
        except SchemaNotFound:
            return None
        return root if (root.ref.named or "").startswith(_BUILTIN_MODELS) else None  # not a CRD's published schema

    def _crd(self, group: str, kind: str) -> Mapping[str, Any] | None:
        for crd in self._crds:
            spec = crd.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return crd
        return None

    def _crd_type(self, crd: Mapping[str, Any], group: str, version: str, kind: str) -> ObjectType:
        with self._lock:
            found = self._crd_types.get((group, version, kind))
            if found is None:
                built = crd_definitions(crd, version, self._object_meta())
                if built is None:
                    name = (crd.get("metadata") or {}).get("name", f"{kind} ({group})")
                    raise SchemaNotFound(
                        f"no schema for {group}/{version} {kind}: the CustomResourceDefinition {name} "
                        f"has no version {version} with a schema"
                    )
                definitions, model = built
                index = TypeIndex(definitions)
                ref = index.for_gvk(group, version, kind)
                assert ref is not None and ref.named == model
                found = self._crd_types[(group, version, kind)] = ObjectType(index, ref, self.version)
            return found

    def _object_meta(self) -> Definitions | None:
        """ObjectMeta's definitions: from a given schema file, else the built-in ones."""
        for index in self._files:
            if OBJECT_META in index.definitions:
                return index.definitions
        builtin = builtin_definitions(self.version)
        return builtin.definitions if builtin is not None else None

    def _missing(self, group: str, version: str, kind: str, installed: bool) -> str:
        what = f"{group}/{version} {kind}" if group else f"{version} {kind}"
        path = f"/openapi/v3/apis/{group}/{version}" if group else f"/openapi/v3/api/{version}"
        saved = f"a schema file (kubectl get --raw {path} saved to a file)"
        if group in _BUILTIN_GROUPS or group.endswith(".k8s.io"):
            if not installed:
                return f"no schema for {what}: pip install 'kcel[schemas]' or give {saved}"
            minor = f"{self.version[0]}.{self.version[1]}"
            return f"no schema for {what}: Kubernetes {minor} has no such built-in kind; give its CRD or {saved}"
        return f"no schema for {what}: give its CustomResourceDefinition or {saved}"
