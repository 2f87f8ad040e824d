"""Hostile clients against `kcel serve` on loopback: what the server holds and how its probes answer meanwhile.

Cases (each against a fresh single-process server with a trustme certificate):

* `idle-tls`: `--connections` TLS connections (default 1,000) complete their handshake, then neither send nor
  read (so never answer the server's TLS close), and stay open; `--no-handshake` opens plain TCP connections
  that never start one. Meanwhile /healthz and /readyz are probed on a new connection every `--interval`, as the
  kubelet probes (1 s timeout). Printed: the sockets the server holds over time, and each probe's status and latency.
* `header-flood`: `--connections` connections (default 6) send one request's headers as fast as they can (an
  endless list of 1 KiB headers), reconnecting when the server closes them, for `--seconds`; printed: the server's
  RSS before, at most and after, the bytes the clients wrote and what the server answered. Then one request with
  a single `--huge` MiB header.

Run: PYTHONPATH=. .venv/bin/python bench/webhook_attack.py idle-tls [--connections 1000] [--seconds 40]
     PYTHONPATH=. .venv/bin/python bench/webhook_attack.py header-flood [--connections 6] [--seconds 9]
     Options after `--` go to `kcel serve` (e.g. `-- --max-connections-per-client 100`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import selectors
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webhook_load import free_port, percentile, rss_kib, serving_certificate

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "tests" / "webhook" / "policies"
RESOURCES = ROOT / "tests" / "webhook" / "resources"
PROBE_TIMEOUT = 1.0  # the kubelet's default timeoutSeconds


def start(directory: Path, options: list[str]) -> tuple[subprocess.Popen[bytes], int, ssl.SSLContext]:
    """A single-process server on a free port; (process, port, a client context trusting it) once ready."""
    certificate, verify = serving_certificate(directory)
    port = free_port()
    command = [
        sys.executable, "-m", "kcel.webhook", "--policy", str(POLICIES), "--params", str(RESOURCES),
        *certificate, "--host", "127.0.0.1", "--port", str(port), "--log-level", "error", *options,
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        status, _ = asyncio.run(probe(port, verify, "/readyz"))
        if status == 200:
            return process, port, verify
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("server not ready after 60 s")


def sockets_held(pid: int) -> int:
    """Sockets open in the server process (its listener included)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return count


async def probe(port: int, verify: ssl.SSLContext, path: str) -> tuple[int, float]:
    """GET `path` on a new connection: (status or 0 for no answer in PROBE_TIMEOUT, seconds taken)."""
    started = time.monotonic()
    writer = None
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=verify)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            line = await reader.readline()
        status = int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0
    except (OSError, asyncio.TimeoutError, ssl.SSLError, ValueError):
        status = 0
    finally:
        if writer is not None:
            writer.transport.abort()
    return status, time.monotonic() - started


def open_idle(
    port: int, verify: ssl.SSLContext | None, count: int, seconds: float = 30.0, source: str = "127.0.0.1"
) -> list[socket.socket]:
    """`count` connections from `source` that complete their TLS handshake (none with `verify` None) and then
    neither send nor read: the server's TLS close is never answered. Handshakes run side by side (non-blocking
    sockets, one selector); a connection the server closes or refuses first is left out."""
    selector = selectors.DefaultSelector()
    done: list[socket.socket] = []
    for _ in range(count):
        raw = socket.create_connection(("127.0.0.1", port), timeout=seconds, source_address=(source, 0))
        if verify is None:
            done.append(raw)
            continue
        raw.setblocking(False)
        tls = verify.wrap_socket(raw, server_hostname="127.0.0.1", do_handshake_on_connect=False)
        selector.register(tls, selectors.EVENT_WRITE)
    deadline = time.monotonic() + seconds
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.5):
            tls = key.fileobj
            assert isinstance(tls, ssl.SSLSocket)
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                selector.modify(tls, selectors.EVENT_READ)
                continue
            except ssl.SSLWantWriteError:
                selector.modify(tls, selectors.EVENT_WRITE)
                continue
            except (OSError, ssl.SSLError):
                selector.unregister(tls)
                tls.close()
                continue
            selector.unregister(tls)
            done.append(tls)
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    selector.close()
    return done


async def idle_tls(port: int, verify: ssl.SSLContext, pid: int, args: argparse.Namespace) -> None:
    baseline = sockets_held(pid)
    started = time.monotonic()
    held = await asyncio.to_thread(open_idle, port, None if args.no_handshake else verify, args.connections)
    print(f"opened {len(held)} of {args.connections} connections in {time.monotonic() - started:.1f}s "
          f"({'plain TCP' if args.no_handshake else 'TLS, handshake done'}, nothing sent or read)")  # fmt: skip
    results: dict[str, list[tuple[int, float]]] = {"/healthz": [], "/readyz": []}
    end = time.monotonic() + args.seconds
    next_report = time.monotonic()
    while time.monotonic() < end:
        for path, answers in results.items():
            answers.append(await probe(port, verify, path))
        if time.monotonic() >= next_report:
            next_report += 5
            recent = [s for answers in results.values() for s, _ in answers[-10:]]
            print(f"  t={time.monotonic() - started:5.1f}s server holds {sockets_held(pid) - baseline:4d} "
                  f"sockets; recent probe statuses {sorted(set(recent))}")  # fmt: skip
        await asyncio.sleep(args.interval)
    for path, answers in results.items():
        ok = [seconds for status, seconds in answers if status == 200]
        statuses = {s: sum(1 for a, _ in answers if a == s) for s in sorted({a for a, _ in answers})}
        print(f"{path}: {len(answers)} probes, statuses {statuses} (0: no answer within {PROBE_TIMEOUT:g}s); "
              + (f"latency of the 200s p50 {percentile(ok, 0.5) * 1e3:.1f} ms, max {max(ok) * 1e3:.1f} ms"
                 if ok else "no 200"))  # fmt: skip
    for sock in held:
        sock.close()


async def header_flood(port: int, verify: ssl.SSLContext, pid: int, args: argparse.Namespace) -> None:
    sent = 0
    answers: dict[bytes, int] = {}
    pad = b"X-Pad: " + b"a" * 1017 + b"\r\n"
    stop = time.monotonic() + args.seconds

    async def flood() -> None:
        nonlocal sent
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=verify)
            except (OSError, ssl.SSLError):
                continue
            answer = asyncio.ensure_future(reader.readline())
            try:
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while time.monotonic() < stop and not answer.done():
                    writer.write(pad * 64)
                    sent += len(pad) * 64
                    await writer.drain()
            except (OSError, ssl.SSLError):
                pass
            with contextlib.suppress(Exception):
                line = await asyncio.wait_for(answer, 1)
                answers[line[:12]] = answers.get(line[:12], 0) + 1
            writer.transport.abort()

    before = rss_kib(pid)
    peak = before
    tasks = [asyncio.ensure_future(flood()) for _ in range(args.connections)]
    while not all(task.done() for task in tasks):
        peak = max(peak, rss_kib(pid))
        await asyncio.sleep(0.25)
    await asyncio.sleep(1)
    print(f"{args.connections} connections x {args.seconds:g}s: the clients wrote {sent / 2**20:.0f} MiB of headers; "
          f"server RSS "
          f"{before / 1024:.0f} MiB before, {peak / 1024:.0f} MiB at most, {rss_kib(pid) / 1024:.0f} MiB after; "
          f"answers {answers}")  # fmt: skip
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=verify)
    started = time.monotonic()
    with contextlib.suppress(OSError, ssl.SSLError):
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: " + b"a" * (args.huge << 20) + b"\r\n\r\n")
        await writer.drain()
    line = b""
    with contextlib.suppress(Exception):
        line = await asyncio.wait_for(reader.readline(), 30)
    writer.transport.abort()
    print(f"one {args.huge} MiB header: answered {line.strip().decode(errors='replace') or 'nothing'} "
          f"in {time.monotonic() - started:.1f}s; server RSS now {rss_kib(pid) / 1024:.0f} MiB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", choices=("idle-tls", "header-flood"))
    parser.add_argument("--connections", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--interval", type=float, default=0.5, help="between probes (idle-tls)")
    parser.add_argument("--no-handshake", action="store_true", help="idle-tls: plain TCP, no TLS handshake")
    parser.add_argument("--huge", type=int, default=56, help="MiB of the single huge header (header-flood)")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.server_options = argv[split + 1 :]  # after --: options for kcel serve
    flood = args.case == "header-flood"
    args.connections = args.connections or (6 if flood else 1000)
    args.seconds = args.seconds or (9.0 if flood else 40.0)
    with tempfile.TemporaryDirectory() as directory:
        process, port, verify = start(Path(directory), args.server_options)
        try:
            run = header_flood if flood else idle_tls
            asyncio.run(run(port, verify, process.pid, args))
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
