"""Admission reviews straight on ASGI: the body read from `receive`, the answer written to `send`.

A quick review takes less time than a framework's routing, middleware and request and response objects around
it, so the webhook is written on ASGI itself (kcel.webhook.app). What an admission endpoint needs is here: the
`?timeout=` parameter, a body limit known before the body is read, and an answer that may ask the client to close
the connection.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs

from kcel.webhook.review import ReviewError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
TEXT = b"text/plain; charset=utf-8"
T = TypeVar("T")


class Disconnected(Exception):
    """The client went away before its body was read: there is nobody to answer."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP response: its status, body and its type, and whether the client should close its connection."""

    status: int
    body: bytes
    content_type: bytes = b"application/json"
    close: bool = False
    allow: bytes | None = None  # the methods a 405 names

    async def send(self, send: Send) -> None:
        headers = [(b"content-type", self.content_type), (b"content-length", str(len(self.body)).encode())]
        if self.close:
            headers.append((b"connection", b"close"))
        if self.allow is not None:
            headers.append((b"allow", self.allow))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def query_parameter(scope: Scope, name: str) -> str | None:
    """The first value of a query parameter (the API server adds `?timeout=10s` to each webhook call)."""
    query = scope.get("query_string", b"")
    if not query:
        return None
    values = parse_qs(query.decode("latin-1")).get(name)
    return values[0] if values else None


def header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


class BodyBudget:
    """Bytes of request bodies a process holds at once: each body is charged as it arrives (its Content-Length up
    front) and given back when its review is answered. One body is bounded by `read_body`'s limit; this bounds
    them all, so a thousand clients each sending a 7 MiB review at once cannot exhaust the process's memory (the
    bodies, and the objects parsed from them, while they are evaluated). Only the event loop uses it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> None:
        """Charge `size` bytes, or refuse the request (503: the API server then applies the webhook's own
        failurePolicy) if that would pass the limit."""
        if self.held + size > self.limit:
            raise ReviewError(503, f"too many request bodies in progress: {self.held} bytes, the limit is {self.limit}")
        self.held += size

    def give_back(self, size: int) -> None:
        self.held -= size


async def read_body(scope: Scope, receive: Receive, limit: int, budget: BodyBudget, charged: list[int]) -> bytes:
    """The request body, refusing (413) as soon as it is known to exceed `limit` instead of buffering it all, and
    (503) when the process holds too many bodies; what is charged to `budget` is added to `charged[0]`, for the
    caller to give back."""

    def charge(size: int) -> None:
        budget.take(size)
        charged[0] += size

    declared = header(scope, b"content-length")
    if declared is not None and declared.isdigit():
        if int(declared) > limit:
            raise ReviewError(413, f"request body too large: {declared.decode()} bytes, the limit is {limit}")
        charge(int(declared))
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        body += chunk
        if len(body) > limit:
            raise ReviewError(413, f"request body too large: over {limit} bytes")
        if len(body) > charged[0]:  # no Content-Length, or more than it said
            charge(len(body) - charged[0])
        if not message.get("more_body", False):
            return bytes(body)


if sys.version_info >= (3, 11):

    async def within(seconds: float, work: Coroutine[Any, Any, T]) -> T:
        """`await work`, or asyncio.TimeoutError past `seconds` (without the task `wait_for` creates)."""
        async with asyncio.timeout(seconds):
            return await work

else:  # pragma: no cover - Python 3.10

    async def within(seconds: float, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wait_for(work, seconds)
