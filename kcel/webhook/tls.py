"""The server's TLS context, made anew when the certificate, key or client CA files change.

cert-manager and Kubernetes Secret volumes replace certificates (and CA bundles) under a running pod. The server
takes `CertReloader.context` at each accepted connection (kcel.webhook.connections), so a new context serves every
new handshake while open connections keep theirs. A new context, not the old one reloaded: OpenSSL can add CAs
to a context but never remove one, and a CA taken out of `--client-ca` must stop being trusted.

A half-written update (new certificate, old key) must never reach the live context: the files are read once,
loaded together into the new context, and it replaces the live one only if all of them loaded.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
from pathlib import Path

log = logging.getLogger("kcel.webhook.tls")

Stamp = tuple[tuple[int, int, int], ...]  # (inode, size, mtime_ns) per file


class CertError(Exception):
    """The certificate, key or client CA cannot be used (unreadable, not PEM, or not a pair)."""


class CertReloader:
    """Owns the server's `SSLContext` and replaces it when the files' stat stamps change."""

    def __init__(
        self, cert: str | os.PathLike[str], key: str | os.PathLike[str], client_ca: str | os.PathLike[str] | None = None
    ) -> None:
        self.cert = Path(cert)
        self.key = Path(key)
        self.client_ca = Path(client_ca) if client_ca is not None else None
        self.reloads = 0  # successful loads after the first
        stamp = self._current_stamp()
        self.context = self._load()  # raises CertError: a server must not start without a usable certificate
        self._stamp: Stamp | None = stamp

    def reload_if_changed(self) -> bool:
        """Load the files again if they changed since the last attempt; False when unchanged or unusable.

        A failed attempt is remembered by its stamp, so a bad pair is logged once, not every poll, and the
        next change (say, the key catching up with the certificate) is tried again.
        """
        try:
            stamp = self._current_stamp()
        except CertError as exc:
            log.warning("cannot read certificate files, keeping the current ones: %s", exc)
            return False
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            self.context = self._load()
        except CertError as exc:
            log.warning("new certificate files are not usable, keeping the current ones: %s", exc)
            return False
        self.reloads += 1
        log.info("reloaded TLS certificate from %s", self.cert)
        return True

    def _files(self) -> list[Path]:
        return [self.cert, self.key] + ([self.client_ca] if self.client_ca is not None else [])

    def _current_stamp(self) -> Stamp:
        try:
            stats = [os.stat(path) for path in self._files()]  # follows Secret-volume symlinks
        except OSError as exc:
            raise CertError(str(exc)) from None
        return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)

    def _load(self) -> ssl.SSLContext:
        """A new context from the files as they are now."""
        try:
            cert_pem, key_pem = self.cert.read_bytes(), self.key.read_bytes()
            ca_pem = self.client_ca.read_text(errors="replace") if self.client_ca is not None else None
        except OSError as exc:
            raise CertError(str(exc)) from None
        context = new_context()
        with tempfile.TemporaryDirectory(prefix="kcel-tls-") as private:  # mode 0700: the key stays private
            cert_file, key_file = Path(private, "tls.crt"), Path(private, "tls.key")
            cert_file.write_bytes(cert_pem)
            key_file.write_bytes(key_pem)
            try:
                context.load_cert_chain(cert_file, key_file)
            except (ssl.SSLError, OSError, ValueError) as exc:
                raise CertError(f"{self.cert} / {self.key}: {exc}") from None
        if ca_pem is not None:  # the API server presents the client certificate of its kubeConfigFile
            try:
                context.load_verify_locations(cadata=ca_pem)
            except (ssl.SSLError, ValueError) as exc:
                raise CertError(f"{self.client_ca}: cannot use as client CA: {exc}") from None
            context.verify_mode = ssl.CERT_REQUIRED
        return context


def new_context() -> ssl.SSLContext:
    """A server context as the API server's webhook client expects: TLS 1.2 and newer only; client certificates
    are required only with `--client-ca`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context
