"""The server's TLS context, reloaded in place when the certificate or key files change.

cert-manager and Kubernetes Secret volumes replace certificates under a running pod. Python's `SSLContext`
copies its certificate into each connection at handshake time, so loading a new chain into the one
context uvicorn listens with makes every new handshake use it while open connections keep theirs.

A half-written update (new certificate, old key) must never reach the live context: OpenSSL drops a key that
does not match the certificate just loaded, which would break every later handshake. So both files are read
once, checked together in a scratch context, and only then loaded into the live one, from the same bytes.
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
    """The certificate or key cannot be used (unreadable, not PEM, or not a pair)."""


class CertReloader:
    """Owns the listening `SSLContext` and reloads its chain when the files' stat stamps change."""

    def __init__(
        self, cert: str | os.PathLike[str], key: str | os.PathLike[str], client_ca: str | os.PathLike[str] | None = None
    ) -> None:
        self.cert = Path(cert)
        self.key = Path(key)
        self.context = new_context()
        if client_ca is not None:  # the API server presents the client certificate of its kubeConfigFile
            try:
                self.context.load_verify_locations(cafile=os.fspath(client_ca))
            except (ssl.SSLError, OSError) as exc:
                raise CertError(f"{client_ca}: cannot use as client CA: {exc}") from None
            self.context.verify_mode = ssl.CERT_REQUIRED
        self._stamp: Stamp | None = None
        self.reloads = 0  # successful loads after the first
        stamp = self._current_stamp()
        self._load(self.context)  # raises CertError: a server must not start without a usable certificate
        self._stamp = stamp

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
            self._load(self.context)
        except CertError as exc:
            log.warning("new certificate files are not usable, keeping the current ones: %s", exc)
            return False
        self.reloads += 1
        log.info("reloaded TLS certificate from %s", self.cert)
        return True

    def _current_stamp(self) -> Stamp:
        try:
            stats = [os.stat(path) for path in (self.cert, self.key)]  # follows Secret-volume symlinks
        except OSError as exc:
            raise CertError(str(exc)) from None
        return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)

    def _load(self, context: ssl.SSLContext) -> None:
        try:
            cert_pem, key_pem = self.cert.read_bytes(), self.key.read_bytes()
        except OSError as exc:
            raise CertError(str(exc)) from None
        with tempfile.TemporaryDirectory(prefix="kcel-tls-") as private:  # mode 0700: the key stays private
            cert_file, key_file = Path(private, "tls.crt"), Path(private, "tls.key")
            cert_file.write_bytes(cert_pem)
            key_file.write_bytes(key_pem)
            try:
                new_context().load_cert_chain(cert_file, key_file)  # all-or-nothing check first
                context.load_cert_chain(cert_file, key_file)
            except (ssl.SSLError, OSError, ValueError) as exc:
                raise CertError(f"{self.cert} / {self.key}: {exc}") from None


def new_context() -> ssl.SSLContext:
    """A server context as the API server's webhook client expects: TLS 1.2 and newer only; client certificates
    are required only with `--client-ca`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context
