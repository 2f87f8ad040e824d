"""The reloadable TLS context: new files take effect in the same context, a bad pair never reaches it."""

from __future__ import annotations

import os
import socket
import ssl
import threading
from pathlib import Path

import pytest
import trustme

from kcel.webhook.tls import CertError, CertReloader


def write_pair(directory: Path, ca: trustme.CA) -> bytes:
    """Write tls.crt/tls.key for 127.0.0.1 from `ca`; return the leaf certificate's DER for comparisons."""
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    (directory / "tls.crt").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    (directory / "tls.key").write_bytes(leaf.private_key_pem.bytes())
    return ssl.PEM_cert_to_DER_cert(leaf.cert_chain_pems[0].bytes().decode())


def served_cert(context: ssl.SSLContext) -> bytes:
    """Handshake once against `context` over a socket pair; the certificate the client saw."""
    server_sock, client_sock = socket.socketpair()
    result: list[bytes] = []

    def serve() -> None:
        with context.wrap_socket(server_sock, server_side=True) as tls:
            tls.recv(1)

    thread = threading.Thread(target=serve)
    thread.start()
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    with client.wrap_socket(client_sock) as tls:
        result.append(tls.getpeercert(binary_form=True) or b"")
        tls.send(b"x")
    thread.join()
    return result[0]


def bump(path: Path) -> None:
    """Make sure the stat stamp changes even on file systems with coarse mtimes."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_new_files_are_served_by_the_same_context(tmp_path: Path) -> None:
    first = write_pair(tmp_path, trustme.CA())
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    context = reloader.context
    assert served_cert(context) == first
    assert reloader.reload_if_changed() is False
    second = write_pair(tmp_path, trustme.CA())
    bump(tmp_path / "tls.crt")
    assert reloader.reload_if_changed() is True
    assert reloader.context is context and served_cert(context) == second


def test_a_mismatched_pair_is_refused_and_the_old_one_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first = write_pair(tmp_path, trustme.CA())
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    other = tmp_path / "other"
    other.mkdir()
    write_pair(other, trustme.CA())
    (tmp_path / "tls.crt").write_bytes((other / "tls.crt").read_bytes())  # the certificate changed, the key not yet
    bump(tmp_path / "tls.crt")
    assert reloader.reload_if_changed() is False
    assert served_cert(reloader.context) == first
    assert "not usable, keeping the current ones" in caplog.text
    assert reloader.reload_if_changed() is False and caplog.text.count("not usable") == 1  # logged once
    (tmp_path / "tls.key").write_bytes((other / "tls.key").read_bytes())  # the key caught up
    bump(tmp_path / "tls.key")
    assert reloader.reload_if_changed() is True
    assert served_cert(reloader.context) != first


def test_a_server_does_not_start_without_a_usable_certificate(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("not PEM")
    (tmp_path / "tls.key").write_text("not PEM")
    with pytest.raises(CertError):
        CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    with pytest.raises(CertError, match="No such file"):
        CertReloader(tmp_path / "missing.crt", tmp_path / "tls.key")
