"""`kcel test --update` and `--junit-xml` replace a file at once or not at all: under a file-size limit, with the file
or its folder closed to writing, the file stays byte for byte as it was, with a one-line error and a failing exit
status, never a traceback; line breaks and a byte order mark are kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .helpers import ROOT, run, widget_folder

ERRORS = ("spec: Invalid value: replicas must not exceed maxReplicas in Safe mode",
          "spec.containers[1].image: Invalid value: images must be pinned to a tag other than latest")  # fmt: skip
CASES = "cases:\n  - name: too many\n    patch: {spec: {replicas: 5}}\n    expect: valid\n"


def suite_of(folder: Path, size: int = 0) -> Path:
    """A suite whose one case fails (its `expect: valid` gets rewritten), padded with comments to `size` bytes."""
    head = "crds: widget-crd.yaml\nbase: widget.yaml\n"
    padding = "".join(f"# line {i} of a long comment that --update must keep as it is\n" for i in range(size // 60))
    suite = widget_folder(folder) / "s.kcel-test.yaml"
    suite.write_bytes((head + padding + CASES).encode("utf-8"))
    return suite


def recorded(newline: str = "\n") -> bytes:
    """The expectation --update writes in place of `expect: valid`."""
    return newline.join(["expect:", "      errors:", *(f"      - '{error}'" for error in ERRORS)]).encode()


def leftovers(folder: Path) -> list[str]:
    """Files in the folder that neither the test nor the widget folder put there (a temporary file left behind)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def kcel_test_limited(args: list[str], file_size_limit: int) -> subprocess.CompletedProcess[str]:
    """`kcel test ARGS` in a fresh process that may write no file beyond `file_size_limit` bytes; SIGXFSZ is
    ignored, so that a write past the limit fails with EFBIG instead of killing the process."""
    resource = pytest.importorskip("resource", reason="file-size limits (RLIMIT_FSIZE) are a POSIX feature")
    import signal

    if not hasattr(signal, "SIGXFSZ"):
        pytest.skip("no SIGXFSZ on this system: a file-size limit would not fail as a write error")

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # stays ignored across exec
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "kcel.cli", "test", *args], capture_output=True, text=True,
                          env=env, preexec_fn=limited, timeout=300)  # fmt: skip


def test_a_file_size_limit_leaves_the_suite_as_it_was(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, size=28_000)
    before = suite.read_bytes()
    done = kcel_test_limited(["--update", str(suite)], file_size_limit=len(before) + 10)
    assert suite.read_bytes() == before  # not truncated at the limit
    assert "Traceback" not in done.stderr
    assert done.stderr == f"error: {suite}: not updated: cannot write: File too large (the file is as it was)\n"
    assert done.returncode == 1 and done.stdout.endswith("0 passed, 1 failed\n")
    assert leftovers(tmp_path) == []
    done = kcel_test_limited(["--update", str(suite)], file_size_limit=len(before) + 1000)  # room enough
    assert (done.returncode, done.stderr) == (0, "")
    assert suite.read_bytes() == before.replace(b"expect: valid", recorded())


def test_a_file_size_limit_leaves_no_half_junit_report(tmp_path: Path) -> None:
    suite = suite_of(tmp_path)
    report = tmp_path / "report.xml"
    report.write_text("<testsuites/>\n", encoding="utf-8")
    done = kcel_test_limited(["--junit-xml", str(report), str(suite)], file_size_limit=100)
    assert report.read_text(encoding="utf-8") == "<testsuites/>\n"
    assert done.stderr == f"kcel test: --junit-xml {report}: cannot write: File too large\n"
    assert done.returncode == 2 and leftovers(tmp_path) == []


@contextmanager
def closed_to_writing(path: Path) -> Iterator[None]:
    """The file or folder made unwritable: by its mode, or for root (whom modes do not stop) by `chattr +i`, which
    stops root too (skipped, with the reason, where the file system or the container allows neither)."""
    if os.name != "posix":
        pytest.skip("file modes and chattr are POSIX")
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    made = chattr and subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True)
    if not made or made.returncode:
        pytest.skip(f"running as root, and chattr +i is not available here: {made and made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def test_a_read_only_suite_is_reported_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_of(tmp_path)
    before = suite.read_bytes()
    with closed_to_writing(suite):
        status, out, err = run(capsys, "--update", str(suite))
        assert suite.read_bytes() == before
    assert err == f"error: {suite}: not updated: cannot write: the file is read-only (the file is as it was)\n"
    assert status == 1 and out.endswith("0 passed, 1 failed\n")
    assert leftovers(tmp_path) == []


def test_a_folder_closed_to_new_files_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The new text cannot go beside the suite, so the suite is not rewritten in place either (which a full disk
    or a Ctrl-C would leave half written)."""
    suite = suite_of(tmp_path)
    before = suite.read_bytes()
    with closed_to_writing(tmp_path):
        status, _, err = run(capsys, "--update", str(suite))
        assert suite.read_bytes() == before
    assert err.startswith(f"error: {suite}: not updated: cannot create a temporary file in {tmp_path}: ")
    assert err.endswith(" (the file is as it was)\n") and err.count("\n") == 1
    assert status == 1 and leftovers(tmp_path) == []


def test_an_unwritable_junit_report_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_of(tmp_path)
    closed = tmp_path / "reports"
    closed.mkdir()
    with closed_to_writing(closed):
        status, out, err = run(capsys, "--junit-xml", str(closed / "junit.xml"), str(suite))
    assert err.startswith(f"kcel test: --junit-xml {closed / 'junit.xml'}: cannot create a temporary file in ")
    assert err.count("\n") == 1 and status == 2
    assert out.endswith("0 passed, 1 failed\n")  # the results are still shown
    assert list(closed.iterdir()) == []


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["no BOM", "BOM"])
def test_line_breaks_and_byte_order_mark_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   bom: bytes) -> None:  # fmt: skip
    suite = suite_of(tmp_path)
    windows = bom + suite.read_bytes().replace(b"\n", b"\r\n")
    suite.write_bytes(windows)
    status, out, err = run(capsys, "--update", str(suite))
    assert (status, err) == (0, ""), out
    expected = windows.replace(b"expect: valid", recorded("\r\n"))
    assert suite.read_bytes() == expected
    assert b"\n" not in expected.replace(b"\r\n", b"")  # every line break still \r\n
    assert run(capsys, str(suite))[:2] == (0, "1 passed, 0 failed\n")


def test_the_suite_keeps_its_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_of(tmp_path)
    suite.chmod(0o640)
    assert run(capsys, "--update", str(suite))[0] == 0
    assert "expect: valid" not in suite.read_text(encoding="utf-8")
    assert suite.stat().st_mode & 0o7777 == 0o640
