"""Soak test of `kcel serve`: many requests against one server, its memory (RSS) sampled as they go.

A leak of a few hundred bytes per request (a cache without a bound, a list of timings, an exception keeping
its frames) is invisible in the load test's 100,000 requests and fatal after a week in a cluster. This runs
`--requests` reviews (default 1,000,000) over keep-alive HTTPS connections against a server with
`--workers N` and prints the RSS of every server process (from /proc/PID/status) after a warm-up and after
each tenth of the run: start, middle and end, and the growth. Every answer is checked as in
bench/webhook_load.py (HTTP 200, the uid echoed, `allowed` as expected); anything else is an error.

The long run, before a release or after a change to the server, the engine's caches or the logs:

    PYTHONPATH=. .venv/bin/python bench/webhook_soak.py                     # 1,000,000 requests: ~10 min on 2 cores
    PYTHONPATH=. .venv/bin/python bench/webhook_soak.py --requests 200000  # about 2 minutes

tests/webhook/test_webhook_faults.py runs 20,000 requests and bounds the growth. `run_load` is also the load
of those tests: clients that reconnect after a failure and record every request, so a test can count what
failed while it killed a worker or replaced the policies under load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import ssl
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from webhook_load import UID, RawSender, Template, check, reviews, rss_kib, start_server

TIMEOUT = 30.0  # seconds for one request (or connection) before it counts as failed rather than hanging the run


@dataclass(frozen=True)
class Record:
    """One request: which client sent it, when, which template, what went wrong ("" if nothing), the decision."""

    client: int
    started: float  # time.monotonic()
    ended: float
    template: int
    problem: str
    allowed: bool | None


@dataclass
class Tally:
    """What a load did; `records` only when asked for (a million records would be the client's leak)."""

    requests: int = 0
    errors: int = 0
    first_error: str = ""
    elapsed: float = 0.0
    records: list[Record] | None = None

    def add(self, record: Record) -> None:
        self.requests += 1
        if record.problem:
            self.errors += 1
            self.first_error = self.first_error or record.problem
        if self.records is not None:
            self.records.append(record)


def judge(status: int, content: bytes, uid: str, template: Template, strict: bool) -> tuple[str, bool | None]:
    """A problem ("" if none) and the decision. Strict: the decision must be the template's; else any will do (the
    policies are being changed)."""
    if strict and (problem := check(status, content, uid, template)):
        return problem, None
    if status != 200:
        return f"HTTP {status}: {content[:200]!r}", None
    response = json.loads(content)["response"]
    if response["uid"] != uid:
        return f"uid {response['uid']} != {uid}", None
    return "", bool(response["allowed"])


async def run_load(
    url: str,
    verify: ssl.SSLContext,
    templates: Sequence[Template],
    *,
    connections: int,
    requests: int | None = None,
    stop: Callable[[], bool] = lambda: False,
    fresh: Sequence[int] = (),
    strict: bool = True,
    keep_records: bool = False,
    tally: Tally | None = None,
) -> Tally:
    """`connections` clients sending one request after another until `requests` are sent or `stop()` says so.

    Clients keep their connection (HTTP/1.1 keep-alive, as the API server does) except those in `fresh`, which
    open a new one, with a TLS handshake, for every request. After a failure a client reconnects, so a dead
    worker costs each of its clients one request. Pass a `tally` to watch it fill from another thread.
    """
    if tally is None:
        tally = Tally(records=[] if keep_records else None)
    remaining = [requests if requests is not None else -1]
    started = time.monotonic()

    async def client(index: int) -> None:
        sender: RawSender | None = None
        turn = index
        while remaining[0] != 0 and not stop():
            remaining[0] -= 1
            which = turn % len(templates)
            template = templates[which]
            turn += 1
            uid = str(uuid.uuid4())
            body = template.body.replace(UID.encode(), uid.encode(), 1)
            began = time.monotonic()
            allowed: bool | None = None
            try:
                if sender is None:
                    sender = RawSender(url, verify, 1)
                    await asyncio.wait_for(sender.open(), TIMEOUT)
                status, content = await asyncio.wait_for(sender.post(body, template.path), TIMEOUT)
                problem, allowed = judge(status, content, uid, template, strict)
            except Exception as exc:  # whatever it is, it is this request's failure, not the load's
                problem = f"{type(exc).__name__}: {exc}"
            tally.add(Record(index, began, time.monotonic(), which, problem, allowed))
            if sender is not None and (problem or index in fresh):
                await close(sender)
                sender = None
        if sender is not None:
            await close(sender)

    await asyncio.gather(*(client(i) for i in range(connections)))
    tally.elapsed = time.monotonic() - started
    return tally


async def close(sender: RawSender) -> None:
    """Close without waiting long for the peer's TLS close_notify: a dead worker never sends one."""
    if sender.writer is not None:
        sender.writer.close()
        try:
            await asyncio.wait_for(sender.writer.wait_closed(), 1.0)
        except Exception:  # reset, timed out: the connection is gone either way
            pass


@dataclass
class Soak:
    """A soak's figures: requests, errors, and RSS in KiB per server process at each sample."""

    requests: int = 0
    errors: int = 0
    first_error: str = ""
    elapsed: float = 0.0
    samples: list[tuple[int, dict[int, int]]] = field(default_factory=list)  # (requests done, {pid: KiB})

    def rss(self, at: int) -> int:
        """Total RSS in KiB of the server processes at sample `at` (0 start, -1 end)."""
        return sum(self.samples[at][1].values())

    @property
    def middle(self) -> int:
        return self.rss(len(self.samples) // 2)

    def growth(self) -> dict[int, int]:
        """KiB gained from start to end by each process present at both."""
        first, last = self.samples[0][1], self.samples[-1][1]
        return {pid: last[pid] - first[pid] for pid in first if pid in last}


def child_pids(pid: int) -> set[int]:
    """Live (not zombie) processes whose parent is `pid`: a scan of /proc, which works without the kernel's
    /proc/PID/task/TID/children."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def server_rss(pid: int) -> dict[int, int]:
    """RSS in KiB of the server (and its workers, with --workers N)."""
    found = {}
    for process in (pid, *sorted(child_pids(pid))):
        try:
            found[process] = rss_kib(process)
        except (OSError, RuntimeError):  # a worker that has just died
            pass
    return found


async def soak(
    url: str,
    verify: ssl.SSLContext,
    pid: int,
    total: int,
    *,
    connections: int = 16,
    samples: int = 10,
    warmup: int = 2000,
    progress: Callable[[Soak], None] | None = None,
) -> Soak:
    """`total` requests after `warmup` ones, RSS sampled after the warm-up and after each of `samples` parts."""
    templates = reviews()
    warm = await run_load(url, verify, templates, connections=connections, requests=warmup)
    result = Soak(errors=warm.errors, first_error=warm.first_error)
    result.samples.append((0, server_rss(pid)))
    done = 0
    for part in range(samples):
        count = total * (part + 1) // samples - done
        tally = await run_load(url, verify, templates, connections=connections, requests=count)
        done += tally.requests
        result.requests = done
        result.errors += tally.errors
        result.first_error = result.first_error or tally.first_error
        result.elapsed += tally.elapsed
        result.samples.append((done, server_rss(pid)))
        if progress is not None:
            progress(result)
    return result


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000, help="requests after the warm-up (default 1e6)")
    parser.add_argument("--connections", type=int, default=16, help="concurrent keep-alive clients (default 16)")
    parser.add_argument("--workers", type=int, default=2, help="the server's --workers (default 2)")
    parser.add_argument("--threads", type=int, default=4, help="the server's --threads (default 4)")
    args = parser.parse_args()
    machine = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    server = f"server --workers {args.workers} --threads {args.threads}"
    print(f"{machine}; {server}; {args.requests:,} requests at {args.connections} connections")

    def progress(result: Soak) -> None:
        rss = ", ".join(f"{p}: {mib(k)}" for p, k in sorted(result.samples[-1][1].items()))
        rate = result.requests / result.elapsed
        print(f"{result.requests:>10,} requests  {rate:6.0f}/s  errors {result.errors}  RSS {rss}", flush=True)

    with tempfile.TemporaryDirectory() as directory:
        process, url, verify = start_server(Path(directory), args.threads, args.workers)
        try:
            result = asyncio.run(soak(url, verify, process.pid, args.requests, connections=args.connections,
                                      progress=progress))  # fmt: skip
        finally:
            process.terminate()
            process.wait(30)
    start, middle, end = result.rss(0), result.middle, result.rss(-1)
    print(f"requests {result.requests:,} in {result.elapsed:.0f} s, errors {result.errors}"
          + (f" (first: {result.first_error})" if result.errors else ""))  # fmt: skip
    print(f"server RSS (all processes): start {mib(start)}, middle {mib(middle)}, end {mib(end)}, "
          f"growth {mib(end - start)}; per process: "
          + ", ".join(f"{p} {'+' if g >= 0 else ''}{mib(g)}" for p, g in sorted(result.growth().items())))  # fmt: skip
    sys.exit(1 if result.errors else 0)


if __name__ == "__main__":
    main()
