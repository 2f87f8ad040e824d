"""`kcel serve`: options and start-up of the validating admission webhook.

Importing this module stays cheap (argparse only): `kcel --help` and the other subcommands must not pay for
uvicorn, prometheus_client and orjson, which `run` imports when the server actually starts.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kcel.k8s.admission.served import add_runtime_config_option
from kcel.k8s.environment import add_version_option

if TYPE_CHECKING:
    from kcel.webhook.connections import Limits

DEFAULT_PORT = 8443


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the `kcel serve` options to `parser`."""
    parser.description = (
        "Serve admission webhooks (AdmissionReview admission.k8s.io/v1 over HTTPS) that enforce policies from files, "
        "reloaded when they change: /validate answers with the ValidatingAdmissionPolicies and their bindings, "
        "/mutate with the MutatingAdmissionPolicies (a JSON patch)."
    )
    files = parser.add_argument_group("policies")
    files.add_argument(
        "--policy", action="append", default=[], metavar="FILE|DIR",
        help="file or directory of Validating- and MutatingAdmissionPolicy and Binding YAML/JSON (required; "
        "repeatable; recursive; hidden entries such as ConfigMap volumes' ..data copies are skipped)",
    )  # fmt: skip
    files.add_argument(
        "--params", action="append", default=[], metavar="FILE|DIR",
        help="file or directory of param objects and Namespaces the policies refer to (repeatable)",
    )  # fmt: skip
    # The spellings of kcel 0.x, still read: kcel admit and kcel audit say --policy and --params.
    files.add_argument("--policies", action="append", dest="policy", help=argparse.SUPPRESS)
    files.add_argument("--resources", action="append", dest="params", help=argparse.SUPPRESS)
    add_version_option(files)
    add_runtime_config_option(files)
    tls = parser.add_argument_group("TLS")
    tls.add_argument("--cert", metavar="FILE", help="PEM certificate chain (reloaded when it changes)")
    tls.add_argument("--key", metavar="FILE", help="PEM private key (reloaded when it changes)")
    tls.add_argument(
        "--client-ca", metavar="FILE",
        help="PEM CA bundle: require a client certificate it signed (the one the API server presents from its "
        "admission kubeConfigFile) and refuse the handshake otherwise",
    )  # fmt: skip
    tls.add_argument(
        "--insecure-http", action="store_true",
        help="serve plain HTTP without --cert/--key; for local testing only, the API server requires HTTPS",
    )  # fmt: skip
    net = parser.add_argument_group("server")
    net.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    net.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    net.add_argument(
        "--timeout", type=_positive_float, default=10.0, metavar="SECONDS",
        help="answer each review within this time, lowered by the API server's ?timeout= (default 10, as the "
        "API server's webhook timeoutSeconds)",
    )  # fmt: skip
    net.add_argument(
        "--failure-policy", choices=("Fail", "Ignore"), default="Fail",
        help="answer when the server itself fails (timeout, crash, no policies loaded): Fail denies the request "
        "(default), Ignore admits it with a warning. Policies' own failurePolicy still applies to their errors.",
    )  # fmt: skip
    net.add_argument(
        "--workers", type=_positive_int, default=1, metavar="N",
        help="server processes sharing the port (default 1); policy evaluation holds Python's GIL, so one "
        "process uses about one core",
    )  # fmt: skip
    net.add_argument(
        "--threads", type=_count, default=4, metavar="N",
        help="threads per process evaluating the reviews that are not quick (default 4): a review the served "
        "policies have shown to take under 2 ms is evaluated on the event loop, sparing it two thread switches; "
        "any other in a thread, so it cannot hold probes and other requests. 0 evaluates every review on the event "
        "loop, where a slow policy holds the process's other requests and its deadline is kept between expressions",
    )  # fmt: skip
    net.add_argument(
        "--max-queue", type=_count, default=64, metavar="N",
        help="reviews a process lets wait for a thread (default 64); past them it answers at once, by the failure "
        "policy (Fail: denied with code 429, which the API server's own webhook failurePolicy then handles), "
        "instead of letting every answer slow down toward the timeout",
    )  # fmt: skip
    net.add_argument(
        "--max-body-bytes-in-flight", type=_positive_int, default=32 * 1024 * 1024, metavar="BYTES",
        help="request bodies a process holds at once, while they arrive and their reviews are evaluated (default "
        "32 MiB: the API server's reviews are a few KiB, at most 7 MiB); past it a review is answered 503 at once, "
        "which the API server handles by the webhook's own failurePolicy, so no number of clients sending large "
        "bodies together can exhaust the process's memory",
    )  # fmt: skip
    net.add_argument(
        "--shutdown-delay", type=_seconds, default=5.0, metavar="SECONDS",
        help="on SIGTERM, keep serving this long with /readyz failing and connections closed after each answer, "
        "so endpoints and clients move elsewhere, before closing the listener and finishing the requests in flight "
        "(default 5; SIGINT does not wait)",
    )  # fmt: skip
    net.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"), help="default info")
    limits = parser.add_argument_group(
        "limits", "what one server process lets its clients hold (with --workers N, each process has its own)"
    )
    limits.add_argument(
        "--max-connections", type=_positive_int, default=1000, metavar="N",
        help="open connections, counted from accept (default 1000); a newcomer beyond them makes room by closing "
        "the connection idle longest (in its TLS handshake, before its request, or keep-alive idle), and is "
        "refused only when every connection has a request in progress",
    )  # fmt: skip
    limits.add_argument(
        "--max-connections-per-client", type=_positive_int, default=600, metavar="N",
        help="open connections from one IP address (default 600: more than an API server opens at its default "
        "in-flight limits); beyond them the address's own idle connections make room. Raise it when several API "
        "servers reach the webhook through one address (a proxy, SNAT)",
    )  # fmt: skip
    limits.add_argument(
        "--handshake-timeout", type=_positive_float, default=10.0, metavar="SECONDS",
        help="TLS handshake, from accept (default 10, the API server's own handshake timeout)",
    )  # fmt: skip
    limits.add_argument(
        "--header-timeout", type=_positive_float, default=10.0, metavar="SECONDS",
        help="request line and headers, from the handshake or the request's first byte (default 10)",
    )  # fmt: skip
    limits.add_argument(
        "--max-header-bytes", type=_positive_int, default=16384, metavar="BYTES",
        help="request line and headers of a request (default 16384); larger ones are answered 431",
    )  # fmt: skip
    limits.add_argument(
        "--max-headers", type=_positive_int, default=100, metavar="N",
        help="header fields of a request (default 100); more are answered 431",
    )  # fmt: skip


SERVER_PACKAGES = ("uvicorn", "prometheus_client", "orjson")
"""What the server runs on: the `serve` extra, left out of a plain `pip install kcel`."""


def missing_server_packages() -> list[str]:
    """The server packages that cannot be imported (found without importing them: prometheus_client must not be
    imported before PROMETHEUS_MULTIPROC_DIR is set)."""
    missing = []
    for name in SERVER_PACKAGES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ValueError:  # in sys.modules as None: imports of it fail
            found = False
        if not found:
            missing.append(name)
    return missing


def run(args: argparse.Namespace) -> int:
    """Start the server and block until SIGTERM/SIGINT; exit status 0 once drained, 2 for unusable options or a
    missing server package, 1 for a bad certificate or workers that keep dying."""
    if not args.policy:
        print("kcel serve: --policy FILE|DIR is required", file=sys.stderr)
        return 2
    if missing := missing_server_packages():
        print(f"kcel serve needs {', '.join(missing)}: pip install 'kcel[serve]'", file=sys.stderr)
        return 2
    from kcel.webhook import logs

    logs.configure(args.log_level)
    log = logging.getLogger("kcel.webhook")
    missing_paths = [p for p in [*args.policy, *args.params] if not Path(p).exists()]
    if missing_paths:  # a typo would serve no policy at all, allowing everything
        print(f"kcel serve: {missing_paths[0]}: no such file or directory", file=sys.stderr)
        return 2
    if args.client_ca and args.insecure_http:
        print("kcel serve: --client-ca needs TLS (--cert and --key), not --insecure-http", file=sys.stderr)
        return 2
    if not args.insecure_http and not (args.cert and args.key):
        print("kcel serve: --cert and --key are required (or --insecure-http for local testing)", file=sys.stderr)
        return 2
    if args.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Before prometheus_client is imported: it picks per-process file-backed values from this variable.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="kcel-metrics-")
    from kcel.webhook.app import Settings
    from kcel.webhook.server import serve
    from kcel.webhook.tls import CertError, CertReloader

    tls = None
    if not args.insecure_http:
        try:
            tls = CertReloader(args.cert, args.key, args.client_ca)
        except CertError as exc:
            log.error("cannot use the TLS certificate: %s", exc)
            return 1
    settings = Settings(
        timeout=args.timeout, fail_closed=args.failure_policy == "Fail", threads=args.threads,
        max_queue=args.max_queue, shutdown_delay=args.shutdown_delay, max_body_bytes=args.max_body_bytes_in_flight,
    )  # fmt: skip
    return serve(
        args.policy, args.params, host=args.host, port=args.port, settings=settings, tls=tls,
        k8s_version=args.k8s_version, workers=args.workers, limits=limits_from(args),
        runtime_config=args.runtime_config,
    )  # fmt: skip


def limits_from(args: argparse.Namespace) -> Limits:
    """The connection and header limits of the command line."""
    from kcel.webhook.connections import Limits

    return Limits(
        max_connections=args.max_connections, max_per_client=args.max_connections_per_client,
        handshake_timeout=args.handshake_timeout, header_timeout=args.header_timeout,
        max_header_bytes=args.max_header_bytes, max_headers=args.max_headers,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """`python -m kcel.webhook`, the same as `kcel serve`."""
    parser = argparse.ArgumentParser(prog="kcel serve")
    configure(parser)
    return run(parser.parse_args(argv))


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value
