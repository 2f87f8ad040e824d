"""Load test of `kcel serve`: throughput, latency and memory of the webhook over HTTPS on loopback.

The server runs as its own process (`python -m kcel.webhook`, info logs to /dev/null, so the per-request
log line is paid for) with the policies of tests/webhook/policies: four policies with variables, a param,
a matchCondition on the namespace, messageExpressions, audit annotations and a Warn binding. Requests rotate
through Pods, Deployments (several namespaces), Widgets (a custom resource) and Secrets (no policy matches),
a third of them denied. Every answer is checked: HTTP 200, the uid echoed, `allowed` as expected. Anything
else counts as an error.

Cases:

* the reference: the same reviews through `PolicySet.admit` in this process, in one thread (no HTTP, no JSON);
* the server at 1, 16 and 64 concurrent keep-alive connections (httpx.AsyncClient, HTTP/1.1), each bounded by
  a request count and a time limit: throughput, p50/p99 latency, errors;
* memory: 100,000 requests at 16 connections, the server's RSS (from /proc) after warm-up, halfway and at the end.

The load generator shares the machine with the server, so throughput figures are a lower bound for the server.
The ratio to the in-process reference shows what HTTP, TLS, JSON and the thread pool add.

Run: PYTHONPATH=. .venv/bin/python bench/webhook_load.py [--requests 5000] [--seconds 20] [--memory-requests 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import trustme

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "tests" / "webhook" / "policies"
RESOURCES = ROOT / "tests" / "webhook" / "resources"
UID = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class Template:
    """One review, pre-encoded with a placeholder uid so the client spends no time in json.dumps."""

    name: str
    body: bytes
    allowed: bool
    request: dict[str, Any]


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    elapsed: float = 0.0


def reviews() -> list[Template]:
    def review(name: str, group: str, version: str, kind: str, resource: str, obj: Any, ns: str = "default") -> Any:
        gvk = {"group": group, "version": version, "kind": kind}
        gvr = {"group": group, "version": version, "resource": resource}
        request = {
            "uid": UID, "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": obj["metadata"]["name"], "namespace": ns, "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:ci:deployer", "groups": ["system:serviceaccounts"]},
            "object": obj, "oldObject": None, "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        }  # fmt: skip
        return name, request

    def pod(image: str, privileged: bool = False, sidecars: int = 2) -> dict[str, Any]:
        containers = [{"name": "app", "image": image, "ports": [{"containerPort": 8080}],
                       "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]  # fmt: skip
        containers += [
            {"name": f"sidecar-{i}", "image": f"registry.example.com/sidecar:{i}.0"} for i in range(sidecars)
        ]
        if privileged:
            containers[0]["securityContext"] = {"privileged": True}
        metadata = {"name": "web-7d4b9c", "labels": {"app": "web", "team": "payments", "version": "v1"}}
        init = [{"name": "init", "image": "busybox:1.36"}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                "spec": {"containers": containers, "initContainers": init}}  # fmt: skip

    def deployment(replicas: int) -> dict[str, Any]:
        template = {"metadata": {"labels": {"app": "web"}}, "spec": pod("nginx:1.27")["spec"]}
        spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec}

    def widget(size: str) -> dict[str, Any]:
        return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": size}}

    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dmFsdWU="}}
    cases = [
        (review("pod ok", "", "v1", "Pod", "pods", pod("nginx:1.27")), True),
        (review("pod privileged", "", "v1", "Pod", "pods", pod("nginx:1.27", privileged=True)), False),
        (review("pod latest", "", "v1", "Pod", "pods", pod("nginx:latest")), False),
        (review("deployment ok", "apps", "v1", "Deployment", "deployments", deployment(3), "team-a"), True),
        (review("deployment too big", "apps", "v1", "Deployment", "deployments", deployment(9), "team-a"), False),
        (review("deployment system", "apps", "v1", "Deployment", "deployments", deployment(9), "platform"), True),
        (review("widget warned", "example.com", "v1", "Widget", "widgets", widget("small")), True),
        (review("widget denied", "example.com", "v1", "Widget", "widgets", widget("huge")), False),
        (review("secret", "", "v1", "Secret", "secrets", secret), True),
    ]
    templates = []
    for (name, request), allowed in cases:
        document = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
        templates.append(Template(name, json.dumps(document).encode(), allowed, request))
    return templates


def reference(templates: list[Template], seconds: float) -> float:
    """Reviews per second through PolicySet.admit in-process: the engine alone."""
    from kcel.k8s.admission import PolicySet

    files = sorted(POLICIES.glob("*.yaml"))
    policies = PolicySet.load(files, resources=sorted(RESOURCES.glob("*.yaml")))
    for template in templates:  # the templates must do what they claim, or the load test measures nonsense
        decision = policies.admit(template.request)
        assert decision.allowed == template.allowed, (template.name, decision)
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for template in templates:
            policies.admit(template.request)
        count += len(templates)
    return count / (time.perf_counter() - started)


async def drive(
    url: str, verify: ssl.SSLContext, templates: list[Template], connections: int, requests: int, seconds: float
) -> Result:
    """`connections` workers on as many keep-alive connections, until `requests` are done or `seconds` pass."""
    result = Result()
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    remaining = [requests]
    stop_at = time.perf_counter() + seconds
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient(base_url=url, verify=verify, limits=limits, timeout=30, http1=True) as client:

        async def worker(offset: int) -> None:
            index = offset
            while remaining[0] > 0 and time.perf_counter() < stop_at:
                remaining[0] -= 1
                template = templates[index % len(templates)]
                index += 1
                uid = str(uuid.uuid4())
                body = template.body.replace(UID.encode(), uid.encode(), 1)
                started = time.perf_counter()
                try:
                    answer = await client.post("/validate?timeout=10s", content=body, headers=headers)
                    problem = check(answer, uid, template)
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                result.latencies.append(time.perf_counter() - started)
                if problem:
                    result.errors += 1
                    result.first_error = result.first_error or problem

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(connections)))
        result.elapsed = time.perf_counter() - started
    return result


def check(answer: httpx.Response, uid: str, template: Template) -> str:
    if answer.status_code != 200:
        return f"HTTP {answer.status_code}: {answer.text[:200]}"
    response = answer.json()["response"]
    if response["uid"] != uid:
        return f"uid {response['uid']} != {uid}"
    if response["allowed"] != template.allowed:
        return f"{template.name}: allowed={response['allowed']} {response.get('status')}"
    return ""


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(directory: Path, threads: int) -> tuple[subprocess.Popen[bytes], str, ssl.SSLContext]:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    (directory / "tls.crt").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    (directory / "tls.key").write_bytes(leaf.private_key_pem.bytes())
    port = free_port()
    command = [
        sys.executable, "-m", "kcel.webhook", "--policies", str(POLICIES), "--resources", str(RESOURCES),
        "--cert", str(directory / "tls.crt"), "--key", str(directory / "tls.key"), "--host", "127.0.0.1",
        "--port", str(port), "--threads", str(threads),
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    verify = ssl.create_default_context()
    ca.configure_trust(verify)
    url = f"https://127.0.0.1:{port}"
    with httpx.Client(base_url=url, verify=verify) as client:
        for _ in range(400):
            try:
                if client.get("/readyz").status_code == 200:
                    return process, url, verify
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}")
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("server not ready after 20 s")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(label: str, result: Result, reference_rate: float) -> str:
    rate = len(result.latencies) / result.elapsed
    p50, p99 = percentile(result.latencies, 0.50) * 1000, percentile(result.latencies, 0.99) * 1000
    return (
        f"{label:<16} {len(result.latencies):>7}  {rate:>8.0f}/s  {rate / reference_rate:>6.2f}x"
        f"  {p50:>8.2f} ms  {p99:>8.2f} ms  {result.errors:>6}"
        + (f"  first error: {result.first_error}" if result.errors else "")
    )


async def memory_run(url: str, verify: ssl.SSLContext, templates: list[Template], pid: int, total: int) -> Result:
    """`total` requests at 16 connections in two halves, RSS printed after warm-up, at the middle and at the end."""
    await drive(url, verify, templates, 16, 2000, 60)  # warm-up: caches, pools and allocator arenas settle
    start = rss_kib(pid)
    first = await drive(url, verify, templates, 16, total // 2, 600)
    middle = rss_kib(pid)
    second = await drive(url, verify, templates, 16, total - total // 2, 600)
    end = rss_kib(pid)
    mib = {name: f"{kib / 1024:.1f} MiB" for name, kib in (("start", start), ("middle", middle), ("end", end))}
    print(f"server RSS over {total:,} requests at 16 connections: start {mib['start']}, middle {mib['middle']}, "
          f"end {mib['end']} (end - middle {(end - middle) / 1024:+.1f} MiB)")  # fmt: skip
    combined = Result(first.latencies + second.latencies, first.errors + second.errors)
    combined.first_error = first.first_error or second.first_error
    combined.elapsed = first.elapsed + second.elapsed
    return combined


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000, help="requests per concurrency level (default 5000)")
    parser.add_argument("--seconds", type=float, default=20, help="time limit per level (default 20)")
    parser.add_argument("--concurrency", default="1,16,64", help="connection counts (default 1,16,64)")
    parser.add_argument("--memory-requests", type=int, default=100_000, help="0 skips the memory run")
    parser.add_argument("--threads", type=int, default=4, help="the server's --threads (default 4)")
    args = parser.parse_args()
    templates = reviews()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {platform.platform()}"
    )
    rate = reference(templates, seconds=3)
    print(f"reference: PolicySet.admit in-process, 1 thread: {rate:.0f} reviews/s")
    with tempfile.TemporaryDirectory() as directory:
        process, url, verify = start_server(Path(directory), args.threads)
        try:
            print(
                f"{'case':<16} {'reqs':>7}  {'throughput':>10}  {'ratio':>7}  {'p50':>11}  {'p99':>11}  {'errors':>6}"
            )
            for connections in (int(c) for c in args.concurrency.split(",")):
                result = asyncio.run(drive(url, verify, templates, connections, args.requests, args.seconds))
                print(report(f"{connections} connection(s)", result, rate), flush=True)
            if args.memory_requests:
                result = asyncio.run(memory_run(url, verify, templates, process.pid, args.memory_requests))
                print(report("memory run", result, rate))
            print("(ratio = server throughput / in-process PolicySet.admit throughput; latency seen by the client)")
        finally:
            process.terminate()
            process.wait(15)
    print(f"p50/p99 over all requests of a row; statistics.fmean latency of the last row: "
          f"{statistics.fmean(result.latencies) * 1000:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
