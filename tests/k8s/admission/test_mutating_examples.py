"""The Kubernetes documentation's MutatingAdmissionPolicy examples (examples/admission/mutating/), and what the API
server makes of them: the exact mutated objects, and the errors where the published example does not work."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.k8s.admission import PolicySet, request_from_objects

EXAMPLES = Path(__file__).parents[3] / "examples" / "admission" / "mutating"


def pod(*init_containers: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "myapp", "image": "example/myapp:v1.0.0"}]}
    if init_containers:
        spec["initContainers"] = [{"name": name, "image": f"example/{name}:v1.0.0"} for name in init_containers]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp", "namespace": "default"}, "spec": spec}


def policies(name: str, tmp_path: Path, edit: Any = None) -> PolicySet:
    documents = list(yaml.safe_load_all((EXAMPLES / name).read_text()))
    if edit is not None:
        edit(documents)
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(documents))
    # serves v1 by default, v1alpha1 and v1beta1 when switched on
    loaded = PolicySet.load([path], k8s_version="1.36", runtime_config=["api/alpha", "api/beta"])
    assert loaded.problems == []
    return loaded


def test_the_json_patch_example_appends_the_sidecar(tmp_path: Path) -> None:
    decision = policies("docs-json-patch.yaml", tmp_path).admit(request_from_objects(pod("myapp-initializer")))
    assert decision.allowed
    assert decision.patched == {
        **pod("myapp-initializer"),
        "spec": {
            "containers": [{"name": "myapp", "image": "example/myapp:v1.0.0"}],
            "initContainers": [
                {"name": "myapp-initializer", "image": "example/myapp-initializer:v1.0.0"},
                {"name": "mesh-proxy", "image": "mesh-proxy/v1.0.0", "restartPolicy": "Always"},
            ],
        },
    }
    assert decision.patch == (
        {"op": "add", "path": "/spec/initContainers/1",
         "value": {"name": "mesh-proxy", "image": "mesh-proxy/v1.0.0", "restartPolicy": "Always"}},
    )  # fmt: skip


def test_the_json_patch_example_fails_on_a_pod_without_init_containers(tmp_path: Path) -> None:
    """Its match condition reads `object.spec.initContainers`, which such a Pod does not have: under Fail, denied."""
    decision = policies("docs-json-patch.yaml", tmp_path).admit(request_from_objects(pod()))
    assert (decision.allowed, decision.code, decision.reason) == (False, 403, "Invalid")
    assert decision.message == (
        "policy 'sidecar-policy.example.com' with binding 'sidecar-policy.example.com' denied request: expression "
        "'!object.spec.initContainers.exists(ic, ic.name == \"mesh-proxy\")' resulted in error: no such key: "
        "initContainers"
    )


def test_the_json_patch_example_leaves_a_pod_with_the_sidecar_alone(tmp_path: Path) -> None:
    decision = policies("docs-json-patch.yaml", tmp_path).admit(request_from_objects(pod("mesh-proxy")))
    assert decision.allowed and decision.patched is None


def test_the_apply_configuration_example_never_matches_a_pod(tmp_path: Path) -> None:
    """Its rule names the group "apps" for pods, which live in the core group."""
    decision = policies("docs-applyconfiguration.yaml", tmp_path).admit(request_from_objects(pod("init")))
    assert decision.allowed and decision.patched is None and not decision.applied
    assert [(e.outcome, e.detail) for e in decision.evaluations] == [
        ("policy-not-matched", "matchConstraints: resourceRules")
    ]


@pytest.mark.skipif(importlib.util.find_spec("kubernetes_validate") is None, reason="needs pip install 'kcel[schemas]'")
def test_the_apply_configuration_example_sets_an_atomic_list(tmp_path: Path) -> None:
    """With the group corrected, the API server refuses it: `args` is an atomic list (kyverno/kyverno#15094)."""

    def core_group(documents: list[Any]) -> None:
        documents[0]["spec"]["matchConstraints"]["resourceRules"][0]["apiGroups"] = [""]

    decision = policies("docs-applyconfiguration.yaml", tmp_path, core_group).admit(request_from_objects(pod("init")))
    assert (decision.allowed, decision.reason) == (False, "Invalid")
    assert decision.message == (
        "policy 'sidecar-policy.example.com' with binding 'sidecar-policy.example.com' denied request: error applying "
        "patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.initContainers[0].args"
    )
    assert decision.kubectl_text().startswith('The pods "myapp" is invalid: : policy ')
