"""Admission requests: building one from manifests offline, and reading one (AdmissionReview v1 `request`).

`request_from_objects` derives what the API server would put in the request: the kind from `apiVersion`
and `kind`, the resource plural (a table of built-in kinds, a CRD's own plural when given, else the
RESTMapper's guess), the namespace (none for cluster-scoped kinds) and the operation's options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kcel.k8s.admission.identity import DEFAULT_USER
from kcel.k8s.admission.matching import GVK, GVR, Attributes
from kcel.values import is_mapping

DEFAULT_UID = "00000000-0000-0000-0000-000000000000"

# kind -> (plural, namespaced) for built-in kinds whose plural is not the simple guess, or that are cluster-scoped.
BUILTIN_RESOURCES: Mapping[str, tuple[str, bool]] = {
    "Endpoints": ("endpoints", True),
    "Namespace": ("namespaces", False),
    "Node": ("nodes", False),
    "PersistentVolume": ("persistentvolumes", False),
    "ComponentStatus": ("componentstatuses", False),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "StorageClass": ("storageclasses", False),
    "VolumeAttachment": ("volumeattachments", False),
    "CSIDriver": ("csidrivers", False),
    "CSINode": ("csinodes", False),
    "PriorityClass": ("priorityclasses", False),
    "IngressClass": ("ingressclasses", False),
    "RuntimeClass": ("runtimeclasses", False),
    "CustomResourceDefinition": ("customresourcedefinitions", False),
    "APIService": ("apiservices", False),
    "CertificateSigningRequest": ("certificatesigningrequests", False),
    "MutatingWebhookConfiguration": ("mutatingwebhookconfigurations", False),
    "ValidatingWebhookConfiguration": ("validatingwebhookconfigurations", False),
    "ValidatingAdmissionPolicy": ("validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("validatingadmissionpolicybindings", False),
    "MutatingAdmissionPolicy": ("mutatingadmissionpolicies", False),
    "MutatingAdmissionPolicyBinding": ("mutatingadmissionpolicybindings", False),
    "FlowSchema": ("flowschemas", False),
    "PriorityLevelConfiguration": ("prioritylevelconfigurations", False),
    "TokenReview": ("tokenreviews", False),
    "SelfSubjectAccessReview": ("selfsubjectaccessreviews", False),
    "SubjectAccessReview": ("subjectaccessreviews", False),
    "SelfSubjectReview": ("selfsubjectreviews", False),
    "NetworkPolicy": ("networkpolicies", True),
    "PodSecurityPolicy": ("podsecuritypolicies", False),
}

OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def guess_plural(kind: str) -> str:
    """meta.UnsafeGuessKindToResource: lower case, then `s`, `es` after s, `ies` for a final y."""
    singular = kind.lower()
    if not singular:
        return ""
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"


BUILTIN_GROUPS = frozenset(
    "apps batch autoscaling policy admissionregistration.k8s.io apiextensions.k8s.io apiregistration.k8s.io "
    "authentication.k8s.io authorization.k8s.io certificates.k8s.io coordination.k8s.io discovery.k8s.io "
    "events.k8s.io flowcontrol.apiserver.k8s.io internal.apiserver.k8s.io networking.k8s.io node.k8s.io "
    "rbac.authorization.k8s.io resource.k8s.io scheduling.k8s.io storage.k8s.io storagemigration.k8s.io".split()
) | {""}


def guessed_resource_warning(api_version: str, kind: str, crds: Iterable[Any] = ()) -> str:
    """A note when a custom kind's resource is only the RESTMapper's guess (`Mesh` -> `meshs`): a policy whose rules
    name the real plural does not match it, and nothing says so. "" for built-in kinds and kinds of given CRDs."""
    group, _ = split_api_version(api_version)
    if group in BUILTIN_GROUPS or any(crd.group == group and crd.kind == kind for crd in crds):
        return ""
    guess = guess_plural(kind)
    return (
        f"{kind} ({api_version}) is matched as resource {guess!r}, the API server's guess from the kind "
        f"(UnsafeGuessKindToResource): policies whose rules name its real plural do not match it; give its "
        "CustomResourceDefinition (--params crd.yaml) to use the CRD's plural"
    )


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


def resource_for(api_version: str, kind: str, crds: Iterable[Any] = ()) -> tuple[GVR, bool]:
    """The resource a kind is served as, and whether it is namespaced; CRDs (kcel.k8s.crds.crd.CRD) take precedence."""
    group, version = split_api_version(api_version)
    for crd in crds:
        if crd.group == group and crd.kind == kind:
            return GVR(group, version, crd.plural), crd.scope == "Namespaced"
    plural, namespaced = BUILTIN_RESOURCES.get(kind, (guess_plural(kind), True))
    return GVR(group, version, plural), namespaced


def request_from_objects(
    obj: Mapping[str, Any] | None,
    old: Mapping[str, Any] | None = None,
    *,
    operation: str | None = None,
    user: str = DEFAULT_USER,
    groups: Sequence[str] = (),
    uid: str = DEFAULT_UID,
    namespace: str | None = None,
    subresource: str = "",
    resource: str | None = None,
    crds: Iterable[Any] = (),
    dry_run: bool = False,
) -> dict[str, Any]:
    """An AdmissionReview v1 `request` for admitting `obj` (and `old`) as the API server would build it.

    `operation` defaults to UPDATE when `old` is given, else CREATE; for DELETE the object being deleted
    goes to `oldObject` (give it as `obj` or `old`). `resource` overrides the plural. A namespaced kind
    without `metadata.namespace` lands in `namespace` (default "default", as kubectl would send it).

    >>> r = request_from_objects({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}})
    >>> r["resource"], r["namespace"], r["operation"]
    ({'group': 'apps', 'version': 'v1', 'resource': 'deployments'}, 'default', 'CREATE')
    """
    operation = (operation or ("UPDATE" if old is not None else "CREATE")).upper()
    if operation == "DELETE":
        obj, old = None, old if old is not None else obj
    subject = obj if obj is not None else old
    if subject is None:
        raise ValueError("an object (or the old object) is needed to build a request")
    api_version, kind = str(subject.get("apiVersion", "")), str(subject.get("kind", ""))
    gvr, namespaced = resource_for(api_version, kind, crds)
    if resource:
        gvr = GVR(gvr.group, gvr.version, resource)
    metadata = subject.get("metadata") if isinstance(subject.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    group, version = split_api_version(api_version)
    request_namespace = (namespace or str(metadata.get("namespace") or "") or "default") if namespaced else ""
    obj, old = (_in_namespace(o, request_namespace) for o in (obj, old))
    request: dict[str, Any] = {
        "uid": uid,
        "kind": GVK(group, version, kind).as_json(),
        "resource": gvr.as_json(),
        "requestKind": GVK(group, version, kind).as_json(),
        "requestResource": gvr.as_json(),
        "name": str(metadata.get("name") or ""),
        "namespace": request_namespace,
        "operation": operation,
        "userInfo": {"username": user, **({"groups": list(groups)} if groups else {})},
        "object": obj,
        "oldObject": old,
        "dryRun": dry_run,
    }
    if subresource:
        request["subResource"] = request["requestSubResource"] = subresource
    if operation in OPTIONS_KINDS:
        request["options"] = {"kind": OPTIONS_KINDS[operation], "apiVersion": "meta.k8s.io/v1"}
    return request


def _in_namespace(obj: Mapping[str, Any] | None, namespace: str) -> Mapping[str, Any] | None:
    """The object as admission sees it: the API server fills an empty `metadata.namespace` from the request, clears
    it for a cluster-scoped kind, and rejects a different one (EnsureObjectNamespaceMatchesRequestNamespace)."""
    if obj is None:
        return None
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    current = str(metadata.get("namespace") or "")
    if current == namespace:
        return obj
    if current and namespace:
        raise RequestError(
            f"the namespace of the provided object ({current}) does not match the namespace sent on the request "
            f"({namespace})"
        )
    metadata = {k: v for k, v in metadata.items() if k != "namespace"} | ({"namespace": namespace} if namespace else {})
    return {**obj, "metadata": metadata}


# -- reading a request -------------------------------------------------------------------------------------------


class RequestError(ValueError):
    """A request that lacks what admission needs; the message names the field."""


def _gvk(value: Any, field: str) -> GVK:
    if not is_mapping(value):
        raise RequestError(f"request.{field}: required")
    return GVK(str(value.get("group", "")), str(value.get("version", "")), str(value.get("kind", "")))


def _gvr(value: Any, field: str) -> GVR:
    if not is_mapping(value):
        raise RequestError(f"request.{field}: required")
    return GVR(str(value.get("group", "")), str(value.get("version", "")), str(value.get("resource", "")))


def attributes_of(request: Mapping[str, Any]) -> Attributes:
    """The admission attributes of a request: its original (`requestKind`/`requestResource`) kind and resource."""
    kind = _gvk(request.get("requestKind") or request.get("kind"), "kind")
    resource = _gvr(request.get("requestResource") or request.get("resource"), "resource")
    operation = request.get("operation")
    if operation not in ("CREATE", "UPDATE", "DELETE", "CONNECT"):
        raise RequestError(f"request.operation: unsupported value {operation!r}")
    subresource = request.get("requestSubResource") or request.get("subResource") or ""
    obj, old = request.get("object"), request.get("oldObject")
    if operation in ("CREATE", "DELETE"):
        old = None if operation == "CREATE" else old
        obj = None if operation == "DELETE" else obj
    return Attributes(
        kind=kind,
        resource=resource,
        subresource=str(subresource),
        name=str(request.get("name") or ""),
        namespace=str(request.get("namespace") or ""),
        operation=operation,
        object=obj,
        old_object=old,
    )


def cel_request(request: Mapping[str, Any], attributes: Attributes, kind: GVK, resource: GVR) -> dict[str, Any]:
    """condition.go CreateAdmissionRequest as CEL reads it: `omitempty` fields absent when empty."""
    user = request.get("userInfo") if is_mapping(request.get("userInfo")) else {}
    assert is_mapping(user)
    user_info = {k: user[k] for k in ("username", "uid", "groups", "extra") if user.get(k)}
    value: dict[str, Any] = {
        "kind": kind.as_json(),
        "resource": resource.as_json(),
        "requestKind": attributes.kind.as_json(),
        "requestResource": attributes.resource.as_json(),
        "operation": attributes.operation,
        "userInfo": user_info,
        "dryRun": bool(request.get("dryRun")),
    }
    optional = {
        "subResource": attributes.subresource, "requestSubResource": attributes.subresource,
        "name": attributes.name, "namespace": attributes.namespace, "options": request.get("options"),
    }  # fmt: skip
    value.update((k, v) for k, v in optional.items() if v)
    return value


def object_name(attributes: Attributes) -> str:
    """admission extractResourceName: the request's name, else the object's name or generateName, else Unknown."""
    if attributes.name:
        return attributes.name
    metadata = attributes.object.get("metadata") if isinstance(attributes.object, Mapping) else None
    if isinstance(metadata, Mapping):
        return str(metadata.get("name") or metadata.get("generateName") or "Unknown")
    return "Unknown"
