"""The ASGI application: admission reviews on POST /validate, /mutate (and /); health, readiness and metrics.

Policy evaluation is CPU-bound Python. A review that reviews like it (the same policy generation, resource,
operation and namespace, not larger) have shown to be quick is evaluated on the event loop; any other runs in a
thread pool, so the loop stays free to accept connections, read bodies and answer probes (kcel.webhook.pace).
Every admission request has a deadline: the smaller of the server's `--timeout` and the `?timeout=` the API
server adds to each webhook call, less a tenth for the trip back. Past it the server answers by its failure
policy instead of letting the API server time out.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import logging
import re
import time
import traceback
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kcel.k8s.admission import RequestError
from kcel.k8s.admission.response import DecisionLike, review_response
from kcel.webhook.asgi import (
    TEXT,
    Answer,
    ASGIApp,
    BodyBudget,
    Disconnected,
    Receive,
    Scope,
    Send,
    query_parameter,
    read_body,
    within,
)
from kcel.webhook.metrics import Metrics
from kcel.webhook.pace import Pace, Route, route_of
from kcel.webhook.policies import Outcome, PolicyStore, Served
from kcel.webhook.review import (
    MAX_BODY_BYTES,
    Review,
    ReviewError,
    encode,
    failure_decision,
    invalid_decision,
    parse_review,
    status_body,
)
from kcel.webhook.tls import CertReloader

log = logging.getLogger("kcel.webhook")

REVIEW_PATHS = {"/validate": "validate", "/mutate": "mutate", "/": "validate"}  # path -> what a review there asks
MARGIN = 0.1  # share of the deadline kept for sending the answer back
GRACE = 0.05  # seconds an admit past its deadline may take to return its own answer before we give ours
_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Settings:
    """How the server behaves; the command line fills it in."""

    timeout: float = 10.0  # the API server's default webhook timeoutSeconds
    fail_closed: bool = True  # --failure-policy Fail
    threads: int = 4
    max_queue: int = 64  # reviews waiting for a thread; past it the answer comes at once, by the failure policy
    max_body_bytes: int = 32 * 1024 * 1024  # bodies held at once (kcel.webhook.asgi.BodyBudget); past it 503
    poll_interval: float = 1.0
    shutdown_delay: float = 5.0  # seconds between SIGTERM and closing the listener: see kcel.webhook.server


class DeadlineExceeded(Exception):
    """The request waited in the thread pool queue past its deadline; evaluating it now would be wasted work."""


class Webhook:
    """The server's state (policies, pool, metrics, certificate) and its request handlers."""

    def __init__(
        self,
        store: PolicyStore,
        settings: Settings = Settings(),
        *,
        tls: CertReloader | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.tls = tls
        self.metrics = metrics or Metrics()
        # Set on SIGTERM (kcel.webhook.server): /readyz fails and every answer closes its connection, so load
        # balancers and keep-alive clients move to other replicas while this one still answers what comes.
        self.draining = False
        self.pending = 0  # reviews evaluating or waiting for a thread (only the event loop changes it)
        self.bodies = BodyBudget(settings.max_body_bytes)
        # No threads: evaluations run on the event loop (kcel serve --threads 0), which spares each request the
        # hand-over to a thread and back; a slow evaluation then holds this process's other requests, and its
        # deadline is kept between expressions only.
        self.executor = (
            ThreadPoolExecutor(max_workers=settings.threads, thread_name_prefix="kcel-admit")
            if settings.threads
            else None
        )
        self.pace = Pace()
        self.frozen_generation = -1  # the policy generation in service when the heap was last frozen

    def app(self) -> ASGIApp:
        """The ASGI application, on ASGI directly (kcel.webhook.asgi): for a quick review, a framework's routing and
        request and response objects cost more than the review itself."""
        probes = {"/healthz": self.healthz, "/readyz": self.readyz, "/metrics": self.render_metrics}

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "lifespan":
                return await self._lifespan(receive, send)
            if scope["type"] != "http":
                return None  # no websockets here
            path, method = scope["path"], scope["method"]
            mode = REVIEW_PATHS.get(path)
            if mode is not None and method == "POST":
                with contextlib.suppress(Disconnected):
                    await (await self._review(scope, receive, mode)).send(send)
            elif mode is not None:
                await self._count(path, Answer(405, b"Method Not Allowed", TEXT, allow=b"POST")).send(send)
            elif path not in probes:  # not counted: a scanner's paths would each add a series to /metrics
                await Answer(404, b"Not Found", TEXT).send(send)
            elif method not in ("GET", "HEAD"):  # (the server sends no body for HEAD)
                await Answer(405, b"Method Not Allowed", TEXT, allow=b"GET, HEAD").send(send)
            else:
                await self._count(path, probes[path]()).send(send)
            return None

        return app

    # -- lifecycle ------------------------------------------------------------------------------------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """ASGI's lifespan protocol around `lifespan`: the server starts and stops it."""
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except BaseException:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": traceback.format_exc()})
            raise
        await send({"type": "lifespan.shutdown.complete"})

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Start watching files with the server (the first policy load included) and stop the pool with it."""
        watcher = asyncio.create_task(self.watch())
        try:
            yield
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            if self.executor is not None:
                self.executor.shutdown(wait=False, cancel_futures=True)

    async def watch(self) -> None:
        """Poll policy files (compiled in a thread) and the certificate (reloaded on the loop, between handshakes)."""
        while True:
            try:
                outcome = await asyncio.to_thread(self.store.poll)
                self._record_policies(outcome)
                if self.tls is not None and self.tls.reload_if_changed():
                    self.metrics.cert_reloads.inc()
            except Exception:  # a watcher that dies would freeze the policies silently
                log.exception("file watch failed; retrying")
            await asyncio.sleep(self.settings.poll_interval)

    def _record_policies(self, outcome: Outcome) -> None:
        if outcome is not Outcome.UNCHANGED:
            self.metrics.policy_reloads.labels(outcome.value).inc()
        served = self.store.served  # also when unchanged: a forked worker starts with its parent's set
        if served is not None:
            self.metrics.policy_generation.set(served.generation)
            self.metrics.policy_problems.set(len(served.problems))
            if served.generation != self.frozen_generation:
                self.frozen_generation = served.generation
                _freeze_heap()

    # -- probes ---------------------------------------------------------------------------------------

    def healthz(self) -> Answer:
        """Alive as long as the event loop answers."""
        return Answer(200, b"ok", TEXT)

    def readyz(self) -> Answer:
        """Ready once a policy set is loaded (before, every review would be a server failure) until shutdown starts."""
        if self.draining:
            return Answer(503, b"shutting down", TEXT)
        served = self.store.served
        if served is None:
            return Answer(503, b"policies not loaded yet", TEXT)
        return Answer(200, f"ok: policy generation {served.generation}".encode(), TEXT)

    def render_metrics(self) -> Answer:
        from prometheus_client import CONTENT_TYPE_LATEST

        return Answer(200, self.metrics.render(), CONTENT_TYPE_LATEST.encode())

    # -- admission ------------------------------------------------------------------------------------

    async def _review(self, scope: Scope, receive: Receive, mode: str) -> Answer:
        """Answer one AdmissionReview (validate: the ValidatingAdmissionPolicies decide the object as it arrives;
        mutate: the MutatingAdmissionPolicies' changes as a JSON patch, or their denial); never raises, so every
        request gets a well-formed answer."""
        started = time.monotonic()
        budget = self._budget(query_parameter(scope, "timeout"))
        deadline = started + budget * (1 - MARGIN)
        path = scope["path"]
        charged = [0]  # bytes of the body held against self.bodies until the review is answered
        try:
            try:
                body = await within(deadline - started, read_body(scope, receive, MAX_BODY_BYTES, self.bodies, charged))
                review = parse_review(body)
            except ReviewError as exc:
                if exc.uid is None:
                    return self._refuse(path, exc.status, exc.message, started)
                return self._answer(path, None, exc.uid, invalid_decision(exc), "error", started, None)
            except asyncio.TimeoutError:
                return self._refuse(path, 408, f"request body not received within {budget:g}s", started)
            served = self.store.served
            decision, label, evaluated_on = await self._decide(review, len(body), served, deadline, budget, mode)
            return self._answer(path, review, review.uid, decision, label, started, served, evaluated_on)
        finally:
            self.bodies.give_back(charged[0])

    async def _decide(
        self, review: Review, size: int, served: Served | None, deadline: float, budget: float, mode: str
    ) -> tuple[DecisionLike, str, str]:
        """The decision, its label for metrics and logs, and where it was evaluated: "loop", "thread", or "" if
        it was not (no policies, overloaded)."""
        fail_closed = self.settings.fail_closed
        if served is None:
            return failure_decision("no policies loaded yet", fail_closed=fail_closed, code=503), "error", ""
        route = route_of(mode, review.request)
        inline = self.executor is None or self.pace.on_loop(served.generation, route, size)
        if not inline and self.pending >= self.settings.threads + self.settings.max_queue:
            # Waiting would only push every answer past its deadline: say so now, as the failure policy decides.
            message = f"webhook overloaded: {self.pending} reviews in progress or queued"
            return failure_decision(message, fail_closed=fail_closed, code=429), "overloaded", ""
        evaluated_on = "loop" if inline else "thread"
        loop = asyncio.get_running_loop()
        self.metrics.in_flight.inc()
        self.pending += 1
        try:
            if inline or self.executor is None:
                decision, seconds = _admit(served, review.request, deadline, mode)
                self.pace.observe(served.generation, route, size, seconds)
            else:
                future = loop.run_in_executor(self.executor, _admit, served, review.request, deadline, mode)
                # Learnt when the thread is done, also if that is past the deadline: a review too slow to answer
                # must not be taken for an unknown one, which a thread would take again, or a quick one.
                future.add_done_callback(functools.partial(self._observe, served.generation, route, size))
                remaining = max(0.0, deadline - time.monotonic()) + GRACE
                decision, seconds = await asyncio.wait_for(asyncio.shield(future), remaining)
        except (asyncio.TimeoutError, DeadlineExceeded):
            message = f"policy evaluation did not finish within {budget:g}s"
            return failure_decision(message, fail_closed=fail_closed, code=504), "error", evaluated_on
        except RequestError as exc:  # the engine found the request malformed: bad input, not a server failure
            return invalid_decision(ReviewError(400, str(exc), review.uid)), "error", evaluated_on
        except Exception as exc:
            log.exception("policy evaluation failed", extra={"fields": {"uid": review.uid}})
            message = f"policy evaluation failed: {type(exc).__name__}: {exc}"
            return failure_decision(message, fail_closed=fail_closed), "error", evaluated_on
        finally:
            self.metrics.in_flight.dec()
            self.pending -= 1
        return decision, "allowed" if decision.allowed else "denied", evaluated_on

    def _observe(self, generation: int, route: Route, size: int, future: asyncio.Future[tuple[Any, float]]) -> None:
        """Teach the pace what a review evaluated in a thread cost, once it is done (on the event loop)."""
        if not future.cancelled() and future.exception() is None:
            self.pace.observe(generation, route, size, future.result()[1])

    def _budget(self, query_timeout: str | None) -> float:
        """The server's timeout, lowered to the API server's `?timeout=` (a Go duration such as "10s") if smaller."""
        budget = self.settings.timeout
        if query_timeout:
            parsed = parse_go_duration(query_timeout)
            if parsed is not None and 0 < parsed < budget:
                budget = parsed
        return budget

    def _answer(
        self,
        path: str,
        review: Review | None,
        uid: str,
        decision: DecisionLike,
        label: str,
        started: float,
        served: Served | None,
        evaluated_on: str = "",
    ) -> Answer:
        elapsed = time.monotonic() - started
        self.metrics.decisions.labels(label).inc()
        self.metrics.latency.observe(elapsed)
        self.metrics.cost.observe(decision.cost)
        fields: dict[str, Any] = {"uid": uid, "decision": label, "allowed": decision.allowed}
        if review is not None:
            fields.update(
                kind=review.kind, resource=review.resource, operation=review.operation,
                namespace=review.namespace, name=review.name,
            )  # fmt: skip
        fields.update(
            code=200 if decision.allowed else decision.code, latency_ms=round(elapsed * 1000, 3), cost=decision.cost,
            generation=served.generation if served else 0, warnings=len(decision.warnings),
        )  # fmt: skip
        if evaluated_on:
            fields["evaluated_on"] = evaluated_on
        if not decision.allowed:
            fields["message"] = decision.message
        log.info("admission review", extra={"fields": fields})
        return self._count(path, Answer(200, encode(review_response(uid, decision))))

    def _refuse(self, path: str, status: int, message: str, started: float) -> Answer:
        """A plain HTTP error for bodies without a usable uid; the connection is closed, as the body may be unread."""
        elapsed = time.monotonic() - started
        self.metrics.decisions.labels("error").inc()
        self.metrics.latency.observe(elapsed)
        fields = {"decision": "error", "code": status, "latency_ms": round(elapsed * 1000, 3), "message": message}
        log.warning("bad admission request", extra={"fields": fields})
        return self._count(path, Answer(status, encode(status_body(status, message)), close=True))

    def _count(self, path: str, answer: Answer) -> Answer:
        """An answer, counted; while draining it closes its connection, so that the client reconnects for its next
        request, to a replica that is not stopping."""
        self.metrics.requests.labels(path, str(answer.status)).inc()
        return dataclasses.replace(answer, close=True) if self.draining else answer


def _freeze_heap() -> None:
    """Move what is alive now (modules, the compiled policies) out of the garbage collector's sight: a full
    collection of it takes some 30 ms, a pause every review in progress would wait out (gc.freeze, for servers).
    The set replaced is collected first, once."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _admit(served: Served, request: Mapping[str, Any], deadline: float, mode: str) -> tuple[DecisionLike, float]:
    """The decision and the CPU seconds it took (this thread's: not the time spent waiting for the GIL); in the
    pool, requests whose deadline passed while they queued are skipped."""
    if time.monotonic() >= deadline:
        raise DeadlineExceeded
    started = time.thread_time()
    decide = served.policies.mutate if mode == "mutate" else served.policies.validate
    decision: DecisionLike = decide(request, deadline=deadline)
    return decision, time.thread_time() - started


def parse_go_duration(text: str) -> float | None:
    """Seconds in a Go `time.Duration` string ("10s", "1m0s", "1.5s"); None if it is not one.

    >>> parse_go_duration("1m30s"), parse_go_duration("250ms"), parse_go_duration("soon")
    (90.0, 0.25, None)
    """
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNITS[unit] for number, unit in parts)
