"""Building policies, bindings and requests for the admission tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kcel.k8s.admission import Decision, PolicySet, request_from_objects

DEPLOYMENT_RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["deployments"]}  # fmt: skip


def policy(name: str = "p.example.com", **spec: Any) -> dict[str, Any]:
    spec.setdefault("matchConstraints", {"resourceRules": [DEPLOYMENT_RULE]})
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def binding(name: str = "b.example.com", policy_name: str = "p.example.com", **spec: Any) -> dict[str, Any]:
    spec.setdefault("validationActions", ["Deny"])
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": policy_name, **spec}}  # fmt: skip


def deployment(replicas: Any = 3, name: str = "nginx", namespace: str = "default", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, **extra}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec}


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}  # fmt: skip


def write(path: Path, *documents: Any) -> Path:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    return path


def policies(tmp_path: Path, *documents: Any, resources: tuple[Any, ...] = ()) -> PolicySet:
    files = [write(tmp_path / "policies.yaml", *documents)]
    extra = [write(tmp_path / "resources.yaml", *resources)] if resources else []
    return PolicySet.load(files, resources=extra)


def admit(tmp_path: Path, documents: list[Any], obj: Any, old: Any = None, resources: tuple[Any, ...] = (),
          **request: Any) -> Decision:  # fmt: skip
    loaded = policies(tmp_path, *documents, resources=resources)
    assert loaded.problems == [], loaded.problems
    return loaded.admit(request_from_objects(obj, old, **request))
