"""The Starlette app in-process, with small stand-in policy sets: deadlines, failure policy, probes, metrics, reloads.

The stand-ins implement only `problems` and `admit` (the whole interface the server uses), so these tests pin the
server's behaviour on its own; tests/webhook/test_webhook_e2e.py runs the real engine.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcel.webhook.app import Settings, Webhook
from kcel.webhook.pace import INLINE_SECONDS
from kcel.webhook.policies import Outcome, PolicyStore, list_files
from kcel.webhook.review import MAX_BODY_BYTES
from kcel.webhook.server import restart_delay

UID = "b9f6a1c2-0000-4000-8000-000000000001"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    code: int = 200
    reason: str = ""
    message: str = ""
    warnings: tuple[str, ...] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)
    cost: int = 3
    patch: tuple[Mapping[str, Any], ...] = ()


@dataclass
class StandIn:
    """A policy set that denies Pods named "bad" and runs `hook` first (to sleep or raise)."""

    problems: list[str] = field(default_factory=list)
    hook: Callable[[], None] = lambda: None
    deadlines: list[float | None] = field(default_factory=list)

    def validate(
        self, request: Mapping[str, Any], *, authorizer: object = None, deadline: float | None = None
    ) -> Verdict:
        self.deadlines.append(deadline)
        self.hook()
        if request["name"] == "bad":
            return Verdict(False, 403, "Forbidden", "bad is a bad name", ("named bad",), {"p/name": "bad"}, 7)
        return Verdict(True, warnings=("looked at it",))

    def mutate(
        self, request: Mapping[str, Any], *, authorizer: object = None, deadline: float | None = None
    ) -> Verdict:
        """Labels every object `mutated: "yes"`."""
        self.deadlines.append(deadline)
        return Verdict(True, patch=({"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},))


def review(name: str = "web", uid: str = UID) -> dict[str, Any]:
    request = {
        "uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "operation": "CREATE",
        "namespace": "default", "name": name, "object": {"metadata": {"name": name}},
    }  # fmt: skip
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def serving(policies: StandIn | None, tmp_path: Path, **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan (policy watcher, thread pool) and an HTTP client talking ASGI to it."""
    (tmp_path / "policy.yaml").write_text("kind: ValidatingAdmissionPolicy\n")

    def loader(files: Sequence[Path], resources: Sequence[Path]) -> StandIn:
        if policies is None:
            raise RuntimeError("engine exploded")
        return policies

    store = PolicyStore([tmp_path], loader=loader)
    webhook = Webhook(store, Settings(**{"poll_interval": 0.05, **settings}))
    app = webhook.app()
    async with webhook.lifespan():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://webhook") as client:
            if policies is not None:
                await wait_ready(client)
            yield client


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(StandIn(), tmp_path) as test_client:
        yield test_client


async def wait_ready(client: httpx.AsyncClient) -> None:
    for _ in range(200):
        if (await client.get("/readyz")).status_code == 200:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never ready")


async def test_an_allowed_review(client: httpx.AsyncClient) -> None:
    answer = await client.post("/validate", json=review())
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": UID, "allowed": True, "warnings": ["looked at it"]},
    }


async def test_mutate_answers_with_a_base64_json_patch(client: httpx.AsyncClient) -> None:
    response = (await client.post("/mutate", json=review())).json()["response"]
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    assert patch == [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]


async def test_a_denied_review_on_the_root_path(client: httpx.AsyncClient) -> None:
    response = (await client.post("/", json=review("bad"))).json()["response"]
    assert response == {
        "uid": UID, "allowed": False,
        "status": {"status": "Failure", "code": 403, "reason": "Forbidden", "message": "bad is a bad name"},
        "warnings": ["named bad"], "auditAnnotations": {"p.name": "bad"},
    }  # fmt: skip


async def test_malformed_bodies_get_400_with_a_status_and_close_the_connection(client: httpx.AsyncClient) -> None:
    answer = await client.post("/validate", content=b"{oops", headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.headers["connection"] == "close"
    assert answer.json()["reason"] == "BadRequest" and "not valid JSON" in answer.json()["message"]


async def test_a_declared_oversized_body_is_refused_before_reading(client: httpx.AsyncClient) -> None:
    answer = await client.post("/validate", content=b"x" * (MAX_BODY_BYTES + 1))
    assert answer.status_code == 413 and answer.json()["reason"] == "RequestEntityTooLarge"


async def test_an_undeclared_oversized_body_is_refused_while_streaming(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(8):
            yield b" " * (1024 * 1024)

    answer = await client.post("/validate", content=chunks())
    assert answer.status_code == 413 and "over 7340032 bytes" in answer.json()["message"]


async def test_get_on_validate_is_405_and_unknown_paths_404(client: httpx.AsyncClient) -> None:
    refused = await client.get("/validate")
    assert refused.status_code == 405 and refused.headers["allow"] == "POST"
    assert (await client.post("/mutated", json=review())).status_code == 404
    assert (await client.head("/healthz")).status_code == 200  # as GET (the server leaves the body out)
    posted = await client.post("/readyz")
    assert posted.status_code == 405 and posted.headers["allow"] == "GET, HEAD"
    metrics = (await client.get("/metrics")).text  # unknown paths are not counted: each would be a series
    assert 'path="/mutated"' not in metrics and 'code="405",path="/validate"' in metrics


async def test_the_app_speaks_asgis_lifespan_protocol(tmp_path: Path) -> None:
    """uvicorn starts the policy watcher and the thread pool through the lifespan scope, and stops them."""
    webhook = Webhook(PolicyStore([tmp_path], loader=lambda files, resources: StandIn()), Settings(poll_interval=0.05))
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        for _ in range(200):
            if len(incoming) == 2 or webhook.store.served is not None:  # shut down once the watcher has loaded
                break
            await asyncio.sleep(0.01)
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await webhook.app()({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert webhook.store.served is not None


async def test_probes_and_metrics(client: httpx.AsyncClient) -> None:
    await client.post("/validate", json=review())
    await client.post("/validate", json=review("bad"))
    await client.post("/validate", content=b"[]")
    assert (await client.get("/healthz")).text == "ok"
    assert (await client.get("/readyz")).text == "ok: policy generation 1"
    metrics = await client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    for line in (
        'kcel_webhook_decisions_total{decision="allowed"} 1.0',
        'kcel_webhook_decisions_total{decision="denied"} 1.0',
        'kcel_webhook_decisions_total{decision="error"} 1.0',
        'kcel_webhook_requests_total{code="400",path="/validate"} 1.0',
        "kcel_webhook_admission_duration_seconds_count 3.0",
        "kcel_webhook_cel_cost_sum 10.0",
        "kcel_webhook_policy_generation 1.0",
        'kcel_webhook_policy_reloads_total{result="loaded"} 1.0',
    ):
        assert line in text, line


async def test_a_crash_in_the_engine_denies_under_fail_and_admits_under_ignore(tmp_path: Path) -> None:
    def crash() -> None:
        raise KeyError("surprise")

    for fail_closed, allowed in ((True, False), (False, True)):
        async with serving(StandIn(hook=crash), tmp_path, fail_closed=fail_closed) as client:
            response = (await client.post("/validate", json=review())).json()["response"]
        assert response["allowed"] is allowed
        if fail_closed:
            assert response["status"]["code"] == 500 and response["status"]["reason"] == "InternalError"
            assert response["status"]["message"] == "policy evaluation failed: KeyError: 'surprise'"
        else:
            assert response["warnings"][0].startswith("kcel webhook failure ignored (failurePolicy Ignore)")


async def test_a_slow_evaluation_is_answered_by_the_failure_policy_at_the_deadline(tmp_path: Path) -> None:
    release = threading.Event()
    policies = StandIn(hook=lambda: release.wait(5))
    async with serving(policies, tmp_path, timeout=1.0) as client:
        started = time.monotonic()
        response = (await client.post("/validate", json=review())).json()["response"]
        elapsed = time.monotonic() - started
        release.set()
    assert response["allowed"] is False and response["status"]["code"] == 504
    assert response["status"]["message"] == "policy evaluation did not finish within 1s"
    # At 90% of the budget (the rest is for the way back), not when the policy is let go (5 s); how much sooner
    # than the budget's end depends on the machine's load, which no test bound here can know.
    assert 0.85 < elapsed < 5


async def test_past_the_queue_limit_reviews_are_answered_at_once_by_the_failure_policy(tmp_path: Path) -> None:
    """One thread, one review allowed to wait: of four sent together, two are held, two answered at once (429)."""
    release = threading.Event()
    async with serving(StandIn(hook=lambda: release.wait(5)), tmp_path, threads=1, max_queue=1) as client:
        started = time.monotonic()
        sent = [asyncio.create_task(client.post("/validate", json=review(uid=f"uid-{i}"))) for i in range(4)]
        done, _ = await asyncio.wait(sent, timeout=2, return_when=asyncio.FIRST_COMPLETED)
        quick = time.monotonic() - started
        release.set()
        answers = [(await task).json()["response"] for task in sent]
    assert quick < 1.0 and len(done) >= 1  # not held until the deadline
    refused = [a for a in answers if not a["allowed"]]
    assert len(refused) == 2 and len(answers) - len(refused) == 2
    assert {a["status"]["code"] for a in refused} == {429}
    assert refused[0]["status"]["message"] == "webhook overloaded: 2 reviews in progress or queued"


async def test_the_api_servers_timeout_parameter_lowers_the_deadline(tmp_path: Path) -> None:
    policies = StandIn()
    async with serving(policies, tmp_path, timeout=10.0) as client:
        before = time.monotonic()
        await client.post("/validate?timeout=2s", json=review())
        await client.post("/validate?timeout=30s", json=review())
    first, second = policies.deadlines
    assert first is not None and second is not None
    assert 1.7 < first - before < 1.85 and 8.9 < second - before < 9.1


async def test_before_policies_load_the_server_is_unready_and_fails_closed(tmp_path: Path) -> None:
    async with serving(None, tmp_path) as client:
        assert (await client.get("/readyz")).status_code == 503
        response = (await client.post("/validate", json=review())).json()["response"]
    assert response["allowed"] is False
    assert response["status"] == {
        "status": "Failure", "code": 503, "reason": "ServiceUnavailable", "message": "no policies loaded yet",
    }  # fmt: skip


async def test_while_draining_readiness_fails_and_every_answer_closes_its_connection(tmp_path: Path) -> None:
    """Set on SIGTERM (kcel.webhook.server): endpoints drop the replica and keep-alive clients leave it, while
    what still comes is answered and liveness holds (a failing /healthz would have the kubelet kill it early)."""
    (tmp_path / "policy.yaml").write_text("kind: ValidatingAdmissionPolicy\n")
    webhook = Webhook(PolicyStore([tmp_path], loader=lambda files, resources: StandIn()), Settings(poll_interval=0.05))
    app = webhook.app()
    async with webhook.lifespan():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://webhook") as client:
            await wait_ready(client)
            before = await client.post("/validate", json=review())
            webhook.draining = True
            ready = await client.get("/readyz")
            answer = await client.post("/validate", json=review())
            health = await client.get("/healthz")
    assert "connection" not in before.headers
    assert (ready.status_code, ready.text, ready.headers["connection"]) == (503, "shutting down", "close")
    assert answer.status_code == 200 and answer.json()["response"]["allowed"] is True
    assert answer.headers["connection"] == "close"
    assert health.status_code == 200


def test_workers_are_replaced_at_once_after_a_healthy_run_and_with_a_growing_delay_in_a_crash_loop() -> None:
    assert [restart_delay(n) for n in range(1, 10)] == [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


# -- the policy store ------------------------------------------------------------------------------


def test_a_reload_that_adds_a_problem_keeps_the_last_good_set(tmp_path: Path) -> None:
    sets = [StandIn(problems=["old.yaml: broken"]), StandIn(problems=["old.yaml: broken", "new.yaml: broken"])]
    sets.append(StandIn())
    policy = tmp_path / "p.yaml"
    policy.write_text("a")
    store = PolicyStore([tmp_path], loader=lambda files, resources: sets.pop(0))
    assert store.poll() is Outcome.LOADED  # the first set is served even with problems: there is nothing better
    first = store.served
    assert store.poll() is Outcome.UNCHANGED
    policy.write_text("bb")
    assert store.poll() is Outcome.REJECTED and store.served is first
    policy.write_text("ccc")
    assert store.poll() is Outcome.LOADED
    assert store.served is not None and store.served.generation == 2 and store.served.problems == ()


def test_a_loader_exception_keeps_the_last_good_set(tmp_path: Path) -> None:
    def explode(files: Sequence[Path], resources: Sequence[Path]) -> StandIn:
        raise ValueError("cannot read")

    (tmp_path / "p.yaml").write_text("a")
    store = PolicyStore([tmp_path], loader=explode)
    assert store.poll() is Outcome.REJECTED and store.served is None


def test_configmap_volumes_are_read_once_through_their_links(tmp_path: Path) -> None:
    # What the kubelet makes of a ConfigMap: a timestamped directory, a ..data link to it, a link per key.
    real = tmp_path / "..2026_01_01_00_00_00.000000001"
    real.mkdir()
    (real / "policy.yaml").write_text("one: 1\n")
    (tmp_path / "..data").symlink_to(real.name)
    (tmp_path / "policy.yaml").symlink_to("..data/policy.yaml")
    (tmp_path / "notes.txt").write_text("not a policy")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "binding.yml").write_text("two: 2\n")
    assert list_files([tmp_path]) == [tmp_path / "policy.yaml", tmp_path / "nested" / "binding.yml"]
    loaded: list[list[Path]] = []
    store = PolicyStore([tmp_path], loader=lambda files, resources: loaded.append(list(files)) or StandIn())
    store.poll()
    # Swapping ..data to a new directory changes what the link resolves to: a reload.
    newer = tmp_path / "..2026_01_01_00_00_01.000000001"
    newer.mkdir()
    (newer / "policy.yaml").write_text("one: 2\n")
    (tmp_path / "..data_tmp").symlink_to(newer.name)
    (tmp_path / "..data_tmp").rename(tmp_path / "..data")
    assert store.poll() is Outcome.LOADED and len(loaded) == 2


def test_logs_are_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from kcel.webhook.logs import JsonFormatter

    record = logging.makeLogRecord(
        {"name": "kcel.webhook", "levelname": "INFO", "msg": "admission review", "fields": {"uid": "u", "cost": 4}}
    )
    entry = json.loads(JsonFormatter().format(record))
    assert entry["msg"] == "admission review" and entry["uid"] == "u" and entry["cost"] == 4
    assert entry["level"] == "info" and entry["time"].endswith("Z")


async def test_without_threads_policies_run_on_the_event_loop(tmp_path: Path) -> None:
    """--threads 0: the same answers, the deadline handed to the engine, and no thread but the caller's."""
    seen: list[str] = []
    policies = StandIn(hook=lambda: seen.append(threading.current_thread().name))
    async with serving(policies, tmp_path, threads=0, timeout=2.0) as client:
        good = (await client.post("/validate", json=review())).json()["response"]
        bad = (await client.post("/validate", json=review("bad"))).json()["response"]
        mutated = (await client.post("/mutate", json=review())).json()["response"]
    assert (good["allowed"], bad["allowed"], bad["status"]["code"]) == (True, False, 403)
    assert mutated["patchType"] == "JSONPatch"
    assert seen == [threading.current_thread().name] * 2
    assert all(deadline is not None for deadline in policies.deadlines)


async def test_quick_reviews_run_on_the_event_loop_and_slow_ones_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first review of a policy generation runs in a thread; once the pace says reviews like it are quick they
    run on the event loop (no hand-over), and after a slow one the next go to a thread again.
    (tests/webhook/test_webhook_pace.py has what decides it, and the real engine's heavy reviews.)

    The CPU clock the server reads is the test's: each review takes exactly what the policy set says (none, then
    five times INLINE_SECONDS), so that no machine is too slow or too loaded for a quick review to be quick."""
    threads: list[str] = []
    cost = [0.0]
    clock = [0.0]
    monkeypatch.setattr(time, "thread_time", lambda: clock[0])

    def hook() -> None:
        threads.append(threading.current_thread().name)
        clock[0] += cost[0]

    async with serving(StandIn(hook=hook), tmp_path) as client:
        for _ in range(3):
            assert (await client.post("/validate", json=review())).status_code == 200
        cost[0] = INLINE_SECONDS * 5  # this policy set turns slow
        for _ in range(2):
            assert (await client.post("/validate", json=review())).status_code == 200
    main = threading.main_thread().name
    assert threads[0].startswith("kcel-admit") and threads[1:3] == [main, main]
    assert threads[3] == main  # expected quick, found slow: the pace learns from it
    assert threads[4].startswith("kcel-admit")


async def test_a_client_gone_before_its_body_is_answered_by_nothing(tmp_path: Path) -> None:
    """An http.disconnect while the body is read ends the request quietly: no response, no error, counted nowhere."""
    (tmp_path / "policy.yaml").write_text("kind: ValidatingAdmissionPolicy\n")
    webhook = Webhook(PolicyStore([tmp_path], loader=lambda files, resources: StandIn()), Settings(poll_interval=0.05))
    app = webhook.app()
    half = {"type": "http.request", "body": b'{"apiVersion": ', "more_body": True}
    messages = iter([half, {"type": "http.disconnect"}])
    sent: list[Any] = []

    async def receive() -> Any:
        return next(messages)

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/validate", "query_string": b"timeout=10s", "headers": []}
    await app(scope, receive, send)
    assert sent == []


async def test_the_bodies_a_process_holds_at_once_are_bounded_and_given_back(tmp_path: Path) -> None:
    """Past --max-body-bytes-in-flight a review is refused at once (503) while another holds the budget; each body
    is given back when its review is answered (issue 43: a thousand 7 MiB bodies at once exhausted the memory)."""
    entered, release = threading.Event(), threading.Event()

    def hook() -> None:  # the first review waits until released; the others pass
        if not entered.is_set():
            entered.set()
            release.wait(10)

    big = review()
    big["request"]["object"]["metadata"]["annotations"] = {"pad": "x" * 100_000}
    async with serving(StandIn(hook=hook), tmp_path, max_body_bytes=150_000) as client:
        first = asyncio.create_task(client.post("/validate", json=big))
        assert await asyncio.to_thread(entered.wait, 10)  # the first review holds its 100 KB in a thread
        second = await client.post("/validate", json=big)
        small = await client.post("/validate", json=review())
        release.set()
        assert (await first).status_code == 200
        third = await client.post("/validate", json=big)
    assert (second.status_code, second.headers["connection"]) == (503, "close")
    assert "too many request bodies in progress" in second.json()["message"]
    assert small.status_code == 200  # what fits beside the first is served
    assert third.status_code == 200  # the first's bytes were given back
