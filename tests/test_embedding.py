"""The embedding API as the README and examples/embedding show it: the README's section runs as written, the ASGI
webhook answers AdmissionReviews, and the kopf handler decides as kopf calls it."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import re
from collections.abc import MutableMapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
OBJECTS = ROOT / "examples" / "admission" / "objects"


def test_the_readme_embedding_section_runs_as_written() -> None:
    section = README.split("### Embedding kcel in a program")[1].split("\n### ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    for block in blocks:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
        shown = [line.split("# ", 1)[1] for line in block.splitlines() if line.startswith("# ")]
        inline = [
            line.split("  # ", 1)[1] for line in block.splitlines() if line.startswith("print(") and "  # " in line
        ]
        assert printed.getvalue().splitlines() == (shown or inline)  # what the comments say it prints


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"embedding_{name}", ROOT / "examples" / "embedding" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def review(name: str, uid: str = "u1") -> dict[str, Any]:
    """The AdmissionReview the API server sends for a create of an example object."""
    obj = yaml.safe_load((OBJECTS / name).read_text(encoding="utf-8"))
    apps = {"group": "apps", "version": "v1"}
    request = {
        "uid": uid, "kind": {**apps, "kind": "Deployment"}, "resource": {**apps, "resource": "deployments"},
        "requestKind": {**apps, "kind": "Deployment"}, "requestResource": {**apps, "resource": "deployments"},
        "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"], "operation": "CREATE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]}, "object": obj, "oldObject": None,
        "dryRun": False, "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }  # fmt: skip
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def call(app: Any, method: str, path: str, body: bytes) -> tuple[int, Any]:
    """One HTTP request through an ASGI application, as a server would make it."""
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": [(b"content-type", b"application/json")]}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], json.loads(sent[1]["body"])


def test_the_asgi_webhook_answers_as_the_api_server_expects() -> None:
    app = example("asgi_webhook").app
    status, answer = call(app, "POST", "/validate", json.dumps(review("deployment-too-many.yaml", "u7")).encode())
    assert status == 200 and (answer["apiVersion"], answer["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    response = answer["response"]
    assert response["uid"] == "u7" and response["allowed"] is False and response["status"]["code"] == 422
    assert "must be no greater than 3" in response["status"]["message"] and response["warnings"]
    status, answer = call(app, "POST", "/validate", json.dumps(review("deployment-ok.yaml")).encode())
    assert status == 200 and answer["response"]["allowed"] is True
    assert call(app, "POST", "/validate", b"{not json")[0] == 400
    assert call(app, "GET", "/validate", b"")[0] == 404


def test_the_kopf_handler_decides_as_kopf_calls_it() -> None:
    """kopf's own admission engine (serve_admission_request, what its webhook servers call) runs the handler."""
    kopf = pytest.importorskip("kopf", reason="kopf (the test extra) runs the handler")
    from kopf._cogs.structs.references import Insights, Resource
    from kopf._core.engines.admission import serve_admission_request
    from kopf._core.reactor.inventory import ResourceMemories

    registry = kopf.OperatorRegistry()
    kopf.set_default_registry(registry)
    try:
        example("kopf_handler")
    finally:
        kopf.set_default_registry(kopf.OperatorRegistry())
    insights = Insights(webhook_resources={Resource("apps", "v1", "deployments", namespaced=True)})

    def answer(name: str) -> dict[str, Any]:
        settings, memories = kopf.OperatorSettings(), ResourceMemories()
        response = serve_admission_request(review(name), settings=settings, memories=memories, memobase=kopf.Memo(),
                                           registry=registry, insights=insights, indices={})  # fmt: skip
        return asyncio.run(response)["response"]

    denied = answer("deployment-too-many.yaml")
    assert denied["allowed"] is False and denied["status"]["code"] == 422
    assert denied["status"]["message"].endswith("denied request: object.spec.replicas must be no greater than 3")
    assert denied["warnings"][0].startswith("Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com'")
    assert answer("deployment-ok.yaml")["allowed"] is True


def test_policies_from_manifests_in_memory_match_those_from_files() -> None:
    from kcel.k8s.admission import PolicySet, request_from_objects

    folder = ROOT / "examples" / "admission"
    texts = "\n---\n".join(p.read_text(encoding="utf-8") for p in sorted((folder / "policies").glob("*.yaml")))
    params = [d for p in sorted((folder / "params").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    in_memory = PolicySet.from_manifests(texts, resources=params)
    from_files = PolicySet.load([folder / "policies"], resources=[folder / "params"])
    request = request_from_objects(yaml.safe_load((OBJECTS / "deployment-too-many.yaml").read_text()))
    assert in_memory.problems == from_files.problems == []
    assert in_memory.admit(request).message == from_files.admit(request).message != ""


def test_the_documentation_embedding_page_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # its examples name files under examples/
    page = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) >= 4
    for block in blocks:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            exec(compile(block, "docs/embedding.md", "exec"), {})  # noqa: S102 - the page's own example
        assert printed.getvalue()  # each shows something
