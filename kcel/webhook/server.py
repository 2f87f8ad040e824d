"""Run the webhook under uvicorn: TLS from the reloadable context, JSON logs, and limits for slow clients.

uvicorn closes idle keep-alive connections but waits forever for the first bytes and for the rest of the
headers of a request. A client that connects and trickles (or sends nothing) would hold a connection and a
file descriptor indefinitely, so the HTTP protocol here arms a timer from connection (or message) start to
the end of the headers. The body is covered by the request deadline in `kcel.webhook.app`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.config import Config

from kcel.webhook.app import Settings, Webhook
from kcel.webhook.policies import PolicyStore
from kcel.webhook.tls import CertReloader

log = logging.getLogger("kcel.webhook")

HEADER_TIMEOUT = 10.0  # seconds from connection or request start to the end of the request headers
KEEP_ALIVE = 95  # seconds an idle connection stays open: see serve_config()
MAX_CONNECTIONS = 1000  # beyond this uvicorn answers 503 at once instead of queueing without bound


def guarded_protocol() -> type[asyncio.Protocol] | str:
    """uvicorn's httptools protocol with a header timeout; uvicorn's default if httptools is missing."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - uvicorn[standard] brings httptools
        return "auto"

    class HeaderTimeoutProtocol(HttpToolsProtocol):
        """Closes connections whose request headers do not arrive within HEADER_TIMEOUT."""

        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                log.warning("closing a connection whose request headers did not arrive in time")
                self.transport.close()

    return HeaderTimeoutProtocol


def serve_config(webhook: Webhook, host: str, port: int, tls: CertReloader | None) -> Config:
    """uvicorn settings for an admission webhook.

    The keep-alive timeout is longer than the idle time after which Go's HTTP client (the API server's) drops
    pooled connections (90 s): if the server closed first, a POST could race the close and fail, and Go does
    not retry POSTs.
    """
    options: dict[str, Any] = {}
    if tls is not None:
        context = tls.context
        options["ssl_context_factory"] = lambda config, default: context
    return Config(
        webhook.app(),
        host=host,
        port=port,
        http=guarded_protocol(),
        lifespan="on",
        log_config=None,  # logging is ours: JSON lines (kcel.webhook.logs)
        access_log=False,  # one line per admission review comes from the app, with its decision
        server_header=False,
        proxy_headers=False,
        timeout_keep_alive=KEEP_ALIVE,
        timeout_graceful_shutdown=int(webhook.settings.timeout) + 5,
        limit_concurrency=MAX_CONNECTIONS,
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
) -> int:
    """Run until SIGTERM/SIGINT; 1 if the port cannot be bound.

    After a graceful shutdown uvicorn raises the signal again, so the process ends as killed by it (status
    143 for SIGTERM), as a container runtime expects.
    """

    store = PolicyStore(policies, resources, k8s_version=k8s_version)
    if workers > 1:
        # Compile once before forking: every worker starts with the set (shared copy-on-write) and is ready at
        # once. Loading in each worker instead let one answer "no policies loaded yet" while another said ready.
        store.poll()

    def make_config() -> Config:
        return serve_config(Webhook(store, settings, tls=tls), host, port, tls)

    try:
        if workers > 1:
            # The parent only binds: a Webhook made here would count as a live process in the shared metrics.
            options: dict[str, Any] = {"ssl_context_factory": lambda config, default: None} if tls else {}
            return prefork(
                Config("kcel.webhook:unused", host=host, port=port, log_config=None, **options).bind_socket(),
                make_config,
                workers,
            )
        uvicorn.Server(make_config()).run()
    except SystemExit as exc:  # uvicorn exits on startup failures (port in use, lifespan error)
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def prefork(listener: socket.socket, make_config: Callable[[], Config], workers: int) -> int:
    """Fork `workers` servers sharing one listening socket, so policy evaluation uses more than one core.

    Each worker has its own event loop, thread pool, policy store and TLS reloader (none survive a fork, so
    all are made in the child). The parent only forwards SIGTERM/SIGINT and waits; when a worker dies
    unexpectedly it stops the others and exits 1, leaving restarts to the kubelet instead of masking crashes.
    """
    children: set[int] = set()
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker: uvicorn installs its own signal handlers
            os._exit(_worker(make_config, listener))
        children.add(pid)
    log.info("started %d workers", workers, extra={"fields": {"workers": sorted(children)}})
    status = 0
    while children:
        pid, wait_status = os.wait()
        children.discard(pid)
        _worker_gone(pid)
        if not stopping:
            log.error("worker %d exited (%d); stopping the others", pid, os.waitstatus_to_exitcode(wait_status))
            status = 1
            stop(signal.SIGTERM, None)
    return status


def _worker(make_config: Callable[[], Config], listener: socket.socket) -> int:
    try:
        uvicorn.Server(make_config()).run(sockets=[listener])
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
