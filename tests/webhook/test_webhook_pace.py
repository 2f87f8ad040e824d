"""Where reviews are evaluated: a heavy review never holds the event loop, quick ones still run on it.

The served set is the real engine's: tests/webhook/policies/pods.yaml (quick: well under a millisecond a Pod) and
tests/webhook/heavy/configmaps.yaml, which compares every ConfigMap value with every other one, four times over,
so that a ConfigMap of 6 KB takes a few hundred ms or more (the issue's "quadratic policy"). Pods of the same
size are reviewed first, so that a pace learnt from them would call a 6 KB body quick; the ConfigMap must still be
evaluated in a thread while probes and /metrics answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcel.webhook.app import Settings, Webhook
from kcel.webhook.pace import HEAVY_SECONDS, INLINE_SECONDS, PACE_DECAY, PACE_OFFSET, Pace, Route, route_of
from kcel.webhook.policies import PolicyStore

HERE = Path(__file__).parent

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def admission(resource: str, kind: str, obj: dict[str, Any], uid: str) -> dict[str, Any]:
    request = {
        "uid": uid, "kind": {"group": "", "version": "v1", "kind": kind},
        "resource": {"group": "", "version": "v1", "resource": resource}, "operation": "CREATE",
        "namespace": "default", "name": obj["metadata"]["name"], "object": obj,
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
    }  # fmt: skip
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def pod_review(uid: str) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": f"registry.example.com/app:{i}.0"} for i in range(3)]
    # As large as the heavy ConfigMap (an annotation no policy reads): same size, other policy, other time.
    metadata = {"name": "web", "annotations": {"description": "a quick Pod " * 450}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": containers}}
    return admission("pods", "Pod", pod, uid)


def configmap_review(uid: str, keys: int) -> dict[str, Any]:
    data = {f"key-{i:04d}": f"value-{i:04d}-" + "x" * 20 for i in range(keys)}
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data}
    return admission("configmaps", "ConfigMap", configmap, uid)


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, **settings: Any) -> AsyncIterator[tuple[Webhook, httpx.AsyncClient]]:
    """The app on the real engine, its lifespan running (policy watcher, thread pool), and a client on ASGI."""
    shutil.copy(HERE / "policies" / "pods.yaml", tmp_path / "pods.yaml")
    shutil.copy(HERE / "heavy" / "configmaps.yaml", tmp_path / "configmaps.yaml")
    chosen = Settings(**{"timeout": 60.0, "poll_interval": 0.05, "threads": 2, **settings})
    webhook = Webhook(PolicyStore([tmp_path]), chosen)
    transport = httpx.ASGITransport(app=webhook.app())
    async with webhook.lifespan():
        async with httpx.AsyncClient(transport=transport, base_url="http://webhook", timeout=60) as client:
            for _ in range(600):  # the first load compiles in a thread: a few hundred ms
                if (await client.get("/readyz")).status_code == 200:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("policies never loaded")
            yield webhook, client


async def warm_up(client: httpx.AsyncClient, count: int = 60) -> None:
    """Quick Pod reviews, enough for the slowness of the first, cold one to be forgotten."""
    for i in range(count):
        answer = await client.post("/validate?timeout=60s", json=pod_review(f"pod-{i}"))
        assert answer.json()["response"]["allowed"] is True


def evaluated_on(records: list[logging.LogRecord], uid: str) -> str:
    """Where the review with this uid was evaluated, from its log line."""
    for record in records:
        fields = getattr(record, "fields", {})
        if record.getMessage() == "admission review" and fields.get("uid") == uid:
            return str(fields["evaluated_on"])
    raise AssertionError(f"no log line for review {uid}")


async def test_a_heavy_review_runs_in_a_thread_while_probes_and_metrics_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Quick Pod reviews teach the server a quick pace; a 6 KB ConfigMap under the quadratic policy, never seen, must
    not be evaluated on the loop on that account: /healthz, /readyz and /metrics are answered while it runs."""
    caplog.set_level(logging.INFO, logger="kcel.webhook")
    async with serving(tmp_path) as (webhook, client):
        await warm_up(client)
        heavy_started = time.perf_counter()
        # ~1 s here, 200 keys: the three probes must be answered while it runs, however slow the machine
        heavy = asyncio.create_task(client.post("/validate?timeout=60s", json=configmap_review("heavy", 200)))
        while not heavy.done() and webhook.pending == 0:  # until the review waits for its thread, or is answered
            await asyncio.sleep(0)
        latencies = {}
        for path in ("/healthz", "/readyz", "/metrics"):
            started = time.perf_counter()
            probe = await client.get(path)
            latencies[path] = time.perf_counter() - started
            assert probe.status_code == 200, path
            assert not heavy.done(), f"{path} was answered only after the heavy review"
        answer = await heavy
        heavy_seconds = time.perf_counter() - heavy_started
    assert answer.json()["response"]["allowed"] is True
    assert evaluated_on(caplog.records, "heavy") == "thread"
    # Quick reviews stay on the loop once their route is known (a rare slow moment may send one or two to a thread).
    on_loop = [evaluated_on(caplog.records, f"pod-{i}") == "loop" for i in range(30, 60)]
    assert sum(on_loop) >= 25
    # No bound on the latencies (a slow machine must not fail the test): they are printed for the report.
    print(f"heavy review {heavy_seconds * 1000:.0f} ms; probes " + ", ".join(
        f"{path} {seconds * 1000:.1f} ms" for path, seconds in latencies.items()))  # fmt: skip


async def test_heavy_reviews_past_the_queue_limit_are_answered_at_once_with_429(tmp_path: Path) -> None:
    """One thread, one review allowed to wait: of four heavy reviews sent together after quick ones, two are
    evaluated and two refused at once by the failure policy (they used to run on the loop, one after another)."""
    async with serving(tmp_path, threads=1, max_queue=1) as (_, client):
        await warm_up(client)
        reviews = [configmap_review(f"heavy-{i}", 80) for i in range(4)]
        sent = [asyncio.create_task(client.post("/validate?timeout=60s", json=r)) for r in reviews]
        answers = [(await task).json()["response"] for task in sent]
    refused = [a for a in answers if not a["allowed"]]
    assert len(refused) == 2 and {a["status"]["code"] for a in refused} == {429}
    assert refused[0]["status"]["message"] == "webhook overloaded: 2 reviews in progress or queued"


async def test_a_review_still_running_past_its_deadline_is_learnt_when_its_thread_is_done(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A heavy ConfigMap answered by the failure policy at its deadline (504) while its thread goes on: what it
    cost is learnt when the thread is done, so small ConfigMaps, quick so far, no longer run on the loop."""
    caplog.set_level(logging.INFO, logger="kcel.webhook")
    async with serving(tmp_path, threads=1) as (webhook, client):
        for i in range(60):  # the first goes to the thread (never seen), and once the cold start is forgotten, the loop
            assert (await client.post("/validate", json=configmap_review(f"small-{i}", 5))).status_code == 200
        late = await client.post("/validate?timeout=50ms", json=configmap_review("late", 200))
        # Its deadline passed: answered by the failure policy (504), or by the policy's when the engine was
        # interrupted first (422, "operation interrupted"), or denied if it finished in time after all (403).
        assert late.json()["response"]["status"]["code"] in (403, 422, 504)
        assert webhook.executor is not None
        await asyncio.get_running_loop().run_in_executor(webhook.executor, lambda: None)  # after the late one
        await asyncio.sleep(0)  # the done callback runs
        assert (await client.post("/validate", json=configmap_review("after-01", 5))).status_code == 200
    assert (evaluated_on(caplog.records, "small-0"), evaluated_on(caplog.records, "small-59")) == ("thread", "loop")
    assert evaluated_on(caplog.records, "late") == "thread"
    assert evaluated_on(caplog.records, "after-01") == "thread"


# -- the pace itself ------------------------------------------------------------------------------------------

PODS = Route("validate", "/v1/pods", "", "CREATE", "default")


def test_a_route_runs_on_the_loop_only_once_seen_quick_and_not_much_larger() -> None:
    pace = Pace()
    assert not pace.on_loop(1, PODS, 1000)  # nothing seen of this generation
    pace.observe(1, PODS, 1000, 0.0002)
    assert pace.on_loop(1, PODS, 1000) and pace.on_loop(1, PODS, 10)
    assert pace.on_loop(1, PODS, 1000 + 1000 // 8)  # a longer name or uid: not a larger object
    assert not pace.on_loop(1, PODS, 1000 + 1000 // 8 + 1)  # larger: its cost may grow faster than its size
    assert not pace.on_loop(2, PODS, 1000)  # a new policy generation starts unknown


def test_a_quick_route_says_nothing_of_another() -> None:
    """Whatever differs in what decides the matching policies is a route of its own."""
    pace = Pace()
    pace.observe(1, PODS, 6000, 0.0002)
    others = [
        PODS._replace(mode="mutate"), PODS._replace(resource="/v1/configmaps"), PODS._replace(subresource="exec"),
        PODS._replace(operation="UPDATE"), PODS._replace(namespace="kube-public"),
    ]  # fmt: skip
    assert pace.on_loop(1, PODS, 6000)
    assert not any(pace.on_loop(1, route, 100) for route in others)


def test_a_heavy_review_keeps_its_route_in_threads_for_the_generation() -> None:
    pace, configmaps = Pace(), PODS._replace(resource="/v1/configmaps")
    for _ in range(3):
        pace.observe(1, configmaps, 6000, 0.0002)
        pace.observe(1, PODS, 1000, 0.0002)
    pace.observe(1, configmaps, 6000, HEAVY_SECONDS)  # the same size, other content: one long value
    for _ in range(1000):  # however many quick ones follow
        pace.observe(1, configmaps, 100, 0.0001)
    assert not pace.on_loop(1, configmaps, 100)
    assert pace.on_loop(1, PODS, 1000)  # other routes are not affected
    pace.observe(2, configmaps, 100, 0.0001)
    assert pace.on_loop(2, configmaps, 100)  # the next generation starts over


def test_a_slow_review_is_forgotten_by_the_decay() -> None:
    pace = Pace()
    pace.observe(1, PODS, 1000, 0.0002)
    slow = INLINE_SECONDS * 4  # slow, not heavy
    pace.observe(1, PODS, 1000, slow)
    assert not pace.on_loop(1, PODS, 1000)
    reviews = 0
    while not pace.on_loop(1, PODS, 1000):
        pace.observe(1, PODS, 1000, 0.0002)
        reviews += 1
    # slow * PACE_DECAY**n falls under INLINE_SECONDS: the quick reviews observed lower the pace by the decay only
    assert PACE_DECAY ** (reviews - 1) * slow >= INLINE_SECONDS > PACE_DECAY**reviews * slow
    assert pace.on_loop(1, PODS, 1000 - PACE_OFFSET // 4)


def test_a_review_of_a_replaced_generation_teaches_nothing() -> None:
    pace = Pace()
    pace.observe(2, PODS, 1000, 0.0002)
    pace.observe(1, PODS, 1000, HEAVY_SECONDS)  # finished after generation 2 came into service
    assert pace.on_loop(2, PODS, 1000)


def test_routes_are_bounded() -> None:
    """Past the bound, new routes are not learnt (they run in threads); the routes known keep their pace. Nor are
    routes longer than any the API server sends, so that a review cannot make the table hold megabytes."""
    pace = Pace(max_routes=3)
    for namespace in ("a", "b", "c", "d", "e"):
        pace.observe(1, PODS._replace(namespace=namespace), 1000, 0.0002)
    assert pace.routes() == 3
    assert pace.on_loop(1, PODS._replace(namespace="c"), 1000)
    assert not pace.on_loop(1, PODS._replace(namespace="d"), 1000)
    made_up = PODS._replace(resource="x" * 1_000_000)  # no real resource is so long: kept nowhere
    roomy = Pace()
    roomy.observe(1, made_up, 1000, 0.0002)
    assert roomy.routes() == 0 and not roomy.on_loop(1, made_up, 1000)


def test_the_route_is_read_as_the_engine_matches() -> None:
    """requestResource and requestSubResource, when given, are what the policies are matched against."""
    deployments = {"group": "apps", "version": "v1", "resource": "deployments"}
    legacy = {"group": "extensions", "version": "v1beta1", "resource": "deployments"}
    request = {"resource": deployments, "operation": "UPDATE", "namespace": "a", "subResource": "scale"}
    route = route_of("validate", request)
    assert route == Route("validate", "apps/v1/deployments", "scale", "UPDATE", "a")
    converted = route_of("validate", {**request, "requestResource": legacy, "requestSubResource": "status"})
    assert (converted.resource, converted.subresource) == ("extensions/v1beta1/deployments", "status")
    assert route_of("mutate", {"operation": "CREATE"}) == Route("mutate", "", "", "CREATE", "")
