"""Prometheus metrics of one webhook server, in its own registry so tests and several apps never collide.

With `--workers N` every process counts into files under PROMETHEUS_MULTIPROC_DIR (set by the command before
prometheus_client is imported), and /metrics, whichever worker answers, adds all the workers' files up.
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# Admission latency as the API server sees it is bounded by timeoutSeconds (at most 30 s); the low buckets
# matter most, since every millisecond here is added to each API write the webhook intercepts.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# CEL cost units: one admission evaluates every matching expression, each limited to 1,000,000 by default.
COST_BUCKETS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


class Metrics:
    """The counters the server updates; `render()` is the /metrics body."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "kcel_webhook_requests", "HTTP requests served, by path and status code", ["path", "code"], registry=r
        )
        self.decisions = Counter(
            "kcel_webhook_decisions",
            "Admission answers: allowed, denied by a policy, or error (bad request, timeout, server failure)",
            ["decision"],
            registry=r,
        )
        self.latency = Histogram(
            "kcel_webhook_admission_duration_seconds",
            "Time from request start to response for admission reviews",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.cost = Histogram(
            "kcel_webhook_cel_cost", "CEL runtime cost per admission review", buckets=COST_BUCKETS, registry=r
        )
        self.in_flight = Gauge(
            "kcel_webhook_in_flight", "Admission reviews being evaluated", registry=r, multiprocess_mode="livesum"
        )
        self.policy_reloads = Counter(
            "kcel_webhook_policy_reloads", "Policy (re)loads, by result: loaded or rejected", ["result"], registry=r
        )
        self.policy_generation = Gauge(
            "kcel_webhook_policy_generation",
            "Generation of the policy set in service (0: none yet; with workers, the oldest one served)",
            registry=r,
            multiprocess_mode="livemin",
        )
        self.policy_problems = Gauge(
            "kcel_webhook_policy_problems",
            "Documents of the served policy set that could not be used",
            registry=r,
            multiprocess_mode="livemax",
        )
        self.cert_reloads = Counter("kcel_webhook_cert_reloads", "TLS certificate reloads", registry=r)
        self.connections = Gauge(
            "kcel_webhook_connections",
            "Open connections, counted from accept (TLS handshakes included)",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.connections_closed = Counter(
            "kcel_webhook_connections_closed",
            "Connections the server's limits closed or refused, by reason (kcel.webhook.connections.REASONS)",
            ["reason"],
            registry=r,
        )
        for decision in ("allowed", "denied", "error"):
            self.decisions.labels(decision)  # export zeros, so rate() works from the first scrape
        for result in ("loaded", "rejected"):
            self.policy_reloads.labels(result)

    def connection_closed(self, reason: str) -> None:
        """Count a connection the limits closed or refused (kcel.webhook.connections.ConnectionGuard's on_close)."""
        self.connections_closed.labels(reason).inc()

    def render(self) -> bytes:
        directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not directory:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        combined = CollectorRegistry()
        multiprocess.MultiProcessCollector(combined, path=directory)  # type: ignore[no-untyped-call]
        return generate_latest(combined)
