"""`kcel serve` as a real process over HTTPS with the real policy engine, the way the API server talks to it.

One server is started for the module (a free loopback port, a trustme certificate) with the policies in
tests/webhook/policies and the params/Namespaces in tests/webhook/resources.
"""

from __future__ import annotations

import base64
import copy
import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from kcel.k8s.patch.jsonpatch import apply_patch

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


@dataclass
class Server:
    url: str
    port: int
    ca: trustme.CA
    certs: Path
    policies: Path
    log: Path
    process: subprocess.Popen[bytes]

    def client(self) -> httpx.Client:
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return httpx.Client(base_url=self.url, verify=context, timeout=10)

    def log_entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_cert(directory: Path, ca: trustme.CA) -> bytes:
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    (directory / "tls.crt.new").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    (directory / "tls.key.new").write_bytes(leaf.private_key_pem.bytes())
    # Key first, then certificate, each replaced atomically: what a Secret volume update looks like from inside.
    os.replace(directory / "tls.key.new", directory / "tls.key")
    os.replace(directory / "tls.crt.new", directory / "tls.crt")
    return ssl.PEM_cert_to_DER_cert(leaf.cert_chain_pems[0].bytes().decode())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("serve")
    certs, policies = base / "certs", base / "policies"
    certs.mkdir()
    shutil.copytree(HERE / "policies", policies)
    ca = trustme.CA()
    write_cert(certs, ca)
    port = free_port()
    log = base / "server.log"
    command = [
        sys.executable, "-m", "kcel.webhook", "--policy", str(policies), "--params", str(HERE / "resources"),
        "--cert", str(certs / "tls.crt"), "--key", str(certs / "tls.key"), "--host", "127.0.0.1",
        "--port", str(port), "--timeout", "5", "--log-level", "info", "--shutdown-delay", "0",
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    running = Server(f"https://127.0.0.1:{port}", port, ca, certs, policies, log, process)
    try:
        wait_until_ready(running)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_ready(server: Server) -> None:
    with server.client() as client:
        for _ in range(300):
            if server.process.poll() is not None:
                raise AssertionError(f"kcel serve exited {server.process.returncode}:\n{server.log.read_text()}")
            try:
                if client.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise AssertionError(f"kcel serve never became ready:\n{server.log.read_text()}")


def admission(
    kind: dict[str, str], resource: str, obj: dict[str, Any], namespace: str = "default", groups: tuple[str, ...] = ()
) -> dict[str, Any]:
    request = {
        "uid": str(uuid.uuid4()),
        "kind": kind,
        "resource": {"group": kind["group"], "version": kind["version"], "resource": resource},
        "requestKind": kind,
        "requestResource": {"group": kind["group"], "version": kind["version"], "resource": resource},
        "name": obj["metadata"]["name"],
        "namespace": namespace,
        "operation": "CREATE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated", *groups]},
        "object": obj,
        "oldObject": None,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


POD = {"group": "", "version": "v1", "kind": "Pod"}
DEPLOYMENT = {"group": "apps", "version": "v1", "kind": "Deployment"}
WIDGET = {"group": "example.com", "version": "v1", "kind": "Widget"}


def pod(image: str = "nginx:1.27", privileged: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": image}
    if privileged:
        container["securityContext"] = {"privileged": True}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [container]}}


def deployment(replicas: int) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    }  # fmt: skip


def widget(size: str, owner: str | None = None) -> dict[str, Any]:
    spec = {"size": size} | ({"owner": owner} if owner else {})
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def post(server: Server, review: dict[str, Any], query: str = "?timeout=10s") -> dict[str, Any]:
    with server.client() as client:
        answer = client.post("/validate" + query, json=review)
    assert answer.status_code == 200, answer.text
    document = answer.json()
    assert (document["apiVersion"], document["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    assert document["response"]["uid"] == review["request"]["uid"]
    return dict(document["response"])


def test_a_compliant_pod_is_allowed_with_an_audit_annotation(server: Server) -> None:
    response = post(server, admission(POD, "pods", pod()))
    assert response["allowed"] is True and "status" not in response
    assert response["auditAnnotations"] == {"pod-hygiene.containers": "1"}


def test_a_privileged_pod_is_denied_with_the_policys_message(server: Server) -> None:
    response = post(server, admission(POD, "pods", pod(privileged=True)))
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"]) == (403, "Forbidden")
    assert "privileged containers are not allowed: web" in status["message"]
    assert "pod-hygiene" in status["message"]


def test_a_latest_image_is_denied_as_invalid(server: Server) -> None:
    status = post(server, admission(POD, "pods", pod(image="nginx:latest")))["status"]
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert "images must not use the :latest tag" in status["message"]


def test_deployments_are_limited_by_a_param_except_for_admins_and_system_namespaces(server: Server) -> None:
    assert post(server, admission(DEPLOYMENT, "deployments", deployment(5)))["allowed"] is True
    denied = post(server, admission(DEPLOYMENT, "deployments", deployment(9), namespace="team-a"))
    assert denied["allowed"] is False and "replicas must be at most 5, got 9" in denied["status"]["message"]
    system = post(server, admission(DEPLOYMENT, "deployments", deployment(9), namespace="platform"))
    assert system["allowed"] is True  # the binding's namespaceSelector skips namespaces labelled tier=system
    admin = post(server, admission(DEPLOYMENT, "deployments", deployment(9), groups=("system:masters",)))
    assert admin["allowed"] is True  # the matchCondition skips cluster admins


def test_a_custom_resource_is_denied_warned_and_annotated(server: Server) -> None:
    warned = post(server, admission(WIDGET, "widgets", widget("small")))
    assert warned["allowed"] is True
    assert any("widgets should name an owner" in w for w in warned["warnings"])
    assert warned["auditAnnotations"] == {"widget-size.size": "small"}
    clean = post(server, admission(WIDGET, "widgets", widget("medium", owner="bob")))
    assert clean["allowed"] is True and "warnings" not in clean
    denied = post(server, admission(WIDGET, "widgets", widget("huge", owner="bob")))
    assert denied["allowed"] is False and "size must be small or medium, not huge" in denied["status"]["message"]


@pytest.mark.skipif(importlib.util.find_spec("kubernetes_validate") is None, reason="needs pip install 'kcel[schemas]'")
def test_mutate_returns_the_patch_that_makes_the_mutated_object(server: Server) -> None:
    obj = deployment(2)
    review = admission(DEPLOYMENT, "deployments", obj)
    with server.client() as client:
        answer = client.post("/mutate?timeout=10s", json=review)
    assert answer.status_code == 200, answer.text
    response = answer.json()["response"]
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patched = apply_patch(obj, json.loads(base64.b64decode(response["patch"])))
    expected = copy.deepcopy(obj)
    expected["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "mesh-proxy", "image": "mesh/proxy:v1.0.0", "restartPolicy": "Always"}
    ]
    assert patched == expected
    # the validating side sees the object as it comes (the API server has applied the patch by then)
    assert "patch" not in post(server, review)


def test_a_kind_no_policy_matches_is_allowed(server: Server) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    response = post(server, admission({"group": "", "version": "v1", "kind": "Secret"}, "secrets", secret))
    assert response == {"uid": response["uid"], "allowed": True}


def test_bad_bodies_get_clear_4xx_answers(server: Server) -> None:
    with server.client() as client:
        malformed = client.post("/validate", content=b'{"apiVersion": ', headers={"content-type": "application/json"})
        assert malformed.status_code == 400 and "not valid JSON" in malformed.json()["message"]
        wrong = client.post("/validate", json={"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"})
        assert wrong.status_code == 400 and "expected apiVersion" in wrong.json()["message"]
        oversized = client.post("/validate", content=b" " * (7 * 1024 * 1024 + 1))
        assert oversized.status_code == 413 and oversized.json()["reason"] == "RequestEntityTooLarge"
        assert client.get("/healthz").status_code == 200  # and the server is still there
    no_resource = admission(POD, "pods", pod())
    del no_resource["request"]["resource"], no_resource["request"]["requestResource"]
    response = post(server, no_resource)
    assert response["allowed"] is False
    assert (response["status"]["code"], response["status"]["message"]) == (400, "request.resource: required")
    huge_object = pod() | {"metadata": {"name": "web", "annotations": {"blob": "x" * (3 * 1024 * 1024)}}}
    response = post(server, admission(POD, "pods", huge_object))
    assert response["allowed"] is False and response["status"]["code"] == 413


def test_probes_metrics_and_one_log_line_per_review(server: Server) -> None:
    review = admission(POD, "pods", pod(privileged=True))
    post(server, review)
    with server.client() as client:
        assert client.get("/healthz").text == "ok"
        assert client.get("/readyz").text.startswith("ok: policy generation ")
        metrics = client.get("/metrics").text
    assert 'kcel_webhook_decisions_total{decision="denied"}' in metrics
    assert "kcel_webhook_admission_duration_seconds_bucket" in metrics
    assert "kcel_webhook_cel_cost_sum" in metrics
    for _ in range(50):  # the log is written by another process: give it a moment
        lines = [e for e in server.log_entries() if e.get("uid") == review["request"]["uid"]]
        if lines:
            break
        time.sleep(0.02)
    assert len(lines) == 1
    line = lines[0]
    assert (line["kind"], line["operation"], line["decision"], line["allowed"]) == ("v1/Pod", "CREATE", "denied", False)
    assert line["latency_ms"] > 0 and line["code"] == 403


def test_a_replaced_certificate_is_served_to_new_connections(server: Server) -> None:
    new_ca = trustme.CA()
    new_der = write_cert(server.certs, new_ca)
    context = ssl.create_default_context()
    server.ca.configure_trust(context)
    new_ca.configure_trust(context)
    seen = b""
    for _ in range(60):  # the server polls every second
        with socket.create_connection(("127.0.0.1", server.port)) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                seen = tls.getpeercert(binary_form=True) or b""
        if seen == new_der:
            break
        time.sleep(0.1)
    assert seen == new_der
    new_trust = ssl.create_default_context()
    new_ca.configure_trust(new_trust)
    with httpx.Client(base_url=server.url, verify=new_trust) as client:
        assert client.get("/healthz").status_code == 200
    server.ca = new_ca  # later tests trust the new certificate only


def test_a_broken_policy_file_is_logged_and_the_last_good_set_keeps_serving(server: Server) -> None:
    with server.client() as client:
        before = client.get("/readyz").text
    (server.policies / "broken.yaml").write_text(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: broken}\n"
        "spec:\n  validations:\n  - expression: 'object.spec.('\n"
    )
    for _ in range(60):
        if any(e.get("msg", "").startswith("policy reload rejected") for e in server.log_entries()):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the broken file was not reported:\n" + server.log.read_text())
    with server.client() as client:
        assert client.get("/readyz").text == before
    assert post(server, admission(POD, "pods", pod(privileged=True)))["allowed"] is False


def test_two_workers_over_plain_http_share_the_port_and_the_metrics(tmp_path: Path) -> None:
    port = free_port()
    command = [
        sys.executable, "-m", "kcel.webhook", "--policy", str(HERE / "policies"),
        "--params", str(HERE / "resources"), "--insecure-http", "--host", "127.0.0.1", "--port", str(port),
        "--workers", "2", "--log-level", "warning", "--shutdown-delay", "0",
    ]  # fmt: skip
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            for _ in range(300):
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.05)
            for _ in range(20):  # new connections, so both workers answer some
                review = admission(POD, "pods", pod(privileged=True))
                with httpx.Client(base_url=f"http://127.0.0.1:{port}") as fresh:
                    response = fresh.post("/validate", json=review).json()["response"]
                assert response["uid"] == review["request"]["uid"] and response["allowed"] is False
            metrics = client.get("/metrics").text
        decisions = [line for line in metrics.splitlines() if line.startswith("kcel_webhook_decisions_total{")]
        assert 'kcel_webhook_decisions_total{decision="denied"} 20.0' in decisions, (decisions, log.read_text()[-3000:])
    finally:
        process.terminate()
        process.wait(10)
    assert process.returncode in (0, -15), log.read_text()
