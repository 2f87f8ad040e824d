"""Replacing a file the user keeps (a suite `kcel test --update` rewrites, the report `--junit-xml` names) all at
once or not at all.

Writing in place truncates the file first: a full disk, a file-size limit (`ulimit -f`) or a Ctrl-C halfway
leaves half a suite, and the answers recorded and the expectations written by hand are lost. So the new text goes
to a temporary file in the same folder (a rename is atomic only within one file system), with the old file's
permission bits, is flushed to the disk, and only then renamed over the old one; on any failure the temporary
file is removed and the old file is as it was. A symbolic link stays a link (its target is replaced), and a file
that is not a regular one (`--junit-xml /dev/stdout`, a pipe) is written to as it is, as it cannot be replaced.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


class SaveError(Exception):
    """A file that could not be written, left as it was; `str()` is one line: the file, then what failed."""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = path, what
        super().__init__(f"{path}: {what}")


def save(path: Path, data: bytes) -> None:
    """Replace the file at `path` (or create it) with `data`, atomically.

    Raises:
        SaveError: the file cannot be written (read-only, its folder closed to new files, the disk full, a
            file-size limit reached); nothing was changed.
    """
    target = Path(os.path.realpath(path))
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    except OSError as err:
        raise SaveError(path, f"cannot write: {_reason(err)}") from None
    if old is not None and not stat.S_ISREG(old.st_mode):
        _write_in_place(path, target, data)
        return
    if old is not None and not os.access(target, os.W_OK):  # a rename would replace even a read-only file
        raise SaveError(path, "cannot write: the file is read-only")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise SaveError(path, f"cannot create a temporary file in {target.parent}: {_reason(err)}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            _copy_owner_and_mode(out.fileno(), old)
            os.fsync(out.fileno())  # the new text is on the disk before the name points at it
        os.replace(temporary, target)
    except BaseException as err:  # a Ctrl-C too: never leave the temporary file behind
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(err, OSError):
            raise SaveError(path, f"cannot write: {_reason(err)}") from None
        raise
    _sync_folder(target.parent)


def _write_in_place(path: Path, target: Path, data: bytes) -> None:
    try:
        with open(target, "wb") as out:
            out.write(data)
    except OSError as err:
        raise SaveError(path, f"cannot write: {_reason(err)}") from None


def _copy_owner_and_mode(handle: int, old: os.stat_result | None) -> None:
    """The old file's owner (where allowed) and permission bits; a new file's bits as `open` would give them."""
    if not hasattr(os, "fchmod"):  # Windows before Python 3.13: no modes to keep beyond read-only, checked above
        return
    if old is None:
        umask = os.umask(0)  # only readable by setting it: set it back at once
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
        return
    if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # only root may give a file away; the others keep their own
            os.fchown(handle, old.st_uid, old.st_gid)
    os.fchmod(handle, stat.S_IMODE(old.st_mode))  # after the owner, whose change would clear set-id bits


def _sync_folder(folder: Path) -> None:
    """The rename on the disk too (a crash right after would otherwise bring the old name back)."""
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def _reason(err: OSError) -> str:
    return err.strerror or str(err)
