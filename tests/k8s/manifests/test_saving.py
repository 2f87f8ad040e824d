"""kcel.k8s.manifests.saving: a file replaced at once, its mode and links kept, nothing left behind on a failure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kcel.k8s.manifests.saving import SaveError, save


def test_the_new_text_reaches_the_disk_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "a.yaml"
    file.write_text("old\n")
    calls: list[str] = []
    fsync, replace = os.fsync, os.replace

    def synced(handle: int) -> None:
        calls.append("fsync")
        fsync(handle)

    def replaced(source: Any, target: Any) -> None:
        calls.append("replace")
        replace(source, target)

    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(os, "replace", replaced)
    save(file, b"new\n")
    assert file.read_text() == "new\n"
    assert calls[:2] == ["fsync", "replace"]  # then the folder's fsync


def test_an_interrupt_leaves_the_old_file_and_no_temporary_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "a.yaml"
    file.write_text("old\n")

    def interrupted(handle: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save(file, b"new\n")
    assert file.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.yaml"]


def test_a_write_error_is_one_line_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "a.yaml"
    file.write_text("old\n")

    def full(handle: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SaveError) as raised:
        save(file, b"new\n")
    assert str(raised.value) == f"{file}: cannot write: No space left on device"
    assert file.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["a.yaml"]


@pytest.mark.skipif(os.name != "posix", reason="file modes and symbolic links as POSIX has them")
def test_modes_and_links_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("old\n")
    target.chmod(0o604)
    link = tmp_path / "link.yaml"
    link.symlink_to(target.name)
    save(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert target.stat().st_mode & 0o7777 == 0o604


@pytest.mark.skipif(os.name != "posix", reason="umask is POSIX")
def test_a_new_file_gets_the_mode_open_gives(tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        save(tmp_path / "new.xml", b"<x/>\n")
    finally:
        os.umask(umask)
    assert (tmp_path / "new.xml").stat().st_mode & 0o7777 == 0o640


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_device_is_written_not_replaced() -> None:
    """`--junit-xml /dev/stdout` (here /dev/null): a rename would put a regular file in place of the device."""
    save(Path("/dev/null"), b"<testsuites/>\n")
    assert Path("/dev/null").is_char_device()


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SaveError) as raised:
        save(tmp_path / "no" / "a.xml", b"")
    assert str(raised.value) == (
        f"{tmp_path / 'no' / 'a.xml'}: cannot create a temporary file in {tmp_path / 'no'}: No such file or directory"
    )
