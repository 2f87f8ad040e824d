"""The reloadable TLS context: new files (certificate, key, client CA) take effect in a new context for new
handshakes, a bad pair never reaches it."""

from __future__ import annotations

import os
import socket
import ssl
import threading
import warnings
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


def test_new_files_are_served_by_a_new_context(tmp_path: Path) -> None:
    first = write_pair(tmp_path, trustme.CA())
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    context = reloader.context
    assert served_cert(context) == first
    assert reloader.reload_if_changed() is False and reloader.context is context
    second = write_pair(tmp_path, trustme.CA())
    bump(tmp_path / "tls.crt")
    assert reloader.reload_if_changed() is True
    assert served_cert(reloader.context) == second
    assert served_cert(context) == first  # connections made before keep what they had


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


def handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> bool:
    """Whether a TLS handshake between the two contexts succeeds (over a socket pair)."""
    server_sock, client_sock = socket.socketpair()
    outcome: list[bool] = []

    def serve() -> None:
        try:
            with server.wrap_socket(server_sock, server_side=True) as tls:
                tls.recv(1)
                outcome.append(True)
        except (ssl.SSLError, OSError):
            outcome.append(False)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with client.wrap_socket(client_sock) as tls:
            tls.send(b"x")
    except (ssl.SSLError, OSError):
        pass
    finally:
        client_sock.close()
    thread.join(5)
    server_sock.close()
    return outcome == [True]


def _client(ca: trustme.CA) -> ssl.SSLContext:
    client = ssl.create_default_context()
    ca.configure_trust(client)
    client.check_hostname = False
    return client


def test_with_a_client_ca_only_clients_with_its_certificates_are_served(tmp_path: Path) -> None:
    """--client-ca: the API server's kubeConfigFile client certificate is required, others are refused."""
    ca, clients_ca = trustme.CA(), trustme.CA()
    write_pair(tmp_path, ca)
    (tmp_path / "clients.pem").write_bytes(clients_ca.cert_pem.bytes())
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "clients.pem")
    anonymous = _client(ca)
    api_server = _client(ca)
    clients_ca.issue_cert("kube-apiserver").configure_cert(api_server)
    stranger = _client(ca)
    trustme.CA().issue_cert("kube-apiserver").configure_cert(stranger)
    assert handshake(reloader.context, api_server)
    assert not handshake(reloader.context, anonymous)
    assert not handshake(reloader.context, stranger)
    assert handshake(CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key").context, anonymous)  # not asked


def test_tls_before_1_2_is_refused(tmp_path: Path) -> None:
    ca = trustme.CA()
    write_pair(tmp_path, ca)
    context = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key").context
    with warnings.catch_warnings():  # TLS 1.1 is deprecated: that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        old = _client(ca)
        old.set_ciphers("DEFAULT:@SECLEVEL=0")
        old.minimum_version, old.maximum_version = ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1
        lenient = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        lenient.set_ciphers("DEFAULT:@SECLEVEL=0")
        lenient.minimum_version = ssl.TLSVersion.TLSv1
        lenient.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    if not handshake(lenient, old):
        pytest.skip("this OpenSSL cannot speak TLS 1.1 at all, so there is nothing to refuse")
    assert not handshake(context, old)
    assert handshake(context, _client(ca))


def test_an_unusable_client_ca_is_a_certificate_error(tmp_path: Path) -> None:
    ca = trustme.CA()
    write_pair(tmp_path, ca)
    (tmp_path / "clients.pem").write_text("not a certificate")
    with pytest.raises(CertError, match="cannot use as client CA"):
        CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "clients.pem")


def test_a_changed_client_ca_is_reloaded_and_the_old_one_no_longer_trusted(tmp_path: Path) -> None:
    """--client-ca is reread with the certificate: a CA rotated out stops being trusted (OpenSSL can only add
    CAs to a context, so the reload must make a new one)."""
    ca, old_clients, new_clients = trustme.CA(), trustme.CA(), trustme.CA()
    write_pair(tmp_path, ca)
    (tmp_path / "clients.pem").write_bytes(old_clients.cert_pem.bytes())
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "clients.pem")
    old_api_server, new_api_server = _client(ca), _client(ca)
    old_clients.issue_cert("kube-apiserver").configure_cert(old_api_server)
    new_clients.issue_cert("kube-apiserver").configure_cert(new_api_server)
    assert handshake(reloader.context, old_api_server) and not handshake(reloader.context, new_api_server)
    (tmp_path / "clients.pem").write_bytes(new_clients.cert_pem.bytes())
    bump(tmp_path / "clients.pem")
    assert reloader.reload_if_changed() is True
    assert handshake(reloader.context, new_api_server)
    assert not handshake(reloader.context, old_api_server)
    (tmp_path / "clients.pem").write_text("not a certificate")  # a bad bundle keeps the last good context
    bump(tmp_path / "clients.pem")
    assert reloader.reload_if_changed() is False
    assert handshake(reloader.context, new_api_server) and not handshake(reloader.context, old_api_server)
