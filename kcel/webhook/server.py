"""Run the webhook under uvicorn: TLS from the reloadable context, JSON logs, limits for hostile clients, a drain on
SIGTERM and, with `--workers N`, a supervisor that replaces workers that die.

uvicorn closes idle keep-alive connections but waits forever for the first bytes and for the rest of the
headers of a request, has no TLS handshake timeout and counts connections only after their handshake. The
protocol of `kcel.webhook.connections` counts them from accept, in total and per client address, gives up idle
ones first when there are too many, and bounds the handshake, the headers' time, size and count. The body is
covered by the request deadline in `kcel.webhook.app`.

Shutdown (SIGTERM, as the kubelet sends): for `--shutdown-delay` seconds /readyz answers 503 and every answer
closes its connection while the listener still accepts, so endpoints and keep-alive clients move elsewhere without
a refused or reset request; then uvicorn's graceful shutdown closes the listener and waits for the requests in
flight. The process exits 0 once drained. SIGINT (Ctrl-C, which a terminal sends to every process of the server)
skips the delay; a second SIGINT stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import uvicorn
from uvicorn.config import Config

from kcel.webhook.app import Settings, Webhook
from kcel.webhook.connections import DEFAULT_LIMITS, Acceptor, Connection, ConnectionGuard, Limits, guarded_protocol
from kcel.webhook.policies import PolicyStore
from kcel.webhook.tls import CertReloader

log = logging.getLogger("kcel.webhook")

KEEP_ALIVE = 95  # seconds an idle connection stays open: see serve_config()
HEALTHY_AFTER = 30.0  # seconds a worker must have run for its death to count as a new failure, not a crash loop
MAX_QUICK_DEATHS = 8  # in a row (workers dying before HEALTHY_AFTER): then the server gives up and exits 1
MAX_BACKOFF = 30.0  # seconds at most between restarts
HANDLED = {signal.SIGTERM, signal.SIGINT}  # what the supervisor forwards to its workers


def serve_config(webhook: Webhook, host: str, port: int, tls: CertReloader | None, guard: ConnectionGuard) -> Config:
    """uvicorn settings for an admission webhook.

    The keep-alive timeout is longer than the idle time after which Go's HTTP client (the API server's) drops
    pooled connections (90 s): if the server closed first, a POST could race the close and fail, and Go does
    not retry POSTs. Connections are accepted by `DrainingServer` (see kcel.webhook.connections), which does the
    TLS handshake with the reloader's context of the moment; uvicorn's TLS setting only names the scheme in its
    start-up line. uvicorn's own connection limit is off (the guard's replaces it), and so are WebSockets (an
    upgraded connection would leave the guard's protocol).
    """
    options: dict[str, Any] = {}
    if tls is not None:
        context = tls.context
        options["ssl_context_factory"] = lambda config, default: context
    return Config(
        webhook.app(),
        host=host,
        port=port,
        http=guarded_protocol(guard),
        ws="none",
        lifespan="on",
        log_config=None,  # logging is ours: JSON lines (kcel.webhook.logs)
        access_log=False,  # one line per admission review comes from the app, with its decision
        server_header=False,
        proxy_headers=False,
        timeout_keep_alive=KEEP_ALIVE,
        timeout_graceful_shutdown=int(webhook.settings.timeout) + 5,
        **options,
    )


def serve(
    policies: list[str],
    resources: list[str],
    *,
    host: str,
    port: int,
    settings: Settings,
    tls: CertReloader | None,
    k8s_version: str | None,
    workers: int = 1,
    limits: Limits = DEFAULT_LIMITS,
    runtime_config: Sequence[str] = (),
) -> int:
    """Run until SIGTERM/SIGINT; 0 after a graceful shutdown, 1 if the port cannot be bound or workers keep dying."""

    store = PolicyStore(policies, resources, k8s_version=k8s_version, runtime_config=runtime_config)
    if workers > 1:
        # Compile once before forking: every worker starts with the set (shared copy-on-write) and is ready at
        # once. Loading in each worker instead let one answer "no policies loaded yet" while another said ready.
        store.poll()

    def make_server() -> uvicorn.Server:
        webhook = Webhook(store, settings, tls=tls)
        metrics = webhook.metrics
        guard = ConnectionGuard(limits, on_count=metrics.connections.set, on_close=metrics.connection_closed)
        config = serve_config(webhook, host, port, tls, guard)
        return DrainingServer(config, webhook, settings.shutdown_delay, guard=guard, tls=tls)

    def make_worker() -> uvicorn.Server:
        # A replacement forks from the parent, whose policies and certificate are those of the start: catch up
        # with the files before serving, not a poll interval later (an unchanged set costs a few stat calls).
        store.poll()
        if tls is not None:
            tls.reload_if_changed()
        return make_server()

    try:
        if workers > 1:
            # The parent only binds: a Webhook made here would count as a live process in the shared metrics.
            options: dict[str, Any] = {"ssl_context_factory": lambda config, default: None} if tls else {}
            return prefork(
                Config("kcel.webhook:unused", host=host, port=port, log_config=None, **options).bind_socket(),
                make_worker,
                workers,
            )
        make_server().run()
    except SystemExit as exc:  # uvicorn exits on startup failures (port in use, lifespan error)
        return exc.code if isinstance(exc.code, int) else 1
    return 0


class DrainingServer(uvicorn.Server):
    """uvicorn's server with its connections accepted by kcel.webhook.connections and a drain before its graceful
    shutdown on SIGTERM (see the module docstring).

    uvicorn raises a handled signal again once it has shut down, so the process would end as killed by it
    (status 143). A drained SIGTERM is a clean stop, so it is not raised again and the process exits 0.
    """

    def __init__(
        self, config: Config, webhook: Webhook, delay: float, *, guard: ConnectionGuard, tls: CertReloader | None
    ) -> None:
        super().__init__(config)
        self.webhook = webhook
        self.delay = delay
        self.drain_until: float | None = None
        self._drain_logged = False
        self.guard = guard
        self.tls = tls
        self._acceptor: Acceptor | None = None
        self._bound: list[socket.socket] = []  # listeners this server made (a worker's come from its parent)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up (the lifespan: policies loaded) without its listeners; then ours accept."""
        await super().startup(sockets=[])
        if self.should_exit:
            return
        if sockets is None:
            try:
                self._bound = [self.config.bind_socket()]  # logs the address, or the error and exits
            except SystemExit:
                await self.lifespan.shutdown()
                raise
        protocol = self.config.http_protocol_class
        state, lifespan, config = self.server_state, self.lifespan, self.config

        def make_protocol(connection: Connection) -> asyncio.Protocol:
            made: asyncio.Protocol = protocol(  # type: ignore[call-arg]
                config=config, server_state=state, app_state=lifespan.state, connection=connection
            )
            return made

        tls = self.tls
        self._acceptor = Acceptor(
            self.guard, make_protocol, (lambda: tls.context) if tls is not None else None, config.backlog
        )
        self._acceptor.start(self._bound if sockets is None else sockets)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting and close the listeners before uvicorn's graceful shutdown of the connections."""
        if self._acceptor is not None:
            await self._acceptor.stop()
        for listener in self._bound:
            listener.close()
        await super().shutdown(sockets=sockets)

    def handle_exit(self, sig: int, frame: Any) -> None:
        if sig != signal.SIGTERM:
            super().handle_exit(sig, frame)
            return
        # In a signal handler: no logging here (on_tick logs). A repeated SIGTERM (to the process group and
        # forwarded by the supervisor) does not shorten the drain.
        self.webhook.draining = True
        if self.drain_until is None:
            self.drain_until = time.monotonic() + self.delay

    async def on_tick(self, counter: int) -> bool:
        if self.drain_until is not None and not self.should_exit:
            if not self._drain_logged:
                self._drain_logged = True
                log.info("SIGTERM: not ready, serving for %gs more before closing the listener", self.delay)
            if time.monotonic() >= self.drain_until:
                self.should_exit = True
        return await super().on_tick(counter)


def prefork(listener: socket.socket, make_server: Callable[[], uvicorn.Server], workers: int) -> int:
    """Fork `workers` servers sharing one listening socket, so policy evaluation uses more than one core.

    Each worker has its own event loop, thread pool, policy store and TLS reloader (none survive a fork, so
    all are made in the child). The parent forwards SIGTERM/SIGINT (as SIGTERM: each worker drains) and replaces
    workers that die (killed by the OOM killer, a crash in a C extension): requests on the dead worker's
    connections fail, the others' go on. The first replacement after a healthy run is immediate; workers dying
    within HEALTHY_AFTER seconds of their start wait 0.5 s, 1 s, 2 s... (at most MAX_BACKOFF) and after
    MAX_QUICK_DEATHS such deaths in a row the server stops and exits 1, so a crash loop reaches the kubelet.
    """
    children: dict[int, float] = {}  # pid: time.monotonic() at its start
    pending: list[float] = []  # when each replacement is due
    stopping = False
    status = 0
    quick_deaths = 0

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        # The workers hold their own copies: the socket stays open until the last one has drained and closes
        # it, and then refuses connections at once instead of leaving them unanswered in the backlog.
        listener.close()

    def spawn() -> None:
        # Signals stay blocked until the child is in `children`, so a SIGTERM arriving meanwhile reaches it.
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        try:
            if stopping:  # SIGTERM came after the restart was decided: a worker started now would never stop
                return
            pid = os.fork()
            if pid == 0:  # the worker: not the parent's handlers (they would signal its siblings); uvicorn's later
                for signum in HANDLED:
                    signal.signal(signum, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
                os._exit(_worker(make_server, listener))
            children[pid] = time.monotonic()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)

    def replace(what: str, ran: float) -> None:
        """Schedule a replacement for a worker that is gone (or could not be started), or give up."""
        nonlocal quick_deaths, status
        quick_deaths = quick_deaths + 1 if ran < HEALTHY_AFTER else 1
        if quick_deaths > MAX_QUICK_DEATHS:
            log.error("%s after %.1fs, the %dth worker in a row to fail within %gs of its start; stopping",
                      what, ran, quick_deaths, HEALTHY_AFTER)  # fmt: skip
            status = 1
            stop(signal.SIGTERM, None)
            return
        delay = restart_delay(quick_deaths)
        log.error("%s after %.1fs; starting a new one in %gs", what, ran, delay,
                  extra={"fields": {"restart_in": delay}})  # fmt: skip
        pending.append(time.monotonic() + delay)
        pending.sort()

    def start() -> None:
        try:
            spawn()
        except OSError as exc:  # fork failed: out of memory or processes
            replace(f"cannot start a worker ({exc})", 0.0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for _ in range(workers):
        start()
    log.info("started %d workers", len(children), extra={"fields": {"workers": sorted(children)}})
    while children or (pending and not stopping):
        if stopping:
            pending.clear()
        while pending and pending[0] <= time.monotonic():
            pending.pop(0)
            start()
            log.info("workers now %s", sorted(children), extra={"fields": {"workers": sorted(children)}})
        if pending:  # wait for a death or the next restart, whichever comes first
            pid, wait_status = os.waitpid(-1, os.WNOHANG) if children else (0, 0)
            if pid == 0:
                time.sleep(min(0.1, max(0.0, pending[0] - time.monotonic())))
                continue
        else:
            try:
                pid, wait_status = os.wait()
            except ChildProcessError:  # pragma: no cover - every child is in `children`
                break
        started = children.pop(pid, None)
        _worker_gone(pid)
        if not stopping and started is not None:
            replace(f"worker {pid} {_describe(wait_status)}", time.monotonic() - started)
    log.info("all workers stopped")
    return status


def restart_delay(quick_deaths: int) -> float:
    """Seconds before replacing a worker: none after a healthy run, then 0.5 s doubling up to MAX_BACKOFF.

    >>> [restart_delay(n) for n in (1, 2, 3, 4, 8, 9)]
    [0.0, 0.5, 1.0, 2.0, 30.0, 30.0]
    """
    return 0.0 if quick_deaths <= 1 else min(MAX_BACKOFF, 0.5 * 2 ** (quick_deaths - 2))


def _describe(wait_status: int) -> str:
    code = os.waitstatus_to_exitcode(wait_status)
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _worker(make_server: Callable[[], uvicorn.Server], listener: socket.socket) -> int:
    try:
        make_server().run(sockets=[listener])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        log.exception("worker failed")
        return 1
    return 0


def _worker_gone(pid: int) -> None:
    """Drop a dead worker's live gauges from the shared Prometheus files."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
