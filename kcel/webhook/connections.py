"""Connections as the API server sees them: counted from TCP accept, bounded in total and per client address, and
the idle ones given up first when there are too many.

uvicorn counted connections only once their TLS handshake was done, refused new requests (503, probes included)
while its count was full, and closed a connection that timed out by a TLS close waiting up to 30 s for the
client's own. So a thousand clients that connected and sent nothing held the server for 40 s. Here:

* a connection counts from accept, handshake included, and is in one of two states: *busy* (a request read and
  not yet answered) or *idle* (in the TLS handshake, waiting for request headers, or keep-alive idle);
* at the total cap (or a client address's cap) a newcomer makes room by aborting the idle connection waiting
  longest, one that never sent a request first; only when every connection is busy is the newcomer refused. An
  attacker's idle connections cannot hold the cap, and a probe or the API server always gets in;
* one address holds at most `max_per_client` connections, so a flood from one address evicts only its own.

The API server (Go's net/http through client-go) keeps up to 25 idle keep-alive connections per webhook host and
opens one more for each concurrent call. Its idle ones may be aborted under pressure; Go drops a pooled
connection the server closed and redials, so a long-idle one is the cheapest to give up (Go reuses the most
recently used first). Busy ones are never aborted.

`ConnectionGuard` is the bookkeeping, free of any server. `Acceptor` accepts connections itself and runs each TLS
handshake under a timeout (`loop.connect_accepted_socket`): a TLS listener would show a connection only once its
handshake was done, and uvicorn offers no handshake timeout. `guarded_protocol` is uvicorn's httptools protocol
with the guard's states, the header timeout and the header limits. Another HTTP server would need its own
protocol; the guard and the acceptor stay.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import ssl
import sys
from collections import Counter, OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast

log = logging.getLogger("kcel.webhook")

TLS_CLOSE_TIMEOUT = 5.0  # seconds a graceful TLS close waits for the client's close (asyncio's default is 30)
REPORT_EVERY = 10.0  # seconds between log lines counting the connections the limits closed


@dataclass(frozen=True)
class Limits:
    """What one server process lets its clients hold; `kcel serve` options set each (see deploy/webhook/README.md)."""

    max_connections: int = 1000
    # Above what one API server opens at its default in-flight limits (400 + 200 requests, each calling the
    # webhook once at a time, plus 25 idle): refused only when all are busy; raise it behind a proxy or NAT
    # that brings several API servers from one address.
    max_per_client: int = 600
    handshake_timeout: float = 10.0  # seconds, as the API server's own TLS handshake timeout (client-go)
    header_timeout: float = 10.0  # seconds from the handshake (or the request's first byte) to its last header
    max_header_bytes: int = 16 * 1024  # the request line and headers: the API server sends a few, a token at most
    max_headers: int = 100


DEFAULT_LIMITS = Limits()


class Connection:
    """One accepted TCP connection: its client address and how to drop it at once (no TLS close)."""

    __slots__ = ("client", "abort", "served")

    def __init__(self, client: str, abort: Callable[[], object]) -> None:
        self.client = client
        self.abort = abort  # cancels the handshake, then aborts the transport
        self.served = False  # a request was answered on it: idle now means keep-alive idle


class _IdleSet:
    """Idle connections by how long they have been idle, the never-served ones apart (they go first)."""

    __slots__ = ("fresh", "served")

    def __init__(self) -> None:
        self.fresh: OrderedDict[Connection, None] = OrderedDict()
        self.served: OrderedDict[Connection, None] = OrderedDict()

    def add(self, connection: Connection) -> None:
        (self.served if connection.served else self.fresh)[connection] = None

    def discard(self, connection: Connection) -> None:
        self.fresh.pop(connection, None)
        self.served.pop(connection, None)

    def oldest(self) -> Connection | None:
        for ordered in (self.fresh, self.served):
            if ordered:
                return next(iter(ordered))
        return None

    def __bool__(self) -> bool:
        return bool(self.fresh or self.served)


class ConnectionGuard:
    """Counts a process's connections in total and per client address; chooses the ones to abort at the caps."""

    def __init__(
        self,
        limits: Limits,
        *,
        on_count: Callable[[int], None] | None = None,
        on_close: Callable[[str], None] | None = None,
    ) -> None:
        self.limits = limits
        self.on_count = on_count  # told the number of open connections when it changes (a gauge)
        self.on_close = on_close  # told the reason of each connection the limits close (a counter)
        self.open: set[Connection] = set()
        self.per_client: dict[str, int] = {}
        self._idle = _IdleSet()
        self._idle_per_client: dict[str, _IdleSet] = {}
        self.closed: Counter[str] = Counter()  # why the limits closed connections, since the start
        self._unreported: Counter[str] = Counter()
        self._report: asyncio.TimerHandle | None = None

    def admit(self, connection: Connection) -> bool:
        """Count a new connection, aborting an idle one to make room at a cap; False: all busy, refuse it."""
        client = connection.client
        if self.per_client.get(client, 0) >= self.limits.max_per_client:
            if not self._evict(self._idle_per_client.get(client), "evicted_client_limit"):
                self.note("refused_client_limit")
                return False
        if len(self.open) >= self.limits.max_connections:
            if not self._evict(self._idle, "evicted_server_limit"):
                self.note("refused_server_limit")
                return False
        self.open.add(connection)
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.idle(connection)
        self._counted()
        return True

    def make_room(self) -> bool:
        """Abort the idle connection the server would give up first (accepting failed: out of descriptors)."""
        return self._evict(self._idle, "evicted_server_limit")

    def busy(self, connection: Connection) -> None:
        """A request is in progress on it: never aborted to make room."""
        self._idle.discard(connection)
        idle = self._idle_per_client.get(connection.client)
        if idle is not None:
            idle.discard(connection)

    def idle(self, connection: Connection) -> None:
        """Nothing in progress (again): the last to be given up among the idle ones, being the newest."""
        if connection not in self.open:
            return
        self.busy(connection)  # off the lists, to go back at their ends
        self._idle.add(connection)
        self._idle_per_client.setdefault(connection.client, _IdleSet()).add(connection)

    def release(self, connection: Connection) -> None:
        """The connection is gone (idempotent: an aborted connection is released twice)."""
        if connection not in self.open:
            return
        self.busy(connection)
        self.open.discard(connection)
        client = connection.client
        left = self.per_client[client] - 1
        if left:
            self.per_client[client] = left
        else:
            del self.per_client[client]
            self._idle_per_client.pop(client, None)
        self._counted()

    def _evict(self, idle: _IdleSet | None, why: str) -> bool:
        victim = idle.oldest() if idle else None
        if victim is None:
            return False
        self.release(victim)  # now: its connection_lost comes later
        victim.abort()
        self.note(why)
        return True

    def note(self, reason: str) -> None:
        """Count a connection the limits closed (`reason` is a key of REASONS); logged as counts at most every
        REPORT_EVERY seconds (a flood would otherwise write a line per connection)."""
        self.closed[reason] += 1
        self._unreported[reason] += 1
        if self.on_close is not None:
            self.on_close(reason)
        if self._report is None:
            self._report = asyncio.get_running_loop().call_later(REPORT_EVERY, self._log)
            if sum(self._unreported.values()) == 1:
                self._log(rearm=False)

    def _log(self, rearm: bool = True) -> None:
        if rearm:
            self._report = None
        if self._unreported:
            counts = dict(self._unreported)
            text = ", ".join(f"{n} {REASONS.get(reason, reason)}" for reason, n in counts.items())
            log.warning("connections closed by the server's limits: %s", text,
                        extra={"fields": {"closed": counts, "open": len(self.open)}})  # fmt: skip
            self._unreported.clear()

    def _counted(self) -> None:
        if self.on_count is not None:
            self.on_count(len(self.open))


REASONS = {  # why the limits closed a connection: the metric's label, and its text in the log
    "evicted_client_limit": "idle given up for a newcomer (client at its limit)",
    "evicted_server_limit": "idle given up for a newcomer (server at its limit)",
    "refused_client_limit": "refused (client at its limit, all busy)",
    "refused_server_limit": "refused (server at its limit, all busy)",
    "handshake_timeout": "TLS handshake timeout",
    "header_timeout": "header timeout",
    "headers_too_large": "headers too large (431)",
    "accept_failed": "accept failed (out of file descriptors?)",
}


class Acceptor:
    """Accepts connections on listening sockets, counts them in `guard` at once, and runs each one's TLS
    handshake (with the context `tls()` gives then, so a reloaded one serves new connections) under the handshake
    timeout before its protocol, made by `protocol(connection)`, sees it.

    Accepting here rather than in the server's listener is what lets a connection count from its first moment: a
    TLS listener shows a connection to its protocol only once the handshake is done."""

    def __init__(
        self,
        guard: ConnectionGuard,
        protocol: Callable[[Connection], asyncio.Protocol],
        tls: Callable[[], ssl.SSLContext] | None,
        backlog: int,
    ) -> None:
        self.guard = guard
        self.protocol = protocol
        self.tls = tls
        self.backlog = backlog
        self._tasks: set[asyncio.Task[None]] = set()
        loop_options: dict[str, Any] = {}
        if tls is not None:
            loop_options["ssl_handshake_timeout"] = guard.limits.handshake_timeout
            if sys.version_info >= (3, 11):
                loop_options["ssl_shutdown_timeout"] = TLS_CLOSE_TIMEOUT
        self._loop_options = loop_options

    def start(self, listeners: list[socket.socket]) -> None:
        for listener in listeners:
            listener.listen(self.backlog)
            listener.setblocking(False)
            self._spawn(self._accept(listener))

    async def stop(self) -> None:
        """Stop accepting (connections in their handshake are aborted; served ones are the server's to close)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # before the listeners close under them

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # a strong reference: the loop keeps only weak ones
        task.add_done_callback(self._tasks.discard)
        return task

    async def _accept(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, address = await loop.sock_accept(listener)
            except OSError as exc:  # out of file descriptors, say: free one if it can, and try again shortly
                log.debug("accept failed: %s", exc)
                self.guard.note("accept_failed")
                await asyncio.sleep(0.01 if self.guard.make_room() else 0.1)  # the aborted one closes meanwhile
                continue
            client = str(address[0]) if isinstance(address, tuple) and address else ""
            connection = Connection(client, sock.close)
            if not self.guard.admit(connection):
                sock.close()
                continue
            task = self._spawn(self._connect(sock, connection))
            connection.abort = functools.partial(_drop_unstarted, sock, task)  # until _connect has the socket

    async def _connect(self, sock: socket.socket, connection: Connection) -> None:
        """The handshake (plain connections: none) and the protocol; a connection that does not get there is
        released."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        connection.abort = task.cancel  # the transport is aborted on the way out; its protocol makes this its own
        context = self.tls() if self.tls is not None else None
        try:
            await loop.connect_accepted_socket(
                lambda: self.protocol(connection), sock, ssl=context, **self._loop_options
            )
        except ConnectionAbortedError:  # the handshake timeout (the transport is aborted)
            self.guard.note("handshake_timeout")
            self.guard.release(connection)
        except (OSError, EOFError):  # a refused handshake (ssl.SSLError is an OSError) or the client gone
            self.guard.release(connection)
        except asyncio.CancelledError:  # made room for another, or the server stops: the transport is aborted
            self.guard.release(connection)
            raise
        except Exception:  # a bug here must not keep the connection counted forever
            log.exception("cannot start serving a connection")
            self.guard.release(connection)
            sock.close()


def _drop_unstarted(sock: socket.socket, task: asyncio.Task[None]) -> None:
    """Abort a connection whose handshake task has not run yet (so has not taken the socket over)."""
    sock.close()
    task.cancel()


def guarded_protocol(guard: ConnectionGuard) -> type[Any]:
    """uvicorn's httptools protocol for connections `Acceptor` counted in `guard`: busy from a request's headers
    to its answer, the headers bounded in time (from the handshake or the request's first byte), size and count
    (431), and an abortive close for connections whose headers are too slow."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    limits = guard.limits
    too_large = (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
    )

    class GuardedProtocol(HttpToolsProtocol):
        """One counted connection, served by uvicorn once its headers are in and within the limits."""

        _header_timer: asyncio.TimerHandle | None = None
        _reading_headers = True  # the next bytes are request headers: counted against the limits
        _header_bytes = 0  # as received (a header split over reads is buffered by the parser until complete)
        _parsed_bytes = 0  # as parsed, for headers complete within one read
        _header_count = 0
        _refused = False  # answered 431: the rest is not read

        def __init__(self, *args: Any, connection: Connection, **options: Any) -> None:
            super().__init__(*args, **options)
            self.connection = connection

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            stream = cast(asyncio.Transport, transport)  # asyncio's or uvloop's (not registered as one)
            self.connection.abort = stream.abort
            super().connection_made(stream)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            guard.release(self.connection)
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._reading_headers:
                self._header_bytes += len(data)
            super().data_received(data)
            if self._reading_headers and self._header_bytes > limits.max_header_bytes:
                self._refused = True
            if self._refused:
                self._refuse()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._reading_headers = True
            self._parsed_bytes = self._header_count = 0
            self._arm()

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._header_count += 1
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count(self, size: int) -> None:
            self._parsed_bytes += size
            if self._parsed_bytes > limits.max_header_bytes or self._header_count > limits.max_headers:
                self._refused = True  # answered after this read; meanwhile the parser's callbacks start nothing

        def on_headers_complete(self) -> None:
            self._disarm()
            self._reading_headers = False
            self._header_bytes = 0
            if not self._refused:
                guard.busy(self.connection)
                super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            self._reading_headers = True
            if not self._refused:
                super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.cycle is None or self.cycle.response_complete:
                self.connection.served = True
                guard.idle(self.connection)

        def send_400_response(self, msg: str) -> None:
            if not self._refused:  # (a malformed request after a refused one): the 431 is what it gets
                super().send_400_response(msg)

        def _refuse(self) -> None:
            if self.transport.is_closing():
                return
            guard.note("headers_too_large")
            why = f"request headers over {limits.max_header_bytes} bytes or {limits.max_headers} fields".encode()
            self.transport.write(too_large % (len(why), why))
            self.transport.close()  # the client reads the answer; the close is bounded by TLS_CLOSE_TIMEOUT

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(limits.header_timeout, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            guard.note("header_timeout")
            self.transport.abort()  # no TLS close: the client may never answer one

    return GuardedProtocol
