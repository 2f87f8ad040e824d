"""Memory of long sessions that compile again and again: a webhook's policies reloaded, and `kcel lsp` edits.

What stays behind per compilation (a source kept in `linecache`, a cache keyed by something that changes) is
invisible in one run and grows without end in a server. Two runs, each printing its RSS after a warm-up and after each
tenth of the run, and the `linecache` entries of generated code where they can be counted:

- `reload`: a `kcel.webhook.policies.PolicyStore` on a folder whose policy changes before every poll (a new
  constant each time), each generation deciding a review (which compiles its fast and metered variants), then the
  collection `kcel serve` runs after a reload;
- `lsp`: a `kcel lsp` process driven over stdio as an editor does: a CRD opened, then changed (one rule's constant,
  a different rule each time), each change waiting for the diagnostics it publishes; its RSS from /proc/PID/status.

    PYTHONPATH=. .venv/bin/python bench/memory_growth.py                      # 3,000 of each: ~6 min on 2 cores
    PYTHONPATH=. .venv/bin/python bench/memory_growth.py --rounds 500 --only reload
"""

from __future__ import annotations

import argparse
import gc
import json
import linecache
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import yaml

WARMUP = 50  # rounds before the first sample: imports, the first compilations, lazily loaded libraries


def rss_kib(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc")


def generated_sources() -> int:
    return sum(1 for name in linecache.cache if name.startswith("<kcel:"))


def policy(limit: int) -> str:
    return f"""apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= {limit} && object.metadata.name.startsWith('w')"
    messageExpression: "'at most {limit} replicas, not ' + string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas
spec:
  policyName: replicas
  validationActions: [Deny]
"""


def review_request(replicas: int) -> dict[str, Any]:
    gvk = {"group": "apps", "version": "v1", "kind": "Deployment"}
    gvr = {"group": "apps", "version": "v1", "resource": "deployments"}
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": replicas}}  # fmt: skip
    return {"uid": "u", "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr, "name": "web",
            "namespace": "default", "operation": "CREATE", "userInfo": {"username": "alice"}, "object": obj,
            "oldObject": None, "dryRun": False}  # fmt: skip


def growth(samples: list[int]) -> str:
    """RSS after the warm-up, after each tenth of the run (a bounded cache levels off, a leak does not), the change."""
    tenths = " ".join(f"{kib / 1024:.1f}" for kib in samples[1:])
    change = (samples[-1] - samples[0]) / 1024
    return f"RSS MiB after {WARMUP}: {samples[0] / 1024:.1f}; each tenth: {tenths} ({change:+.1f} MiB)"


def sampled(i: int, rounds: int) -> bool:
    """Whether round i (0-based, warm-up included) ends the warm-up or a tenth of the run."""
    done = i + 1 - WARMUP
    return done == 0 or (done > 0 and done * 10 // rounds > (done - 1) * 10 // rounds)


def run_reload(rounds: int) -> None:
    from kcel.webhook.policies import Outcome, PolicyStore

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.yaml"
        store = PolicyStore([folder])
        samples: list[int] = []
        for i in range(WARMUP + rounds):
            path.write_text(policy(1000 + i))
            os.utime(path, ns=(i * 1_000_000_000, i * 1_000_000_000))  # a new stamp whatever the clock's resolution
            if store.poll() is not Outcome.LOADED or store.served is None:
                raise SystemExit(f"round {i}: the policy did not load")
            decision = store.served.policies.validate(review_request(5000))
            if decision.allowed:
                raise SystemExit(f"round {i}: 5000 replicas were allowed under a limit of {1000 + i}")
            gc.collect()  # as kcel serve does after a reload (kcel.webhook.app._freeze_heap)
            if sampled(i, rounds):
                samples.append(rss_kib())
            if i + 1 == WARMUP:
                start_sources = generated_sources()
    print(f"reload: {rounds:,} reloads, each deciding one review")
    print(f"  {growth(samples)}")
    print(f"  linecache entries of generated code: {start_sources} -> {generated_sources()}")


def crd(limits: list[int]) -> str:
    """A CRD with one rule per group, group i's rule bounded by limits[i]."""
    fields = {
        f"group{i}": {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "name": {"type": "string", "maxLength": 63}},
            "x-kubernetes-validations": [
                {"rule": f"self.count <= {limit} && self.name.startsWith('a')", "message": f"group {i}"}
            ],
        }
        for i, limit in enumerate(limits)
    }
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": fields}}}
    document = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}]},
    }  # fmt: skip
    return yaml.safe_dump(document, sort_keys=False)


class Client:
    """JSON-RPC over a language server's stdin and stdout, framed by Content-Length headers."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.into, self.out = process, process.stdin, process.stdout
        self.ids = 0

    def send(self, method: str, params: Any, request: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.ids += 1
            message["id"] = self.ids
        body = json.dumps(message).encode()
        self.into.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.into.flush()
        return message.get("id")

    def receive(self) -> dict[str, Any]:
        length = 0
        while (line := _read_line(self.out)) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            raise SystemExit(f"the server stopped (exit status {self.process.poll()})")
        message: dict[str, Any] = json.loads(self.out.read(length))
        return message

    def wait(self, predicate: Any) -> dict[str, Any]:
        while True:
            message = self.receive()
            if predicate(message):
                return message


def _read_line(stream: IO[bytes]) -> bytes:
    return stream.readline()


def run_lsp(rounds: int) -> None:
    command = [sys.executable, "-m", "kcel.cli", "lsp"]
    with tempfile.TemporaryDirectory() as folder:
        uri = (Path(folder) / "widgets.yaml").as_uri()
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=folder)
        client = Client(process)
        try:
            asked = client.send("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}}, True)
            client.wait(lambda m: m.get("id") == asked)
            client.send("initialized", {})
            limits = [100] * 10
            document = {"uri": uri, "languageId": "yaml", "version": 0, "text": crd(limits)}
            client.send("textDocument/didOpen", {"textDocument": document})
            samples: list[int] = []
            started = time.perf_counter()
            for i in range(1, WARMUP + rounds + 1):
                limits[i % len(limits)] = 100 + i  # one rule edited, as a person types
                client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": i},
                                                       "contentChanges": [{"text": crd(limits)}]})  # fmt: skip
                client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
                if sampled(i - 1, rounds):
                    samples.append(rss_kib(process.pid))
            seconds = time.perf_counter() - started
            shutdown = client.send("shutdown", None, True)
            client.wait(lambda m: m.get("id") == shutdown)
            client.send("exit", None)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    print(f"lsp: {rounds:,} edits of a CRD with 10 rules (one rule a time), awaiting diagnostics ({seconds:.0f} s)")
    print(f"  {growth(samples)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3000, help="reloads and edits after the warm-up (3000)")
    parser.add_argument("--only", choices=["reload", "lsp"], help="one of the two runs")
    args = parser.parse_args()
    if args.only in (None, "reload"):
        run_reload(args.rounds)
    if args.only in (None, "lsp"):
        run_lsp(args.rounds)


if __name__ == "__main__":
    main()
