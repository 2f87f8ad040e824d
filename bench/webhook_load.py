"""Load test of `kcel serve`: throughput, latency and memory of the webhook over HTTPS on loopback.

The server runs as its own process (`python -m kcel.webhook`, info logs to /dev/null, so the per-request
log line is paid for) with the policies of tests/webhook/policies: four policies with variables, a param,
a matchCondition on the namespace, messageExpressions, audit annotations and a Warn binding. Requests rotate
through Pods, Deployments (several namespaces), Widgets (a custom resource) and Secrets (no policy matches),
a third of them denied. Every answer is checked: HTTP 200, the uid echoed, `allowed` as expected. Anything
else counts as an error.

Cases:

* the reference: the same reviews through `PolicySet.validate` (for /validate) or `PolicySet.mutate` (for /mutate)
  in this process, in one thread (no HTTP, no JSON);
* the server at 1, 16 and 64 concurrent keep-alive HTTP/1.1 connections, each bounded by a request count and a
  time limit: throughput, p50/p99 latency, CPU time per request of server and client, errors. The default load
  generator writes requests on asyncio TLS streams (`--client raw`); `--client httpx` uses httpx.AsyncClient,
  which costs several times the server's CPU per request and so, on a 2-core machine, measures mostly itself;
* /mutate: the MutatingAdmissionPolicy of tests/webhook/policies (a sidecar added to Deployments by an apply
  configuration, merged by the built-in schemas) at 1 and 16 connections; every Deployment answer must carry a patch;
* memory: 100,000 requests at 16 connections, the server's RSS (from /proc) after warm-up, halfway and at the end;
* with `--heavy-every N`, each concurrency level again with every N-th review a heavy one: a ConfigMap of
  `--heavy-keys` keys (120: ~6 KB) under tests/webhook/heavy/configmaps.yaml, a quadratic policy (a few hundred ms
  a review). The normal reviews' latency is reported apart, with what became of the heavy ones (answered, refused
  with 429, past their deadline with 504), and beside both runs /healthz is asked every 50 ms on a connection of
  its own: a heavy review must not hold the quick ones or the probes, or shedding must say so.

The load generator shares the machine with the server, so throughput figures are a lower bound for the server.
The ratio to the in-process reference shows what HTTP, TLS, JSON and the thread pool add.

Run: PYTHONPATH=. .venv/bin/python bench/webhook_load.py [--requests 5000] [--seconds 20] [--memory-requests 100000]
     [--client raw|httpx] [--workers N] [--threads N]     (about 2 minutes with the defaults on 2 cores)
     [--heavy-every 300 [--heavy-keys 120]] [--no-mutate] [--server-tree DIR]
`--server-tree` runs the server from another checkout (an older commit's worktree), for before/after figures.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import platform
import socket
import ssl
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
HEAVY_POLICIES = ROOT / "tests" / "webhook" / "heavy"
RESOURCES = ROOT / "tests" / "webhook" / "resources"
UID = "00000000-0000-4000-8000-000000000000"
PROBE_EVERY = 0.05  # seconds between /healthz probes beside the --heavy-every runs


@dataclass(frozen=True)
class Template:
    """One review, pre-encoded with a placeholder uid so the client spends no time in json.dumps."""

    name: str
    body: bytes
    allowed: bool
    request: dict[str, Any]
    path: str = "/validate"
    patched: bool = False  # a /mutate answer must carry a patch


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    elapsed: float = 0.0
    server_cpu: float = 0.0  # seconds of server CPU time during the run
    client_cpu: float = 0.0  # and of this process (the load generator)
    heavy_latencies: list[float] = field(default_factory=list)  # of the heavy reviews (--heavy-every), kept apart
    heavy_outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    probe_latencies: list[float] = field(default_factory=list)  # of /healthz asked meanwhile (with --heavy-every)


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


def heavy_review(keys: int) -> Template:
    """A ConfigMap of `keys` distinct values: allowed by tests/webhook/heavy/configmaps.yaml, after a few hundred ms."""
    data = {f"key-{i:04d}": f"value-{i:04d}-" + "x" * 20 for i in range(keys)}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data}
    gvk = {"group": "", "version": "v1", "kind": "ConfigMap"}
    gvr = {"group": "", "version": "v1", "resource": "configmaps"}
    request = {
        "uid": UID, "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr, "name": "settings",
        "namespace": "default", "operation": "CREATE", "userInfo": {"username": "alice"}, "object": obj,
    }  # fmt: skip
    document = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    return Template(f"configmap of {keys} keys", json.dumps(document).encode(), True, request)


def mutate_reviews() -> list[Template]:
    """The same reviews sent to /mutate: Deployments get the sidecar (a patch), the others pass unchanged."""
    return [
        Template(t.name, t.body, True, t.request, "/mutate", t.request["kind"]["kind"] == "Deployment")
        for t in reviews()
    ]


def reference(templates: list[Template], seconds: float) -> float:
    """Reviews per second through PolicySet.validate (or .mutate) in-process: the engine alone."""
    from kcel.k8s.admission import PolicySet

    files = sorted(POLICIES.glob("*.yaml"))
    policies = PolicySet.load(files, resources=sorted(RESOURCES.glob("*.yaml")))
    decide = policies.mutate if templates[0].path == "/mutate" else policies.validate
    for template in templates:  # the templates must do what they claim, or the load test measures nonsense
        decision = decide(template.request)
        assert decision.allowed == template.allowed, (template.name, decision)
        assert bool(decision.patch) == template.patched, (template.name, decision)
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for template in templates:
            decide(template.request)
        count += len(templates)
    return count / (time.perf_counter() - started)


class HttpxSender:
    """httpx.AsyncClient over HTTP/1.1 keep-alive: a common, well-kept client, but costly per request."""

    def __init__(self, url: str, verify: ssl.SSLContext, connections: int) -> None:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        self.client = httpx.AsyncClient(base_url=url, verify=verify, limits=limits, timeout=30, http1=True)

    async def open(self) -> None:
        pass

    async def post(self, body: bytes, path: str = "/validate") -> tuple[int, bytes]:
        answer = await self.client.post(f"{path}?timeout=10s", content=body, headers=HEADERS)
        return answer.status_code, answer.content

    async def close(self) -> None:
        await self.client.aclose()


class RawSender:
    """One TLS connection speaking minimal HTTP/1.1 over asyncio streams: so the client costs little next to the
    server. It relies on the server sending Content-Length, which kcel serve always does."""

    def __init__(self, url: str, verify: ssl.SSLContext, connections: int) -> None:
        self.port = int(url.rsplit(":", 1)[1])
        self.verify = verify
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, ssl=self.verify)

    async def post(self, body: bytes, path: str = "/validate") -> tuple[int, bytes]:
        assert self.reader is not None and self.writer is not None
        head = (
            f"POST {path}?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        return await self._answer()

    async def get(self, path: str) -> tuple[int, bytes]:
        assert self.writer is not None
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        return await self._answer()

    async def _answer(self) -> tuple[int, bytes]:
        assert self.reader is not None
        header = await self.reader.readuntil(b"\r\n\r\n")
        status = int(header[9:12])
        length = 0
        for line in header.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


SENDERS = {"httpx": HttpxSender, "raw": RawSender}
HEADERS = {"content-type": "application/json"}


async def drive(
    url: str,
    verify: ssl.SSLContext,
    templates: list[Template],
    connections: int,
    requests: int,
    seconds: float,
    pid: int,
    client: str = "httpx",
    heavy: Template | None = None,
    heavy_every: int = 0,
    probe_every: float = 0.0,
) -> Result:
    """`connections` workers on as many keep-alive connections, until `requests` are done or `seconds` pass.

    Every worker first sends one untimed request (opening its connection: TLS handshakes are not what is
    measured), then all start together. With `heavy`, every `heavy_every`-th request sent is that review instead;
    with `probe_every`, /healthz is asked at that interval meanwhile, on a connection of its own.
    """
    result = Result()
    remaining = [requests]
    shared = SENDERS[client](url, verify, connections) if client == "httpx" else None
    senders = [shared or SENDERS[client](url, verify, connections) for _ in range(connections)]
    ready = asyncio.Barrier(connections + 1)
    stop_at = [float("inf")]  # set when all workers are ready

    async def worker(offset: int, sender: HttpxSender | RawSender) -> None:
        await sender.open()
        await sender.post(templates[0].body, templates[0].path)
        await ready.wait()
        index = offset
        while remaining[0] > 0 and time.perf_counter() < stop_at[0]:
            remaining[0] -= 1
            is_heavy = heavy is not None and remaining[0] % heavy_every == 0
            template = heavy if heavy is not None and is_heavy else templates[index % len(templates)]
            index += 0 if is_heavy else 1
            uid = str(uuid.uuid4())
            body = template.body.replace(UID.encode(), uid.encode(), 1)
            started = time.perf_counter()
            try:
                status, content = await sender.post(body, template.path)
                problem = heavy_outcome(status, content, uid) if is_heavy else check(status, content, uid, template)
            except (httpx.HTTPError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if is_heavy:
                result.heavy_latencies.append(time.perf_counter() - started)
                result.heavy_outcomes[problem] += 1
                continue
            result.latencies.append(time.perf_counter() - started)
            if problem:
                result.errors += 1
                result.first_error = result.first_error or problem

    async def probe() -> None:
        """/healthz every `probe_every` seconds, as a kubelet would ask, while the workers run."""
        sender = RawSender(url, verify, 1)
        await sender.open()
        while not all(task.done() for task in tasks):
            started = time.perf_counter()
            status, _ = await sender.get("/healthz")
            result.probe_latencies.append(time.perf_counter() - started)
            if status != 200:
                result.errors += 1
                result.first_error = result.first_error or f"/healthz: HTTP {status}"
            await asyncio.sleep(probe_every)
        await sender.close()

    tasks = [asyncio.create_task(worker(i, sender)) for i, sender in enumerate(senders)]
    await ready.wait()
    prober = asyncio.create_task(probe()) if probe_every else None
    pids = server_pids(pid)
    server_cpu, client_cpu, started = sum(map(cpu_seconds, pids)), time.process_time(), time.perf_counter()
    stop_at[0] = started + seconds
    await asyncio.gather(*tasks)
    result.elapsed = time.perf_counter() - started
    if prober is not None:
        await prober
    result.server_cpu = sum(map(cpu_seconds, pids)) - server_cpu
    result.client_cpu = time.process_time() - client_cpu
    for sender in {id(s): s for s in senders}.values():
        await sender.close()
    return result


def check(status: int, content: bytes, uid: str, template: Template) -> str:
    if status != 200:
        return f"HTTP {status}: {content[:200]!r}"
    response = json.loads(content)["response"]
    if response["uid"] != uid:
        return f"uid {response['uid']} != {uid}"
    if response["allowed"] != template.allowed:
        return f"{template.name}: allowed={response['allowed']} {response.get('status')}"
    if ("patch" in response) != template.patched:
        return f"{template.name}: patch {'missing' if template.patched else 'unexpected'}"
    return ""


def heavy_outcome(status: int, content: bytes, uid: str) -> str:
    """What became of a heavy review: answered, refused at once (429), past its deadline (504), or what went wrong."""
    if status != 200:
        return f"HTTP {status}"
    response = json.loads(content)["response"]
    if response["uid"] != uid:
        return "wrong uid"
    return "answered" if response["allowed"] else str(response["status"]["code"])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serving_certificate(directory: Path) -> tuple[list[str], ssl.SSLContext]:
    """A certificate for 127.0.0.1 written to `directory`: the `kcel serve` options naming it, and a client context
    trusting it."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    (directory / "tls.crt").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    (directory / "tls.key").write_bytes(leaf.private_key_pem.bytes())
    verify = ssl.create_default_context()
    ca.configure_trust(verify)
    return ["--cert", str(directory / "tls.crt"), "--key", str(directory / "tls.key")], verify


def start_server(
    directory: Path, threads: int, workers: int, policies: list[Path], tree: Path = ROOT
) -> tuple[subprocess.Popen[bytes], str, ssl.SSLContext]:
    """`kcel serve` from `tree` (this checkout, or the one of --server-tree) on a free loopback port."""
    certificate, verify = serving_certificate(directory)
    port = free_port()
    command = [
        sys.executable, "-m", "kcel.webhook", *(f"--policy={p}" for p in policies), "--params", str(RESOURCES),
        *certificate, "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads), "--workers", str(workers),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    process = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def server_pids(pid: int) -> list[int]:
    """The server and its workers (children), whose CPU time and memory count."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [pid, *(int(child) for child in children.read_text().split())] if children.exists() else [pid]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


HEADER = (
    f"{'case':<18} {'reqs':>7}  {'throughput':>10}  {'ratio':>6}  {'p50':>9}  {'p99':>9}  "
    f"{'server CPU/req':>14}  {'client CPU/req':>14}  {'errors':>6}"
)


def report(label: str, result: Result, reference_rate: float) -> str:
    count = len(result.latencies)
    rate = count / result.elapsed
    p50, p99 = percentile(result.latencies, 0.50) * 1000, percentile(result.latencies, 0.99) * 1000
    server, client = result.server_cpu / count * 1e6, result.client_cpu / count * 1e6
    return (
        f"{label:<18} {count:>7}  {rate:>8.0f}/s  {rate / reference_rate:>5.2f}x  {p50:>6.2f} ms  {p99:>6.2f} ms  "
        f"{server:>11.0f} us  {client:>11.0f} us  {result.errors:>6}"
        + (f"  first error: {result.first_error}" if result.errors else "")
        + (heavy_report(result) if result.heavy_latencies else "")
        + (probe_report(result) if result.probe_latencies else "")
    )


def heavy_report(result: Result) -> str:
    """The heavy reviews of a mix, on a line of their own: their latency and what became of them."""
    latencies = result.heavy_latencies
    outcomes = ", ".join(f"{outcome} {count}" for outcome, count in sorted(result.heavy_outcomes.items()))
    return (
        f"\n{'':<18} and {len(latencies)} heavy: p50 {percentile(latencies, 0.5) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms; {outcomes}"
    )


def probe_report(result: Result) -> str:
    probes = result.probe_latencies
    return (
        f"\n{'':<18} /healthz meanwhile: {len(probes)} asked, p50 {percentile(probes, 0.5) * 1000:.1f} ms, "
        f"max {max(probes) * 1000:.1f} ms"
    )


async def memory_run(
    url: str, verify: ssl.SSLContext, templates: list[Template], pid: int, total: int, client: str
) -> Result:
    """`total` requests at 16 connections in two halves, RSS printed after warm-up, at the middle and at the end."""
    await drive(url, verify, templates, 16, 2000, 60, pid, client)  # warm-up: caches, pools and arenas settle
    rss = [sum(rss_kib(p) for p in server_pids(pid))]
    halves = []
    for count in (total // 2, total - total // 2):
        halves.append(await drive(url, verify, templates, 16, count, 900, pid, client))
        rss.append(sum(rss_kib(p) for p in server_pids(pid)))
    start, middle, end = (f"{kib / 1024:.1f} MiB" for kib in rss)
    print(f"server RSS over {total:,} requests at 16 connections: start {start}, middle {middle}, end {end}")
    first, second = halves
    combined = Result(first.latencies + second.latencies, first.errors + second.errors)
    combined.first_error = first.first_error or second.first_error
    combined.elapsed = first.elapsed + second.elapsed
    combined.server_cpu = first.server_cpu + second.server_cpu
    combined.client_cpu = first.client_cpu + second.client_cpu
    return combined


def mutate_runs(url: str, verify: ssl.SSLContext, pid: int, args: argparse.Namespace) -> None:
    """/mutate at 1 and 16 connections, after its in-process reference."""
    mutating = mutate_reviews()
    mutate_rate = reference(mutating, seconds=3)
    print(f"/mutate reference: PolicySet.mutate in-process, 1 thread: {mutate_rate:.0f} reviews/s")
    for connections in (1, 16):
        run = drive(url, verify, mutating, connections, args.requests, args.seconds, pid, args.client)
        print(report(f"/mutate {connections} conn", asyncio.run(run), mutate_rate), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000, help="requests per concurrency level (default 5000)")
    parser.add_argument("--seconds", type=float, default=20, help="time limit per level (default 20)")
    parser.add_argument("--concurrency", default="1,16,64", help="connection counts (default 1,16,64)")
    parser.add_argument("--memory-requests", type=int, default=100_000, help="0 skips the memory run")
    parser.add_argument("--threads", type=int, default=4, help="the server's --threads (default 4)")
    parser.add_argument("--workers", type=int, default=1, help="the server's --workers (default 1)")
    parser.add_argument(
        "--heavy-every", type=int, default=0, metavar="N",
        help="run each level again with every N-th review a heavy one (0, default: not)",
    )  # fmt: skip
    parser.add_argument("--heavy-keys", type=int, default=120, help="keys of the heavy ConfigMap (default 120: ~6 KB)")
    parser.add_argument("--no-mutate", action="store_true", help="skip the /mutate runs")
    parser.add_argument(
        "--server-tree", type=Path, default=ROOT, metavar="DIR",
        help="run the server from this checkout (an older commit's worktree; default this one)",
    )  # fmt: skip
    parser.add_argument(
        "--client", choices=sorted(SENDERS), default="raw",
        help="load generator: raw (asyncio streams, default) or httpx (AsyncClient; on a small machine it measures "
        "itself: 1-3.5 ms of CPU per request against the server's 0.3-0.6 ms)",
    )  # fmt: skip
    args = parser.parse_args()
    templates = reviews()
    machine = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    tree = args.server_tree.resolve()
    print(f"{machine}, {platform.platform()}; server --workers {args.workers} --threads {args.threads} from {tree}; "
          f"client {args.client}")  # fmt: skip
    rate = reference(templates, seconds=3)
    print(f"reference: PolicySet.validate in-process, 1 thread: {rate:.0f} reviews/s")
    with tempfile.TemporaryDirectory() as directory:
        policies = [POLICIES, *([HEAVY_POLICIES] if args.heavy_every else [])]
        process, url, verify = start_server(Path(directory), args.threads, args.workers, policies, tree)
        pid = process.pid
        heavy = heavy_review(args.heavy_keys) if args.heavy_every else None
        try:
            if heavy is not None:
                print(f"heavy review: {heavy.name}, {len(heavy.body):,} bytes, 1 in {args.heavy_every}")
            print(HEADER)
            probe_every = PROBE_EVERY if heavy is not None else 0.0  # probes beside plain runs too, to compare
            for connections in (int(c) for c in args.concurrency.split(",")):
                run = drive(url, verify, templates, connections, args.requests, args.seconds, pid, args.client,
                            probe_every=probe_every)  # fmt: skip
                print(report(f"{connections} connection(s)", asyncio.run(run), rate), flush=True)
                if heavy is not None:
                    run = drive(url, verify, templates, connections, args.requests, args.seconds, pid, args.client,
                                heavy, args.heavy_every, probe_every)  # fmt: skip
                    print(report(f"{connections} conn, mix", asyncio.run(run), rate), flush=True)
            if not args.no_mutate:
                mutate_runs(url, verify, pid, args)
            if args.memory_requests:
                run = memory_run(url, verify, templates, pid, args.memory_requests, args.client)
                print(report("memory run", asyncio.run(run), rate))
            print("(ratio = server throughput / in-process PolicySet.validate or .mutate throughput;")
            print(" latency as the client sees it;")
            print(" CPU per request: the server's processes and the load generator, both on this machine)")
        finally:
            process.terminate()
            process.wait(15)


if __name__ == "__main__":
    main()
