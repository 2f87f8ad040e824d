"""Run the webhook under uvicorn: TLS from the reloadable context, JSON logs, and limits for slow clients.

uvicorn closes idle keep-alive connections but waits forever for the first bytes and for the rest of the
headers of a request. A client that connects and trickles (or sends nothing) would hold a connection and a
file descriptor indefinitely, so the HTTP protocol here arms a timer from connection (or message) start to
the end of the headers. The body is covered by the request deadline in `kcel.webhook.app`.
"""

from __future__ import annotations

import asyncio
import logging
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
) -> int:
    """Run until SIGTERM/SIGINT; the exit status uvicorn gives (1 if the port cannot be bound)."""
    store = PolicyStore(policies, resources, k8s_version=k8s_version)
    webhook = Webhook(store, settings, tls=tls)
    server = uvicorn.Server(serve_config(webhook, host, port, tls))
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits on startup failures (port in use, lifespan error)
        return exc.code if isinstance(exc.code, int) else 1
    return 0
