"""`kcel audit` at scale: a snapshot of N Deployments (`kubectl get -A -o yaml` layout) against 20 admission
policies, with one worker per CPU and with one; beside it, the same work one object at a time (PolicySet.admit in
process, and the `kcel admit` command per object, extrapolated from a sample).

Figures: objects per second, the peak memory of the largest process (the audit streams the snapshot, so it stays
flat in N), and the ratios. Run: PYTHONPATH=. .venv/bin/python bench/audit.py [--objects 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

KCEL = [sys.executable, "-m", "kcel.cli"]
CHECKS = [  # (expression, action): what platform teams write about Deployments
    ("object.spec.replicas <= 50", "Deny"),
    ("has(object.metadata.labels) && 'team' in object.metadata.labels", "Warn"),
    ("object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", "Deny"),
    ("object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))", "Deny"),
    ("!object.spec.template.spec.containers.exists(c, c.image.endsWith(':latest'))", "Deny"),
    ("object.spec.template.spec.?hostNetwork.orValue(false) == false", "Deny"),
    ("object.spec.template.spec.containers.all(c, !c.?securityContext.?privileged.orValue(false))", "Deny"),
    ("object.metadata.name.size() <= 63", "Deny"),
    ("object.metadata.namespace != 'default'", "Warn"),
    ("object.spec.template.spec.containers.size() <= 5", "Deny"),
    ("object.spec.template.spec.containers.all(c, c.name.matches('^[a-z0-9-]+$'))", "Deny"),
    ("!has(object.spec.template.spec.hostPID) || !object.spec.template.spec.hostPID", "Deny"),
    ("object.spec.?strategy.?type.orValue('RollingUpdate') == 'RollingUpdate'", "Warn"),
    (
        "object.spec.template.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo("
        "quantity('8Gi')) <= 0)",
        "Deny",
    ),  # fmt: skip
    ("object.spec.template.metadata.labels.all(k, k.size() < 64)", "Deny"),
    ("object.spec.template.spec.containers.all(c, c.?ports.orValue([]).all(p, p.containerPort > 1024))", "Warn"),
    ("object.spec.selector.matchLabels.size() > 0", "Deny"),
    ("object.spec.?revisionHistoryLimit.orValue(10) <= 10", "Audit"),
    ("object.spec.template.spec.?serviceAccountName.orValue('default') != 'default'", "Warn"),
    ("object.metadata.?annotations.orValue({}).all(k, !k.startsWith('forbidden.example.com/'))", "Deny"),
]


def policies() -> str:
    documents: list[dict[str, Any]] = []
    for index, (expression, action) in enumerate(CHECKS):
        name = f"check-{index:02}.example.com"
        rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                  "resources": ["deployments"]}]  # fmt: skip
        documents.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                          "metadata": {"name": name},
                          "spec": {"matchConstraints": {"resourceRules": rules},
                                   "validations": [{"expression": expression}]}})  # fmt: skip
        binding = {"policyName": name, "validationActions": [action]}
        documents.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                          "metadata": {"name": name}, "spec": binding})  # fmt: skip
    return yaml.safe_dump_all(documents)


def deployment(i: int) -> dict[str, Any]:
    image = "registry.example.com/app:1.2" if i % 10 else "docker.io/app:latest"
    container = {"name": "app", "image": image, "ports": [{"containerPort": 8080}],
                 "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "100m"}}}  # fmt: skip
    labels = {"app": f"app-{i}"} | ({"team": "payments"} if i % 3 else {})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"app-{i}", "namespace": f"team-{i % 50}", "labels": labels, "uid": f"uid-{i}",
                         "resourceVersion": str(100000 + i), "generation": 3,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": i % 60, "selector": {"matchLabels": {"app": f"app-{i}"}},
                     "strategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": {"app": f"app-{i}"}},
                                  "spec": {"containers": [container], "serviceAccountName": "app"}}},
            "status": {"replicas": i % 60, "readyReplicas": i % 60}}  # fmt: skip


def snapshot(path: Path, count: int) -> None:
    """A List written item by item (as kubectl prints it), so that the generator stays small too."""
    with path.open("w", encoding="utf-8") as out:
        out.write("apiVersion: v1\nitems:\n")
        for i in range(count):
            text = yaml.safe_dump(deployment(i), sort_keys=True)
            out.write("- " + text.replace("\n", "\n  ").rstrip(" "))
        out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def run_audit(folder: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and the peak RSS (KiB) of the largest process of one `kcel audit` run."""
    code = ("import resource, subprocess, sys, time; start = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False); "
            "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")  # fmt: skip
    command = [*KCEL, "audit", "--policy", str(folder / "policies.yaml"), "-j", str(jobs), "-o", "json",
               str(folder / "snapshot.yaml")]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, check=True)
    seconds, peak = done.stdout.split()
    return float(seconds), int(peak)


def one_at_a_time(folder: Path, sample: int) -> tuple[float, float]:
    """Seconds per object: PolicySet.admit (update and create) in this process; the `kcel admit` command."""
    from kcel.audit.checks import as_created
    from kcel.k8s.admission.policyset import PolicySet
    from kcel.k8s.admission.request import request_from_objects

    policies = PolicySet.load([folder / "policies.yaml"])
    objects = [deployment(i) for i in range(sample)]
    start = time.perf_counter()
    for obj in objects:
        policies.admit(request_from_objects(obj, obj, operation="UPDATE"))
        policies.admit(request_from_objects(as_created(obj), operation="CREATE"))
    in_process = (time.perf_counter() - start) / sample
    one = folder / "one.yaml"
    one.write_text(yaml.safe_dump(deployment(7)), encoding="utf-8")
    runs = 5
    start = time.perf_counter()
    for _ in range(runs):
        subprocess.run([*KCEL, "admit", "--policy", str(folder / "policies.yaml"), str(one)], capture_output=True,
                       check=False)  # fmt: skip
    return in_process, (time.perf_counter() - start) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=2_000, help="objects timed one at a time in process")
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        (folder / "policies.yaml").write_text(policies(), encoding="utf-8")
        snapshot(folder / "snapshot.yaml", args.objects)
        size = (folder / "snapshot.yaml").stat().st_size
        print(f"{args.objects:,} Deployments ({size / 2**20:.0f} MiB of YAML), {len(CHECKS)} policies, "
              f"{cpus} CPUs, load {os.getloadavg()[0]:.2f}")  # fmt: skip
        rows = [(f"kcel audit -j {jobs}", *run_audit(folder, jobs)) for jobs in sorted({cpus, 1}, reverse=True)]
        in_process, command = one_at_a_time(folder, args.sample)
    best = args.objects / rows[0][1]
    for name, seconds, peak in rows:
        print(f"{name:<34} {seconds:8.1f} s  {args.objects / seconds:9,.0f} objects/s  peak {peak / 1024:6.0f} MiB")
    print(f"{'PolicySet.admit, one at a time':<34} {'':10}  {1 / in_process:9,.0f} objects/s  "
          f"(audit -j {cpus}: {best * in_process:.2f}x)")  # fmt: skip
    print(f"{'kcel admit, one process per object':<34} {'':10}  {1 / command:9,.1f} objects/s  "
          f"(audit -j {cpus}: {best * command:,.0f}x)")  # fmt: skip
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
