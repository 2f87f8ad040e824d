"""ConnectionGuard's choices, without a server: which connection gives way at a cap, and when a newcomer is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from kcel.webhook.connections import Connection, ConnectionGuard, Limits


class Client:
    """Connections from one address, recording which were aborted."""

    def __init__(self, address: str, aborted: list[str]) -> None:
        self.address = address
        self.aborted = aborted
        self.made = 0

    def connection(self) -> Connection:
        self.made += 1
        name = f"{self.address}#{self.made}"
        return Connection(self.address, lambda: self.aborted.append(name))


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The guard schedules its log line on the running loop."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def run(loop: asyncio.AbstractEventLoop, work: object) -> None:
    async def inside() -> None:
        assert callable(work)
        work()

    loop.run_until_complete(inside())


def test_at_the_cap_the_never_used_connection_idle_longest_gives_way(loop: asyncio.AbstractEventLoop) -> None:
    aborted: list[str] = []
    counts: list[int] = []
    reasons: list[str] = []
    guard = ConnectionGuard(
        Limits(max_connections=3, max_per_client=3), on_count=counts.append, on_close=reasons.append
    )
    api_server, attacker, probe = Client("10.0.0.1", aborted), Client("10.0.0.2", aborted), Client("10.0.0.3", aborted)

    def scenario() -> None:
        served = api_server.connection()
        assert guard.admit(served)
        guard.busy(served)
        guard.idle(served)  # keep-alive idle after a request
        served.served = True
        guard.idle(served)
        first, second = attacker.connection(), attacker.connection()
        assert guard.admit(first) and guard.admit(second)
        probes = [probe.connection() for _ in range(3)]
        assert guard.admit(probes[0])  # the attacker's older never-used connection made room
        assert aborted == ["10.0.0.2#1"] and first not in guard.open and second in guard.open
        guard.busy(probes[0])  # its request is in
        assert guard.admit(probes[1])
        assert aborted == ["10.0.0.2#1", "10.0.0.2#2"]  # never-used ones first, though the served one is older
        guard.busy(probes[1])
        assert guard.admit(probes[2])
        assert aborted[-1] == "10.0.0.1#1"  # then the keep-alive one idle longest

    run(loop, scenario)
    assert reasons == ["evicted_server_limit"] * 3 and counts[-1] == 3 == len(guard.open)


def test_busy_connections_never_give_way_and_the_newcomer_is_refused(loop: asyncio.AbstractEventLoop) -> None:
    aborted: list[str] = []
    reasons: list[str] = []
    guard = ConnectionGuard(Limits(max_connections=2, max_per_client=2), on_close=reasons.append)
    client = Client("10.0.0.1", aborted)

    def scenario() -> None:
        busy = [client.connection(), client.connection()]
        for connection in busy:
            assert guard.admit(connection)
            guard.busy(connection)
        assert not guard.admit(client.connection())
        assert not guard.admit(Client("10.0.0.9", aborted).connection())
        guard.idle(busy[0])  # its answer went out: it may give way now
        assert guard.admit(Client("10.0.0.9", aborted).connection())
        assert aborted == ["10.0.0.1#1"]

    run(loop, scenario)
    assert reasons == ["refused_client_limit", "refused_server_limit", "evicted_server_limit"]


def test_a_client_at_its_limit_makes_room_among_its_own(loop: asyncio.AbstractEventLoop) -> None:
    aborted: list[str] = []
    guard = ConnectionGuard(Limits(max_connections=10, max_per_client=2))
    flood, other = Client("10.0.0.2", aborted), Client("10.0.0.1", aborted)

    def scenario() -> None:
        mine = other.connection()
        assert guard.admit(mine)
        for _ in range(5):
            assert guard.admit(flood.connection())
        assert aborted == ["10.0.0.2#1", "10.0.0.2#2", "10.0.0.2#3"]
        assert guard.per_client == {"10.0.0.1": 1, "10.0.0.2": 2} and mine in guard.open

    run(loop, scenario)


def test_release_is_idempotent_and_forgets_the_client(loop: asyncio.AbstractEventLoop) -> None:
    guard = ConnectionGuard(Limits(max_connections=1, max_per_client=1))
    connection = Client("10.0.0.1", []).connection()

    def scenario() -> None:
        assert guard.admit(connection)
        guard.release(connection)
        guard.release(connection)  # an aborted connection's connection_lost comes after its eviction
        guard.idle(connection)  # a late callback must not bring it back
        assert not guard.open and not guard.per_client
        assert guard.admit(Client("10.0.0.1", []).connection())

    run(loop, scenario)
